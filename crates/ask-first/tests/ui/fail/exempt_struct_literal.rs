// An exemption cannot be written as a struct literal either, so no `Clearance::Exempt` can be
// made outside guard-core.
#[path = "../fixture.rs"]
mod fixture;

use fixture::WriteNote;
use ask_first::{Clearance, Exempt};

fn main() {
    let _forged: Clearance<WriteNote> = Clearance::Exempt(Exempt {
        target: WriteNote {
            id: "n1".to_owned(),
            shared: false,
        },
    });
}
