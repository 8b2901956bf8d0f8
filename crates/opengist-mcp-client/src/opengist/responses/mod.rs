//! What Opengist answers, as typed values.
//!
//! Parsing is tolerant where Opengist may omit or null a field (Go marshals empty slices as
//! `null`; older builds lack newer fields) and ignores unknown fields, but strict where a wrong
//! guess would be unsafe: a gist's `id` must be a 32-hex uuid, and its `visibility` must be
//! one of `public`, `unlisted`, `private` (an unknown value is a parse error, never read as
//! public or private).
//!
//! Dates: Opengist sends RFC 3339 strings in UTC (`2024-01-01T00:00:00Z`), and `expires_at`
//! as `null` when a gist never expires. Unix seconds are accepted too, and `null`, `""`, `0`
//! and Go's zero time (`0001-01-01T00:00:00Z`) all mean "absent".

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use super::requests::{GistId, Visibility};

/// A user as embedded in gists and commits (Opengist's `SimpleUser`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Owner {
    /// Numeric user id.
    #[serde(default)]
    pub id: u64,
    /// Login name (the same as `username` on Opengist).
    #[serde(default, deserialize_with = "nullable")]
    pub login: String,
    /// Username.
    #[serde(default, deserialize_with = "nullable")]
    pub username: String,
    /// Avatar image URL.
    #[serde(default, deserialize_with = "nullable")]
    pub avatar_url: String,
    /// Account type, e.g. `User`.
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub kind: String,
    /// When the account was made.
    #[serde(default, deserialize_with = "date")]
    pub created_at: Option<DateTime<Utc>>,
}

impl Owner {
    /// The username, falling back to `login` when `username` is empty.
    pub fn name(&self) -> &str {
        if self.username.is_empty() {
            &self.login
        } else {
            &self.username
        }
    }
}

/// A user account: the public profile (the same fields a gist embeds for its owner), plus
/// `email` when it is the token owner's own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct User {
    /// Id, names, avatar and creation date.
    #[serde(flatten)]
    pub profile: Owner,
    /// E-mail address: only in `GET /api/user` (the token owner's own account).
    #[serde(default, deserialize_with = "non_empty")]
    pub email: Option<String>,
    /// Whether the account is an administrator, if an answer ever says. Opengist 1.15's user
    /// shapes have no such field, so this is `None`.
    #[serde(default)]
    pub is_admin: Option<bool>,
}

impl User {
    /// The username, falling back to `login` when `username` is empty.
    pub fn name(&self) -> &str {
        self.profile.name()
    }
}

/// A gist without its files: what every list returns (Opengist's `GistSimple`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GistSummary {
    /// The 32-hex uuid used in every API path.
    #[serde(deserialize_with = "gist_id")]
    pub id: GistId,
    /// The last path segment of the gist's web address: its custom URL if it has one,
    /// otherwise its uuid.
    #[serde(default, deserialize_with = "nullable")]
    pub slug_url: String,
    /// Who owns it.
    #[serde(default, deserialize_with = "nullable")]
    pub owner: Owner,
    /// Title (user-supplied text).
    #[serde(default, deserialize_with = "nullable")]
    pub title: String,
    /// Web address.
    #[serde(default, deserialize_with = "nullable")]
    pub html_url: String,
    /// Description (user-supplied text).
    #[serde(default, deserialize_with = "nullable")]
    pub description: String,
    /// `true` only when `visibility` is public. Informational: `visibility` decides.
    #[serde(default)]
    pub public: bool,
    /// Who can see it. Required, and strictly one of the three known values.
    #[serde(deserialize_with = "visibility")]
    pub visibility: Visibility,
    /// Likes.
    #[serde(default)]
    pub like_count: u64,
    /// Forks.
    #[serde(default)]
    pub fork_count: u64,
    /// HTTP clone URL.
    #[serde(default, deserialize_with = "nullable")]
    pub clone_url: String,
    /// SSH clone URL.
    #[serde(default, deserialize_with = "nullable")]
    pub ssh_url: String,
    /// Topics (user-supplied text). Lists carry them; Opengist's single-gist answers (a gist,
    /// a gist at a revision, and the create and update answers) always send `[]`, because the
    /// lookup behind them does not load topics.
    #[serde(default, deserialize_with = "nullable")]
    pub topics: Vec<String>,
    /// Archived gists are read-only.
    #[serde(default)]
    pub archived: bool,
    /// Created.
    #[serde(default, deserialize_with = "date")]
    pub created_at: Option<DateTime<Utc>>,
    /// Last updated.
    #[serde(default, deserialize_with = "date")]
    pub updated_at: Option<DateTime<Utc>>,
    /// When it expires, if it does.
    #[serde(default, deserialize_with = "date")]
    pub expires_at: Option<DateTime<Utc>>,
}

