// A target that is not `Conditional` is always guarded: it has no `Exempt`, so no code path
// can treat it as exempt. (`Clearance` for it: clearance_for_always_target.rs.)
#[path = "../fixture.rs"]
mod fixture;

use ask_first::Exempt;
use fixture::DeleteNote;

fn delete_exempt(_exempt: Exempt<DeleteNote>) {}

fn main() {
    let _ = delete_exempt;
}
