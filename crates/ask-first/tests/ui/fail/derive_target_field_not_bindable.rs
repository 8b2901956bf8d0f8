// Every field not marked `skip` is bound into the approval: its type must say how.
use ask_first::{Target, fact::Id};

struct Colour(u8);

#[derive(Target)]
#[target(operation = "paint_note", question = "This will paint note {id}.")]
struct PaintNote {
    id: Id,
    colour: Colour,
}

fn main() {}
