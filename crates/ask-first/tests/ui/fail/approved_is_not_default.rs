// There is no default approval to fall back on.
use ask_first::{Approved, Binding, Question, Target};

ask_first::wording! { struct Ask = "Delete this note?"; }

#[derive(Default)]
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
    let _forged: Approved<DeleteNote> = Default::default();
}
