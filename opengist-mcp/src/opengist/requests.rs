//! Validated request bodies for Opengist's write endpoints.
//!
//! Each type validates on construction and serializes to exactly the body Opengist expects.
//! Two traps shape them (OPENGIST-API.md): an unknown `visibility` makes a public gist, so
//! visibility is a closed enum and always sent on create; and in a PATCH a file entry `null` or
//! `{}` deletes the file, so [`GistPatch`] can only express writes and renames with content or a
//! new name, and deletion has its own type, [`FileDeletion`], made only by the guarded
//! delete-files target.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use schemars::JsonSchema;
use serde::ser::SerializeMap;
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

/// Opengist's preset expiry durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ExpirePreset {
    /// Never expires.
    #[serde(rename = "never")]
    Never,
    /// One hour.
    #[serde(rename = "1hour")]
    OneHour,
    /// Twelve hours.
    #[serde(rename = "12hours")]
    TwelveHours,
    /// One day.
    #[serde(rename = "1day")]
    OneDay,
    /// Seven days.
    #[serde(rename = "7days")]
    SevenDays,
    /// Fifteen days.
    #[serde(rename = "15days")]
    FifteenDays,
}

impl ExpirePreset {
    /// The word Opengist uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::OneHour => "1hour",
            Self::TwelveHours => "12hours",
            Self::OneDay => "1day",
            Self::SevenDays => "7days",
            Self::FifteenDays => "15days",
        }
    }
}

/// When a new gist expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expiry {
    /// A preset duration.
    Preset(ExpirePreset),
    /// A moment, RFC 3339, validated and normalised to UTC.
    At(chrono::DateTime<chrono::Utc>),
}

/// A request that failed validation. Each message names the problem and its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
fn check_metadata(title: Option<&str>, description: Option<&str>) -> Result<(), RequestError> {
    check_text(title, MAX_TITLE_CHARS, RequestError::TitleTooLong)?;
    check_text(
        description,
        MAX_DESCRIPTION_CHARS,
        RequestError::DescriptionTooLong,
    )
}

/// One file of a new gist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    filename: String,
    content: String,
}

impl NewFile {
    /// The filename.
    pub fn filename(&self) -> &str {
        &self.filename
    }

    /// The content.
    pub fn content(&self) -> &str {
        &self.content
    }
}

/// The body of `POST /api/gists`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGist {
    title: Option<String>,
    description: Option<String>,
    visibility: Visibility,
    expiry: Option<Expiry>,
    files: Vec<NewFile>,
}

impl NewGist {
    /// Validates a new gist. `files` are `(filename, content)` pairs, in order.
    pub fn new(
        title: Option<String>,
        description: Option<String>,
        visibility: Visibility,
        expiry: Option<Expiry>,
        files: Vec<(String, String)>,
    ) -> Result<Self, RequestError> {
        if files.is_empty() {
            return Err(RequestError::NoFiles);
        }
        if files.len() > MAX_FILES {
            return Err(RequestError::TooManyFiles(files.len()));
        }
        check_metadata(title.as_deref(), description.as_deref())?;
        let mut seen = BTreeSet::new();
        for (i, (filename, content)) in files.iter().enumerate() {
            let index = i + 1;
            if let Some(why) = filename_problem(filename) {
                return Err(RequestError::BadFilename { index, why });
            }
            if !seen.insert(filename.as_str()) {
                return Err(RequestError::DuplicateFilename(index));
            }
            if content.is_empty() {
                return Err(RequestError::EmptyContent(index));
            }
        }
        Ok(Self {
            title,
            description,
            visibility,
            expiry,
            files: files
                .into_iter()
                .map(|(filename, content)| NewFile { filename, content })
                .collect(),
        })
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Who will see it.
    pub fn visibility(&self) -> Visibility {
        self.visibility
    }

    /// When it expires, if ever.
    pub fn expiry(&self) -> Option<&Expiry> {
        self.expiry.as_ref()
    }

    /// The files, in request order.
    pub fn files(&self) -> &[NewFile] {
        &self.files
    }

    /// Total content bytes.
    pub fn content_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.content.len() as u64).sum()
    }
}

/// Parses `expire` / `expires_at` arguments into an [`Expiry`], refusing both at once and
/// moments not in the future.
pub fn parse_expiry(
    expire: Option<ExpirePreset>,
    expires_at: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<Expiry>, RequestError> {
    match (expire, expires_at) {
        (Some(_), Some(_)) => Err(RequestError::TwoExpiries),
        (Some(preset), None) => Ok(Some(Expiry::Preset(preset))),
        (None, Some(text)) => {
            let at = chrono::DateTime::parse_from_rfc3339(text)
                .map_err(|_| RequestError::BadExpiry)?
                .with_timezone(&chrono::Utc);
            if at <= now {
                return Err(RequestError::BadExpiry);
            }
            Ok(Some(Expiry::At(at)))
        }
        (None, None) => Ok(None),
    }
}

struct ContentOnly<'a>(&'a str);

impl Serialize for ContentOnly<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("content", self.0)?;
        map.end()
    }
}

