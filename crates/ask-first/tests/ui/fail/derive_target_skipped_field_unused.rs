// A field that is neither bound nor shown is a forgotten binding (or dead weight).
use ask_first::{Target, fact::Id};

#[derive(Target)]
#[target(operation = "write_note", question = "This will write note {id}.")]
struct WriteNote {
    id: Id,
    #[target(skip)]
    shared: bool,
}

fn main() {}
