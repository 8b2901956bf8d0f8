// A free `String` cannot reach a question: a placeholder's field must be a fact kind, and a
// caller-supplied name is declared as one (`Name`, `PathName`, `Address`).
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "rename_note", question = "This will rename note {id} to {title}.")]
struct RenameNote {
    id: Id,
    title: String,
}

fn main() {}