impl Serialize for NewGist {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        if let Some(description) = &self.description {
            map.serialize_entry("description", description)?;
        }
        // Always explicit: a missing or unknown visibility makes a PUBLIC gist (trap 1).
        map.serialize_entry("visibility", self.visibility.as_str())?;
        match &self.expiry {
            Some(Expiry::Preset(preset)) => map.serialize_entry("expire", preset.as_str())?,
            Some(Expiry::At(at)) => map.serialize_entry(
                "expires_at",
                &at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            )?,
            None => {}
        }
        let files: BTreeMap<&str, ContentOnly<'_>> = self
            .files
            .iter()
            .map(|f| (f.filename.as_str(), ContentOnly(&f.content)))
            .collect();
        map.serialize_entry("files", &files)?;
        map.end()
    }
}

/// One change to a file of an existing gist. There is deliberately no "delete" here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Replace (or, when allowed, create) `filename` with `content`.
    Write {
        /// The file.
        filename: String,
        /// Its full new content, never empty.
        content: String,
    },
    /// Rename `filename` to `new_filename`, optionally replacing its content too.
    Rename {
        /// The current name.
        filename: String,
        /// The new name.
        new_filename: String,
        /// New content, if it changes as well; never empty.
        content: Option<String>,
    },
}

impl FileChange {
    /// The name of the file as it is now.
    pub fn filename(&self) -> &str {
        match self {
            Self::Write { filename, .. } | Self::Rename { filename, .. } => filename,
        }
    }

    /// The new content, if the change writes any.
    pub fn content(&self) -> Option<&str> {
        match self {
            Self::Write { content, .. } => Some(content),
            Self::Rename { content, .. } => content.as_deref(),
        }
    }
}

/// The body of `PATCH /api/gists/:uuid`, validated. It can change metadata and write or rename
/// files; it cannot delete a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GistPatch {
    title: Option<String>,
    description: Option<String>,
    visibility: Option<Visibility>,
    files: Vec<FileChange>,
}

impl GistPatch {
    /// Validates an update.
    pub fn new(
        title: Option<String>,
        description: Option<String>,
        visibility: Option<Visibility>,
        files: Vec<FileChange>,
    ) -> Result<Self, RequestError> {
        if title.is_none() && description.is_none() && visibility.is_none() && files.is_empty() {
            return Err(RequestError::EmptyUpdate);
        }
        if files.len() > MAX_FILES {
            return Err(RequestError::TooManyFiles(files.len()));
        }
        check_metadata(title.as_deref(), description.as_deref())?;
        let mut touched = BTreeSet::new();
        let mut resulting = BTreeSet::new();
        for (i, change) in files.iter().enumerate() {
            let index = i + 1;
            if let Some(why) = filename_problem(change.filename()) {
                return Err(RequestError::BadFilename { index, why });
            }
            if !touched.insert(change.filename()) {
                return Err(RequestError::DuplicateFilename(index));
            }
            if change.content() == Some("") {
                return Err(RequestError::EmptyContent(index));
            }
            let result_name = match change {
                FileChange::Write { filename, .. } => filename,
                FileChange::Rename {
                    filename,
                    new_filename,
                    ..
                } => {
                    if let Some(why) = filename_problem(new_filename) {
                        return Err(RequestError::BadFilename { index, why });
                    }
                    if new_filename == filename {
                        return Err(RequestError::RenameClash(index));
                    }
                    new_filename
                }
            };
            if !resulting.insert(result_name.as_str()) {
                return Err(RequestError::RenameClash(index));
            }
        }
        // A rename onto a name another operation touches would clobber it.
        for (i, change) in files.iter().enumerate() {
            if let FileChange::Rename { new_filename, .. } = change
                && touched.contains(new_filename.as_str())
            {
                return Err(RequestError::RenameClash(i + 1));
            }
        }
        Ok(Self {
            title,
            description,
            visibility,
            files,
        })
    }

    /// The new title, if it changes.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The new description, if it changes.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The new visibility, if it changes.
    pub fn visibility(&self) -> Option<Visibility> {
        self.visibility
    }

    /// The file changes, in request order.
    pub fn files(&self) -> &[FileChange] {
        &self.files
    }

    /// Whether the patch writes anything a reader sees: content, a rename, a title or a
    /// description.
    pub fn writes_visible_content(&self) -> bool {
        self.title.is_some() || self.description.is_some() || !self.files.is_empty()
    }
}

struct ChangeEntry<'a>(&'a FileChange);

impl Serialize for ChangeEntry<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            FileChange::Write { content, .. } => map.serialize_entry("content", content)?,
            FileChange::Rename {
                new_filename,
                content,
                ..
            } => {
                map.serialize_entry("filename", new_filename)?;
                if let Some(content) = content {
                    map.serialize_entry("content", content)?;
                }
            }
        }
        map.end()
    }
}

impl Serialize for GistPatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        if let Some(description) = &self.description {
            map.serialize_entry("description", description)?;
        }
        if let Some(visibility) = self.visibility {
            map.serialize_entry("visibility", visibility.as_str())?;
        }
        if !self.files.is_empty() {
            let files: BTreeMap<&str, ChangeEntry<'_>> = self
                .files
                .iter()
                .map(|c| (c.filename(), ChangeEntry(c)))
                .collect();
            map.serialize_entry("files", &files)?;
        }
        map.end()
    }
}

