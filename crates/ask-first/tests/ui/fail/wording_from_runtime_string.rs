// `Wording::TEXT` is an associated const: it cannot be computed from anything known only at
// run time, such as a value read from the environment, a request or a record.
use ask_first::{Question, Wording};

fn read_question() -> &'static str {
    std::env::var("QUESTION").unwrap_or_default().leak()
}

struct FromEnvironment;

impl Wording for FromEnvironment {
    const TEXT: &'static str = read_question();
}

fn main() {
    let _ = Question::new::<FromEnvironment>([]);
}
