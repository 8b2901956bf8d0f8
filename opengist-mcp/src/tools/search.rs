//! `search_gists`: Opengist has no search endpoint, so this pages through a gist list and
//! matches, bounded by design.
//!
//! How it beats the obvious version (fetch every gist, then grep):
//! - Metadata (title, description, topics, owner) is matched from the list itself, with no
//!   further request. Only gists that did not match on metadata are read in full, and only
//!   when `filenames` or `content` is asked for.
//! - Full reads run four at a time (`buffer_unordered(4)`), and results are consumed in list
//!   order at a "frontier", so the answer is deterministic: the same matches, the same stop
//!   point and the same `next_call` whatever order the reads finish in.
//! - It stops as soon as `limit` matches are in hand (reads past that point are never
//!   started, or are dropped in flight), when the content byte budget or the read budget is
//!   used up, or after `max_pages` pages; the result says which, how much was scanned, and the
//!   exact call that resumes at the first gist not examined.
//!
//! Matching is case-insensitive substring matching: a gist matches when the whole query (with
//! runs of whitespace read as one space) occurs in one of the chosen fields, or when every
//! whitespace-separated term occurs in some chosen field.

use std::borrow::Borrow;
use std::future::Future;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Parameters;
use super::read::{
    GIST_READ_NOTE, GistSummaryOut, LIST_DESCRIPTION_CHARS, ListScopeArg, call_text,
    check_username, list_scope, parse_since,
};
use crate::cache::SearchReads;
use crate::opengist::requests::{GistId, Visibility};
use crate::opengist::{GistDetail, GistSummary, ListScope, MAX_PER_PAGE, OpengistError, Page};
use crate::state::{OpengistServer, Provenance, ToolResult, failure, opengist_failure};

/// Content bytes read (over all gists' files) after which the scan stops.
pub const CONTENT_BYTE_BUDGET: u64 = 2 * 1024 * 1024;
/// Gists read in full per call, at most.
pub const MAX_DETAIL_READS: u64 = 500;
/// Full reads in flight at once.
pub const FETCH_CONCURRENCY: usize = 4;
/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 200;
/// Default and largest `limit`.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest `limit`.
pub const MAX_LIMIT: usize = 100;
/// Default `max_pages`.
pub const DEFAULT_MAX_PAGES: u32 = 5;
/// Largest `max_pages`.
pub const MAX_PAGES: u32 = 20;
/// Content snippets per matching gist.
pub const SNIPPETS_PER_GIST: usize = 3;
/// Longest snippet, in characters (including the `…` marks of a cut).
pub const SNIPPET_CHARS: usize = 200;

// ---- arguments ---------------------------------------------------------------------------

/// A field a query can match.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// The title.
    Title,
    /// The description.
    Description,
    /// Any topic.
    Topics,
    /// The owner's username.
    Owner,
    /// Any filename (needs each gist's files to be read).
    Filenames,
    /// File contents (needs each gist's files to be read; within a byte budget).
    Content,
}

impl Field {
    /// The default fields: all but content.
    pub const DEFAULT: [Field; 5] = [
        Field::Title,
        Field::Description,
        Field::Topics,
        Field::Owner,
        Field::Filenames,
    ];

    fn needs_files(self) -> bool {
        matches!(self, Self::Filenames | Self::Content)
    }
}

/// Arguments of `search_gists`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchGistsArgs {
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
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The query as given, trimmed.
    pub text: String,
    /// Lowercase, whitespace runs as one space.
    pub phrase: String,
    /// The distinct lowercase words.
    pub terms: Vec<String>,
}

impl Query {
    /// Parses a query: 1 to 200 characters after trimming.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_QUERY_CHARS {
            return Err(format!(
                "`query` must be 1 to {MAX_QUERY_CHARS} characters (it has {chars}): give a word or phrase to look for."
            ));
        }
        let lower = text.to_lowercase();
        let mut terms: Vec<String> = Vec::new();
        for word in lower.split_whitespace() {
            if !terms.iter().any(|t| t == word) {
                terms.push(word.to_owned());
            }
        }
        Ok(Self {
            text: text.to_owned(),
            phrase: lower.split_whitespace().collect::<Vec<_>>().join(" "),
            terms,
        })
    }

    /// Where the query occurs in `text`.
    pub fn hits(&self, text: &str) -> Hits {
        let lower = text.to_lowercase();
        self.hits_lowered(&lower)
    }

    fn hits_lowered(&self, lower: &str) -> Hits {
        Hits {
            phrase: lower.contains(&self.phrase),
            terms: self
                .terms
                .iter()
                .map(|t| lower.contains(t.as_str()))
                .collect(),
        }
    }
}

/// Which parts of a query occur in a field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hits {
    /// The whole phrase occurs.
    pub phrase: bool,
    /// Each term occurs (in the query's term order).
    pub terms: Vec<bool>,
}

impl Hits {
    /// Whether anything occurs.
    pub fn any(&self) -> bool {
        self.phrase || self.terms.iter().any(|t| *t)
    }

    /// Adds `other`'s hits to these.
    pub fn merge(&mut self, other: &Hits) {
        self.phrase |= other.phrase;
        if self.terms.len() < other.terms.len() {
            self.terms.resize(other.terms.len(), false);
        }
        for (mine, theirs) in self.terms.iter_mut().zip(&other.terms) {
            *mine |= *theirs;
        }
    }
}

/// The fields a gist matched on, or `None` when it does not match: the phrase occurs in one
/// field, or every term occurs in some field.
pub fn matched_fields(query: &Query, hits: &[(Field, Hits)]) -> Option<Vec<Field>> {
    let phrase = hits.iter().any(|(_, h)| h.phrase);
    let all_terms = (0..query.terms.len()).all(|i| {
        hits.iter()
            .any(|(_, h)| h.terms.get(i).copied().unwrap_or(false))
    });
    if !(phrase || (all_terms && !query.terms.is_empty())) {
        return None;
    }
    let mut fields: Vec<Field> = hits
        .iter()
        .filter(|(_, h)| h.any())
        .map(|(f, _)| *f)
        .collect();
    fields.sort();
    fields.dedup();
    Some(fields)
}