/// One file of a gist, as in `GET /api/gists/:uuid`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GistFile {
    /// Its name.
    #[serde(default, deserialize_with = "nullable")]
    pub filename: String,
    /// MIME type as Opengist detected it.
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub mime_type: String,
    /// Language as Opengist detected it.
    #[serde(default, deserialize_with = "nullable")]
    pub language: String,
    /// Size in bytes of the whole file.
    #[serde(default)]
    pub size: u64,
    /// Whether `content` was cut (Opengist sends at most 512 KiB per file).
    #[serde(default)]
    pub truncated: bool,
    /// The content: text, or base64 when `encoding` is `base64`.
    #[serde(default, deserialize_with = "nullable")]
    pub content: String,
    /// For text, the charset Opengist detected from the first 512 bytes (usually `utf-8`;
    /// may be empty, e.g. for SVG); `base64` for every file it does not treat as text.
    #[serde(default, deserialize_with = "nullable")]
    pub encoding: String,
}

impl GistFile {
    /// Whether `content` is base64 (a binary file).
    pub fn is_base64(&self) -> bool {
        self.encoding.eq_ignore_ascii_case("base64")
    }
}

/// The git author of a commit.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommitAuthor {
    /// Author name.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Author e-mail.
    #[serde(default, deserialize_with = "nullable")]
    pub email: String,
}

/// A commit's shortstat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChangeStatus {
    /// Files changed.
    #[serde(default)]
    pub files_changed: u64,
    /// Lines added.
    #[serde(default)]
    pub additions: u64,
    /// Lines deleted.
    #[serde(default)]
    pub deletions: u64,
    /// Additions plus deletions.
    #[serde(default)]
    pub total: u64,
}

/// One revision of a gist.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Commit {
    /// The commit sha: pass it as the `sha` of a revision read.
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    /// The git author.
    #[serde(default, deserialize_with = "nullable")]
    pub author: CommitAuthor,
    /// The Opengist account whose e-mail matches the author, if any.
    #[serde(default)]
    pub user: Option<Owner>,
    /// The shortstat.
    #[serde(default, deserialize_with = "nullable")]
    pub change_status: ChangeStatus,
    /// When it was committed.
    #[serde(default, deserialize_with = "date")]
    pub committed_at: Option<DateTime<Utc>>,
}

/// A whole gist: the summary, files (at most 50, each content at most 512 KiB), the 10 newest
/// commits (from the revision read), and up to 11 public forks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GistDetail {
    /// The summary fields.
    #[serde(flatten)]
    pub summary: GistSummary,
    /// The gist this one forks, if it is a fork.
    #[serde(default)]
    pub fork_of: Option<Box<GistSummary>>,
    /// Public forks, most recently updated first: Opengist embeds at most 11, and only public
    /// ones whatever the token (list the forks for the token owner's own unlisted or private
    /// ones).
    #[serde(default, deserialize_with = "nullable")]
    pub forks: Vec<GistSummary>,
    /// Files by name.
    #[serde(default, deserialize_with = "nullable")]
    pub files: BTreeMap<String, GistFile>,
    /// At most 10 commits, newest first: the newest ones, or for a read at a revision, that
    /// commit and its ancestors.
    #[serde(default, deserialize_with = "nullable")]
    pub commits: Vec<Commit>,
    /// Whether the file list was cut (more than 50 files).
    #[serde(default)]
    pub truncated: bool,
    /// The head sha git advertises, when the API's commit list may not start at the head
    /// (see `git_head.rs`); not part of Opengist's answer.
    #[serde(skip)]
    pub git_head: Option<String>,
}

