//! The notes server's domain: the in-memory store, the two guarded operations' targets and
//! their questions. `examples/notes.rs` serves it; the framework's integration tests in
//! `tests/` drive the same store and targets (`#[path = "../examples/notes/store.rs"]`), so
//! the notes fixture is written once.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use ask_first::{
    Approved, Clearance, Conditional, InputError, Target,
    fact::{Count, Evidence, EvidenceItem, Id},
};
use schemars::JsonSchema;
use serde::Serialize;

// ---------------------------------------------------------------------------------------------
// The store: its writing methods take the guard's proofs by value, so no path reaches them
// without one.
// ---------------------------------------------------------------------------------------------

/// A note, as stored and as listed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Note {
    /// The note's id.
    pub id: String,
    /// Its text: data, never instructions.
    pub text: String,
    /// Whether everyone may read it.
    pub shared: bool,
}

/// The notes, in memory.
pub(crate) struct Store {
    notes: Mutex<BTreeMap<String, Note>>,
}

impl Store {
    /// `n1`, `n2` and `n3`, private: "first note", "second note", "third note".
    pub(crate) fn seeded() -> Self {
        let notes = [
            ("n1", "first note"),
            ("n2", "second note"),
            ("n3", "third note"),
        ]
        .into_iter()
        .map(|(id, text)| {
            let note = Note {
                id: id.to_owned(),
                text: text.to_owned(),
                shared: false,
            };
            (id.to_owned(), note)
        })
        .collect();
        Self {
            notes: Mutex::new(notes),
        }
    }

    /// The notes themselves (tests look inside).
    pub(crate) fn notes(&self) -> MutexGuard<'_, BTreeMap<String, Note>> {
        // A panic while holding the lock leaves the map itself intact.
        self.notes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every note, in id order.
    pub(crate) fn list(&self) -> Vec<Note> {
        self.notes().values().cloned().collect()
    }

    /// The length of a note's text, if the note exists.
    pub(crate) fn text_len(&self, id: &Id) -> Option<usize> {
        self.notes().get(id.as_str()).map(|note| note.text.len())
    }

    /// Deletes exactly the approved note.
    pub(crate) fn delete(&self, approved: Approved<DeleteNote>) -> Option<Note> {
        let target = approved.into_target();
        self.notes().remove(target.id.as_str())
    }

    /// Writes exactly the cleared note: approved when it ends up shared, exempt otherwise.
    pub(crate) fn write(&self, clearance: Clearance<WriteNote>) -> Note {
        let WriteNote { id, text, shared } = clearance.into_target();
        let note = Note {
            id: id.as_str().to_owned(),
            text,
            shared,
        };
        self.notes().insert(note.id.clone(), note.clone());
        note
    }
}

// ---------------------------------------------------------------------------------------------
// Targets: what each guarded operation acts on, what binds an approval, what a person reads.
// ---------------------------------------------------------------------------------------------

/// Deleting one note, bound to its id.
///
/// `#[derive(Target)]` binds every field but those marked `skip`, and checks at compile time
/// that each placeholder names a field (or a method) whose type is a fact kind.
#[derive(Target)]
#[target(
    operation = "delete_note",
    question = "This will delete note {id} ({bytes} bytes of text). It cannot be undone."
)]
pub(crate) struct DeleteNote {
    /// The note.
    pub id: Id,
    /// The length of its text, shown in the question (a count), not bound: it does not decide
    /// which note is deleted.
    #[target(count, skip)]
    pub bytes: u64,
}

/// Writing a note, bound to its id, its exact text and whether it is shared. The question
/// shows the size of the text, never the text; the approval page shows the text below it, as
/// the caller's (`evidence`), so two texts of one length never read alike there.
#[derive(Target)]
#[target(
    operation = "write_note",
    question = "This will make note {id} visible to everyone with {text_bytes()} bytes of text.",
    evidence = "readable()"
)]
pub(crate) struct WriteNote {
    /// The note.
    pub id: Id,
    /// Its whole new text.
    pub text: String,
    /// Whether it ends up shared.
    pub shared: bool,
}

impl Conditional for WriteNote {}

impl WriteNote {
    /// The guard's condition: a note that ends up shared is visible to everyone.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared
    }

    /// The size of the text, as the question shows it.
    pub(crate) fn text_bytes(&self) -> Count {
        Count(self.text.len() as u64)
    }

    /// What the approval page shows below the question: the text everyone will be able to
    /// read, framed as the caller's, with its size and digest (the result that carries the
    /// page's link names the same digest).
    pub(crate) fn readable(&self) -> Evidence {
        Evidence::new().group(
            "Note text everyone will be able to read",
            [EvidenceItem::readable(
                self.id.as_str(),
                self.text.as_bytes(),
            )],
        )
    }
}

/// The note id in `raw`, or a rejection that says what an id looks like.
pub(crate) fn note_id(raw: &str) -> Result<Id, InputError> {
    Id::new(raw).map_err(|_| {
        InputError::new(
            "note_id is not a note id: use letters, digits, '-', '_', '.' or ':' (1 to 64), e.g. n1; call list_notes to see the ids",
        )
    })
}