/// A validated search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPlan {
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
    /// Gists of the first page to pass over.
    pub skip: usize,
}

impl SearchPlan {
    fn needs_files(&self) -> bool {
        self.fields.iter().any(|f| f.needs_files())
    }
}

impl SearchGistsArgs {
    /// Validates the arguments; the error names the problem and the fix.
    pub fn validate(&self) -> Result<SearchPlan, String> {
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
        })
    }
}

// ---- matching ----------------------------------------------------------------------------

/// The metadata hits of a summary, for the chosen metadata fields.
pub fn meta_hits(query: &Query, fields: &[Field], summary: &GistSummary) -> Vec<(Field, Hits)> {
    fields
        .iter()
        .filter_map(|field| {
            let hits = match field {
                Field::Title => query.hits(&summary.title),
                Field::Description => query.hits(&summary.description),
                // One topic per line: the phrase must occur within one topic.
                Field::Topics => query.hits(&summary.topics.join("\n")),
                Field::Owner => query.hits(summary.owner.name()),
                Field::Filenames | Field::Content => return None,
            };
            Some((*field, hits))
        })
        .collect()
}

/// A line of a file where the query occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Snippet {
    /// The file.
    pub filename: String,
    /// The line, 1-based.
    pub line_number: u64,
    /// Up to 200 characters of the line around the match (`…` marks a cut).
    pub text: String,
}

/// What reading one gist's files found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DetailScan {
    /// Hits in `filenames` and `content` (only the chosen ones).
    pub hits: Vec<(Field, Hits)>,
    /// Content lines with hits, at most [`SNIPPETS_PER_GIST`].
    pub snippets: Vec<Snippet>,
    /// Content bytes Opengist sent for this gist (all files, text and base64).
    pub content_bytes: u64,
    /// Whether Opengist cut the file list or a file's content, so part was not searched.
    pub partial: bool,
}

/// The byte offset in `line` of the character at byte `lowered` of `line.to_lowercase()`.
fn original_offset(line: &str, lowered: usize) -> usize {
    let mut acc = 0usize;
    for (i, c) in line.char_indices() {
        if acc >= lowered {
            return i;
        }
        acc += c.to_lowercase().map(char::len_utf8).sum::<usize>();
    }
    line.len()
}

/// At most [`SNIPPET_CHARS`] characters of `line` around bytes `start..end`.
pub fn snippet_text(line: &str, start: usize, end: usize) -> String {
    let line_chars = line.chars().count();
    if line_chars <= SNIPPET_CHARS {
        return line.trim().to_owned();
    }
    let start = start.min(line.len());
    let end = end.clamp(start, line.len());
    let chars_before = line.get(..start).map_or(0, |s| s.chars().count());
    let match_chars = line.get(start..end).map_or(0, |s| s.chars().count());
    // Room for two `…` marks.
    let room = SNIPPET_CHARS - 2;
    let lead = (room.saturating_sub(match_chars) / 3).min(chars_before);
    let first = chars_before - lead;
    let taken: String = line.chars().skip(first).take(room).collect();
    let mut text = String::with_capacity(taken.len() + 6);
    if first > 0 {
        text.push('…');
    }
    text.push_str(&taken);
    if first + room < line_chars {
        text.push('…');
    }
    text
}

/// Reads one gist's files for the chosen file fields: filename hits, content hits in
/// filename order, and up to [`SNIPPETS_PER_GIST`] snippets. Binary files are not searched.
pub fn scan_detail(query: &Query, fields: &[Field], detail: &GistDetail) -> DetailScan {
    let mut scan = DetailScan {
        content_bytes: detail.files.values().map(|f| f.content.len() as u64).sum(),
        partial: detail.truncated,
        ..DetailScan::default()
    };
    if fields.contains(&Field::Filenames) {
        let names: Vec<&str> = detail
            .files
            .iter()
            .map(|(k, f)| {
                if f.filename.is_empty() {
                    k.as_str()
                } else {
                    f.filename.as_str()
                }
            })
            .collect();
        scan.hits
            .push((Field::Filenames, query.hits(&names.join("\n"))));
    }
    if fields.contains(&Field::Content) {
        let mut hits = Hits {
            phrase: false,
            terms: vec![false; query.terms.len()],
        };
        'files: for (key, file) in &detail.files {
            if file.is_base64() {
                continue;
            }
            scan.partial |= file.truncated;
            let filename = if file.filename.is_empty() {
                key
            } else {
                &file.filename
            };
            for (number, line) in file.content.lines().enumerate() {
                let lower = line.to_lowercase();
                let line_hits = query.hits_lowered(&lower);
                if !line_hits.any() {
                    continue;
                }
                hits.merge(&line_hits);
                if scan.snippets.len() < SNIPPETS_PER_GIST {
                    let found = if line_hits.phrase {
                        lower.find(&query.phrase).map(|p| (p, query.phrase.len()))
                    } else {
                        query
                            .terms
                            .iter()
                            .zip(&line_hits.terms)
                            .find(|(_, hit)| **hit)
                            .and_then(|(t, _)| lower.find(t.as_str()).map(|p| (p, t.len())))
                    };
                    let (p, len) = found.unwrap_or((0, 0));
                    let start = original_offset(line, p);
                    let end = original_offset(line, p + len);
                    scan.snippets.push(Snippet {
                        filename: filename.clone(),
                        line_number: number as u64 + 1,
                        text: snippet_text(line, start, end),
                    });
                }
                if hits.phrase && scan.snippets.len() >= SNIPPETS_PER_GIST {
                    break 'files;
                }
            }
        }
        scan.hits.push((Field::Content, hits));
    }
    scan
}

// ---- the scan ----------------------------------------------------------------------------

