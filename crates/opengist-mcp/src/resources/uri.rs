//! Resource URIs: `opengist://gists/<gist_id>/<filename>` (the file at the gist's newest
//! revision) and `opengist://gists/<gist_id>/<revision>/<filename>` (at a commit sha).
//!
//! Each part is one path segment, percent-encoded (RFC 3986 unreserved characters stay as
//! they are, every other byte of its UTF-8 is `%XX`), which is exactly what an RFC 6570
//! simple expansion of the templates `opengist://gists/{gist_id}/{filename}` and
//! `opengist://gists/{gist_id}/{revision}/{filename}` produces. A filename never holds `/`
//! (Opengist keeps only the last path element), so two parts name a file at head and three a
//! file at a revision, without ambiguity. `gist_id` is what `get_gist` accepts: the 32-hex id,
//! or a link to the gist on the configured instance (percent-encoded into its one segment).
//!
//! Errors never repeat the URI: it is text from the client, and may hold anything.

use std::fmt;

use crate::opengist::{Sha, ShaError};

/// The scheme and fixed authority every resource URI starts with.
pub(crate) const PREFIX: &str = "opengist://gists/";

/// The template of a gist file at its newest revision.
pub(crate) const HEAD_TEMPLATE: &str = "opengist://gists/{gist_id}/{filename}";

/// The template of a gist file at a revision.
pub(crate) const REVISION_TEMPLATE: &str = "opengist://gists/{gist_id}/{revision}/{filename}";

/// Longest URI accepted, in bytes (a link as gist id, a 40-hex sha and a long filename fit).
pub(crate) const MAX_URI_BYTES: usize = 4096;

/// One gist file, at head or at a revision, as a URI names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileUri {
    /// The gist, as given: a 32-hex id or a link (decoded), resolved later like `get_gist`'s
    /// `gist_id`.
    pub gist: String,
    /// The revision, when the URI names one.
    pub revision: Option<Sha>,
    /// The exact filename.
    pub filename: String,
}

/// Why a URI is not a resource of this server. Each message names the form expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UriError {
    /// Another scheme or authority, or no parts.
    #[error(
        "not a resource of this server: its resource URIs are opengist://gists/<gist_id>/<filename> (newest revision) and opengist://gists/<gist_id>/<revision>/<filename>, each part percent-encoded, as resources/list and resources/templates/list give them"
    )]
    Foreign,
    /// Too many or too few parts, a query or a fragment.
    #[error(
        "a gist file resource has two or three parts after opengist://gists/: <gist_id>/<filename> or <gist_id>/<revision>/<filename>, with no query or fragment; percent-encode a `/` inside a part (a link given as gist_id) as %2F"
    )]
    Shape,
    /// A `%` not followed by two hex digits, or a part that is not UTF-8 once decoded.
    #[error(
        "a part of the URI is not valid percent-encoding of UTF-8 text: encode each byte outside A-Z a-z 0-9 - . _ ~ as %XX"
    )]
    Encoding,
    /// An empty part, or a filename Opengist could not hold.
    #[error(
        "the gist id or the filename part is empty or not a filename (`.`, `..`, a control character): give a gist's id and one of its files' exact names"
    )]
    EmptyPart,
    /// The revision part is not a commit sha.
    #[error("the revision part of the URI: {0}")]
    Revision(ShaError),
    /// Longer than [`MAX_URI_BYTES`].
    #[error("the URI is longer than {MAX_URI_BYTES} bytes: no gist file resource is that long")]
    TooLong,
}

