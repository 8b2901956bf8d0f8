// `evidence` names a method of the target, with its parentheses: a bare name (or anything
// else) is refused, naming the fix.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id}.", evidence = "changes")]
struct DeleteNote {
    id: Id,
}

fn main() {}
