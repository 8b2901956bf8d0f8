// Fields are bound by default; `bind` is not an option, and the message says what to use.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id}.")]
struct DeleteNote {
    #[target(bind)]
    id: Id,
}

fn main() {}
