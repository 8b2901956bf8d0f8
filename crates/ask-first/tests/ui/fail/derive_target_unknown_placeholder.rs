// A placeholder must name a field of the target (or a method, `{method()}`): a typo is
// refused, naming the fields there are.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {note_id}.")]
struct DeleteNote {
    id: Id,
}

fn main() {}
