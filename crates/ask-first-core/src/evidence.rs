//! What exactly an operation changes, shown on the approval page below the question: the
//! [`Evidence`] a target gives ([`Target::evidence`](crate::Target::evidence)).
//!
//! The question says what kind of change it is, in the server's own words and facts only. Two
//! operations of one kind can still read alike (deleting `scratch.txt` or `keep.txt`, both 10
//! bytes; publishing two contents of one length), so the page also shows the evidence: the
//! items that change, each with its name, its size and a digest of its content, and for
//! content about to become readable a bounded excerpt of it. Names and content are somebody
//! else's text (whoever wrote the gist, the note, the call), so they are kept as data: a name
//! is framed and escaped as a caller-supplied name is in a question, an excerpt has its
//! control and invisible characters escaped, and the page frames the whole as "supplied by the
//! caller, not written by this server".
//!
//! The evidence is bound into what is approved (the fingerprint of what was shown covers it),
//! so a yes for one evidence never runs for another, and changed evidence is asked again.

use sha2::{Digest as _, Sha256};

use crate::question::{Fact, Link, framed, unreadable};

/// How many hex digits of SHA-256 an item's digest (and the whole evidence's) shows: 80 bits.
/// Finding two contents with one digest takes about 2⁴⁰ SHA-256 computations when one party
/// chooses both.
const DIGEST_HEX_DIGITS: usize = 20;
/// The most bytes of readable text an excerpt shows of one item.
const EXCERPT_BYTES: usize = 2 * 1024;
/// The most bytes of readable text all excerpts of one evidence show together.
const EXCERPTS_TOTAL_BYTES: usize = 8 * 1024;
/// The most items one evidence lists; further items are counted, and the evidence's digest
/// still covers them.
const MAX_ITEMS: usize = 64;

/// What exactly an operation changes: groups of items under the server's own headings, and an
/// optional link on the operator's site (where the rest can be read).
///
/// ```
/// use ask_first_core::{Evidence, EvidenceItem};
/// let evidence = Evidence::new()
///     .group("Files deleted", [EvidenceItem::new("scratch.txt", b"temporary\n")])
///     .group("Files that stay", [EvidenceItem::new("keep.txt", b"important\n")]);
/// assert_eq!(
///     evidence.summary(),
///     "Files deleted:\n\
///      - «scratch.txt»: 10 bytes, SHA-256 da3309ab46d9facc7fcd\n\
///      Files that stay:\n\
///      - «keep.txt»: 10 bytes, SHA-256 1fd84914aba013d0f579\n\
///      Digest of all of it: d83ab025b3e0952b78b2"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    groups: Vec<EvidenceGroup>,
    link: Option<String>,
    excerpt_budget_used: usize,
}

/// Items under one heading of the server's (e.g. "Files deleted").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceGroup {
    heading: String,
    items: Vec<EvidenceItem>,
    omitted: u64,
    omitted_digest: Option<String>,
}

/// One thing that changes: its name (framed and escaped), its size, a digest of its content,
/// and, for content about to become readable, a bounded excerpt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceItem {
    name: String,
    size: u64,
    digest: String,
    digested: u64,
    excerpt: Option<Excerpt>,
}

/// The beginning of an item's content, made readable: control and invisible characters shown
/// as `<U+XXXX>`, a CRLF line ending as a line break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    shown: Shown,
    more: u64,
}

/// What an excerpt shows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shown {
    /// Readable text.
    Text(String),
    /// Nothing: the content's beginning is not UTF-8 text.
    Binary,
    /// Nothing: the evidence's excerpts had used their room (`EXCERPTS_TOTAL_BYTES`).
    Withheld,
}

impl Shown {
    fn len(&self) -> usize {
        match self {
            Self::Text(text) => text.len(),
            _ => 0,
        }
    }
}

