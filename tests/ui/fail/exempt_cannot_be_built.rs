// Only the guard decides that a conditional target needs no approval: `Exempt::new` exists,
// but only inside guard-core.
use mcp_guard::{Binding, Conditional, Exempt, Question, Target};

mcp_guard::wording! { struct Ask = "Share this note?"; }

struct ShareNote;

impl Target for ShareNote {
    const OPERATION: &'static str = "share_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", "n1");
    }
    fn question(&self) -> Question {
        Question::new::<Ask>([])
    }
}

impl Conditional for ShareNote {}

fn main() {
    let _forged = Exempt::new(ShareNote);
}
