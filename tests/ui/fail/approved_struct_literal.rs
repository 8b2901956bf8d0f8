// An approval cannot be written as a struct literal: its fields are private to guard-core.
use mcp_guard::{Approved, ApprovedBy, Binding, Question, Target};

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

fn main() {
    let _forged = Approved {
        target: DeleteNote,
        by: ApprovedBy::Dialog,
    };
}
