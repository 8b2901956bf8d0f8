//! What a guarded operation acts on, and the canonical binding an approval is tied to.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::evidence::Evidence;
use crate::question::Question;

/// What a guarded operation acts on: a record id, an id plus an exact set of names, the full
/// content about to be published.
///
/// A target names its operation, writes its canonical [`Binding`] (every field that decides
/// what the operation does), and builds the [`Question`] a person is shown. An approval is
/// bound to the fingerprint of the binding **and** to the fingerprint of the question as it
/// was rendered (every line and every fact it showed): the guard adds the second itself, so a
/// target whose binding forgets a fact shown in its question is still re-asked when that fact
/// changes. What executes is exactly what was approved, and only while it still reads as it
/// was shown.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a guard target",
    label = "this type does not implement `ask_first::Target`",
    note = "implement `ask_first::Target` for `{Self}`: name its OPERATION, bind every field that decides what runs, and build its Question"
)]
pub trait Target: Send + Sync + 'static {
    /// The operation's name, e.g. `"delete_gist"`. Bound into every approval and seal, so an
    /// approval for one operation never opens another.
    const OPERATION: &'static str;

    /// Writes every field that decides what the operation does into `binding`.
    fn bind(&self, binding: &mut Binding);

    /// The question shown to a person, made of server-side facts only.
    fn question(&self) -> Question;

    /// What exactly the operation changes, shown on the approval page below the question, as
    /// someone else's data: the items with their names, sizes and content digests, excerpts
    /// of content about to become readable, a link where the rest can be read. Its summary
    /// (names and digests) is in the result that carries the page's link.
    ///
    /// None by default. Give it when two operations of one kind can read alike in the
    /// question (two files of one size, two contents of one length): it is bound into what
    /// is approved (the fingerprint of what was shown covers it), so a yes for one evidence
    /// never runs for another, and changed evidence is asked again.
    fn evidence(&self) -> Evidence {
        Evidence::new()
    }

    /// The fingerprint of this target's binding: SHA-256 over the operation and the canonical
    /// binding (what "the same call" means).
    ///
    /// The guard never calls this method: it computes the binding's fingerprint and the
    /// question's ([`Fingerprint::of_question`]) itself, so overriding it changes nothing the
    /// guard seals or compares.
    fn fingerprint(&self) -> Fingerprint {
        binding_fingerprint(self)
    }
}

/// SHA-256 over `target`'s operation and canonical binding, computed by the guard itself (never
/// through [`Target::fingerprint`], which a target could override).
pub(crate) fn binding_fingerprint<T: Target + ?Sized>(target: &T) -> Fingerprint {
    let mut binding = Binding::new(T::OPERATION);
    target.bind(&mut binding);
    binding.finish()
}

/// What an approval is bound to: the target's binding (the call) and the question exactly as a
/// person is shown it (every line, every fact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Approval {
    /// The fingerprint of the binding: differs when the arguments differ.
    pub(crate) binding: Fingerprint,
    /// The fingerprint of the rendered question: differs when a shown fact changed.
    pub(crate) shown: Fingerprint,
}

impl Approval {
    /// Both fingerprints of `target`, computed by the guard alone.
    pub(crate) fn of<T: Target>(target: &T) -> Self {
        Self {
            binding: binding_fingerprint(target),
            shown: Fingerprint::of_shown(&target.question(), &target.evidence()),
        }
    }
}

/// A target whose guard depends on a condition (e.g. "the gist would not be private").
///
/// Only conditional targets have an [`Exempt`](crate::Exempt) form and a
/// [`Clearance`](crate::Clearance); an always-guarded target cannot be exempted at all.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is always guarded: it has no `Exempt` and no `Clearance`",
    label = "`{Self}` does not implement `ask_first::Conditional`",
    note = "take `Approved<{Self}>` with #[guarded(always)]; or, if this operation is guarded only under a condition, implement `ask_first::Conditional` for `{Self}` and use #[guarded(when = \"predicate\")]"
)]
pub trait Conditional: Target {}

/// The canonical encoding of a target's fields, hashed into a [`Fingerprint`].
///
/// Every entry is tagged and length-prefixed, so no two different bindings encode alike.
/// Sets are sorted and deduplicated: the binding of `["a", "a"]` equals that of `["a"]` and
/// differs from that of `["a", "b"]`.
pub struct Binding {
    hasher: Sha256,
}

impl Binding {
    fn new(operation: &str) -> Self {
        let mut binding = Self {
            hasher: Sha256::new(),
        };
        binding.raw(b"ask-first/binding/v1");
        binding.raw(operation.as_bytes());
        binding
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.hasher.update((bytes.len() as u64).to_be_bytes());
        self.hasher.update(bytes);
    }

    fn entry(&mut self, tag: u8, name: &str) {
        self.hasher.update([tag]);
        self.raw(name.as_bytes());
    }

    /// Binds a text field.
    pub fn text(&mut self, name: &str, value: &str) -> &mut Self {
        self.entry(b't', name);
        self.raw(value.as_bytes());
        self
    }

