//! `#[derive(Target)]` against the hand-written `impl Target` it replaces: the same
//! operation, the same fingerprint (so approvals and seals made before the conversion still
//! match) and the same question text. The notes example's targets are the derived ones.

#[path = "../examples/notes/store.rs"]
#[allow(dead_code)]
mod store;

use ask_first::{
    Binding, Fact, Question, Target,
    fact::{Id, Name, PathName},
};
use store::{DeleteNote, WriteNote};

ask_first::wording! {
    struct DeleteQuestion = "This will delete note {} ({} bytes of text). It cannot be undone.";
    struct ShareQuestion = "This will make note {} visible to everyone with {} bytes of text.";
}

/// `DeleteNote` as it was written by hand before the derive.
struct HandDelete {
    id: Id,
    bytes: u64,
}

impl Target for HandDelete {
    const OPERATION: &'static str = "delete_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", self.id.as_str());
    }
    fn question(&self) -> Question {
        Question::new::<DeleteQuestion>([Fact::id(self.id.clone()), Fact::count(self.bytes)])
    }
}

/// `WriteNote` as it was written by hand before the derive.
struct HandWrite {
    id: Id,
    text: String,
    shared: bool,
}

impl Target for HandWrite {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding
            .text("id", self.id.as_str())
            .text("text", &self.text)
            .flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<ShareQuestion>([
            Fact::id(self.id.clone()),
            Fact::count(self.text.len() as u64),
        ])
    }
}

fn id(text: &str) -> Id {
    Id::new(text).expect("a valid id")
}

#[test]
fn derived_delete_matches_the_hand_written_one() {
    let derived = DeleteNote {
        id: id("n1"),
        bytes: 10,
    };
    let hand = HandDelete {
        id: id("n1"),
        bytes: 10,
    };
    assert_eq!(DeleteNote::OPERATION, HandDelete::OPERATION);
    assert_eq!(derived.fingerprint(), hand.fingerprint());
    assert_eq!(derived.question(), hand.question());
    assert_eq!(
        derived.question().render(),
        "This will delete note n1 (10 bytes of text). It cannot be undone."
    );
    let other = DeleteNote {
        id: id("n2"),
        bytes: 10,
    };
    assert_ne!(derived.fingerprint(), other.fingerprint());
}

#[test]
fn derived_write_matches_the_hand_written_one() {
    let derived = WriteNote {
        id: id("n2"),
        text: "for everyone".to_owned(),
        shared: true,
    };
    let hand = HandWrite {
        id: id("n2"),
        text: "for everyone".to_owned(),
        shared: true,
    };
    assert_eq!(derived.fingerprint(), hand.fingerprint());
    assert_eq!(derived.question(), hand.question());
    for changed in [
        WriteNote {
            id: id("n2"),
            text: "for everyone!".to_owned(),
            shared: true,
        },
        WriteNote {
            id: id("n2"),
            text: "for everyone".to_owned(),
            shared: false,
        },
    ] {
        assert_ne!(derived.fingerprint(), changed.fingerprint());
    }
}

/// A target over names: every field bound, names shown framed.
#[derive(Target)]
#[target(
    operation = "share_files",
    question = "This will share {files} from {folder} with {with}."
)]
struct ShareFiles {
    folder: PathName,
    files: Vec<Name>,
    with: ask_first::fact::Address,
}

#[test]
fn names_are_bound_and_shown_framed() {
    let target = ShareFiles {
        folder: PathName::from_slashes("team/Q3"),
        files: vec![Name::new("a.txt"), Name::new("Approve this\u{202E}")],
        with: ask_first::fact::Address::new("ana@example.org"),
    };
    assert_eq!(
        target.question().render(),
        "This will share caller-supplied names «a.txt» and «Approve this<U+202E>» \
         from caller-supplied path «team»/«Q3» with caller-supplied address «ana@example.org»."
    );
    let reordered = ShareFiles {
        files: vec![Name::new("Approve this\u{202E}"), Name::new("a.txt")],
        ..target
    };
    // A list is ordered: the binding changes with the order.
    let original = ShareFiles {
        folder: PathName::from_slashes("team/Q3"),
        files: vec![Name::new("a.txt"), Name::new("Approve this\u{202E}")],
        with: ask_first::fact::Address::new("ana@example.org"),
    };
    assert_ne!(original.fingerprint(), reordered.fingerprint());
    let elsewhere = ShareFiles {
        folder: PathName::from_slashes("team/Q4"),
        ..original
    };
    assert_ne!(reordered.fingerprint(), elsewhere.fingerprint());
}

/// Plain numbers said to be a count, a size or a date in place; a duration by its newtype.
#[derive(Target)]
#[target(
    operation = "expire_link",
    question = "This will expire link {link} ({hits} visits, {size}), made {made}, after {after}."
)]
struct ExpireLink {
    link: Id,
    #[target(count)]
    hits: u32,
    #[target(bytes)]
    size: u64,
    #[target(date)]
    made: i64,
    #[target(skip)]
    after: ask_first::fact::Span,
}

#[test]
fn numbers_are_shown_as_the_kind_they_are_declared() {
    let target = ExpireLink {
        link: id("l1"),
        hits: 3,
        size: 1536,
        made: 1_796_041_800,
        after: ask_first::fact::Span(std::time::Duration::from_secs(330)),
    };
    assert_eq!(
        target.question().render(),
        "This will expire link l1 (3 visits, 1.5 KiB), made 2026-11-30 12:30 UTC, after 5 min 30 s."
    );
    let later = ExpireLink {
        made: 1_796_041_801,
        after: ask_first::fact::Span(std::time::Duration::from_secs(1)),
        ..target
    };
    // `made` is bound (a second apart), `after` is not.
    let again = ExpireLink {
        link: id("l1"),
        hits: 3,
        size: 1536,
        made: 1_796_041_800,
        after: ask_first::fact::Span(std::time::Duration::from_secs(1)),
    };
    assert_ne!(later.fingerprint(), again.fingerprint());
    let shown_differently = ExpireLink {
        after: ask_first::fact::Span(std::time::Duration::from_secs(330)),
        ..again
    };
    let again = ExpireLink {
        link: id("l1"),
        hits: 3,
        size: 1536,
        made: 1_796_041_800,
        after: ask_first::fact::Span(std::time::Duration::from_secs(1)),
    };
    assert_eq!(shown_differently.fingerprint(), again.fingerprint());
}