impl Evidence {
    /// No evidence: the page shows the question alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `items` under `heading`, the server's own words (fixed in the source); no items,
    /// no group. Beyond 64
    /// items in all, items are counted rather than listed (their digest still shown); an
    /// excerpt that would take the evidence's excerpts beyond 8 KiB is withheld (and said to
    /// be).
    pub fn group(
        mut self,
        heading: &'static str,
        items: impl IntoIterator<Item = EvidenceItem>,
    ) -> Self {
        let mut listed = Vec::new();
        let mut rest = Sha256::new();
        let mut omitted = 0u64;
        let room = MAX_ITEMS.saturating_sub(self.item_count());
        for mut item in items {
            if listed.len() >= room {
                omitted += 1;
                item.encode(&mut rest);
                continue;
            }
            if let Some(excerpt) = &mut item.excerpt {
                let used = excerpt.shown.len();
                if self.excerpt_budget_used + used > EXCERPTS_TOTAL_BYTES {
                    *excerpt = Excerpt {
                        shown: Shown::Withheld,
                        more: item.size,
                    };
                } else {
                    self.excerpt_budget_used += used;
                }
            }
            listed.push(item);
        }
        if listed.is_empty() && omitted == 0 {
            return self;
        }
        self.groups.push(EvidenceGroup {
            heading: heading.to_owned(),
            items: listed,
            omitted,
            omitted_digest: (omitted > 0).then(|| short_hex(&rest.finalize())),
        });
        self
    }

    /// Adds a link on the operator's site where the whole can be read (a gist's page). Built
    /// from a configured base and validated identifiers only, so a caller supplies no part of
    /// it but identifiers.
    pub fn with_link(mut self, link: Link) -> Self {
        self.link = Some(Fact::link(link).to_string());
        self
    }

    /// Whether there is nothing to show (the default for a target that gives none).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.link.is_none()
    }

    /// The groups, in the order added.
    pub fn groups(&self) -> &[EvidenceGroup] {
        &self.groups
    }

    /// The link on the operator's site, as text, if any.
    pub fn link(&self) -> Option<&str> {
        self.link.as_deref()
    }

    fn item_count(&self) -> usize {
        self.groups.iter().map(|g| g.items.len()).sum()
    }

    /// The digest of everything this evidence holds (every item, also those only counted, and
    /// the link), 20 hex digits of SHA-256: what a person compares first.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        self.encode(&mut hasher);
        short_hex(&hasher.finalize())
    }

    /// The evidence by name, size and digest, one line each, for texts a model reads (the
    /// result that carries the page's link): never an excerpt. Names stay framed and escaped.
    pub fn summary(&self) -> String {
        let mut lines = Vec::new();
        for group in &self.groups {
            lines.push(format!("{}:", group.heading));
            for item in &group.items {
                lines.push(format!("- {}", item.line()));
            }
            if let Some(digest) = &group.omitted_digest {
                lines.push(format!(
                    "- and {} more, not listed (their digest: {digest})",
                    group.omitted
                ));
            }
        }
        if let Some(link) = &self.link {
            lines.push(format!("Link: {link}"));
        }
        lines.push(format!("Digest of all of it: {}", self.digest()));
        lines.join("\n")
    }

    /// Writes every field into `hasher`, tagged and length-prefixed: the canonical form the
    /// fingerprint of what was shown and [`digest`](Self::digest) are taken over.
    pub(crate) fn encode(&self, hasher: &mut Sha256) {
        raw(hasher, b"ask-first/evidence/v1");
        hasher.update((self.groups.len() as u64).to_be_bytes());
        for group in &self.groups {
            raw(hasher, group.heading.as_bytes());
            hasher.update((group.items.len() as u64).to_be_bytes());
            for item in &group.items {
                item.encode(hasher);
            }
            hasher.update(group.omitted.to_be_bytes());
            raw(
                hasher,
                group.omitted_digest.as_deref().unwrap_or("").as_bytes(),
            );
        }
        match &self.link {
            Some(link) => {
                hasher.update([1]);
                raw(hasher, link.as_bytes());
            }
            None => hasher.update([0]),
        }
    }

    /// The evidence as JSON (what an approval record keeps).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let groups: Vec<serde_json::Value> =
            self.groups.iter().map(EvidenceGroup::to_json).collect();
        serde_json::json!({ "groups": groups, "link": self.link })
    }

    /// Reads [`to_json`](Self::to_json)'s form; `None` if anything is missing or malformed.
    pub(crate) fn from_json(value: &serde_json::Value) -> Option<Self> {
        let groups = value
            .get("groups")?
            .as_array()?
            .iter()
            .map(EvidenceGroup::from_json)
            .collect::<Option<Vec<_>>>()?;
        let link = match value.get("link")? {
            serde_json::Value::Null => None,
            other => Some(other.as_str()?.to_owned()),
        };
        let excerpt_budget_used = groups
            .iter()
            .flat_map(|g| &g.items)
            .filter_map(|i| i.excerpt.as_ref().map(|e| e.shown.len()))
            .sum();
        Some(Self {
            groups,
            link,
            excerpt_budget_used,
        })
    }
}

