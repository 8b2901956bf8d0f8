//! The scan: list pages read one after another, each gist classified from its metadata and
//! consumed in list order at a frontier as its full read (if any) arrives, until a stop
//! point; and the result, with the call that resumes where it stopped.

use std::borrow::Borrow;
use std::future::Future;

use futures::StreamExt;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::args::{DEFAULT_LIMIT, DEFAULT_MAX_PAGES, SearchPlan};
use super::matching::{DetailScan, Field, Hits, Snippet, matched_fields, meta_hits, scan_detail};
use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, GistSummary, OpengistError, Page};
use crate::state::Provenance;
use crate::text::{GIST_READ_NOTE, LIST_DESCRIPTION_CHARS, call_text};
use crate::tools::common::gist_shapes::GistSummaryOut;
use crate::tools::common::list_scope::ListScopeArg;

/// Content bytes read (over all gists' files) after which the scan stops.
pub(crate) const CONTENT_BYTE_BUDGET: u64 = 2 * 1024 * 1024;
/// Gists read in full per call, at most.
pub(crate) const MAX_DETAIL_READS: u64 = 500;
/// Full reads in flight at once.
pub(crate) const FETCH_CONCURRENCY: usize = 4;

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
pub(crate) enum Fetched {
    /// Read and scanned.
    Scan(DetailScan),
    /// 404 now: deleted or hidden since it was listed. Passed over.
    Gone,
    /// Another failure; the scan stops here, and the next call retries from this gist.
    Failed(String),
}

/// Why a scan stopped before the end of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StopKind {
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
pub(crate) enum Step {
    /// The next gist in list order waits for its full read.
    NeedFetch,
    /// Every gist of the page is examined.
    PageDone,
    /// Stop here.
    Stop(StopKind),
}

/// Totals kept across pages, counted at the frontier (in list order).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanState {
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
pub(crate) struct PageScan {
    entries: Vec<Entry>,
    pos: usize,
}

impl PageScan {
    /// Classifies `items` by metadata, without any request.
    pub(crate) fn new(plan: &SearchPlan, items: &[GistSummary]) -> Self {
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
    pub(crate) fn to_fetch(&self, remaining: usize, reads_left: u64) -> Vec<(usize, GistId)> {
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
    pub(crate) fn resolve(&mut self, index: usize, fetched: Fetched) {
        if let Some(entry) = self.entries.get_mut(index) {
            entry.fetched = Some(fetched);
        }
    }

    /// How many gists of the page are examined.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Consumes examined gists in list order, as far as their reads allow.
    pub(crate) fn advance(&mut self, plan: &SearchPlan, state: &mut ScanState) -> Step {
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

/// Where a search goes on: on list page `page`, right after gist `after` when it is still
/// there, else after `skip` gists. A position alone would pass over gists whenever some listed
/// before it are deleted between two calls (the list is ordered by `updated_at`, newest
/// first, so others' writes shift it all the time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resume {
    /// The list page.
    pub(crate) page: u32,
    /// Gists of `page` to pass over when `after` is not on it.
    pub(crate) skip: usize,
    /// The last gist examined before this point, if any.
    pub(crate) after: Option<GistId>,
}

impl Resume {
    /// Where on `items` (this point's page as Opengist lists it now) the scan starts.
    pub(crate) fn start_on(&self, items: &[GistSummary]) -> usize {
        self.after
            .as_ref()
            .and_then(|after| items.iter().position(|g| &g.id == after))
            .map_or(self.skip, |at| at + 1)
    }
}

/// The call that resumes `plan` at `at`.
pub(crate) fn resume_call(plan: &SearchPlan, at: &Resume) -> String {
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
    args.push(("page_start", json!(at.page)));
    if at.skip > 0 {
        args.push(("skip", json!(at.skip)));
    }
    if let Some(after) = &at.after {
        args.push(("after", json!(after.as_str())));
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

/// When nothing matched and file contents were not among the fields: which fields were
/// searched, that the files' text was not, and how to search it (a model reading "no match"
/// would otherwise take it for "not in any gist").
fn unsearched_content(plan: &SearchPlan, state: &ScanState) -> Option<String> {
    if !state.matches.is_empty() || plan.fields.contains(&Field::Content) {
        return None;
    }
    let searched: Vec<String> = plan
        .fields
        .iter()
        .filter_map(|field| serde_json::to_value(field).ok())
        .filter_map(|value| value.as_str().map(str::to_owned))
        .collect();
    Some(format!(
        "No match in {}: the files' contents were not searched. To search them too, call again with fields including \"content\" (the files' text, within a {} MiB byte budget).",
        searched.join(", "),
        CONTENT_BYTE_BUDGET / (1024 * 1024)
    ))
}

/// Runs a search with `list` (one page of 100 gists by page number) and `fetch` (one gist in
/// full, owned or shared: a cached gist is scanned where it lies, never copied). Fails only when the very first page cannot be listed; any later failure ends the
/// search early with what was found and the call that resumes it.
pub(crate) async fn run_search<L, LF, F, FF, D>(
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
    let mut at = Resume {
        page: plan.page_start,
        skip: plan.skip,
        after: plan.after.clone(),
    };
    // `None`: the list was searched to its end.
    let stop: Option<StopKind> = loop {
        if scanned.pages >= plan.max_pages {
            break Some(StopKind::PageBudget);
        }
        let page = match list(at.page).await {
            Ok(page) => page,
            Err(error) if scanned.pages == 0 => return Err(error),
            Err(error) => break Some(StopKind::ListFailed(at.page, error.to_string())),
        };
        scanned.pages += 1;
        let start = at.start_on(&page.items).min(page.items.len());
        let items = page.items.get(start..).unwrap_or_default();
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
        // The first gist not examined, and the last one that was (on this page or before).
        let next = start + scan.position();
        if let Some(last) = next.checked_sub(1).and_then(|i| page.items.get(i)) {
            at.after = Some(last.id.clone());
        }
        let page_done = next >= page.items.len();
        match step {
            Step::Stop(kind) if !page_done => {
                at.skip = next;
                break Some(kind);
            }
            _ if !page.has_next => break None,
            Step::Stop(kind) => {
                (at.page, at.skip) = (at.page.saturating_add(1), 0);
                break Some(kind);
            }
            Step::PageDone | Step::NeedFetch => {
                (at.page, at.skip) = (at.page.saturating_add(1), 0);
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
    if let Some(note) = unsearched_content(plan, &state) {
        notes.push(note);
    }
    if state.matches.iter().any(|m| m.gist.description_cut) {
        notes.push(format!(
            "Descriptions longer than {LIST_DESCRIPTION_CHARS} characters are cut (description_cut): get_gist shows the whole."
        ));
    }
    let (stopped_early, stop_reason, next_call) = match &stop {
        None => (false, None, None),
        Some(kind) => (
            true,
            Some(stop_reason(plan, kind, &state, at.page)),
            Some(resume_call(plan, &at)),
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
