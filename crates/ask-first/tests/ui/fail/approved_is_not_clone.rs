// One approval, one operation: an approval cannot be cloned to run the operation twice.
#[path = "../fixture.rs"]
mod fixture;

use fixture::DeleteNote;
use ask_first::Approved;

fn delete(approved: Approved<DeleteNote>) {
    let _ = approved.into_target();
}

fn delete_twice(approved: Approved<DeleteNote>) {
    let copy = approved.clone();
    delete(approved);
    delete(copy);
}

fn main() {
    let _ = delete_twice;
}
