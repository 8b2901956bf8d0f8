// An approval is consumed by the operation it approves: using it a second time is a use after
// move.
#[path = "../fixture.rs"]
mod fixture;

use fixture::DeleteNote;
use ask_first::Approved;

struct Store;

impl Store {
    fn delete(&self, approved: Approved<DeleteNote>) {
        let _ = approved.into_target();
    }
}

fn delete_twice(store: &Store, approved: Approved<DeleteNote>) {
    store.delete(approved);
    store.delete(approved);
}

fn main() {
    let _ = delete_twice;
}
