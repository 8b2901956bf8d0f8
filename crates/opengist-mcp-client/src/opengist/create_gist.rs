//! `create_gist` as an Opengist operation: `POST /api/gists`, asked about when the gist would
//! not be private, bound to the exact content.
//!
//! The request body ([`NewGist`], with its expiry), the guard target ([`CreateGist`]: its
//! binding, its question and its condition), the check made before asking
//! ([`OpengistClient::check_can_create`]), and the client method that takes the guard's
//! clearance ([`OpengistClient::create_gist`]). The tool is `tools/create_gist.rs`.

use std::collections::{BTreeMap, BTreeSet};

use ask_first::fact::Evidence;
use ask_first::{Binding, Clearance, Conditional, Fact, Question, Target};
use reqwest::Method;
use reqwest::header;
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::client::{MAX_JSON_BYTES, OpengistClient};
use super::error::{CallInfo, OpengistError, Scope};
use super::gist_evidence::FileNow;
use super::gist_facts::visibility_fact;
use super::probes::Probe;
use super::requests::{
    GistId, MAX_FILES, RequestError, Visibility, check_metadata, filename_problem,
};
use super::responses::GistDetail;

/// The operation, as errors and the pre-ask check name it.
const OPERATION: &str = "create a gist";

ask_first::wording! {
    struct CreateHeadline = "This will create a new {} gist with {} file(s), {} in total.";
    struct CreatePublic = "Anyone will be able to find and read it.";
    struct CreateUnlisted = "Anyone with its link will be able to read it.";
    struct CreateExpiry = "It expires: {}.";
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

/// Creating a gist. Asked about when it would not be private; bound to the exact content.
#[derive(Debug)]
pub struct CreateGist {
    new: NewGist,
}

impl CreateGist {
    /// The target for creating `new`.
    pub fn new(new: NewGist) -> Self {
        Self { new }
    }

    /// The validated body to send.
    pub fn new_gist(&self) -> &NewGist {
        &self.new
    }

    /// The guard's condition: a gist that is not private is published.
    pub fn publishes(&self) -> bool {
        self.new.visibility() != Visibility::Private
    }
}

impl Target for CreateGist {
    const OPERATION: &'static str = "create_gist";

    fn bind(&self, binding: &mut Binding) {
        let new = &self.new;
        binding
            .optional_text("title", new.title())
            .optional_text("description", new.description())
            .text("visibility", new.visibility().as_str());
        match new.expiry() {
            None => binding.text("expiry", "none"),
            Some(Expiry::Preset(p)) => binding.text("expiry", p.as_str()),
            Some(Expiry::At(at)) => binding.text("expiry", &at.to_rfc3339()),
        };
        binding.number("files", new.files().len() as u64);
        for file in new.files() {
            binding
                .text("filename", file.filename())
                .text("content", file.content());
        }
    }

    fn question(&self) -> Question {
        let new = &self.new;
        let question = Question::new::<CreateHeadline>([
            visibility_fact(new.visibility()),
            Fact::count(new.files().len() as u64),
            Fact::bytes(new.content_bytes()),
        ]);
        let question = match new.visibility() {
            Visibility::Public => question.line::<CreatePublic>([]),
            Visibility::Unlisted => question.line::<CreateUnlisted>([]),
            Visibility::Private => question,
        };
        match new.expiry() {
            Some(Expiry::At(at)) => {
                question.line::<CreateExpiry>([Fact::date_unix(at.timestamp())])
            }
            _ => question,
        }
    }

    /// The files that become readable, each by name, size and digest, with the beginning of
    /// its content: two contents of one length never read alike. (No link: the gist does not
    /// exist yet.)
    fn evidence(&self) -> Evidence {
        if !self.publishes() {
            return Evidence::new();
        }
        let files = self
            .new
            .files()
            .iter()
            .map(|f| FileNow::given(f.content()).readable(f.filename()));
        Evidence::new().group("Files that become readable", files)
    }
}

impl Conditional for CreateGist {}

impl OpengistClient {
    /// Whether `create_gist` can succeed now: the token works, holds `gist:write`, and
    /// Opengist answers. Changes nothing.
    pub async fn check_can_create(&self) -> Result<(), OpengistError> {
        self.check_probe(&Probe::CreateGist).await
    }

    /// Creates the gist the guard cleared, and reads it back.
    pub async fn create_gist(
        &self,
        clearance: Clearance<CreateGist>,
    ) -> Result<GistDetail, OpengistError> {
        let target = clearance.into_target();
        let url = self.endpoint(&["api", "gists"])?;
        let call = CallInfo::new(OPERATION, Scope::GistWrite, "the new gist");
        let response = self
            .send_write(Method::POST, url, Some(target.new_gist()), &call)
            .await?;
        let response = self.check(response, &call).await?;
        let location_id = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(id_from_location);
        let body = self
            .read_capped(response, MAX_JSON_BYTES, &call)
            .await
            .unwrap_or_default();
        let body_id = serde_json::from_slice::<IdOnly>(&body)
            .ok()
            .and_then(|b| GistId::parse(&b.id).ok());
        let Some(id) = body_id.or(location_id) else {
            return Err(OpengistError::CreatedWithoutId);
        };
        match self.get_gist(&id).await {
            Ok(detail) => Ok(detail),
            Err(read_error) => serde_json::from_slice::<GistDetail>(&body).map_err(|_| {
                OpengistError::WrittenButUnread {
                    id: id.to_string(),
                    action: "created",
                    reason: read_error.to_string(),
                }
            }),
        }
    }
}

#[derive(serde::Deserialize)]
struct IdOnly {
    id: String,
}

/// The last path segment of a `Location` such as `<base>/api/gists/<uuid>`.
fn id_from_location(location: &str) -> Option<GistId> {
    let path = location.split(['?', '#']).next()?;
    let last = path.trim_end_matches('/').rsplit('/').next()?;
    GistId::parse(last).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::gist_facts::fixtures::{ID, INJECTION, id};
    use super::*;

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
    fn create_asks_unless_private_and_binds_every_file() {
        let make = |v: Visibility, files: &[(&str, &str)]| {
            CreateGist::new(
                NewGist::new(
                    Some(INJECTION.to_owned()),
                    None,
                    v,
                    None,
                    files
                        .iter()
                        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                        .collect(),
                )
                .expect("valid"),
            )
        };
        assert!(!make(Visibility::Private, &[("a", "x")]).publishes());
        assert!(make(Visibility::Unlisted, &[("a", "x")]).publishes());
        let one = make(Visibility::Public, &[("a", "x")]);
        let two = make(Visibility::Public, &[("a", "x"), ("b", "y")]);
        let changed = make(Visibility::Public, &[("a", "z")]);
        assert_ne!(one.fingerprint(), two.fingerprint());
        assert_ne!(one.fingerprint(), changed.fingerprint());
        let text = one.question().render();
        assert!(
            text.starts_with("This will create a new public gist with 1 file(s), 1 byte in total.")
        );
        assert!(!text.contains("IGNORE"));
        // Two contents of one length: one question, two evidences, two fingerprints of what
        // was shown.
        let secret = make(Visibility::Public, &[("notes.txt", "AKIA-SECRET-KEY\n")]);
        let story = make(Visibility::Public, &[("notes.txt", "shopping: milk!\n")]);
        assert_eq!(secret.question().render(), story.question().render());
        let shown = |t: &CreateGist| t.evidence().groups()[0].items()[0].clone();
        assert_eq!(
            shown(&secret).excerpt().and_then(|e| e.text()),
            Some("AKIA-SECRET-KEY\n")
        );
        assert_ne!(shown(&secret).digest(), shown(&story).digest());
        assert_eq!(shown(&secret).name(), "«notes.txt»");
        // Private: asked about by no one, and nothing to show.
        assert!(
            make(Visibility::Private, &[("a", "x")])
                .evidence()
                .is_empty()
        );
    }

    #[test]
    fn created_ids_from_location() {
        assert_eq!(
            id_from_location(&format!("https://g.example/api/gists/{ID}")),
            Some(id())
        );
        assert_eq!(
            id_from_location(&format!("/api/v1/gists/{ID}/?x=1")),
            Some(id())
        );
        assert_eq!(id_from_location("https://g.example/api/gists/nope"), None);
    }
}
