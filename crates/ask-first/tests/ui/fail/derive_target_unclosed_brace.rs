// An unclosed placeholder is refused; `{{` is a literal brace.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id.")]
struct DeleteNote {
    id: Id,
}

fn main() {}
