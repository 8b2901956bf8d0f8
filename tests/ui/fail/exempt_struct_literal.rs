// An exemption cannot be written as a struct literal either, so no `Clearance::Exempt` can be
// made outside guard-core.
use mcp_guard::{Binding, Clearance, Conditional, Exempt, Question, Target};

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
    let _forged: Clearance<ShareNote> = Clearance::Exempt(Exempt { target: ShareNote });
}
