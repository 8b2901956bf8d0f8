// The operation's name is bound into every approval: there is no default.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(question = "This will delete note {id}.")]
struct DeleteNote {
    id: Id,
}

fn main() {}
