// A target that is not `Conditional` is always guarded: it has no `Exempt` and no `Clearance`,
// so no code path can treat it as exempt.
use mcp_guard::{Binding, Clearance, Exempt, Question, Target};

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

fn delete_exempt(_exempt: Exempt<DeleteNote>) {}

fn delete_cleared(_clearance: Clearance<DeleteNote>) {}

fn main() {
    let _ = (delete_exempt, delete_cleared);
}
