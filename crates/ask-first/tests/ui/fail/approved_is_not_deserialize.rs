// An approval cannot arrive in a tool's arguments: it does not implement `Deserialize`, which
// rmcp's `Parameters<T>` extractor requires of `T` (and of every field of `T`).
use ask_first::{Approved, Binding, Question, Target};
use serde::de::DeserializeOwned;

ask_first::wording! { struct Ask = "Delete this note?"; }

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

fn from_arguments<T: DeserializeOwned>() -> Option<T> {
    None
}

fn main() {
    let _smuggled = from_arguments::<Approved<DeleteNote>>();
}