impl GistDetail {
    /// The gist's id.
    pub fn id(&self) -> &GistId {
        &self.summary.id
    }

    /// The newest revision's sha: the one git advertised when it was asked, else the first
    /// commit Opengist listed, if any.
    pub fn head_sha(&self) -> Option<&str> {
        self.git_head.as_deref().or_else(|| {
            self.commits
                .first()
                .map(|c| c.version.as_str())
                .filter(|v| !v.is_empty())
        })
    }
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page<T> {
    /// The items, in Opengist's order (gists: most recently updated first; commits: newest
    /// first).
    pub items: Vec<T>,
    /// This page's number, 1-based (from `X-Page`, else as requested).
    pub page: u32,
    /// Items per page (from `X-Per-Page`, else as requested after clamping).
    pub per_page: u32,
    /// Items across all pages (`X-Total`), when Opengist says (commit lists do not).
    pub total: Option<u64>,
    /// Pages in all (`X-Total-Pages`), when Opengist says.
    pub total_pages: Option<u32>,
    /// Whether another page follows: from `Link: rel="next"` or the totals; only when no
    /// pagination header is present at all is it inferred from a full page.
    pub has_next: bool,
}

/// A raw file read, or a window of one.
#[derive(Clone, PartialEq, Eq)]
pub struct RawFile {
    /// The bytes from `offset`, at most the requested number.
    pub bytes: Vec<u8>,
    /// Where `bytes` start in the file.
    pub offset: u64,
    /// The file's full size, from `Content-Length`, when Opengist sent it: it sets none itself,
    /// so only small answers (under 2 KiB, which Go's HTTP server measures) carry one; larger
    /// files come chunked.
    pub total_bytes: Option<u64>,
    /// Whether the file goes on past the end of `bytes`.
    pub truncated: bool,
    /// Whether `bytes` are UTF-8 text, allowing for a character cut at either edge of the
    /// window.
    pub is_utf8: bool,
}

impl fmt::Debug for RawFile {
    // Content stays out of logs and debug output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFile")
            .field("bytes", &format_args!("<{} bytes>", self.bytes.len()))
            .field("offset", &self.offset)
            .field("total_bytes", &self.total_bytes)
            .field("truncated", &self.truncated)
            .field("is_utf8", &self.is_utf8)
            .finish()
    }
}

/// The answer of `GET /api/gists/:uuid/like`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LikeState {
    /// 204: the token's account likes the gist.
    Liked,
    /// 404: not liked, or the gist is not visible to this token (Opengist does not say which).
    NotLikedOrNotVisible,
}

/// What [`set_like`](super::OpengistClient::set_like) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LikeChange {
    /// It was liked already; nothing was sent.
    AlreadyLiked,
    /// It was not liked already; nothing was sent.
    AlreadyNotLiked,
    /// It is now liked (confirmed by reading it back).
    Liked,
    /// It is now not liked (confirmed by reading it back).
    Unliked,
}

impl LikeChange {
    /// Whether the gist is liked afterwards.
    pub fn liked(self) -> bool {
        matches!(self, Self::AlreadyLiked | Self::Liked)
    }

    /// Whether anything was changed.
    pub fn changed(self) -> bool {
        matches!(self, Self::Liked | Self::Unliked)
    }
}

/// What a fork call did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ForkOutcome {
    /// 201: a new fork was made.
    Created(GistSummary),
    /// 200: the token's account had forked this gist already; this is that fork.
    Existing(GistSummary),
}

