//! Reads through the cache: a gist (with its real head), its topics, a window of a raw file,
//! and the full reads of the gists list pages named. Each asks the [`GistCache`] first where
//! an entry can answer, and keeps what Opengist sent when the read proves it settled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use super::{GistCache, full_sha};
use crate::opengist::gist_ref::Sha;
use crate::opengist::git_head::head_may_be_unlisted;
use crate::opengist::read_time::ReadTime;
use crate::opengist::requests::GistId;
use crate::opengist::topics::ListedTopics;
use crate::opengist::{
    GistDetail, GistSummary, OpengistClient, OpengistError, Page, RawFile, utf8_window,
};

/// Gist `id` as Opengist holds it now (`sha` `None`) or at revision `sha`, always asked of
/// Opengist (its title, description, visibility and counts are current even at a revision);
/// the answer is kept for later searches and revision reads when it can be.
pub async fn read_gist(
    cache: &GistCache,
    client: &OpengistClient,
    id: &GistId,
    sha: Option<&Sha>,
) -> Result<Arc<GistDetail>, OpengistError> {
    match sha {
        Some(sha) => {
            let detail = Arc::new(client.get_gist_at(id, sha).await?);
            cache.keep_revision(id, sha, &detail);
            Ok(detail)
        }
        None => {
            let (mut detail, read) = client.get_gist_timed(id).await?;
            complete_head(cache, client, &mut detail, read).await;
            let detail = Arc::new(detail);
            cache.keep_current(&detail, read);
            Ok(detail)
        }
    }
}

/// Makes [`GistDetail::head_sha`] name the real head when the API's commit list may not start
/// at it (see `opengist/git_head.rs`): from the cache when git was asked at this `updated_at`
/// before, else from git (kept when `read`, the detail's, is settled). A gist created across a
/// second boundary, or whose title changed, lists a commit older than its `updated_at` too, so
/// without the cache every read of such a gist would cost a git request.
async fn complete_head(
    cache: &GistCache,
    client: &OpengistClient,
    detail: &mut GistDetail,
    read: Option<ReadTime>,
) {
    if !head_may_be_unlisted(detail) {
        return;
    }
    let known = detail
        .summary
        .updated_at
        .and_then(|at| cache.head_at_update(detail.id(), at));
    if let Some(sha) = known {
        detail.git_head = Some(sha.to_string());
        return;
    }
    detail.git_head = client.git_head(detail).await;
    if let Some(sha) = &detail.git_head {
        cache.keep_head(detail, sha, read);
    }
}

/// The topics of the gist `summary` describes, which Opengist's single-gist answer never
/// carries: from the cache when a list showed them at the `updated_at` in `summary` (just read
/// from Opengist), else from the owner's list ([`OpengistClient::gist_topics`]), kept when that
/// read is settled. `None` when no list this token can read shows the gist.
pub async fn gist_topics(
    cache: &GistCache,
    client: &OpengistClient,
    summary: &GistSummary,
) -> Result<Option<Vec<String>>, OpengistError> {
    if let Some(hit) = summary
        .updated_at
        .and_then(|at| cache.topics_at_update(&summary.id, at))
    {
        return Ok(Some(hit.to_vec()));
    }
    let Some(ListedTopics {
        topics,
        updated_at,
        read,
    }) = client.gist_topics(summary).await?
    else {
        return Ok(None);
    };
    cache.keep_topics(&summary.id, updated_at, &topics, read);
    Ok(Some(topics))
}

/// The files of gist `id` at revision `sha` (its commits included) for `get_gist_file`: from
/// the cache when `sha` is a full sha read before, which no later change can alter, once
/// Opengist confirmed it still shows the gist to this token (`still_shown`); otherwise as
/// [`read_gist`] reads them. Only the files and commits may be used from the answer. A gist
/// Opengist no longer shows is the same not-found error as a read of it.
pub async fn read_gist_files(
    cache: &GistCache,
    client: &OpengistClient,
    id: &GistId,
    sha: Option<&Sha>,
) -> Result<Arc<GistDetail>, OpengistError> {
    if let Some(hit) = sha.and_then(|sha| cache.files_at_revision(id, sha.as_str())) {
        still_shown(client, id).await?;
        return Ok(hit);
    }
    read_gist(cache, client, id, sha).await
}

/// Whether Opengist still shows gist `id` to this token, with the smallest request that
/// answers it: a page of one commit (no file content), a 404 when the gist was deleted or is
/// hidden from this token now.
async fn still_shown(client: &OpengistClient, id: &GistId) -> Result<(), OpengistError> {
    client.list_commits(id, 1, 1).await.map(drop)
}