/// One gist that matched.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchMatch {
    /// The gist, as `list_gists` shows it.
    #[serde(flatten)]
    pub gist: GistSummaryOut,
    /// The fields the query occurs in.
    pub matched_fields: Vec<Field>,
    /// Content lines with a match (content searches only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snippets: Vec<Snippet>,
}

/// The outcome of reading one gist in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// Read and scanned.
    Scan(DetailScan),
    /// 404 now: deleted or hidden since it was listed. Passed over.
    Gone,
    /// Another failure; the scan stops here, and the next call retries from this gist.
    Failed(String),
}

/// Why a scan stopped before the end of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopKind {
    /// `limit` matches are in hand.
    Limit,
    /// The content byte budget is used up.
    ContentBudget,
    /// The full-read budget is used up.
    ReadBudget,
    /// A full read failed.
    Failed(String),
    /// `max_pages` pages were scanned.
    PageBudget,
    /// Listing a page failed.
    ListFailed(u32, String),
}

/// What to do next with a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The next gist in list order waits for its full read.
    NeedFetch,
    /// Every gist of the page is examined.
    PageDone,
    /// Stop here.
    Stop(StopKind),
}

/// Totals kept across pages, counted at the frontier (in list order).
#[derive(Debug, Clone, Default)]
pub struct ScanState {
    /// Matches so far, in list order.
    pub matches: Vec<SearchMatch>,
    /// Gists examined up to the frontier.
    pub gists: u64,
    /// Full reads consumed at the frontier.
    pub reads: u64,
    /// Content bytes consumed at the frontier.
    pub content_bytes: u64,
    /// Gists whose files were only partly searchable (Opengist's own cuts).
    pub partial: u64,
    /// Listed gists that were gone (404) when read in full, and passed over.
    pub gone: u64,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Filtered out by visibility.
    Filtered,
    /// No match, and no file fields to try.
    NoMatch,
    /// Matched on metadata alone.
    Matched(Vec<Field>),
    /// Needs a full read; carries its metadata hits.
    NeedsFiles(Vec<(Field, Hits)>),
}

#[derive(Debug, Clone)]
struct Entry {
    id: GistId,
    summary: GistSummaryOut,
    kind: Kind,
    fetched: Option<Fetched>,
}

/// One page of a scan: every gist classified from its metadata, then consumed in list order
/// as full reads arrive (in any order).
#[derive(Debug, Clone)]
pub struct PageScan {
    entries: Vec<Entry>,
    pos: usize,
}

impl PageScan {
    /// Classifies `items` by metadata, without any request.
    pub fn new(plan: &SearchPlan, items: &[GistSummary]) -> Self {
        let needs_files = plan.needs_files();
        let entries = items
            .iter()
            .map(|summary| {
                let kind = if plan.visibility.is_some_and(|v| v != summary.visibility) {
                    Kind::Filtered
                } else {
                    let hits = meta_hits(&plan.query, &plan.fields, summary);
                    match matched_fields(&plan.query, &hits) {
                        Some(fields) => Kind::Matched(fields),
                        None if needs_files => Kind::NeedsFiles(hits),
                        None => Kind::NoMatch,
                    }
                };
                Entry {
                    id: summary.id.clone(),
                    summary: GistSummaryOut::from_summary(summary),
                    kind,
                    fetched: None,
                }
            })
            .collect();
        Self { entries, pos: 0 }
    }

    /// The gists to read in full, in list order: only those before the point where metadata
    /// matches alone reach `remaining` matches, and at most `reads_left` of them.
    pub fn to_fetch(&self, remaining: usize, reads_left: u64) -> Vec<(usize, GistId)> {
        let mut wanted = Vec::new();
        let mut matched = 0usize;
        for (i, entry) in self.entries.iter().enumerate().skip(self.pos) {
            match &entry.kind {
                Kind::Matched(_) => {
                    matched += 1;
                    if matched >= remaining {
                        break;
                    }
                }
                Kind::NeedsFiles(_) => {
                    if wanted.len() as u64 >= reads_left {
                        break;
                    }
                    wanted.push((i, entry.id.clone()));
                }
                Kind::Filtered | Kind::NoMatch => {}
            }
        }
        wanted
    }

    /// Records the full read of entry `index`.
    pub fn resolve(&mut self, index: usize, fetched: Fetched) {
        if let Some(entry) = self.entries.get_mut(index) {
            entry.fetched = Some(fetched);
        }
    }

    /// How many gists of the page are examined.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Consumes examined gists in list order, as far as their reads allow.
    pub fn advance(&mut self, plan: &SearchPlan, state: &mut ScanState) -> Step {
        while let Some(entry) = self.entries.get_mut(self.pos) {
            match &entry.kind {
                Kind::Filtered | Kind::NoMatch => {}
                Kind::Matched(fields) => {
                    state.matches.push(SearchMatch {
                        gist: entry.summary.clone(),
                        matched_fields: fields.clone(),
                        snippets: Vec::new(),
                    });
                }
                Kind::NeedsFiles(meta) => match entry.fetched.take() {
                    None => return Step::NeedFetch,
                    Some(Fetched::Failed(error)) => return Step::Stop(StopKind::Failed(error)),
                    Some(Fetched::Gone) => state.gone += 1,
                    Some(Fetched::Scan(scan)) => {
                        state.reads += 1;
                        state.content_bytes += scan.content_bytes;
                        state.partial += u64::from(scan.partial);
                        let mut hits = meta.clone();
                        hits.extend(scan.hits);
                        if let Some(fields) = matched_fields(&plan.query, &hits) {
                            let snippets = if fields.contains(&Field::Content) {
                                scan.snippets
                            } else {
                                Vec::new()
                            };
                            state.matches.push(SearchMatch {
                                gist: entry.summary.clone(),
                                matched_fields: fields,
                                snippets,
                            });
                        }
                    }
                },
            }
            self.pos += 1;
            state.gists += 1;
            if state.matches.len() >= plan.limit {
                return Step::Stop(StopKind::Limit);
            }
            if state.content_bytes >= CONTENT_BYTE_BUDGET {
                return Step::Stop(StopKind::ContentBudget);
            }
            if state.reads >= MAX_DETAIL_READS {
                return Step::Stop(StopKind::ReadBudget);
            }
        }
        Step::PageDone
    }
}

