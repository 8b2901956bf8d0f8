//! What the request bodies of Opengist's write endpoints share: gist ids, visibility, the
//! limits and checks of filenames, titles and descriptions, and their one error type.
//!
//! Each body validates on construction and serializes to exactly what Opengist expects; it
//! lives with its operation: [`NewGist`](super::create_gist::NewGist) for a new gist,
//! [`GistPatch`](super::update_gist::GistPatch) for an update,
//! [`FileDeletion`](super::delete_gist_files::FileDeletion) for deleting files. Two traps
//! shape them (OPENGIST-API.md): an unknown `visibility` makes a public gist, so visibility is
//! a closed enum ([`Visibility`]) and always sent on create; and in a PATCH a file entry
//! `null` or `{}` deletes the file, so a `GistPatch` can only express writes and renames with
//! content or a new name, and deletion has its own type, made only by the guarded
//! delete-files target.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};

/// Most files this server touches in one call. Opengist stores more, but its API lists only
/// the first 50 files of a gist, so a gist built past that could not be checked or read whole.
pub const MAX_FILES: usize = 50;
/// Longest filename accepted, in bytes.
pub const MAX_FILENAME_BYTES: usize = 255;
/// Longest title accepted, in characters.
pub const MAX_TITLE_CHARS: usize = 250;
/// Longest description accepted, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

/// A gist's id: the 32-character lowercase hex uuid Opengist uses in every API path.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GistId(String);

/// A value that is not a gist uuid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not a gist id: give the 32-character hex id (as in `get_gist` results) or a link to the gist on this Opengist instance"
)]
pub struct InvalidGistId;

impl GistId {
    /// Accepts exactly 32 hex digits, any case; stores them lowercase.
    pub fn parse(value: &str) -> Result<Self, InvalidGistId> {
        if value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(value.to_ascii_lowercase()))
        } else {
            Err(InvalidGistId)
        }
    }

    /// The id, 32 lowercase hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GistId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for GistId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GistId({})", self.0)
    }
}

impl Serialize for GistId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Who can see a gist. Ordered from narrowest to widest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Only the owner.
    Private,
    /// Anyone with the link.
    Unlisted,
    /// Everyone; listed publicly.
    Public,
}

impl Visibility {
    /// The word Opengist uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Unlisted => "unlisted",
            Self::Public => "public",
        }
    }
}

impl fmt::Display for Visibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request that failed validation. Each message names the problem and its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// No files.
    #[error("`files` is empty: give at least one file as {{\"filename\": ..., \"content\": ...}}")]
    NoFiles,
    /// Too many files.
    #[error("{0} files in one call; the limit is {MAX_FILES}: split the work into several calls")]
    TooManyFiles(usize),
    /// Empty content.
    #[error(
        "file #{0} has empty content; Opengist silently drops empty files when it creates a gist (and would keep an emptied one on update), so give it some content (to remove a file use delete_gist_files)"
    )]
    EmptyContent(usize),
    /// A bad filename.
    #[error(
        "file #{index} has an unusable filename: {why}; use a plain name such as `notes.md` (no `/`, no control characters, at most {MAX_FILENAME_BYTES} bytes)"
    )]
    BadFilename {
        /// 1-based position of the file in the request.
        index: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The same filename twice.
    #[error(
        "file #{0} repeats a filename used earlier in the same call: each file may appear once"
    )]
    DuplicateFilename(usize),
    /// Title too long.
    #[error("the title is {0} characters long; the limit is {MAX_TITLE_CHARS}")]
    TitleTooLong(usize),
    /// Description too long.
    #[error("the description is {0} characters long; the limit is {MAX_DESCRIPTION_CHARS}")]
    DescriptionTooLong(usize),
    /// `expire` and `expires_at` together.
    #[error("give `expire` or `expires_at`, not both")]
    TwoExpiries,
    /// A bad `expires_at`.
    #[error(
        "`expires_at` must be an RFC 3339 moment in the future, such as `2027-01-31T12:00:00Z`"
    )]
    BadExpiry,
    /// An update that changes nothing.
    #[error(
        "nothing to update: give at least one of `title`, `description`, `visibility` or `file_ops`"
    )]
    EmptyUpdate,
    /// A rename to the name it already has, or onto a name another operation uses.
    #[error(
        "file operation #{0} renames onto a name that is already used in this call or is the same as the old name"
    )]
    RenameClash(usize),
    /// A rename with nothing to rename to.
    #[error("file operation #{0} is a rename without `new_filename`: give the new name")]
    MissingNewFilename(usize),
    /// A write without content.
    #[error(
        "file operation #{0} is a write without `content`: give the full new content of the file"
    )]
    MissingContent(usize),
}

/// Checks a filename. Returns why it is unusable, if it is.
pub fn filename_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_FILENAME_BYTES {
        Some("it is too long")
    } else if name.contains('/') || name.contains('\\') {
        Some("it contains a path separator")
    } else if name.chars().any(char::is_control) {
        Some("it contains a control character")
    } else if name == "." || name == ".." {
        Some("it is `.` or `..`")
    } else if name.trim() != name {
        Some("it starts or ends with white space")
    } else {
        None
    }
}

fn check_text(
    value: Option<&str>,
    limit: usize,
    error: fn(usize) -> RequestError,
) -> Result<(), RequestError> {
    match value {
        Some(text) if text.chars().count() > limit => Err(error(text.chars().count())),
        _ => Ok(()),
    }
}

/// Checks the lengths of a title and a description.
pub(super) fn check_metadata(
    title: Option<&str>,
    description: Option<&str>,
) -> Result<(), RequestError> {
    check_text(title, MAX_TITLE_CHARS, RequestError::TitleTooLong)?;
    check_text(
        description,
        MAX_DESCRIPTION_CHARS,
        RequestError::DescriptionTooLong,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gist_ids_are_32_hex_and_lowercased() {
        let id = GistId::parse("3F2A9C91E0B14F0B9A1C0D3E4F5A6B7C").expect("hex");
        assert_eq!(id.as_str(), "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c");
        assert!(GistId::parse("3f2a").is_err());
        assert!(GistId::parse("zz2a9c91e0b14f0b9a1c0d3e4f5a6b7c").is_err());
        assert!(GistId::parse("../../../etc/passwd/aaaaaaaaaaaaaa").is_err());
    }

    #[test]
    fn visibility_orders_narrow_to_wide() {
        assert!(
            Visibility::Private < Visibility::Unlisted && Visibility::Unlisted < Visibility::Public
        );
    }
}
