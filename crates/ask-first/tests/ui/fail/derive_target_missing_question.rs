// A target without a question would ask nothing: it is refused, with an example of one.
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note")]
struct DeleteNote {
    id: Id,
}

fn main() {}