/// How much a search looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Scanned {
    /// List pages read (of up to 100 gists).
    pub pages: u32,
    /// Gists examined, in list order, up to where the search stopped.
    pub gists: u64,
    /// Of `gists`, those whose files were read for filenames/content (never more than
    /// `gists`: reads made ahead and left unused are not counted).
    pub gists_with_files_read: u64,
    /// Content bytes those gists' files brought. The budget is checked after each gist, so
    /// the gist that crosses it is searched whole and this can pass the budget by its size.
    pub content_bytes_read: u64,
}

/// Result of `search_gists`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchOut {
    /// The matches, in list order (most recently updated first).
    pub matches: Vec<SearchMatch>,
    /// How much was scanned.
    pub scanned: Scanned,
    /// True when the list goes on past where the search stopped.
    pub stopped_early: bool,
    /// Why it stopped, when it stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The exact call that resumes at the first gist not examined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<String>,
    /// What else to know about these results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Marks gist text as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// The call that resumes `plan` at page `page`, passing over `skip` gists.
pub fn resume_call(plan: &SearchPlan, page: u32, skip: usize) -> String {
    let mut args: Vec<(&str, Value)> = vec![("query", json!(plan.query.text))];
    if plan.fields_given {
        args.push(("fields", json!(plan.fields)));
    }
    if plan.scope_arg != ListScopeArg::Mine {
        args.push(("scope", json!(plan.scope_arg.as_str())));
    }
    if let Some(name) = &plan.username {
        args.push(("username", json!(name)));
    }
    if let Some(v) = plan.visibility {
        args.push(("visibility", json!(v)));
    }
    if let Some(since) = &plan.since_text {
        args.push(("since", json!(since)));
    }
    if plan.limit != DEFAULT_LIMIT {
        args.push(("limit", json!(plan.limit)));
    }
    if plan.max_pages != DEFAULT_MAX_PAGES {
        args.push(("max_pages", json!(plan.max_pages)));
    }
    args.push(("page_start", json!(page)));
    if skip > 0 {
        args.push(("skip", json!(skip)));
    }
    call_text("search_gists", &args)
}

fn stop_reason(plan: &SearchPlan, kind: &StopKind, state: &ScanState, resume_page: u32) -> String {
    match kind {
        StopKind::Limit => format!("reached limit={}", plan.limit),
        StopKind::ContentBudget => format!(
            "content byte budget of {CONTENT_BYTE_BUDGET} bytes reached after reading the files of {} gists ({} bytes: the gist that crossed the budget was searched whole): next_call goes on from the next gist",
            state.reads, state.content_bytes
        ),
        StopKind::ReadBudget => format!(
            "read budget of {MAX_DETAIL_READS} gists read in full exhausted: next_call goes on from the next gist"
        ),
        StopKind::Failed(error) => {
            format!("reading a gist failed ({error}): next_call retries from that gist")
        }
        StopKind::PageBudget => format!(
            "page budget max_pages={} exhausted: call again with max_pages higher or page_start={resume_page}",
            plan.max_pages
        ),
        StopKind::ListFailed(page, error) => {
            format!("listing page {page} failed ({error}): next_call retries from that page")
        }
    }
}

/// Runs a search with `list` (one page of 100 gists by page number) and `fetch` (one gist in
/// full, owned or shared: a cached gist is scanned where it lies, never copied). Fails only when the very first page cannot be listed; any later failure ends the
/// search early with what was found and the call that resumes it.
pub async fn run_search<L, LF, F, FF, D>(
    plan: &SearchPlan,
    mut list: L,
    fetch: F,
) -> Result<SearchOut, OpengistError>
where
    L: FnMut(u32) -> LF,
    LF: Future<Output = Result<Page<GistSummary>, OpengistError>>,
    F: Fn(GistId) -> FF,
    FF: Future<Output = Result<D, OpengistError>>,
    D: Borrow<GistDetail>,
{
    let mut state = ScanState::default();
    let mut scanned = Scanned::default();
    let mut page_no = plan.page_start;
    let mut skip = plan.skip;
    // `None`: the list was searched to its end.
    let stop: Option<(StopKind, u32, usize)> = loop {
        if scanned.pages >= plan.max_pages {
            break Some((StopKind::PageBudget, page_no, skip));
        }
        let page = match list(page_no).await {
            Ok(page) => page,
            Err(error) if scanned.pages == 0 => return Err(error),
            Err(error) => {
                break Some((
                    StopKind::ListFailed(page_no, error.to_string()),
                    page_no,
                    skip,
                ));
            }
        };
        scanned.pages += 1;
        let items = page.items.get(skip..).unwrap_or_default();
        let mut scan = PageScan::new(plan, items);
        let wanted = scan.to_fetch(
            plan.limit.saturating_sub(state.matches.len()),
            MAX_DETAIL_READS.saturating_sub(state.reads),
        );
        let step = {
            let mut reads = futures::stream::iter(wanted)
                .map(|(index, id)| {
                    let read = fetch(id);
                    async move { (index, read.await) }
                })
                .buffer_unordered(FETCH_CONCURRENCY);
            loop {
                match scan.advance(plan, &mut state) {
                    Step::NeedFetch => match reads.next().await {
                        Some((index, result)) => {
                            let fetched = match result {
                                Ok(detail) => Fetched::Scan(scan_detail(
                                    &plan.query,
                                    &plan.fields,
                                    detail.borrow(),
                                )),
                                Err(error) if error.is_not_found() => Fetched::Gone,
                                Err(error) => Fetched::Failed(error.to_string()),
                            };
                            scan.resolve(index, fetched);
                        }
                        // Every read `to_fetch` allowed is consumed: its cap was the reason.
                        None => break Step::Stop(StopKind::ReadBudget),
                    },
                    other => break other,
                }
            }
            // Dropping `reads` here cancels reads still in flight.
        };
        let at = skip + scan.position();
        match step {
            Step::Stop(kind) => {
                if at >= page.items.len() {
                    if !page.has_next {
                        break None;
                    }
                    break Some((kind, page_no.saturating_add(1), 0));
                }
                break Some((kind, page_no, at));
            }
            Step::PageDone | Step::NeedFetch => {
                if !page.has_next {
                    break None;
                }
                page_no = page_no.saturating_add(1);
                skip = 0;
            }
        }
    };
    // Counted at the frontier, like `gists`: reads made ahead and left unused do not count.
    scanned.gists = state.gists;
    scanned.gists_with_files_read = state.reads;
    scanned.content_bytes_read = state.content_bytes;

    let mut notes: Vec<String> = Vec::new();
    if plan.scope_arg == ListScopeArg::Mine {
        notes.push(GIST_READ_NOTE.to_owned());
    }
    if state.partial > 0 {
        notes.push(format!(
            "Opengist sends at most 50 files per gist and 512 KiB of each file's content: in {} gist(s) part of the files was not searched.",
            state.partial
        ));
    }
    if state.gone > 0 {
        notes.push(format!(
            "{} listed gist(s) did not exist or were not visible to this token any more when read in full, and were passed over.",
            state.gone
        ));
    }
    if state.matches.iter().any(|m| m.gist.description_cut) {
        notes.push(format!(
            "Descriptions longer than {LIST_DESCRIPTION_CHARS} characters are cut (description_cut): get_gist shows the whole."
        ));
    }
    let (stopped_early, stop_reason, next_call) = match &stop {
        None => (false, None, None),
        Some((kind, page, skip)) => (
            true,
            Some(stop_reason(plan, kind, &state, *page)),
            Some(resume_call(plan, *page, *skip)),
        ),
    };
    Ok(SearchOut {
        matches: state.matches,
        scanned,
        stopped_early,
        stop_reason,
        next_call,
        notes,
        provenance: Provenance::OPENGIST,
    })
}