impl EvidenceGroup {
    /// The server's heading.
    pub fn heading(&self) -> &str {
        &self.heading
    }

    /// The items listed.
    pub fn items(&self) -> &[EvidenceItem] {
        &self.items
    }

    /// How many further items were counted rather than listed, and their digest.
    pub fn omitted(&self) -> Option<(u64, &str)> {
        self.omitted_digest.as_deref().map(|d| (self.omitted, d))
    }

    fn to_json(&self) -> serde_json::Value {
        let items: Vec<serde_json::Value> = self.items.iter().map(EvidenceItem::to_json).collect();
        serde_json::json!({
            "heading": self.heading,
            "items": items,
            "omitted": self.omitted,
            "omitted_digest": self.omitted_digest,
        })
    }

    fn from_json(value: &serde_json::Value) -> Option<Self> {
        Some(Self {
            heading: value.get("heading")?.as_str()?.to_owned(),
            items: value
                .get("items")?
                .as_array()?
                .iter()
                .map(EvidenceItem::from_json)
                .collect::<Option<Vec<_>>>()?,
            omitted: value.get("omitted")?.as_u64()?,
            omitted_digest: optional_text(value.get("omitted_digest")?)?,
        })
    }
}

impl EvidenceItem {
    /// An item named `name` (any text: shown framed and escaped) whose whole content is
    /// `content`: its size and digest.
    pub fn new(name: impl AsRef<str>, content: &[u8]) -> Self {
        Self {
            name: framed(name.as_ref()),
            size: content.len() as u64,
            digest: short_hex(&Sha256::digest(content)),
            digested: content.len() as u64,
            excerpt: None,
        }
    }

    /// An item whose content was hashed already (as a server that streams a file through
    /// SHA-256 holds it): its name, its whole size and the SHA-256 of all of it.
    pub fn hashed(name: impl AsRef<str>, size: u64, sha256: &[u8; 32]) -> Self {
        Self {
            name: framed(name.as_ref()),
            size,
            digest: short_hex(sha256),
            digested: size,
            excerpt: None,
        }
    }

    /// As [`new`](Self::new), with an excerpt of `content`: for content about to become
    /// readable. At most 2 KiB of readable text; content whose beginning is not UTF-8 is
    /// said to be binary, not shown.
    pub fn readable(name: impl AsRef<str>, content: &[u8]) -> Self {
        Self::new(name, content).with_excerpt(content)
    }

    /// Adds an excerpt made from `beginning`, the first bytes of the content (all of it, or
    /// as much as was kept: an excerpt shows at most 2 KiB of text): for content about to
    /// become readable whose item was made with [`hashed`](Self::hashed).
    pub fn with_excerpt(mut self, beginning: &[u8]) -> Self {
        self.excerpt = Some(Excerpt::of(beginning, self.size));
        self
    }

