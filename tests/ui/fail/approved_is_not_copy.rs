// An approval is consumed by the operation it approves: using it a second time is a use after
// move.
use mcp_guard::{Approved, Binding, Question, Target};

mcp_guard::wording! { struct Ask = "Delete this note?"; }

struct DeleteNote;

impl Target for DeleteNote {
    const OPERATION: &'static str = "delete_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", "n1");
    }
    fn question(&self) -> Question {
        Question::new::<Ask>([])
    }
}

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