/// Percent-encodes `text` as one URI path segment: unreserved characters stay, every other
/// byte becomes `%XX` (upper-case hex).
pub(crate) fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes one percent-encoded segment; `None` when a `%` is not followed by two hex digits
/// or the bytes are not UTF-8.
pub(crate) fn decode_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let text = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(text, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether Opengist could hold a file of this name.
fn plausible_filename(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.chars().any(char::is_control)
}

impl FileUri {
    /// The URI of `filename` of gist `gist` (an id), at `revision` when given.
    pub(crate) fn format(gist: &str, revision: Option<&str>, filename: &str) -> String {
        match revision {
            Some(rev) => format!(
                "{PREFIX}{}/{}/{}",
                encode_segment(gist),
                encode_segment(rev),
                encode_segment(filename)
            ),
            None => format!(
                "{PREFIX}{}/{}",
                encode_segment(gist),
                encode_segment(filename)
            ),
        }
    }

    /// Parses a resource URI. The scheme and authority match regardless of case.
    pub(crate) fn parse(uri: &str) -> Result<Self, UriError> {
        if uri.len() > MAX_URI_BYTES {
            return Err(UriError::TooLong);
        }
        let rest = uri
            .get(..PREFIX.len())
            .filter(|head| head.eq_ignore_ascii_case(PREFIX))
            .and_then(|_| uri.get(PREFIX.len()..))
            .ok_or(UriError::Foreign)?;
        if rest.is_empty() {
            return Err(UriError::Foreign);
        }
        if rest.contains(['?', '#']) {
            return Err(UriError::Shape);
        }
        let parts: Vec<&str> = rest.split('/').collect();
        let decoded: Vec<String> = parts
            .iter()
            .map(|p| decode_segment(p).ok_or(UriError::Encoding))
            .collect::<Result<_, _>>()?;
        let (gist, revision, filename) = match decoded.as_slice() {
            [gist, filename] => (gist, None, filename),
            [gist, revision, filename] => (gist, Some(revision), filename),
            _ => return Err(UriError::Shape),
        };
        if gist.trim().is_empty() || !plausible_filename(filename) {
            return Err(UriError::EmptyPart);
        }
        let revision = match revision {
            Some(text) => Some(Sha::parse(text).map_err(UriError::Revision)?),
            None => None,
        };
        Ok(Self {
            gist: gist.trim().to_owned(),
            revision,
            filename: filename.clone(),
        })
    }
}

impl fmt::Display for FileUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Self::format(
            &self.gist,
            self.revision.as_ref().map(Sha::as_str),
            &self.filename,
        ))
    }
}

/// Which template a completion request refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Template {
    /// [`HEAD_TEMPLATE`].
    Head,
    /// [`REVISION_TEMPLATE`].
    Revision,
}

impl Template {
    /// The template named by `uri` in a completion reference, if it is one of this server's.
    pub(crate) fn of(uri: &str) -> Option<Self> {
        match uri.trim() {
            HEAD_TEMPLATE => Some(Self::Head),
            REVISION_TEMPLATE => Some(Self::Revision),
            _ => None,
        }
    }