impl ForkOutcome {
    /// The fork.
    pub fn fork(&self) -> &GistSummary {
        match self {
            Self::Created(g) | Self::Existing(g) => g,
        }
    }

    /// Whether a new fork was made.
    pub fn created(&self) -> bool {
        matches!(self, Self::Created(_))
    }
}

/// `GET /healthcheck`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// The HTTP status (200 healthy, 503 when the database is down).
    pub status: u16,
    /// The `opengist` field (`ok`).
    pub opengist: Option<String>,
    /// The `database` field (`ok` / `ko`).
    pub database: Option<String>,
    /// The server's clock (RFC 3339, its local time zone), as it reported it.
    pub time: Option<String>,
    /// Opengist's version, if a `version` field or an `X-Opengist-Version` / `Server:
    /// Opengist/...` header ever carries it. Opengist 1.15 sends none of these (its healthcheck
    /// has only `opengist`, `database` and `time`), so this is `None` unless a proxy adds one.
    pub version: Option<String>,
}

impl Health {
    /// Whether Opengist and its database report `ok`.
    pub fn is_ok(&self) -> bool {
        self.status == 200
            && self.opengist.as_deref().is_none_or(|s| s == "ok")
            && self.database.as_deref().is_none_or(|s| s == "ok")
    }
}

/// What a probe of `GET /api/gists?per_page=1` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiInfo {
    /// Opengist's version, when a response header reveals it (Opengist 1.15 sends none).
    pub version: Option<String>,
    /// `X-Total` of the caller's gist list, when sent.
    pub total_gists: Option<u64>,
    /// Whether a token was sent.
    pub authenticated: bool,
}

// ---------------------------------------------------------------------------------------
// Deserialization helpers.

/// `null` → the default value; missing fields are handled by `#[serde(default)]`.
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `null` and `""` → `None`.
fn non_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.filter(|s| !s.is_empty()))
}

fn gist_id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<GistId, D::Error> {
    let text = String::deserialize(deserializer)?;
    GistId::parse(&text).map_err(|_| de::Error::custom("a gist id is not 32 hex digits"))
}

fn visibility<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Visibility, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_visibility(&text).ok_or_else(|| {
        de::Error::custom("unknown gist visibility (expected public, unlisted or private)")
    })
}

/// The three documented words, in any case; anything else is `None`.
pub(crate) fn parse_visibility(text: &str) -> Option<Visibility> {
    match text.to_ascii_lowercase().as_str() {
        "public" => Some(Visibility::Public),
        "unlisted" => Some(Visibility::Unlisted),
        "private" => Some(Visibility::Private),
        _ => None,
    }
}

fn date<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    deserializer.deserialize_any(DateVisitor)
}

struct DateVisitor;

/// Unix timestamps above this are taken as milliseconds (it is the year 5138 in seconds).
const MILLIS_THRESHOLD: i64 = 100_000_000_000;

fn from_unix(value: i64) -> Option<DateTime<Utc>> {
    if value == 0 {
        return None;
    }
    if value.abs() >= MILLIS_THRESHOLD {
        Utc.timestamp_millis_opt(value).single()
    } else {
        Utc.timestamp_opt(value, 0).single()
    }
}

impl<'de> Visitor<'de> for DateVisitor {
    type Value = Option<DateTime<Utc>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RFC 3339 date, Unix seconds, or null")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(None);
        }
        if let Ok(at) = DateTime::parse_from_rfc3339(value) {
            let at = at.with_timezone(&Utc);
            // Go's zero time means "not set".
            return Ok((at.year() > 1).then_some(at));
        }
        if let Ok(seconds) = value.parse::<i64>() {
            return Ok(from_unix(seconds));
        }
        Err(E::custom("a date is neither RFC 3339 nor Unix seconds"))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(from_unix(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(value).ok().and_then(from_unix))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        if !value.is_finite() || value.abs() > i64::MAX as f64 {
            return Ok(None);
        }
        Ok(from_unix(value.trunc() as i64))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

#[cfg(test)]
mod tests;