    /// Says that the content given was only the first part of the whole, which is `size`
    /// bytes (as when a backend answers with a cut content): the digest covers the part read,
    /// and the page says so.
    pub fn whole_size(mut self, size: u64) -> Self {
        let size = size.max(self.digested);
        if let Some(excerpt) = &mut self.excerpt {
            excerpt.more = (excerpt.more + size).saturating_sub(self.size);
        }
        self.size = size;
        self
    }

    /// The name, framed and escaped: `«keep.txt»`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size of the whole content, in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The digest of the content read: the first 20 hex digits (80 bits) of its SHA-256.
    /// Finding two contents with one digest takes about 2⁴⁰ SHA-256 computations when one
    /// party chooses both.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// How many bytes the digest covers, when that is less than the whole.
    pub fn digest_covers_part(&self) -> Option<u64> {
        (self.digested < self.size).then_some(self.digested)
    }

    /// The excerpt, for content about to become readable.
    pub fn excerpt(&self) -> Option<&Excerpt> {
        self.excerpt.as_ref()
    }

    /// `«keep.txt»: 10 bytes, SHA-256 …` (and which part the digest covers).
    fn line(&self) -> String {
        let mut line = format!(
            "{}: {}, SHA-256 {}",
            self.name,
            Fact::bytes(self.size),
            self.digest
        );
        if let Some(part) = self.digest_covers_part() {
            line.push_str(&format!(" of its first {}", Fact::bytes(part)));
        }
        line
    }

    fn encode(&self, hasher: &mut Sha256) {
        raw(hasher, self.name.as_bytes());
        hasher.update(self.size.to_be_bytes());
        raw(hasher, self.digest.as_bytes());
        hasher.update(self.digested.to_be_bytes());
        match &self.excerpt {
            None => hasher.update([0]),
            Some(excerpt) => {
                match &excerpt.shown {
                    Shown::Binary => hasher.update([1]),
                    Shown::Withheld => hasher.update([2]),
                    Shown::Text(text) => {
                        hasher.update([3]);
                        raw(hasher, text.as_bytes());
                    }
                }
                hasher.update(excerpt.more.to_be_bytes());
            }
        }
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "size": self.size,
            "digest": self.digest,
            "digested": self.digested,
            "excerpt": self.excerpt.as_ref().map(|e| match &e.shown {
                Shown::Text(text) => serde_json::json!({ "text": text, "more": e.more }),
                Shown::Binary => serde_json::json!({ "binary": true, "more": e.more }),
                Shown::Withheld => serde_json::json!({ "withheld": true, "more": e.more }),
            }),
        })
    }

    fn from_json(value: &serde_json::Value) -> Option<Self> {
        let excerpt = match value.get("excerpt")? {
            serde_json::Value::Null => None,
            excerpt => {
                let flag = |key: &str| excerpt.get(key).and_then(serde_json::Value::as_bool);
                let shown = match excerpt.get("text") {
                    Some(text) => Shown::Text(text.as_str()?.to_owned()),
                    None if flag("binary") == Some(true) => Shown::Binary,
                    None if flag("withheld") == Some(true) => Shown::Withheld,
                    None => return None,
                };
                Some(Excerpt {
                    shown,
                    more: excerpt.get("more")?.as_u64()?,
                })
            }
        };
        Some(Self {
            name: value.get("name")?.as_str()?.to_owned(),
            size: value.get("size")?.as_u64()?,
            digest: value.get("digest")?.as_str()?.to_owned(),
            digested: value.get("digested")?.as_u64()?,
            excerpt,
        })
    }
}

