// Only the guard decides that a conditional target needs no approval: `Exempt::new` exists,
// but only inside guard-core.
#[path = "../fixture.rs"]
mod fixture;

use fixture::WriteNote;
use ask_first::Exempt;

fn main() {
    let _forged = Exempt::new(WriteNote {
        id: "n1".to_owned(),
        shared: false,
    });
}
