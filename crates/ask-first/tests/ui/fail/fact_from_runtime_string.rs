// No `Fact` is made from free text: not by conversion, not as an id, not as wording.
use ask_first::Fact;

fn main() {
    let title: String = std::env::args().next().unwrap_or_default();
    let _converted = Fact::from(title.clone());
    let _as_id = Fact::id(title);
    let _as_word = Fact::word::<&'static str>();
}