/// A window of raw file `filename` of gist `id` at revision `sha`, as
/// [`OpengistClient::raw_file`] reads it. When `sha` is a full sha and the file's size is
/// known and small enough to keep ([`GistCache::max_raw_bytes`]), the whole file is read once,
/// kept, and every window is cut from it; otherwise only the window is read. Call it after
/// [`read_gist_files`] for the same request (as `get_gist_file` and `resources/read` do, for
/// the file's size): that read confirmed Opengist still shows the gist, so a kept file is
/// served without asking again.
#[allow(clippy::too_many_arguments)]
pub async fn raw_window(
    cache: &GistCache,
    client: &OpengistClient,
    id: &GistId,
    sha: &Sha,
    filename: &str,
    offset: u64,
    max_bytes: u64,
    known_size: Option<u64>,
) -> Result<RawFile, OpengistError> {
    if max_bytes > 0
        && let Some(bytes) = cache.raw_file(id, sha.as_str(), filename)
    {
        return Ok(window_of(&bytes, offset, max_bytes));
    }
    let keepable = full_sha(sha.as_str()).is_some()
        && max_bytes > 0
        && known_size.is_some_and(|size| size > 0 && size <= cache.max_raw_bytes());
    if let (true, Some(size)) = (keepable, known_size) {
        let whole = client.raw_file(id, sha, filename, 0, size).await?;
        if !whole.truncated && whole.bytes.len() as u64 == size {
            let bytes: Arc<[u8]> = whole.bytes.into();
            cache.keep_raw_file(id, sha.as_str(), filename, Arc::clone(&bytes));
            return Ok(window_of(&bytes, offset, max_bytes));
        }
    }
    client.raw_file(id, sha, filename, offset, max_bytes).await
}

/// The window of `bytes` (a whole file) from `offset`, at most `max_bytes`, as
/// [`OpengistClient::raw_file`] would have read it.
pub fn window_of(bytes: &[u8], offset: u64, max_bytes: u64) -> RawFile {
    let total = bytes.len() as u64;
    let start = offset.min(total);
    let end = offset.saturating_add(max_bytes).min(total);
    let window = bytes
        .get(start as usize..end as usize)
        .unwrap_or_default()
        .to_vec();
    let truncated = end < total;
    let is_utf8 = utf8_window(&window, offset > 0, truncated);
    RawFile {
        bytes: window,
        offset,
        total_bytes: Some(total),
        truncated,
        is_utf8,
    }
}

/// How the full reads of a [`ListedGistReads`] were served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Served from the cache.
    pub cached: u64,
    /// Read from Opengist.
    pub fetched: u64,
}

/// The full reads of the gists list pages named, for one search (`search_gists`) or one
/// `resources/list` page: each gist is read from Opengist at most once per `updated_at` within
/// it, and from the cache when the list's `updated_at` matches a kept read.
pub struct ListedGistReads<'a> {
    cache: &'a GistCache,
    client: &'a OpengistClient,
    /// `updated_at` of each listed gist, from the latest page that listed it.
    listed: Mutex<HashMap<GistId, Option<DateTime<Utc>>>>,
    /// What was already read, by gist, with the `updated_at` it was read at.
    read: Mutex<HashMap<GistId, Arc<GistDetail>>>,
    counts: Mutex<ReadCounts>,
}

impl<'a> ListedGistReads<'a> {
    /// The reads of one search or listing through `client`, using `cache`.
    pub fn new(cache: &'a GistCache, client: &'a OpengistClient) -> Self {
        Self {
            cache,
            client,
            listed: Mutex::new(HashMap::new()),
            read: Mutex::new(HashMap::new()),
            counts: Mutex::new(ReadCounts::default()),
        }
    }

    /// Notes the `updated_at` of every gist of a listed page read at `read`, and keeps their
    /// topics in the cache.
    pub fn note_page(&self, page: &Page<GistSummary>, read: Option<ReadTime>) {
        self.cache.keep_listed(page, read);
        if let Ok(mut listed) = self.listed.lock() {
            for gist in &page.items {
                listed.insert(gist.id.clone(), gist.updated_at);
            }
        }
    }

    /// How the reads so far were served.
    pub fn counts(&self) -> ReadCounts {
        self.counts.lock().map(|c| *c).unwrap_or_default()
    }

    fn count(&self, cached: bool) {
        if let Ok(mut counts) = self.counts.lock() {
            if cached {
                counts.cached += 1;
            } else {
                counts.fetched += 1;
            }
        }
    }

    /// Gist `id` in full: from these reads so far or the cache when its listed
    /// `updated_at` matches, else from Opengist (and kept when that read can be proven
    /// settled).
    pub async fn detail(&self, id: GistId) -> Result<Arc<GistDetail>, OpengistError> {
        let listed = self
            .listed
            .lock()
            .ok()
            .and_then(|listed| listed.get(&id).copied().flatten());
        if let Some(updated_at) = listed {
            let own = self
                .read
                .lock()
                .ok()
                .and_then(|read| read.get(&id).cloned())
                .filter(|d| d.summary.updated_at == Some(updated_at));
            if let Some(detail) = own.or_else(|| self.cache.files_at_update(&id, updated_at)) {
                self.count(true);
                return Ok(detail);
            }
        }
        let (detail, read_time) = self.client.get_gist_timed(&id).await?;
        let detail = Arc::new(detail);
        self.count(false);
        self.cache.keep_current(&detail, read_time);
        if let Ok(mut read) = self.read.lock() {
            read.insert(id, Arc::clone(&detail));
        }
        Ok(detail)
    }
}
