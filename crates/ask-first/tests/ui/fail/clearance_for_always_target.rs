// A target that is not `Conditional` is always guarded: it has no `Clearance`, so no handler
// can take one for it (and treat it as exempt when the condition is false).
#[path = "../fixture.rs"]
mod fixture;

use ask_first::Clearance;
use fixture::DeleteNote;

fn delete_cleared(_clearance: Clearance<DeleteNote>) {}

fn main() {
    let _ = delete_cleared;
}
