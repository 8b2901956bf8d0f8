// The derive reads named fields; an enum's target is written by hand.
use ask_first::Target;

#[derive(Target)]
#[target(operation = "delete", question = "This will delete it.")]
enum Delete {
    Note,
    Gist,
}

fn main() {}
