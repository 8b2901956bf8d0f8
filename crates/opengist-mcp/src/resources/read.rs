//! `resources/read`: one gist file, at head or at a revision, as text or (binary) base64.
//!
//! The bytes come from where `get_gist_file` takes them: the gist's JSON when Opengist sent
//! the whole file there, else its raw endpoint (only as much as the answer can hold). The
//! answer is held to the result-size ceiling: text larger than that is cut at a character
//! boundary and a second entry of `contents` says so, with the `get_gist_file` call that pages
//! through the rest; a binary file too large to send whole is not sent at all (half a binary
//! file is of no use), and the note says that instead. Nothing is cut silently.

use base64::Engine as _;
use rmcp::model::{ReadResourceResult, ResourceContents};
use serde_json::json;

use super::list::{file_name, provenance_meta};
use super::mime::mime_type;
use crate::catalog;
use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, RawFile};
use crate::text::call_text;

/// Bytes of a read answer besides the content itself (the URI twice, `_meta`, the note).
pub(crate) const READ_OVERHEAD: usize = 4096;

/// What the file holds, as far as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    /// UTF-8 text: the whole file, or its start when `complete` is false.
    Text {
        /// The text read.
        text: String,
        /// Whether it is the whole file.
        complete: bool,
    },
    /// Binary bytes: the whole file, or its start when `complete` is false.
    Binary {
        /// The bytes read.
        bytes: Vec<u8>,
        /// Whether they are the whole file.
        complete: bool,
    },
}

impl Content {
    /// Text when the bytes are UTF-8 without NUL, binary otherwise. A character cut at the end
    /// of a partial read is dropped, not counted as binary.
    pub(crate) fn classify(mut bytes: Vec<u8>, complete: bool) -> Self {
        match std::str::from_utf8(&bytes) {
            Ok(text) if !text.contains('\0') => {
                return Self::Text {
                    text: text.to_owned(),
                    complete,
                };
            }
            Err(e) if !complete && e.error_len().is_none() => {
                bytes.truncate(e.valid_up_to());
                if let Ok(text) = std::str::from_utf8(&bytes)
                    && !text.contains('\0')
                {
                    return Self::Text {
                        text: text.to_owned(),
                        complete,
                    };
                }
            }
            _ => {}
        }
        Self::Binary { bytes, complete }
    }

    /// What the gist's JSON holds of `filename`, when it is the whole file byte for byte
    /// (Opengist cuts contents at 512 KiB there, and a text cut inside a character ends in
    /// U+FFFD); `None` means the raw endpoint must be read.
    pub(crate) fn from_detail(detail: &GistDetail, filename: &str) -> Option<Self> {
        let file = detail.files.get(filename)?;
        if file.truncated {
            return None;
        }
        if file.is_base64() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(file.content.trim())
                .ok()?;
            return (bytes.len() as u64 == file.size).then_some(Self::Binary {
                bytes,
                complete: true,
            });
        }
        let exact = file.content.len() as u64 == file.size && !file.content.contains('\u{FFFD}');
        exact.then(|| Self::classify(file.content.clone().into_bytes(), true))
    }

    /// What a raw read brought.
    pub(crate) fn from_raw(raw: RawFile) -> Self {
        let complete = !raw.truncated;
        Self::classify(raw.bytes, complete)
    }
}

/// Bytes of content a read answer may carry for a ceiling of `ceiling` bytes: text counted as
/// it is escaped in JSON, binary as its base64.
pub(crate) fn allowance(ceiling: usize) -> usize {
    ceiling.saturating_sub(READ_OVERHEAD).max(1024)
}

/// How many bytes a character takes in a JSON string.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest start of `text` whose JSON string form (without its quotes) is at most
/// `allowance` bytes; it ends on a character boundary.
pub(crate) fn cut_to_json(text: &str, allowance: usize) -> &str {
    let mut used = 0usize;
    for (index, c) in text.char_indices() {
        used += escaped_len(c);
        if used > allowance {
            return text.get(..index).unwrap_or_default();
        }
    }
    text
}

/// Bytes of binary content whose base64 fits `allowance`.
pub(crate) fn binary_allowance(allowance: usize) -> usize {
    allowance / 4 * 3
}

/// Which file a read is of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The URI as the client asked for it (echoed in `contents[].uri`, as the protocol wants).
    pub uri: &'a str,
    /// The gist.
    pub gist_id: &'a GistId,
    /// The revision read: the sha asked for, or the newest commit's.
    pub sha: &'a str,
    /// The exact filename.
    pub filename: &'a str,
    /// The file's size, when Opengist said.
    pub size: Option<u64>,
}