#[tool_router(router = search_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Searches gists by paging through a list.
    #[tool(
        name = "search_gists",
        description = "Find gists (Opengist has no search endpoint: this pages through a gist list, 100 per page, up to max_pages). Case-insensitive; matches the whole query or every word. fields: title, description, topics, owner, filenames (default: these five), content (file text, within a 2 MiB byte budget). Metadata is matched without extra requests; filenames/content read non-matching gists 4 at a time. Stops at `limit` matches; reports what it scanned, whether it stopped early and why, and the next_call that resumes.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<SearchOut>()
    )]
    async fn search_gists(
        &self,
        Parameters(args): Parameters<SearchGistsArgs>,
    ) -> ToolResult<SearchOut> {
        let plan = args.validate().map_err(failure)?;
        let client = self.client()?;
        // Each gist is read at most once per search, and not at all when the cache holds its
        // files at the `updated_at` the list shows.
        let reads = SearchReads::new(&self.shared.cache, client);
        let (reads, plan) = (&reads, &plan);
        let mut out = run_search(
            plan,
            |page| async move {
                let (listed, read) = client
                    .list_gists_timed(plan.scope.clone(), page, MAX_PER_PAGE, plan.since)
                    .await?;
                reads.note_page(&listed, read);
                Ok(listed)
            },
            |id| reads.detail(id),
        )
        .await
        .map_err(opengist_failure)?;
        // As list_gists: no gist:read note when the token is known to hold that scope.
        let gist_read = client
            .token_access()
            .await
            .map_or(crate::opengist::Grant::Unknown, |access| access.gist_read);
        if gist_read == crate::opengist::Grant::Present {
            out.notes.retain(|note| note != GIST_READ_NOTE);
        }
        let links = self.search_links(&out);
        Ok(self.output(out).with_links(links))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn plan(v: Value) -> SearchPlan {
        serde_json::from_value::<SearchGistsArgs>(v)
            .expect("args")
            .validate()
            .expect("valid")
    }

    fn gid(n: usize) -> String {
        format!("{n:032x}")
    }

    fn summary(n: usize, title: &str, visibility: &str) -> GistSummary {
        serde_json::from_value(json!({
            "id": gid(n),
            "owner": {"id": 1, "username": "alice"},
            "title": title,
            "description": "",
            "html_url": format!("https://gist.example.com/alice/{}", gid(n)),
            "visibility": visibility,
            "topics": ["misc"],
        }))
        .expect("summary")
    }

    fn detail(n: usize, files: &[(&str, &str)]) -> GistDetail {
        let map: serde_json::Map<String, Value> = files
            .iter()
            .map(|(name, content)| {
                (
                    (*name).to_owned(),
                    json!({"filename": name, "size": content.len(), "content": content, "encoding": "utf-8"}),
                )
            })
            .collect();
        serde_json::from_value(json!({
            "id": gid(n),
            "owner": {"id": 1, "username": "alice"},
            "title": "",
            "visibility": "public",
            "files": map,
        }))
        .expect("detail")
    }

    // -- arguments and queries --

    #[test]
    fn arguments_are_validated() {
        let p = plan(json!({"query": "  Hello   World "}));
        assert_eq!(p.query.phrase, "hello world");
        assert_eq!(p.query.terms, ["hello", "world"]);
        assert_eq!(p.fields, Field::DEFAULT);
        assert_eq!((p.limit, p.max_pages, p.page_start, p.skip), (20, 5, 1, 0));
        let bad = |v: Value| {
            serde_json::from_value::<SearchGistsArgs>(v)
                .expect("args")
                .validate()
                .expect_err("invalid")
        };
        assert!(bad(json!({"query": "   "})).contains("1 to 200"));
        assert!(bad(json!({"query": "x".repeat(201)})).contains("it has 201"));
        assert!(bad(json!({"query": "x", "fields": []})).contains("empty"));
        assert!(bad(json!({"query": "x", "limit": 0})).contains("limit"));
        assert!(bad(json!({"query": "x", "limit": 101})).contains("limit"));
        assert!(bad(json!({"query": "x", "max_pages": 21})).contains("max_pages"));
        assert!(bad(json!({"query": "x", "page_start": 0})).contains("page_start"));
        assert!(bad(json!({"query": "x", "skip": 100})).contains("skip"));
        assert!(bad(json!({"query": "x", "since": "today"})).contains("RFC 3339"));
        assert!(
            bad(json!({"query": "x", "scope": "public", "username": "b"})).contains("scope=mine")
        );
        assert!(
            serde_json::from_value::<SearchGistsArgs>(json!({"query": "x", "fields": ["body"]}))
                .is_err()
        );
        let p = plan(json!({"query": "x", "fields": ["content", "title", "content"]}));
        assert_eq!(p.fields, [Field::Title, Field::Content]);
    }

    #[test]
    fn a_gist_matches_on_the_phrase_or_on_every_term() {
        let q = Query::parse("Rust Tokio").expect("query");
        let title = q.hits("Async RUST with tokio");
        assert!(!title.phrase && title.terms == [true, true]);
        assert_eq!(
            matched_fields(&q, &[(Field::Title, title)]),
            Some(vec![Field::Title])
        );
        // Terms across fields.
        let split = [
            (Field::Title, q.hits("rust notes")),
            (Field::Description, q.hits("uses tokio")),
            (Field::Owner, q.hits("alice")),
        ];
        assert_eq!(
            matched_fields(&q, &split),
            Some(vec![Field::Title, Field::Description])
        );
        // One term only: no match.
        assert_eq!(
            matched_fields(&q, &[(Field::Title, q.hits("rust only"))]),
            None
        );
        // The phrase, case-insensitive, across a non-ASCII case change.
        let q = Query::parse("ÉTÉ").expect("query");
        assert!(q.hits("un été chaud").phrase);
    }

    #[test]
    fn metadata_fields() {
        let q = Query::parse("misc").expect("query");
        let s = summary(1, "Title", "public");
        let hits = meta_hits(&q, &Field::DEFAULT, &s);
        assert_eq!(
            hits.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
            [
                Field::Title,
                Field::Description,
                Field::Topics,
                Field::Owner
            ]
        );
        assert_eq!(matched_fields(&q, &hits), Some(vec![Field::Topics]));
        let q = Query::parse("ALICE").expect("query");
        assert_eq!(
            matched_fields(&q, &meta_hits(&q, &[Field::Owner], &s)),
            Some(vec![Field::Owner])
        );
        assert!(
            meta_hits(&q, &[Field::Title], &s)
                .iter()
                .all(|(_, h)| !h.any())
        );
    }

    #[test]
    fn files_and_snippets() {
        let q = Query::parse("needle").expect("query");
        let d = detail(
            1,
            &[
                (
                    "b.txt",
                    "hay\nhay NEEDLE hay\nneedle again\nneedle 3\nneedle 4",
                ),
                ("a_needle.md", "nothing"),
            ],
        );
        let scan = scan_detail(&q, &[Field::Filenames, Field::Content], &d);
        assert_eq!(scan.hits.len(), 2);
        assert!(scan.hits.iter().all(|(_, h)| h.phrase));
        assert_eq!(scan.snippets.len(), SNIPPETS_PER_GIST);
        assert_eq!(
            scan.snippets[0],
            Snippet {
                filename: "b.txt".into(),
                line_number: 2,
                text: "hay NEEDLE hay".into()
            }
        );
        assert_eq!(scan.content_bytes, 56);
        // Filenames only: no content hits, no snippets.
        let scan = scan_detail(&q, &[Field::Filenames], &d);
        assert_eq!(scan.hits.len(), 1);
        assert!(scan.snippets.is_empty());
    }

    #[test]
    fn snippets_are_at_most_200_characters_around_the_match() {
        let line = format!("{}NEEDLE{}", "é".repeat(500), "x".repeat(500));
        let q = Query::parse("needle").expect("query");
        let d = detail(1, &[("f", &line)]);
        let scan = scan_detail(&q, &[Field::Content], &d);
        let text = &scan.snippets[0].text;
        assert!(
            text.chars().count() <= SNIPPET_CHARS,
            "{}",
            text.chars().count()
        );
        assert!(text.contains("NEEDLE") && text.starts_with('…') && text.ends_with('…'));
        // Lowercasing that changes byte lengths still maps back to the right place.
        let line = format!("{}İ needle {}", "a".repeat(300), "b".repeat(300));
        let p = line.to_lowercase().find("needle").expect("found");
        let start = original_offset(&line, p);
        assert_eq!(line.get(start..start + 6), Some("needle"));
        assert!(snippet_text(&line, start, start + 6).contains("İ needle"));
    }

    // -- the frontier --

    #[test]
    fn only_gists_before_the_limit_are_read_and_results_keep_list_order() {
        let p = plan(json!({"query": "hit", "limit": 2}));
        let items = vec![
            summary(1, "x", "public"),
            summary(2, "hit", "public"),
            summary(3, "y", "public"),
            summary(4, "hit", "public"),
            summary(5, "z", "public"),
        ];
        let mut scan = PageScan::new(&p, &items);
        let wanted: Vec<usize> = scan.to_fetch(2, 100).into_iter().map(|(i, _)| i).collect();
        // Gist 5 is after the second metadata match: never read.
        assert_eq!(wanted, [0, 2]);
        let mut state = ScanState::default();
        assert_eq!(scan.advance(&p, &mut state), Step::NeedFetch);
        // The second read finishes first and matches by filename; nothing moves until the
        // first one is in.
        let hit = scan_detail(&p.query, &p.fields, &detail(3, &[("hit.txt", "")]));
        scan.resolve(2, Fetched::Scan(hit));
        assert_eq!(scan.advance(&p, &mut state), Step::NeedFetch);
        assert_eq!(state.gists, 0);
        let miss = scan_detail(&p.query, &p.fields, &detail(1, &[("a.txt", "")]));
        scan.resolve(0, Fetched::Scan(miss));
        assert_eq!(scan.advance(&p, &mut state), Step::Stop(StopKind::Limit));
        assert_eq!(scan.position(), 3);
        let ids: Vec<&str> = state.matches.iter().map(|m| m.gist.id.as_str()).collect();
        assert_eq!(ids, [gid(2), gid(3)]);
        assert_eq!(state.matches[1].matched_fields, [Field::Filenames]);
        assert_eq!((state.gists, state.reads), (3, 2));
    }

    #[test]
    fn filters_failures_and_vanished_gists() {
        let p = plan(json!({"query": "hit", "visibility": "private"}));
        let items = vec![
            summary(1, "hit", "public"),
            summary(2, "nope", "private"),
            summary(3, "nope", "private"),
        ];
        let mut scan = PageScan::new(&p, &items);
        let wanted: Vec<usize> = scan.to_fetch(20, 100).into_iter().map(|(i, _)| i).collect();
        assert_eq!(wanted, [1, 2]);
        scan.resolve(1, Fetched::Gone);
        scan.resolve(2, Fetched::Failed("boom".into()));
        let mut state = ScanState::default();
        assert_eq!(
            scan.advance(&p, &mut state),
            Step::Stop(StopKind::Failed("boom".into()))
        );
        assert_eq!((scan.position(), state.gists, state.gone), (2, 2, 1));
        assert!(state.matches.is_empty());
    }

    #[test]
    fn metadata_only_searches_read_nothing() {
        let p = plan(json!({"query": "hit", "fields": ["title", "topics"]}));
        let items = vec![summary(1, "x", "public"), summary(2, "HIT", "public")];
        let mut scan = PageScan::new(&p, &items);
        assert!(scan.to_fetch(20, 100).is_empty());
        let mut state = ScanState::default();
        assert_eq!(scan.advance(&p, &mut state), Step::PageDone);
        assert_eq!(state.matches.len(), 1);
        assert_eq!(state.gists, 2);
    }

    // -- whole searches over constructed responses --

    struct Lists {
        pages: Vec<Vec<GistSummary>>,
    }

    impl Lists {
        fn page(&self, n: u32) -> Result<Page<GistSummary>, OpengistError> {
            let index = n as usize - 1;
            Ok(Page {
                items: self.pages.get(index).cloned().unwrap_or_default(),
                page: n,
                per_page: 100,
                total: None,
                total_pages: None,
                has_next: index + 1 < self.pages.len(),
            })
        }
    }

    #[tokio::test]
    async fn a_search_stops_at_the_limit_and_resumes_exactly_there() {
        let lists = Lists {
            pages: vec![
                (0..100)
                    .map(|i| summary(i, if i % 10 == 9 { "hit" } else { "x" }, "public"))
                    .collect(),
                (100..150).map(|i| summary(i, "hit", "public")).collect(),
            ],
        };
        let p = plan(json!({"query": "hit", "fields": ["title"], "limit": 3}));
        let listed = AtomicUsize::new(0);
        let out = run_search(
            &p,
            |n| {
                listed.fetch_add(1, Ordering::SeqCst);
                std::future::ready(lists.page(n))
            },
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("search");
        assert_eq!(out.matches.len(), 3);
        assert_eq!(out.matches[2].gist.id, gid(29));
        assert!(out.stopped_early);
        assert_eq!(out.stop_reason.as_deref(), Some("reached limit=3"));
        assert_eq!(
            out.next_call.as_deref(),
            Some(
                r#"search_gists with query="hit", fields=["title"], limit=3, page_start=1, skip=30"#
            )
        );
        assert_eq!(
            out.scanned,
            Scanned {
                pages: 1,
                gists: 30,
                gists_with_files_read: 0,
                content_bytes_read: 0
            }
        );
        assert_eq!(listed.load(Ordering::SeqCst), 1);

        // Resuming from next_call continues right after the last match.
        let p = plan(
            json!({"query": "hit", "fields": ["title"], "limit": 3, "page_start": 1, "skip": 30}),
        );
        let out = run_search(
            &p,
            |n| std::future::ready(lists.page(n)),
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("search");
        let ids: Vec<String> = out.matches.iter().map(|m| m.gist.id.clone()).collect();
        assert_eq!(ids, [gid(39), gid(49), gid(59)]);
    }

    #[tokio::test]
    async fn the_page_budget_names_where_to_go_on() {
        let lists = Lists {
            pages: vec![
                vec![summary(1, "x", "public")],
                vec![summary(2, "x", "public")],
                vec![],
            ],
        };
        let p = plan(json!({"query": "hit", "fields": ["title"], "max_pages": 2}));
        let out = run_search(
            &p,
            |n| std::future::ready(lists.page(n)),
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("search");
        assert!(out.stopped_early && out.matches.is_empty());
        assert_eq!(
            out.stop_reason.as_deref(),
            Some(
                "page budget max_pages=2 exhausted: call again with max_pages higher or page_start=3"
            )
        );
        assert!(
            out.next_call
                .as_deref()
                .is_some_and(|c| c.ends_with("max_pages=2, page_start=3"))
        );
        assert_eq!(out.scanned.pages, 2);
        assert!(out.notes.iter().any(|n| n.contains("gist:read")));
    }

    #[tokio::test]
    async fn the_end_of_the_list_is_not_an_early_stop() {
        let lists = Lists {
            pages: vec![vec![summary(1, "hit", "public"), summary(2, "x", "public")]],
        };
        let p = plan(json!({"query": "hit", "fields": ["title"], "scope": "public"}));
        let out = run_search(
            &p,
            |n| std::future::ready(lists.page(n)),
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("search");
        assert!(!out.stopped_early && out.next_call.is_none() && out.stop_reason.is_none());
        assert_eq!(out.scanned.gists, 2);
        assert!(out.notes.is_empty());
        // The limit reached on the very last gist is not early either.
        let p = plan(json!({"query": "x", "fields": ["title"], "limit": 1, "skip": 1}));
        let out = run_search(
            &p,
            |n| std::future::ready(lists.page(n)),
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("search");
        assert_eq!(out.matches.len(), 1);
        assert!(!out.stopped_early);
    }

    #[tokio::test]
    async fn content_reads_are_concurrent_bounded_and_deterministic() {
        let n = 40;
        let lists = Lists {
            pages: vec![(0..n).map(|i| summary(i, "x", "public")).collect()],
        };
        // Gists 7 and 23 hold the needle; later gists finish first.
        let details: HashMap<String, GistDetail> = (0..n)
            .map(|i| {
                let body = if i == 7 || i == 23 {
                    "a\nthe NEEDLE here\n"
                } else {
                    "nothing"
                };
                (gid(i), detail(i, &[("f.txt", body)]))
            })
            .collect();
        let in_flight = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let fetched = Mutex::new(Vec::new());
        let p = plan(json!({"query": "needle", "fields": ["content"], "limit": 2}));
        let out = run_search(
            &p,
            |page| std::future::ready(lists.page(page)),
            |id| {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let index = usize::from_str_radix(id.as_str(), 16).unwrap_or(0);
                if let Ok(mut f) = fetched.lock() {
                    f.push(index);
                }
                let d = details.get(id.as_str()).cloned();
                let in_flight = &in_flight;
                async move {
                    // Reverse completion order within each batch.
                    tokio::time::sleep(Duration::from_millis(8 - (index % 4) as u64 * 2)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    d.ok_or(OpengistError::CreatedWithoutId)
                }
            },
        )
        .await
        .expect("search");
        assert!(peak.load(Ordering::SeqCst) <= FETCH_CONCURRENCY);
        assert!(peak.load(Ordering::SeqCst) > 1, "reads were not concurrent");
        let ids: Vec<String> = out.matches.iter().map(|m| m.gist.id.clone()).collect();
        assert_eq!(ids, [gid(7), gid(23)]);
        assert_eq!(out.matches[0].snippets[0].line_number, 2);
        assert_eq!(out.matches[0].snippets[0].text, "the NEEDLE here");
        assert_eq!(out.scanned.gists, 24);
        // At most three reads past the stop point were started.
        let started = fetched.lock().map(|f| f.len()).unwrap_or(0);
        assert!((24..=27).contains(&started), "{started}");
        let read = out.scanned.gists_with_files_read as usize;
        assert!(read >= 24 && read <= started, "{read} of {started}");
        assert!(
            out.next_call
                .as_deref()
                .is_some_and(|c| c.ends_with("page_start=1, skip=24"))
        );
    }

    #[tokio::test]
    async fn the_content_budget_stops_the_scan() {
        let big = "z".repeat(700 * 1024);
        let lists = Lists {
            pages: vec![(0..10).map(|i| summary(i, "x", "public")).collect()],
        };
        let p = plan(json!({"query": "needle", "fields": ["content"]}));
        let out = run_search(
            &p,
            |page| std::future::ready(lists.page(page)),
            |id| {
                let index = usize::from_str_radix(id.as_str(), 16).unwrap_or(0);
                std::future::ready(Ok(detail(index, &[("big.txt", big.as_str())])))
            },
        )
        .await
        .expect("search");
        assert!(out.stopped_early);
        assert!(
            out.stop_reason
                .as_deref()
                .is_some_and(|r| r.starts_with("content byte budget"))
        );
        assert_eq!(out.scanned.gists, 3);
        assert!(out.scanned.content_bytes_read >= 3 * 700 * 1024);
        assert!(
            out.next_call
                .as_deref()
                .is_some_and(|c| c.ends_with("skip=3"))
        );
    }

    #[tokio::test]
    async fn a_failed_first_page_is_an_error_and_a_later_one_a_stop() {
        let p = plan(json!({"query": "x", "fields": ["title"]}));
        let err = run_search(
            &p,
            |_| std::future::ready(Err(OpengistError::CreatedWithoutId)),
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await;
        assert!(err.is_err());
        let lists = Lists {
            pages: vec![vec![summary(1, "y", "public")], vec![]],
        };
        let out = run_search(
            &p,
            |n| {
                std::future::ready(if n == 1 {
                    lists.page(1)
                } else {
                    Err(OpengistError::CreatedWithoutId)
                })
            },
            |_| std::future::ready(Err::<GistDetail, _>(OpengistError::CreatedWithoutId)),
        )
        .await
        .expect("partial");
        assert!(out.stopped_early);
        assert!(
            out.stop_reason
                .as_deref()
                .is_some_and(|r| r.starts_with("listing page 2 failed"))
        );
        assert!(
            out.next_call
                .as_deref()
                .is_some_and(|c| c.ends_with("page_start=2"))
        );
    }

    #[tokio::test]
    async fn bad_input_is_refused_before_the_setup_check() {
        let server = OpengistServer::unconfigured();
        let err = server
            .search_gists(Parameters(SearchGistsArgs {
                query: String::new(),
                ..SearchGistsArgs::default()
            }))
            .await
            .err()
            .expect("error");
        let text = serde_json::to_string(&err).expect("json");
        assert!(text.contains("`query`"), "{text}");
        let err = server
            .search_gists(Parameters(SearchGistsArgs {
                query: "x".into(),
                ..SearchGistsArgs::default()
            }))
            .await
            .err()
            .expect("unconfigured");
        assert!(
            serde_json::to_string(&err)
                .expect("json")
                .contains("OPENGIST_URL")
        );
    }
}