    /// Binds an optional text field; `None` and `Some("")` bind differently.
    pub fn optional_text(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(value) => self.text(name, value),
            None => {
                self.entry(b'n', name);
                self
            }
        }
    }

    /// Binds raw bytes.
    pub fn bytes(&mut self, name: &str, value: &[u8]) -> &mut Self {
        self.entry(b'b', name);
        self.raw(value);
        self
    }

    /// Binds a number.
    pub fn number(&mut self, name: &str, value: u64) -> &mut Self {
        self.entry(b'u', name);
        self.hasher.update(value.to_be_bytes());
        self
    }

    /// Binds a yes/no field.
    pub fn flag(&mut self, name: &str, value: bool) -> &mut Self {
        self.entry(b'f', name);
        self.hasher.update([u8::from(value)]);
        self
    }

    /// Binds a set of texts: sorted and deduplicated first, so order and repeats do not count.
    pub fn set<I, S>(&mut self, name: &str, items: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut items: Vec<S> = items.into_iter().collect();
        items.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
        items.dedup_by(|a, b| a.as_ref() == b.as_ref());
        self.entry(b's', name);
        self.hasher.update((items.len() as u64).to_be_bytes());
        for item in &items {
            self.raw(item.as_ref().as_bytes());
        }
        self
    }

    /// Binds an ordered list of texts: order and repeats count.
    pub fn list<I, S>(&mut self, name: &str, items: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let items: Vec<S> = items.into_iter().collect();
        self.entry(b'l', name);
        self.hasher.update((items.len() as u64).to_be_bytes());
        for item in &items {
            self.raw(item.as_ref().as_bytes());
        }
        self
    }

    fn finish(self) -> Fingerprint {
        Fingerprint(self.hasher.finalize().into())
    }
}

/// SHA-256 of a target's operation and canonical binding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// SHA-256 over the question exactly as a person reads it (its rendered lines and facts).
    /// An approval is bound to it beside the binding's fingerprint; hand-written seals (the
    /// seal's `shown` scope, as the conformance example's) use it too.
    pub fn of_question(question: &Question) -> Self {
        let mut hasher = Sha256::new();
        let rendered = question.render();
        hasher.update(b"ask-first/question/v1");
        hasher.update((rendered.len() as u64).to_be_bytes());
        hasher.update(rendered.as_bytes());
        Self(hasher.finalize().into())
    }

    /// SHA-256 over what a person is shown of a target: the question and the evidence below
    /// it ([`Target::evidence`]). Without evidence, exactly [`of_question`](Self::of_question).
    pub fn of_shown(question: &Question, evidence: &Evidence) -> Self {
        if evidence.is_empty() {
            return Self::of_question(question);
        }
        let mut hasher = Sha256::new();
        let rendered = question.render();
        hasher.update(b"ask-first/shown/v1");
        hasher.update((rendered.len() as u64).to_be_bytes());
        hasher.update(rendered.as_bytes());
        evidence.encode(&mut hasher);
        Self(hasher.finalize().into())
    }

    /// The 32 bytes of the fingerprint.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::{Fact, Question};

    crate::wording!(struct Ask = "Delete {} item(s)?";);

    struct Files {
        id: &'static str,
        names: Vec<&'static str>,
    }

    impl Target for Files {
        const OPERATION: &'static str = "delete_files";
        fn bind(&self, b: &mut Binding) {
            b.text("id", self.id).set("names", &self.names);
        }
        fn question(&self) -> Question {
            Question::new::<Ask>([Fact::count(self.names.len() as u64)])
        }
    }

    struct Other;
    impl Target for Other {
        const OPERATION: &'static str = "other";
        fn bind(&self, b: &mut Binding) {
            b.text("id", "g1").set("names", ["a"]);
        }
        fn question(&self) -> Question {
            Question::new::<Ask>([])
        }
    }

    fn fp(id: &'static str, names: &[&'static str]) -> Fingerprint {
        Files {
            id,
            names: names.to_vec(),
        }
        .fingerprint()
    }

    #[test]
    fn sets_are_sorted_and_deduplicated() {
        assert_eq!(fp("g1", &["a"]), fp("g1", &["a", "a"]));
        assert_eq!(fp("g1", &["b", "a"]), fp("g1", &["a", "b"]));
        assert_ne!(fp("g1", &["a"]), fp("g1", &["a", "b"]));
    }

    #[test]
    fn every_field_and_the_operation_are_bound() {
        assert_ne!(fp("g1", &["a"]), fp("g2", &["a"]));
        assert_ne!(fp("g1", &["a"]), Other.fingerprint());
    }

    #[test]
    fn length_prefixes_keep_neighbouring_fields_apart() {
        let joined = fp("g1", &["ab"]);
        let split = fp("g1", &["a", "b"]);
        assert_ne!(joined, split);
        let mut one = Binding::new("op");
        one.text("x", "ab").text("y", "");
        let mut two = Binding::new("op");
        two.text("x", "a").text("y", "b");
        assert_ne!(one.finish(), two.finish());
    }

    #[test]
    fn optional_none_differs_from_empty() {
        let mut none = Binding::new("op");
        none.optional_text("title", None);
        let mut empty = Binding::new("op");
        empty.optional_text("title", Some(""));
        assert_ne!(none.finish(), empty.finish());
    }

    #[test]
    fn lists_keep_order() {
        let mut ab = Binding::new("op");
        ab.list("l", ["a", "b"]);
        let mut ba = Binding::new("op");
        ba.list("l", ["b", "a"]);
        assert_ne!(ab.finish(), ba.finish());
    }

    #[test]
    fn the_question_is_fingerprinted_apart_from_the_binding() {
        // The binding holds only the id; the question shows the count of names.
        let one = Files {
            id: "g1",
            names: vec!["a"],
        };
        let two = Files {
            id: "g1",
            names: vec!["a", "b"],
        };
        let (a, b) = (Approval::of(&one), Approval::of(&two));
        assert_ne!(a.binding, b.binding);
        assert_ne!(a.shown, b.shown);
        // An overridden `fingerprint` is never what the guard computes.
        assert_eq!(a.binding, binding_fingerprint(&one));
        assert_eq!(
            a.shown,
            Fingerprint::of_question(&Question::new::<Ask>([Fact::count(1)]))
        );
    }

    #[test]
    fn displays_as_hex() {
        let shown = fp("g1", &["a"]).to_string();
        assert_eq!(shown.len(), 64);
        assert!(shown.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