/// Shapes the answer of a read within the ceiling `ceiling`.
pub(crate) fn shape_read(
    target: &Target<'_>,
    content: Content,
    ceiling: usize,
) -> ReadResourceResult {
    let allowance = allowance(ceiling);
    let mut meta = provenance_meta();
    meta.insert("gist_id".into(), json!(target.gist_id.as_str()));
    meta.insert("revision".into(), json!(target.sha));
    meta.insert("filename".into(), json!(target.filename));
    if let Some(size) = target.size {
        meta.insert("size".into(), json!(size));
    }
    let mut contents = Vec::with_capacity(2);
    let mut note: Option<String> = None;
    match content {
        Content::Text { text, complete } => {
            let mime = mime_type(target.filename, false);
            let shown = cut_to_json(&text, allowance);
            let cut = shown.len() < text.len() || !complete;
            meta.insert("truncated".into(), json!(cut));
            if cut {
                meta.insert("bytes_returned".into(), json!(shown.len()));
                let call = call_text(
                    catalog::GET_GIST_FILE.name,
                    &[
                        ("gist_id", json!(target.gist_id.as_str())),
                        ("filename", json!(target.filename)),
                        ("sha", json!(target.sha)),
                        ("offset", json!(shown.len())),
                    ],
                );
                meta.insert("next_call".into(), json!(call));
                let total = match target.size {
                    Some(size) => format!("is {size} bytes"),
                    None => "is larger than that".to_owned(),
                };
                note = Some(format!(
                    "opengist-mcp: this resource is cut short. The file {:?} {total}; the text above is only its first {} bytes, all that fits the result-size ceiling (OPENGIST_MCP_MAX_RESULT_BYTES={ceiling}). Read the rest with {call}, which pages through it, or raise the ceiling.",
                    target.filename,
                    shown.len(),
                ));
            }
            contents.push(
                ResourceContents::text(shown, target.uri)
                    .with_mime_type(mime)
                    .with_meta(meta),
            );
        }
        Content::Binary { bytes, complete } => {
            let mime = mime_type(target.filename, true);
            if complete && bytes.len() <= binary_allowance(allowance) {
                meta.insert("truncated".into(), json!(false));
                let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
                contents.push(
                    ResourceContents::blob(blob, target.uri)
                        .with_mime_type(mime)
                        .with_meta(meta),
                );
            } else {
                meta.insert("truncated".into(), json!(true));
                meta.insert("bytes_returned".into(), json!(0));
                let size = target
                    .size
                    .map_or_else(|| "larger".to_owned(), |s| format!("{s} bytes"));
                note = Some(format!(
                    "opengist-mcp: this resource is not included. The file {:?} is binary and {size}, more than the result-size ceiling (OPENGIST_MCP_MAX_RESULT_BYTES={ceiling}) can carry as base64 ({} bytes at most), and part of a binary file is of no use. get_gist_file does not show binary files either: raise the ceiling, or download it from the gist's page on Opengist.",
                    target.filename,
                    binary_allowance(allowance),
                ));
                contents.push(
                    ResourceContents::blob(String::new(), target.uri)
                        .with_mime_type(mime)
                        .with_meta(meta),
                );
            }
        }
    }
    if let Some(note) = note {
        let mut note_meta = provenance_meta();
        note_meta.insert("source".into(), json!("opengist-mcp"));
        note_meta.insert("untrusted".into(), json!(false));
        note_meta.insert("note".into(), json!(true));
        contents.push(
            ResourceContents::text(note, target.uri)
                .with_mime_type("text/plain")
                .with_meta(note_meta),
        );
    }
    ReadResourceResult::new(contents)
}

