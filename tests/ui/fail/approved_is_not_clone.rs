// One approval, one operation: an approval cannot be cloned to run the operation twice.
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
