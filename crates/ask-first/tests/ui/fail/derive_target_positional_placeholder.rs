// Placeholders are named, so the compiler can check each one against the fields.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {}.")]
struct DeleteNote {
    id: Id,
}

fn main() {}
