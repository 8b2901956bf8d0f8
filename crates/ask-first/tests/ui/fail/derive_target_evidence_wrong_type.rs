// The method `evidence` names must return `Evidence`: free text is not evidence (it would
// reach the page unframed), and the message says what to return.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id}.", evidence = "changes()")]
struct DeleteNote {
    id: Id,
}

impl DeleteNote {
    fn changes(&self) -> String {
        format!("note {}", self.id.as_str())
    }
}

fn main() {}
