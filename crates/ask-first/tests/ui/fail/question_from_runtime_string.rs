// A question is fixed wording plus facts: a run-time string (a title, a file name, anything a
// request or a record carries) is neither.
use ask_first::Question;

ask_first::wording! { struct Ask = "Delete the gist {}?"; }

fn main() {
    let title: String = std::env::args().next().unwrap_or_default();
    let _as_wording = Question::new::<String>([]);
    let _as_fact = Question::new::<Ask>([title]);
}
