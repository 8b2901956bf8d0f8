//! What the approval page shows of a gist's files below the question: each file as Opengist
//! holds it now ([`FileNow`]: its size, the SHA-256 of the content read, and its beginning),
//! and the evidence items the guarded operations build from it.
//!
//! The question never names a file or shows content; the page's evidence does, as data
//! written by whoever wrote the gist (framed and escaped by the framework), so two deletes of
//! files of one size, or two publications of contents of one length, never read alike. The
//! digest is over the content as Opengist answered it: the file's bytes (a binary file's
//! base64 decoded), or their first 512 KiB when Opengist cut the content (the page says
//! which part).

use ask_first::fact::{EvidenceItem, Id, Link};
use sha2::{Digest, Sha256};

use super::requests::GistId;
use super::responses::GistFile;

/// How many bytes of a file's beginning are kept for its excerpt: enough for the 2 KiB of text
/// the page shows, with every character escaped.
const KEPT: usize = 8 * 1024;

/// One file as Opengist holds it now, as the approval page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNow {
    /// The size of the whole file, in bytes.
    pub size: u64,
    /// How many bytes of it were read (less than `size` when Opengist cut the content).
    pub read: u64,
    /// The SHA-256 of the bytes read.
    pub sha256: [u8; 32],
    /// Its first bytes, for an excerpt.
    pub beginning: Vec<u8>,
}

impl FileNow {
    /// The file as Opengist answered it: text as it is, base64 decoded (undecodable base64 is
    /// hashed as the text Opengist sent).
    pub fn of(file: &GistFile) -> Self {
        let bytes = if file.is_base64() {
            decode_base64(&file.content).unwrap_or_else(|| file.content.clone().into_bytes())
        } else {
            file.content.clone().into_bytes()
        };
        Self {
            size: file.size.max(bytes.len() as u64),
            read: bytes.len() as u64,
            sha256: Sha256::digest(&bytes).into(),
            beginning: bytes[..bytes.len().min(KEPT)].to_vec(),
        }
    }

    /// The file as content given in a call (what a write will make readable).
    pub fn given(content: &str) -> Self {
        let bytes = content.as_bytes();
        Self {
            size: bytes.len() as u64,
            read: bytes.len() as u64,
            sha256: Sha256::digest(bytes).into(),
            beginning: bytes[..bytes.len().min(KEPT)].to_vec(),
        }
    }

    /// The file named `name`, by size and digest.
    pub fn item(&self, name: &str) -> EvidenceItem {
        EvidenceItem::hashed(name, self.read, &self.sha256).whole_size(self.size)
    }

    /// The file named `name`, by size and digest, with the beginning of its content: for a
    /// file about to become readable.
    pub fn readable(&self, name: &str) -> EvidenceItem {
        EvidenceItem::hashed(name, self.read, &self.sha256)
            .with_excerpt(&self.beginning)
            .whole_size(self.size)
    }
}

/// The gist's page on this instance, `<site>/<owner>/<uuid>`, when the owner's name is a
/// showable identifier (as the question's own link line).
pub(super) fn page_link(
    site: &ask_first::fact::Configured,
    owner: &str,
    id: &GistId,
) -> Option<Link> {
    let (Ok(owner), Ok(uuid)) = (Id::new(owner), Id::new(id.as_str())) else {
        return None;
    };
    Some(Link::new(site.clone(), [owner, uuid]))
}

/// Standard base64 (line breaks ignored), as Opengist encodes a binary file's content;
/// `None` for anything else.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let digits: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(digits)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &str, encoding: &str, size: u64, truncated: bool) -> GistFile {
        GistFile {
            filename: "f".to_owned(),
            size,
            truncated,
            content: content.to_owned(),
            encoding: encoding.to_owned(),
            ..GistFile::default()
        }
    }

    #[test]
    fn the_digest_is_over_the_files_bytes() {
        let text = FileNow::of(&file("important\n", "utf-8", 10, false));
        assert_eq!(
            text.sha256,
            <[u8; 32]>::from(Sha256::digest(b"important\n"))
        );
        assert_eq!((text.size, text.read), (10, 10));
        // A binary file: its bytes, not the base64 text.
        let png = FileNow::of(&file("iVBORw==", "base64", 4, false));
        assert_eq!(png.beginning, vec![0x89, b'P', b'N', b'G']);
        assert_eq!(
            png.sha256,
            <[u8; 32]>::from(Sha256::digest([0x89, b'P', b'N', b'G']))
        );
        for (encoded, decoded) in [("aGk=", "hi"), ("aGVs\nbG8h", "hello!"), ("", "")] {
            assert_eq!(
                decode_base64(encoded).as_deref(),
                Some(decoded.as_bytes()),
                "{encoded}"
            );
        }
        assert_eq!(decode_base64("a"), None);
        assert_eq!(decode_base64("a*=="), None);
        // Not base64 after all: hashed as the text Opengist sent.
        let odd = FileNow::of(&file("not base64!", "base64", 11, false));
        assert_eq!(odd.beginning, b"not base64!".to_vec());
        // Cut by Opengist: the digest covers what was read, and the item says so.
        let cut = FileNow::of(&file("abc", "utf-8", 1000, true));
        let item = cut.item("big.txt");
        assert_eq!((item.size(), item.digest_covers_part()), (1000, Some(3)));
    }

    #[test]
    fn a_readable_file_has_an_excerpt_and_a_deleted_one_none() {
        let now = FileNow::given("line one\nline two\n");
        assert!(now.item("a.txt").excerpt().is_none());
        let readable = now.readable("a.txt");
        let excerpt = readable.excerpt().expect("an excerpt");
        assert_eq!(excerpt.text(), Some("line one\nline two\n"));
        assert_eq!(readable.digest(), now.item("a.txt").digest());
        let long = "z".repeat(10_000);
        let excerpt = FileNow::given(&long)
            .readable("z")
            .excerpt()
            .cloned()
            .expect("excerpt");
        assert_eq!(excerpt.more(), 10_000 - 2048);
    }
}
