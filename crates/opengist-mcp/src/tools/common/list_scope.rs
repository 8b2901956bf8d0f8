//! Which gist list a tool reads (`list_gists`, `search_gists`): the scope and username
//! arguments, the `since` filter, and what a token without `gist:read` does to every list.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::opengist::ListScope;

/// Which gist list to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ListScopeArg {
    /// The token owner's gists (or, with `username`, that user's gists).
    #[default]
    Mine,
    /// Every public gist of the instance.
    Public,
    /// Gists the token owner (or `username`) liked.
    Liked,
    /// Gists the token owner (or `username`) forked.
    Forked,
}

impl ListScopeArg {
    /// The word used in arguments.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Mine => "mine",
            Self::Public => "public",
            Self::Liked => "liked",
            Self::Forked => "forked",
        }
    }
}

/// The client's list for a scope and an optional username.
pub(crate) fn list_scope(
    scope: ListScopeArg,
    username: Option<String>,
) -> Result<ListScope, String> {
    Ok(match (scope, username) {
        (ListScopeArg::Mine, None) => ListScope::Mine,
        (ListScopeArg::Mine, Some(name)) => ListScope::User(name),
        (ListScopeArg::Public, None) => ListScope::Public,
        (ListScopeArg::Public, Some(_)) => {
            return Err("`username` does not combine with scope=public: use scope=mine with `username` to list that user's gists (their public ones, or all of yours with gist:read).".into());
        }
        (ListScopeArg::Liked, None) => ListScope::Liked,
        (ListScopeArg::Liked, Some(name)) => ListScope::UserLiked(name),
        (ListScopeArg::Forked, None) => ListScope::Forked,
        (ListScopeArg::Forked, Some(name)) => ListScope::UserForked(name),
    })
}

/// Parses a `since` argument (RFC 3339).
pub(crate) fn parse_since(since: Option<&str>) -> Result<Option<DateTime<Utc>>, String> {
    let Some(text) = since.map(str::trim) else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(text)
        .map(|d| Some(d.with_timezone(&Utc)))
        .map_err(|_| {
            "`since` must be an RFC 3339 date-time with a zone, for example 2025-01-31T00:00:00Z; only gists updated at or after it are listed.".into()
        })
}
