// A plain number is not a fact kind either: say what it counts (`#[target(count)]`,
// `#[target(bytes)]`, `#[target(date)]`, or the newtypes `Count`, `ByteSize`, `Moment`).
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id} ({size}).")]
struct DeleteNote {
    id: Id,
    size: u64,
}

fn main() {}
