// An approval cannot be written as a struct literal: its fields are private to guard-core.
#[path = "../fixture.rs"]
mod fixture;

use fixture::DeleteNote;
use ask_first::{Approved, ApprovedBy};

fn main() {
    let _forged = Approved {
        target: DeleteNote {
            id: "n1".to_owned(),
        },
        by: ApprovedBy::Dialog,
    };
}
