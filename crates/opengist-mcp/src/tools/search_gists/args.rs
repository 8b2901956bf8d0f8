//! The arguments of `search_gists` and their checks, into a [`SearchPlan`].

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use super::matching::{Field, Query};
use crate::opengist::requests::{GistId, Visibility};
use crate::opengist::{ListScope, MAX_PER_PAGE};
use crate::tools::common::arguments::check_username;
use crate::tools::common::list_scope::{ListScopeArg, list_scope, parse_since};

/// Default and largest `limit`.
pub(crate) const DEFAULT_LIMIT: usize = 20;
/// Largest `limit`.
pub(crate) const MAX_LIMIT: usize = 100;
/// Default `max_pages`.
pub(crate) const DEFAULT_MAX_PAGES: u32 = 5;
/// Largest `max_pages`.
pub(crate) const MAX_PAGES: u32 = 20;

/// Arguments of `search_gists`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchGistsArgs {
    /// What to look for, 1 to 200 characters. Case-insensitive; matches the whole phrase, or
    /// every whitespace-separated word somewhere in the chosen fields.
    pub query: String,
    /// Fields to match: title, description, topics, owner, filenames, content. Default: all
    /// but content. `filenames` and `content` read each gist that did not match otherwise.
    #[serde(default)]
    pub fields: Option<Vec<Field>>,
    /// Which list to search: `mine` (default), `public`, `liked` or `forked`.
    #[serde(default)]
    pub scope: ListScopeArg,
    /// Another user's list, as in `list_gists`.
    #[serde(default)]
    pub username: Option<String>,
    /// Only gists with this visibility: private, unlisted or public.
    #[serde(default)]
    pub visibility: Option<Visibility>,
    /// Only gists updated at or after this RFC 3339 date-time.
    #[serde(default)]
    pub since: Option<String>,
    /// Most matches to return, 1 to 100. Default 20.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Most list pages (of 100 gists) to scan, 1 to 20. Default 5.
    #[serde(default)]
    pub max_pages: Option<u32>,
    /// The list page to start at (from `next_call`). Default 1.
    #[serde(default)]
    pub page_start: Option<u32>,
    /// Gists at the start of `page_start` to pass over (from `next_call`), 0 to 99. Default 0.
    #[serde(default)]
    pub skip: Option<usize>,
    /// The last gist the previous call examined (from `next_call`): the search goes on right
    /// after it when it is still on `page_start`, so gists deleted or added meanwhile do not
    /// make it pass over any; else after `skip` gists.
    #[serde(default)]
    pub after: Option<String>,
}

/// A validated search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchPlan {
    /// The query.
    pub query: Query,
    /// The chosen fields, sorted, distinct.
    pub fields: Vec<Field>,
    /// Whether `fields` was given (for the next call).
    pub fields_given: bool,
    /// The client's list.
    pub scope: ListScope,
    /// The scope as given.
    pub scope_arg: ListScopeArg,
    /// The username as given.
    pub username: Option<String>,
    /// Visibility filter.
    pub visibility: Option<Visibility>,
    /// `since` filter.
    pub since: Option<DateTime<Utc>>,
    /// `since` as given.
    pub since_text: Option<String>,
    /// Most matches.
    pub limit: usize,
    /// Most pages.
    pub max_pages: u32,
    /// First page.
    pub page_start: u32,
    /// Gists of the first page to pass over when `after` is not on it.
    pub skip: usize,
    /// The last gist the previous call examined.
    pub after: Option<GistId>,
}

impl SearchPlan {
    pub(super) fn needs_files(&self) -> bool {
        self.fields.iter().any(|f| f.needs_files())
    }
}

impl SearchGistsArgs {
    /// Validates the arguments; the error names the problem and the fix.
    pub(crate) fn validate(&self) -> Result<SearchPlan, String> {
        let query = Query::parse(&self.query)?;
        let mut fields = match &self.fields {
            Some(f) if f.is_empty() => {
                return Err("`fields` is empty: leave it out for the default (title, description, topics, owner, filenames), or name some of those and/or content.".into());
            }
            Some(f) => f.clone(),
            None => Field::DEFAULT.to_vec(),
        };
        fields.sort();
        fields.dedup();
        let username = check_username(self.username.as_deref())?;
        let scope = list_scope(self.scope, username.clone())?;
        let since = parse_since(self.since.as_deref())?;
        let limit = match self.limit {
            None => DEFAULT_LIMIT,
            Some(n) if (1..=MAX_LIMIT).contains(&n) => n,
            Some(_) => {
                return Err(format!(
                    "`limit` must be 1 to {MAX_LIMIT}; the default is {DEFAULT_LIMIT}. For more, follow `next_call`."
                ));
            }
        };
        let max_pages = match self.max_pages {
            None => DEFAULT_MAX_PAGES,
            Some(n) if (1..=MAX_PAGES).contains(&n) => n,
            Some(_) => {
                return Err(format!(
                    "`max_pages` must be 1 to {MAX_PAGES} (pages of 100 gists); the default is {DEFAULT_MAX_PAGES}."
                ));
            }
        };
        let page_start = match self.page_start {
            None => 1,
            Some(0) => return Err("`page_start` is 1-based: the first page is 1.".into()),
            Some(n) => n,
        };
        let skip = match self.skip {
            None => 0,
            Some(n) if n < MAX_PER_PAGE as usize => n,
            Some(_) => {
                return Err("`skip` must be 0 to 99 (gists of the first page to pass over); copy it from `next_call`.".into());
            }
        };
        let after = match self.after.as_deref() {
            None => None,
            Some(id) => Some(GistId::parse(id.trim()).map_err(|_| {
                "`after` is the id of the last gist a search examined (32 hex characters): copy it from `next_call`, or leave it out to start at `page_start`.".to_owned()
            })?),
        };
        Ok(SearchPlan {
            query,
            fields,
            fields_given: self.fields.is_some(),
            scope,
            scope_arg: self.scope,
            username,
            visibility: self.visibility,
            since,
            since_text: self.since.as_deref().map(|s| s.trim().to_owned()),
            limit,
            max_pages,
            page_start,
            skip,
            after,
        })
    }
}