impl Excerpt {
    /// The excerpt of `content`, the beginning of a whole of `whole` bytes.
    fn of(content: &[u8], whole: u64) -> Self {
        // Enough bytes for the bound even where every character is escaped; a cut there may
        // split a character, so only the bytes up to the last whole one need be UTF-8.
        let head = &content[..content.len().min(EXCERPT_BYTES * 4)];
        let text = match std::str::from_utf8(head) {
            Ok(text) => Some(text),
            Err(error) if error.error_len().is_none() && (head.len() as u64) < whole => {
                std::str::from_utf8(&head[..error.valid_up_to()]).ok()
            }
            Err(_) => None,
        };
        let Some(text) = text else {
            return Self {
                shown: Shown::Binary,
                more: whole,
            };
        };
        let mut shown = String::new();
        let mut read = 0usize;
        for c in text.chars() {
            let piece = if c == '\r' && text[read + 1..].starts_with('\n') {
                // A CRLF line ending reads as a line break.
                String::new()
            } else if unreadable(c) {
                format!("<U+{:04X}>", u32::from(c))
            } else {
                c.to_string()
            };
            if shown.len() + piece.len() > EXCERPT_BYTES {
                break;
            }
            shown.push_str(&piece);
            read += c.len_utf8();
        }
        Self {
            shown: Shown::Text(shown),
            more: whole.saturating_sub(read as u64),
        }
    }

    /// The readable text shown; `None` when nothing is (see [`is_binary`](Self::is_binary)
    /// and [`is_withheld`](Self::is_withheld)).
    pub fn text(&self) -> Option<&str> {
        match &self.shown {
            Shown::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Whether the content's beginning is not UTF-8 text, so nothing of it is shown.
    pub fn is_binary(&self) -> bool {
        self.shown == Shown::Binary
    }

    /// Whether the excerpt was withheld because the evidence's excerpts had used their room.
    pub fn is_withheld(&self) -> bool {
        self.shown == Shown::Withheld
    }

    /// How many bytes of the content the excerpt does not show.
    pub fn more(&self) -> u64 {
        self.more
    }
}

/// What an `evidence = "method()"` of `#[derive(Target)]` may return: only [`Evidence`], so
/// that a method returning anything else is refused with the fix.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not evidence: the method named by `#[target(evidence = \"...\")]` must return `ask_first::fact::Evidence`",
    label = "the target's evidence method returns `{Self}`",
    note = "write `fn name(&self) -> ask_first::fact::Evidence`, built with `Evidence::new().group(\"Heading\", items)` from `ask_first::fact::EvidenceItem`s"
)]
pub trait IntoEvidence {
    /// The evidence.
    fn into_evidence(self) -> Evidence;
}

impl IntoEvidence for Evidence {
    fn into_evidence(self) -> Evidence {
        self
    }
}

fn raw(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_be_bytes());
    hasher.update(bytes);
}

fn short_hex(digest: &[u8]) -> String {
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .chars()
        .take(DIGEST_HEX_DIGITS)
        .collect()
}