    /// The variables it has.
    pub(crate) fn variables(self) -> &'static [&'static str] {
        match self {
            Self::Head => &["gist_id", "filename"],
            Self::Revision => &["gist_id", "revision", "filename"],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

    #[test]
    fn uris_round_trip_at_head_and_at_a_revision() {
        let head = FileUri::format(ID, None, "main.rs");
        assert_eq!(head, format!("opengist://gists/{ID}/main.rs"));
        let parsed = FileUri::parse(&head).expect("head");
        assert_eq!(
            parsed,
            FileUri {
                gist: ID.into(),
                revision: None,
                filename: "main.rs".into()
            }
        );
        assert_eq!(parsed.to_string(), head);
        let at = FileUri::format(ID, Some("beef01"), "a b#c?.txt");
        assert_eq!(at, format!("opengist://gists/{ID}/beef01/a%20b%23c%3F.txt"));
        let parsed = FileUri::parse(&at).expect("revision");
        assert_eq!(parsed.revision.as_ref().map(Sha::as_str), Some("beef01"));
        assert_eq!(parsed.filename, "a b#c?.txt");
    }

    #[test]
    fn every_filename_survives_encoding() {
        for name in [
            "plain.txt",
            "ünïcödé ✓.md",
            "100%.txt",
            "%41",
            "semi;colon,comma+plus=eq&amp",
            "tab\tname",
            ".hidden",
            "~tilde",
        ] {
            let uri = FileUri::format(ID, None, name);
            assert!(
                uri.bytes().all(|b| b.is_ascii_graphic()),
                "{uri} is plain ASCII"
            );
            if name.contains('\t') {
                assert_eq!(FileUri::parse(&uri), Err(UriError::EmptyPart));
                continue;
            }
            assert_eq!(FileUri::parse(&uri).expect("parses").filename, name);
        }
    }

    #[test]
    fn a_link_as_gist_id_fits_in_one_segment() {
        let link = "http://127.0.0.1:6157/alice/my-snippet";
        let uri = FileUri::format(link, None, "a.txt");
        assert_eq!(
            uri,
            "opengist://gists/http%3A%2F%2F127.0.0.1%3A6157%2Falice%2Fmy-snippet/a.txt"
        );
        assert_eq!(FileUri::parse(&uri).expect("link").gist, link);
    }

    #[test]
    fn scheme_and_authority_ignore_case() {
        let uri = format!("OpenGist://GISTS/{ID}/a.txt");
        assert_eq!(FileUri::parse(&uri).expect("case").filename, "a.txt");
    }

    #[test]
    fn bad_uris_say_what_is_expected() {
        let cases: [(&str, UriError); 12] = [
            ("file:///etc/passwd", UriError::Foreign),
            ("opengist://other/x/y", UriError::Foreign),
            ("opengist://gists/", UriError::Foreign),
            ("opengist://gists/onlyone", UriError::Shape),
            ("opengist://gists/a/b/c/d", UriError::Shape),
            ("opengist://gists/a/b?x=1", UriError::Shape),
            ("opengist://gists/a/b#frag", UriError::Shape),
            ("opengist://gists/a/%zz", UriError::Encoding),
            ("opengist://gists/a/%ff", UriError::Encoding),
            ("opengist://gists//b", UriError::EmptyPart),
            ("opengist://gists/a/..", UriError::EmptyPart),
            (
                "opengist://gists/a/HEAD/b",
                UriError::Revision(ShaError::Head),
            ),
        ];
        for (uri, expected) in cases {
            assert_eq!(FileUri::parse(uri), Err(expected.clone()), "{uri}");
            let message = expected.to_string();
            assert!(
                message.contains("opengist://gists/")
                    || message.contains("revision")
                    || message.contains("%XX")
                    || message.contains("filename"),
                "{message}"
            );
            assert!(
                uri == "opengist://gists/" || !message.contains(uri),
                "the URI is never echoed"
            );
        }
        assert_eq!(
            FileUri::parse("opengist://gists/a/zz/b"),
            Err(UriError::Revision(ShaError::Invalid))
        );
        let long = format!("opengist://gists/{ID}/{}", "a".repeat(MAX_URI_BYTES));
        assert_eq!(FileUri::parse(&long), Err(UriError::TooLong));
    }

    #[test]
    fn templates_are_recognised_exactly() {
        assert_eq!(Template::of(HEAD_TEMPLATE), Some(Template::Head));
        assert_eq!(Template::of(REVISION_TEMPLATE), Some(Template::Revision));
        assert_eq!(Template::of("opengist://gists/{gist_id}"), None);
        assert_eq!(Template::Revision.variables().len(), 3);
        // An RFC 6570 simple expansion of the template gives exactly FileUri::new's form.
        let expanded = HEAD_TEMPLATE
            .replace("{gist_id}", &encode_segment(ID))
            .replace("{filename}", &encode_segment("x y.txt"));
        assert_eq!(expanded, FileUri::format(ID, None, "x y.txt"));
    }
}
