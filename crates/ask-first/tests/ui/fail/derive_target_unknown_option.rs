// An option #[target] does not know is refused, naming the ones it accepts.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id}.", title = "Delete")]
struct DeleteNote {
    id: Id,
}

fn main() {}
