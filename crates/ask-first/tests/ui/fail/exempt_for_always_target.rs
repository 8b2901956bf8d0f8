// A target that is not `Conditional` is always guarded: it has no `Exempt` and no `Clearance`,
// so no code path can treat it as exempt.
#[path = "../fixture.rs"]
mod fixture;

use fixture::DeleteNote;
use ask_first::{Clearance, Exempt};

fn delete_exempt(_exempt: Exempt<DeleteNote>) {}

fn delete_cleared(_clearance: Clearance<DeleteNote>) {}

fn main() {
    let _ = (delete_exempt, delete_cleared);
}