/// The names of the files `detail` lists, for error messages.
pub(crate) fn listed_names(detail: &GistDetail) -> Vec<String> {
    detail
        .files
        .iter()
        .map(|(key, file)| file_name(key, file).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result_budget::serialized_len;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

    fn target<'a>(id: &'a GistId, name: &'a str, size: Option<u64>) -> Target<'a> {
        Target {
            uri: "opengist://gists/x/y",
            gist_id: id,
            sha: "beef",
            filename: name,
            size,
        }
    }

    fn text_of(c: &ResourceContents) -> Option<&str> {
        match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        }
    }

    #[test]
    fn classification() {
        assert!(matches!(
            Content::classify(b"hi".to_vec(), true),
            Content::Text { .. }
        ));
        assert!(matches!(
            Content::classify(b"a\0b".to_vec(), true),
            Content::Binary { .. }
        ));
        assert!(matches!(
            Content::classify(vec![0xff, 0xfe], true),
            Content::Binary { .. }
        ));
        // Half a character at the end of a partial read is dropped, not taken for binary.
        let partial = "ab✓".as_bytes()[..4].to_vec();
        assert_eq!(
            Content::classify(partial.clone(), false),
            Content::Text {
                text: "ab".into(),
                complete: false
            }
        );
        assert!(matches!(
            Content::classify(partial, true),
            Content::Binary { .. }
        ));
    }

    #[test]
    fn json_cuts_count_escapes_and_keep_characters_whole() {
        assert_eq!(cut_to_json("abc", 10), "abc");
        assert_eq!(cut_to_json("a\nb\nc", 4), "a\nb");
        assert_eq!(cut_to_json("✓✓", 4), "✓");
        assert_eq!(cut_to_json("\u{1}x", 6), "\u{1}");
        assert_eq!(binary_allowance(4000), 3000);
    }

    #[test]
    fn small_text_is_whole_and_marked_untrusted() {
        let id = GistId::parse(ID).expect("id");
        let out = shape_read(
            &target(&id, "a.md", Some(5)),
            Content::Text {
                text: "hello".into(),
                complete: true,
            },
            262_144,
        );
        assert_eq!(out.contents.len(), 1);
        let ResourceContents::TextResourceContents {
            text,
            mime_type,
            meta,
            ..
        } = &out.contents[0]
        else {
            panic!("text");
        };
        assert_eq!(text, "hello");
        assert_eq!(mime_type.as_deref(), Some("text/markdown"));
        let meta = meta.as_ref().expect("meta");
        assert_eq!(meta.get("untrusted"), Some(&json!(true)));
        assert_eq!(meta.get("truncated"), Some(&json!(false)));
        assert_eq!(meta.get("revision"), Some(&json!("beef")));
    }

    #[test]
    fn text_over_the_ceiling_is_cut_and_says_so_naming_get_gist_file() {
        let id = GistId::parse(ID).expect("id");
        let ceiling = 8192;
        let text = "line\n".repeat(4000);
        let out = shape_read(
            &target(&id, "big.txt", Some(text.len() as u64)),
            Content::Text {
                text: text.clone(),
                complete: true,
            },
            ceiling,
        );
        assert!(serialized_len(&out) <= ceiling, "{}", serialized_len(&out));
        assert_eq!(out.contents.len(), 2);
        let shown = text_of(&out.contents[0]).expect("text");
        assert!(text.starts_with(shown) && shown.len() < text.len());
        let note = text_of(&out.contents[1]).expect("note");
        assert!(note.contains("cut short"), "{note}");
        assert!(note.contains(&format!("is {} bytes", text.len())), "{note}");
        assert!(
            note.contains(&format!(
                r#"get_gist_file with gist_id="{ID}", filename="big.txt", sha="beef", offset={}"#,
                shown.len()
            )),
            "{note}"
        );
        // A partial read is cut too, even when what was read fits.
        let out = shape_read(
            &target(&id, "big.txt", None),
            Content::Text {
                text: "abc".into(),
                complete: false,
            },
            ceiling,
        );
        assert!(text_of(&out.contents[1]).is_some_and(|n| n.contains("larger than that")));
    }

    #[test]
    fn binary_is_base64_whole_or_not_at_all() {
        let id = GistId::parse(ID).expect("id");
        let bytes = vec![0x89, b'P', b'N', b'G', 0, 1, 2];
        let out = shape_read(
            &target(&id, "logo.png", Some(7)),
            Content::Binary {
                bytes: bytes.clone(),
                complete: true,
            },
            262_144,
        );
        let ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } = &out.contents[0]
        else {
            panic!("blob");
        };
        assert_eq!(
            base64::engine::general_purpose::STANDARD.decode(blob).ok(),
            Some(bytes)
        );
        assert_eq!(mime_type.as_deref(), Some("image/png"));
        let out = shape_read(
            &target(&id, "logo.png", Some(100_000)),
            Content::Binary {
                bytes: vec![0; 100_000],
                complete: true,
            },
            8192,
        );
        assert!(serialized_len(&out) <= 8192);
        let ResourceContents::BlobResourceContents { blob, .. } = &out.contents[0] else {
            panic!("blob");
        };
        assert!(blob.is_empty());
        assert!(
            text_of(&out.contents[1])
                .is_some_and(|n| n.contains("not included") && n.contains("100000 bytes"))
        );
    }
}