fn optional_text(value: &serde_json::Value) -> Option<Option<String>> {
    match value {
        serde_json::Value::Null => Some(None),
        other => Some(Some(other.as_str()?.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::{Configured, Id, Question};
    use crate::target::Fingerprint;

    crate::wording!(struct Ask = "This will delete 1 file(s) (10 bytes); 1 file(s) will remain.";);

    fn delete(gone: &str, stays: &str) -> Evidence {
        let content = |name: &str| {
            if name == "scratch.txt" {
                b"temporary\n"
            } else {
                b"important\n"
            }
        };
        Evidence::new()
            .group("Files deleted", [EvidenceItem::new(gone, content(gone))])
            .group(
                "Files that stay",
                [EvidenceItem::new(stays, content(stays))],
            )
    }

    #[test]
    fn look_alike_operations_give_different_evidence_and_fingerprints() {
        let question = Question::new::<Ask>([]);
        let scratch = delete("scratch.txt", "keep.txt");
        let keep = delete("keep.txt", "scratch.txt");
        assert_ne!(scratch.summary(), keep.summary());
        assert_ne!(scratch.digest(), keep.digest());
        assert_ne!(
            Fingerprint::of_shown(&question, &scratch),
            Fingerprint::of_shown(&question, &keep)
        );
        // Positive control: the same evidence, the same fingerprint; none, the question's.
        assert_eq!(
            Fingerprint::of_shown(&question, &scratch),
            Fingerprint::of_shown(&question, &delete("scratch.txt", "keep.txt"))
        );
        assert_eq!(
            Fingerprint::of_shown(&question, &Evidence::new()),
            Fingerprint::of_question(&question)
        );
        // Two contents of one length under one name differ by their digest alone.
        let one = Evidence::new().group("Files", [EvidenceItem::readable("a", b"secret")]);
        let two = Evidence::new().group("Files", [EvidenceItem::readable("a", b"harmls")]);
        assert_ne!(
            Fingerprint::of_shown(&question, &one),
            Fingerprint::of_shown(&question, &two)
        );
        let (a, b) = (&one.groups()[0].items()[0], &two.groups()[0].items()[0]);
        assert_eq!(a.size(), b.size());
        assert_ne!(a.digest(), b.digest());
        assert_eq!(a.digest().len(), 20);
    }

    #[test]
    fn the_digest_is_the_start_of_sha256_over_the_content() {
        let item = EvidenceItem::new("keep.txt", b"important\n");
        let full: String = Sha256::digest(b"important\n")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(item.digest(), &full[..20]);
        assert_eq!(item.size(), 10);
        assert_eq!(item.digest_covers_part(), None);
        // Hashed already: the same digest.
        let sha: [u8; 32] = Sha256::digest(b"important\n").into();
        assert_eq!(EvidenceItem::hashed("keep.txt", 10, &sha), item);
        // Content read in part: the digest says which part it covers.
        let part = EvidenceItem::new("big", b"abc").whole_size(1000);
        assert_eq!((part.size(), part.digest_covers_part()), (1000, Some(3)));
        assert!(
            Evidence::new()
                .group("Files", [part])
                .summary()
                .contains("«big»: 1000 bytes, SHA-256 ba7816bf8f01cfea4141 of its first 3 bytes")
        );
    }

    #[test]
    fn hostile_names_stay_framed_and_escaped() {
        let item = EvidenceItem::new("</pre><script>alert(1)</script>\n«x»\u{202E}", b"");
        assert_eq!(
            item.name(),
            "«<U+003C>/pre<U+003E><U+003C>script<U+003E>alert(1)<U+003C>/script<U+003E><U+000A><U+00AB>x<U+00BB><U+202E>»"
        );
        let summary = Evidence::new().group("Files deleted", [item]).summary();
        assert!(!summary.contains("<script"), "{summary}");
        assert_eq!(summary.lines().count(), 3, "{summary}");
    }

    #[test]
    fn excerpts_are_readable_and_bounded() {
        let item =
            EvidenceItem::readable("a", "one\r\ntwo\tthree\u{202E}\u{200B}\x1b[31m".as_bytes());
        let excerpt = item.excerpt().expect("an excerpt");
        assert_eq!(
            excerpt.text(),
            Some("one\ntwo\tthree<U+202E><U+200B><U+001B>[31m")
        );
        assert_eq!(excerpt.more(), 0);
        // At most 2 KiB of text per item; the rest is counted.
        let long = "x".repeat(5000);
        let item = EvidenceItem::readable("long", long.as_bytes());
        let excerpt = item.excerpt().expect("an excerpt");
        assert_eq!(excerpt.text().map(str::len), Some(2048));
        assert_eq!(excerpt.more(), 5000 - 2048);
        // Escapes count toward the bound, and a character is never split.
        let controls = "\u{1}é".repeat(1000);
        let item = EvidenceItem::readable("c", controls.as_bytes());
        let text = item.excerpt().and_then(Excerpt::text).expect("text");
        assert!(text.len() <= 2048 && text.len() > 2030, "{}", text.len());
        assert!(text.starts_with("<U+0001>é<U+0001>é"), "{text}");
        // Made from the beginning only: the rest is counted against the whole.
        let sha: [u8; 32] = Sha256::digest(long.as_bytes()).into();
        let item = EvidenceItem::hashed("long", 5000, &sha).with_excerpt(&long.as_bytes()[..100]);
        assert_eq!(item.excerpt().map(Excerpt::more), Some(4900));
        let cut = EvidenceItem::readable("cut", b"abc").whole_size(10);
        assert_eq!(cut.excerpt().map(Excerpt::more), Some(7));
        // Not UTF-8: said to be binary, nothing shown.
        let binary = EvidenceItem::readable("b", &[0xff, 0, 1, 2]);
        assert!(binary.excerpt().is_some_and(Excerpt::is_binary));
        // A cut inside a multi-byte character at the bound is still text.
        let mut cut = "é".repeat(4095).into_bytes();
        cut.push(0xc3);
        cut.extend_from_slice(&"é".repeat(10).into_bytes()[1..]);
        assert!(
            EvidenceItem::readable("e", &cut)
                .excerpt()
                .and_then(Excerpt::text)
                .is_some()
        );
    }

    #[test]
    fn the_whole_evidence_is_bounded_and_still_digested() {
        let big = "y".repeat(4000);
        let items = (0..6).map(|i| EvidenceItem::readable(format!("f{i}"), big.as_bytes()));
        let evidence = Evidence::new().group("Files", items);
        let excerpts: Vec<&Excerpt> = evidence.groups()[0]
            .items()
            .iter()
            .filter_map(EvidenceItem::excerpt)
            .collect();
        let shown: usize = excerpts.iter().filter_map(|e| e.text()).map(str::len).sum();
        assert_eq!(shown, 8 * 1024);
        assert!(excerpts[4].is_withheld() && excerpts[4].more() == 4000);
        // Beyond 64 items: counted, and their digest changes with any of them.
        let many = |last: &str| {
            let names: Vec<String> = (0..70)
                .map(|i| format!("f{i}"))
                .chain([last.to_owned()])
                .collect();
            Evidence::new().group("Files", names.iter().map(|n| EvidenceItem::new(n, b"x")))
        };
        let (a, b) = (many("last-a"), many("last-b"));
        assert_eq!(a.groups()[0].items().len(), 64);
        assert_eq!(a.groups()[0].omitted().map(|(n, _)| n), Some(7));
        assert_ne!(a.digest(), b.digest());
        assert!(
            a.summary()
                .contains("- and 7 more, not listed (their digest: ")
        );
        // No items, no group.
        assert_eq!(Evidence::new().group("None", []), Evidence::new());
        // A second group after the bound lists nothing, and says how many it counted.
        let after = a.group("More", [EvidenceItem::new("z", b"z")]);
        assert_eq!(after.groups()[1].omitted().map(|(n, _)| n), Some(1));
    }

    #[test]
    fn the_link_is_the_operators_and_round_trips() {
        let link = Link::new(
            Configured::fixed("https://gist.example.org/"),
            [Id::new("alice").expect("id"), Id::new("3f2a").expect("id")],
        );
        let evidence = delete("scratch.txt", "keep.txt").with_link(link);
        assert_eq!(evidence.link(), Some("https://gist.example.org/alice/3f2a"));
        assert!(
            evidence
                .summary()
                .contains("Link: https://gist.example.org/alice/3f2a")
        );
        assert_eq!(
            Evidence::from_json(&evidence.to_json()),
            Some(evidence.clone())
        );
        assert_ne!(
            evidence.digest(),
            delete("scratch.txt", "keep.txt").digest()
        );
    }
}