/// The body of a PATCH that deletes files: `{"files": {"name": null, ...}}`. Only the guarded
/// delete-files target makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDeletion {
    names: BTreeSet<String>,
}

impl FileDeletion {
    pub(crate) fn new(names: BTreeSet<String>) -> Self {
        Self { names }
    }

    /// The files to delete, sorted.
    pub fn names(&self) -> &BTreeSet<String> {
        &self.names
    }
}

impl Serialize for FileDeletion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let files: BTreeMap<&str, Option<()>> =
            self.names.iter().map(|n| (n.as_str(), None)).collect();
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("files", &files)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn create_body_always_names_the_visibility() {
        let gist = NewGist::new(
            None,
            None,
            Visibility::Private,
            None,
            files(&[("a.md", "x")]),
        )
        .expect("valid");
        assert_eq!(
            serde_json::to_value(&gist).expect("serializes"),
            json!({"visibility": "private", "files": {"a.md": {"content": "x"}}})
        );
    }

    #[test]
    fn create_refuses_what_opengist_would_mangle() {
        let bad = |f: &[(&str, &str)]| NewGist::new(None, None, Visibility::Public, None, files(f));
        assert_eq!(bad(&[]), Err(RequestError::NoFiles));
        assert_eq!(bad(&[("a", "")]), Err(RequestError::EmptyContent(1)));
        assert_eq!(
            bad(&[("a", "x"), ("a", "y")]),
            Err(RequestError::DuplicateFilename(2))
        );
        assert!(matches!(
            bad(&[("a/b", "x")]),
            Err(RequestError::BadFilename { index: 1, .. })
        ));
        assert!(matches!(
            bad(&[("..", "x")]),
            Err(RequestError::BadFilename { .. })
        ));
        let many: Vec<(String, String)> =
            (0..51).map(|i| (format!("f{i}"), "x".to_owned())).collect();
        assert_eq!(
            NewGist::new(None, None, Visibility::Private, None, many),
            Err(RequestError::TooManyFiles(51))
        );
    }

    #[test]
    fn expiry_is_one_or_the_other_and_in_the_future() {
        let now = chrono::Utc::now();
        assert_eq!(
            parse_expiry(
                Some(ExpirePreset::OneDay),
                Some("2999-01-01T00:00:00Z"),
                now
            ),
            Err(RequestError::TwoExpiries)
        );
        assert_eq!(
            parse_expiry(None, Some("tomorrow"), now),
            Err(RequestError::BadExpiry)
        );
        assert_eq!(
            parse_expiry(None, Some("2000-01-01T00:00:00Z"), now),
            Err(RequestError::BadExpiry)
        );
        assert!(matches!(
            parse_expiry(None, Some("2999-01-01T00:00:00+02:00"), now),
            Ok(Some(Expiry::At(_)))
        ));
    }

    #[test]
    fn patch_never_serializes_a_deleting_entry() {
        let patch = GistPatch::new(
            None,
            None,
            None,
            vec![
                FileChange::Write {
                    filename: "a".into(),
                    content: "x".into(),
                },
                FileChange::Rename {
                    filename: "b".into(),
                    new_filename: "c".into(),
                    content: None,
                },
            ],
        )
        .expect("valid");
        let body = serde_json::to_value(&patch).expect("serializes");
        assert_eq!(
            body,
            json!({"files": {"a": {"content": "x"}, "b": {"filename": "c"}}})
        );
        for entry in body["files"].as_object().expect("map").values() {
            assert!(entry.is_object() && !entry.as_object().expect("object").is_empty());
        }
    }

    #[test]
    fn patch_refuses_empty_updates_clashes_and_empty_content() {
        assert_eq!(
            GistPatch::new(None, None, None, vec![]),
            Err(RequestError::EmptyUpdate)
        );
        let w = |f: &str, c: &str| FileChange::Write {
            filename: f.into(),
            content: c.into(),
        };
        let r = |f: &str, n: &str| FileChange::Rename {
            filename: f.into(),
            new_filename: n.into(),
            content: None,
        };
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("a", "")]),
            Err(RequestError::EmptyContent(1))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("a", "x"), w("a", "y")]),
            Err(RequestError::DuplicateFilename(2))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![r("a", "a")]),
            Err(RequestError::RenameClash(1))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![r("a", "c"), r("b", "c")]),
            Err(RequestError::RenameClash(2))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("b", "x"), r("a", "b")]),
            Err(RequestError::RenameClash(2))
        );
        assert!(GistPatch::new(None, None, Some(Visibility::Private), vec![]).is_ok());
    }

    #[test]
    fn deletion_is_the_only_body_with_nulls() {
        let names: BTreeSet<String> = ["b".to_owned(), "a".to_owned()].into();
        assert_eq!(
            serde_json::to_value(FileDeletion::new(names)).expect("serializes"),
            json!({"files": {"a": null, "b": null}})
        );
    }

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
