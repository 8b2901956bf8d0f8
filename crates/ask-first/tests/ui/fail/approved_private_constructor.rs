// `Approved::new` exists, but only inside guard-core, for the guard to call.
#[path = "../fixture.rs"]
mod fixture;

use fixture::DeleteNote;
use ask_first::{Approved, ApprovedBy};

fn main() {
    let _forged = Approved::new(
        DeleteNote {
            id: "n1".to_owned(),
        },
        ApprovedBy::Dialog,
    );
}
