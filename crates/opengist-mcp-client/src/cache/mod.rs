//! The gist cache: gist files Opengist already sent, kept in memory (never on disk), bounded
//! by bytes, for one owner (an instance and a token), and keyed so that an entry is only ever
//! served for the exact state it was read at.
//!
//! Two kinds of key:
//! - **(gist, `updated_at`)**: the files of a gist as they stood at that `updated_at`, and
//!   apart from them its topics. Every change to a gist's files or topics moves its
//!   `updated_at` (Opengist 1.15: API and web edits save the gist with a fresh timestamp,
//!   `Gist.Update` rewriting its topics; git pushes over HTTP and SSH, whose push options can
//!   set topics, call `SetLastActiveNow`), and every gist list carries `updated_at`, so
//!   `search_gists` can tell from the list alone which cached files are still the gist's
//!   files, and `get_gist` from the `updated_at` it has just read which topics are the gist's.
//! - **(gist, revision sha)**: the files of a gist at a full 40-hex commit sha, which never
//!   change; and a whole raw file at such a revision. What can change is whether Opengist
//!   still shows the gist to that token (deleted, made private, the token's scope narrowed):
//!   every read served from such an entry is re-validated first with the smallest request
//!   that answers it, a page of one commit, and a 404 there is the read's not-found error.
//!   Re-validating rather than bounding the entry in time: a time bound would still serve a
//!   deleted gist until it expired, and the request costs a few hundred bytes and no file
//!   content, where the revision it saves carries up to 50 files of 512 KiB.
//!
//! Opengist keeps `updated_at` in whole seconds, so two changes within one second share one
//! value. A read is therefore kept under its `updated_at` only when Opengist provably began
//! answering it in a later second ([`ReadTime`], a fact about the read that the client
//! reports: the answer's `Date` header less the time the request took): any change after such a read gets a later `updated_at`. A read that
//! cannot prove it (no `Date` header, a gist changed within the last seconds) is used once and
//! not kept.
//!
//! Topics come from lists (Opengist's single-gist answer never carries them): every list page
//! the server reads keeps the topics of its gists ([`GistCache::keep_listed`]), settled the
//! same way.
//!
//! What an entry is trusted for: its files (names, contents, sizes, encodings and Opengist's
//! cuts), for a revision its commits, and for a topics entry the topics. Title, description, visibility and counts can change
//! without a new `updated_at` (likes, the web's visibility switch), so no tool serves them from
//! here: `get_gist` always asks Opengist, and only stores what it read.
//!
//! Per owner: every key carries its [`CacheOwner`] (a digest of the instance URL and the
//! token), so one token's reads can never answer another's. A server with one configured
//! token reads and keeps through that token's view; a server for a team
//! (`OPENGIST_MCP_HTTP_AUTH=opengist`) gives each person's token its own view of the same
//! store ([`GistCache::for_owner`]), so a warm cache never shows one person what only another
//! may read. The server's own writes drop every entry of the gist they touch, whoever's view
//! kept it ([`GistCache::forget_gist`]).
//!
//! The reads that go through the cache (a gist, its topics, a raw file window, the full reads
//! of listed gists) are in `cache/reads.rs`: this file is the store and its keys.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use quick_cache::Weighter;
use quick_cache::sync::Cache;
use sha2::{Digest, Sha256};

use crate::opengist::gist_ref::Sha;
use crate::opengist::read_time::ReadTime;
use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, GistSummary, Page};

mod reads;

pub use reads::{
    ListedGistReads, ReadCounts, gist_topics, raw_window, read_gist, read_gist_files, window_of,
};

/// Default size of the cache: 64 MiB of gist files (`OPENGIST_MCP_CACHE_BYTES`).
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes counted for an entry besides its file contents and names (the map, the metadata).
const ENTRY_OVERHEAD: u64 = 1024;
/// Bytes counted per file besides its content and name.
const FILE_OVERHEAD: u64 = 160;
/// Bytes counted per commit or fork an entry carries (an eighth of it per topic).
const ITEM_OVERHEAD: u64 = 256;
/// Bytes counted for a topics or head entry besides its text: a topics entry is kept for every
/// listed gist, most with no topic at all.
const TOPICS_OVERHEAD: u64 = 192;

/// Whose reads an entry holds: a digest of the instance's URL and the token, never the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheOwner([u8; 16]);

impl CacheOwner {
    /// The owner of the reads made with `token` (or of no token) on the instance at `base_url`.
    pub fn of(base_url: &str, token: Option<&str>) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"opengist-mcp cache principal\0");
        hasher.update(base_url.as_bytes());
        hasher.update(b"\0");
        match token.map(str::trim).filter(|t| !t.is_empty()) {
            Some(token) => {
                hasher.update(b"token\0");
                hasher.update(token.as_bytes());
            }
            None => hasher.update(b"anonymous"),
        }
        let digest = hasher.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(digest.get(..16).unwrap_or(&[0u8; 16]));
        Self(out)
    }

    /// The digest, for telling owners apart elsewhere (never the token).
    pub fn bytes(&self) -> [u8; 16] {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A gist's files at an `updated_at` (microseconds since the epoch).
    Updated {
        cache_owner: CacheOwner,
        id: GistId,
        at: i64,
    },
    /// A gist's files at a full 40-hex revision (lowercase).
    Revision {
        cache_owner: CacheOwner,
        id: GistId,
        sha: String,
    },
    /// A gist's head sha at an `updated_at` (microseconds since the epoch), as git advertised
    /// it (asked only when the API's commit list may leave the head out).
    Head {
        cache_owner: CacheOwner,
        id: GistId,
        at: i64,
    },
    /// A gist's topics at an `updated_at` (microseconds since the epoch), as a list showed
    /// them.
    Topics {
        cache_owner: CacheOwner,
        id: GistId,
        at: i64,
    },
    /// One whole raw file at a full 40-hex revision.
    Raw {
        cache_owner: CacheOwner,
        id: GistId,
        sha: String,
        filename: String,
    },
}

impl Key {
    fn id(&self) -> &GistId {
        match self {
            Self::Updated { id, .. }
            | Self::Revision { id, .. }
            | Self::Head { id, .. }
            | Self::Topics { id, .. }
            | Self::Raw { id, .. } => id,
        }
    }
}

#[derive(Debug, Clone)]
enum Entry {
    Detail(Arc<GistDetail>),
    Head(Arc<str>),
    Topics(Arc<[String]>),
    Raw(Arc<[u8]>),
}

/// The weight of an entry: its bytes, roughly as held in memory.
#[derive(Debug, Clone, Copy)]
struct Bytes;

impl Weighter<Key, Entry> for Bytes {
    fn weight(&self, key: &Key, entry: &Entry) -> u64 {
        let key_bytes = match key {
            Key::Raw { filename, .. } => filename.len() as u64,
            _ => 0,
        };
        match entry {
            Entry::Detail(detail) => ENTRY_OVERHEAD + detail_bytes(detail),
            Entry::Head(sha) => TOPICS_OVERHEAD + sha.len() as u64,
            Entry::Topics(topics) => {
                TOPICS_OVERHEAD
                    + topics
                        .iter()
                        .map(|t| ITEM_OVERHEAD / 8 + t.len() as u64)
                        .sum::<u64>()
            }
            Entry::Raw(bytes) => ENTRY_OVERHEAD + key_bytes + bytes.len() as u64,
        }
    }
}

/// The bytes a cached gist is counted for: file contents and names, plus a fixed allowance per
/// file, commit and fork.
pub fn detail_bytes(detail: &GistDetail) -> u64 {
    let files: u64 = detail
        .files
        .iter()
        .map(|(name, file)| {
            FILE_OVERHEAD
                + name.len() as u64
                + file.filename.len() as u64
                + file.content.len() as u64
                + file.mime_type.len() as u64
                + file.language.len() as u64
                + file.encoding.len() as u64
        })
        .sum();
    let text = detail.summary.title.len() + detail.summary.description.len();
    files + text as u64 + (detail.commits.len() + detail.forks.len()) as u64 * ITEM_OVERHEAD
}

/// The lowercase form of a full 40-hex sha; `None` for a shorter one, which could later come to
/// name another commit.
fn full_sha(sha: &str) -> Option<String> {
    (sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_lowercase())
}

/// Micro-seconds since the epoch, the key form of an `updated_at`.
fn at_key(updated_at: DateTime<Utc>) -> i64 {
    updated_at.timestamp_micros()
}

/// Gist files kept for reuse; see the module documentation for why an entry is never stale.
///
/// A value is one owner's view of a store: [`GistCache::for_owner`] gives another owner's
/// view of the same store (one byte budget for everyone), and every key carries the view's
/// owner, so no view ever reads another's entries. Cheap to clone.
#[derive(Clone)]
pub struct GistCache {
    cache_owner: CacheOwner,
    capacity: u64,
    entries: Option<Arc<Cache<Key, Entry, Bytes>>>,
}

impl std::fmt::Debug for GistCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GistCache")
            .field("capacity", &self.capacity)
            .field("bytes", &self.bytes())
            .field("entries", &self.len())
            .finish()
    }
}

impl GistCache {
    /// A cache of at most `capacity` bytes for `cache_owner`; 0 keeps nothing.
    pub fn new(cache_owner: CacheOwner, capacity: u64) -> Self {
        // Room for about one entry per 8 KiB (a typical gist), at least 64.
        let estimated_items = usize::try_from(capacity / 8192)
            .unwrap_or(usize::MAX)
            .max(64);
        let entries = (capacity > 0)
            .then(|| Arc::new(Cache::with_weighter(estimated_items, capacity, Bytes)));
        Self {
            cache_owner,
            capacity,
            entries,
        }
    }

    /// `cache_owner`'s view of this cache's store: its reads and keeps are keyed by
    /// `cache_owner`, so it never sees an entry kept through another view (and no other view
    /// sees its entries). The byte budget and [`forget_gist`](Self::forget_gist) are the
    /// store's, shared by every view.
    pub fn for_owner(&self, cache_owner: CacheOwner) -> Self {
        Self {
            cache_owner,
            capacity: self.capacity,
            entries: self.entries.clone(),
        }
    }

    /// Whose entries this view reads and keeps.
    pub fn owner(&self) -> CacheOwner {
        self.cache_owner
    }

    /// A cache that keeps nothing (no Opengist configured, or `OPENGIST_MCP_CACHE_BYTES=0`).
    pub fn disabled() -> Self {
        Self::new(CacheOwner([0; 16]), 0)
    }

    /// The configured size in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes held now.
    pub fn bytes(&self) -> u64 {
        self.entries.as_ref().map_or(0, |entries| entries.weight())
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.entries.as_ref().map_or(0, |entries| entries.len())
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Largest raw file kept whole: a sixteenth of the cache, so one file never pushes out
    /// most of the rest (and fits any shard).
    pub fn max_raw_bytes(&self) -> u64 {
        self.capacity / 16
    }

    /// The entry under `key`; each accessor below takes the one kind its key holds.
    fn get(&self, key: &Key) -> Option<Entry> {
        self.entries.as_ref()?.get(key)
    }

    fn detail(&self, key: &Key) -> Option<Arc<GistDetail>> {
        match self.get(key)? {
            Entry::Detail(detail) => Some(detail),
            _ => None,
        }
    }

    /// The topics of gist `id` at `updated_at`, as a list read no earlier than that second
    /// showed them.
    pub fn topics_at_update(
        &self,
        id: &GistId,
        updated_at: DateTime<Utc>,
    ) -> Option<Arc<[String]>> {
        let key = Key::Topics {
            cache_owner: self.cache_owner,
            id: id.clone(),
            at: at_key(updated_at),
        };
        match self.get(&key)? {
            Entry::Topics(topics) => Some(topics),
            _ => None,
        }
    }

    /// Keeps the topics of gist `id` shown at `updated_at` by a list read at `read`, when that
    /// read proves no change can share that `updated_at`. Returns whether they were kept.
    pub fn keep_topics(
        &self,
        id: &GistId,
        updated_at: Option<DateTime<Utc>>,
        topics: &[String],
        read: Option<ReadTime>,
    ) -> bool {
        self.keep_settled(
            updated_at,
            read,
            |cache_owner, at| Key::Topics {
                cache_owner,
                id: id.clone(),
                at,
            },
            || Entry::Topics(topics.into()),
        )
    }

    /// Keeps `entry` under `key` (given this cache's owner and the `updated_at` key) when
    /// `read` proves no change can share `updated_at` ([`ReadTime::settles`]). Returns whether
    /// it was kept.
    fn keep_settled(
        &self,
        updated_at: Option<DateTime<Utc>>,
        read: Option<ReadTime>,
        key: impl FnOnce(CacheOwner, i64) -> Key,
        entry: impl FnOnce() -> Entry,
    ) -> bool {
        let (Some(entries), Some(updated_at), Some(read)) = (&self.entries, updated_at, read)
        else {
            return false;
        };
        if !read.settles(updated_at) {
            return false;
        }
        entries.insert(key(self.cache_owner, at_key(updated_at)), entry());
        true
    }

    /// The head sha git advertised for gist `id` when its `updated_at` was `updated_at`.
    pub fn head_at_update(&self, id: &GistId, updated_at: DateTime<Utc>) -> Option<Arc<str>> {
        let key = Key::Head {
            cache_owner: self.cache_owner,
            id: id.clone(),
            at: at_key(updated_at),
        };
        match self.get(&key)? {
            Entry::Head(sha) => Some(sha),
            _ => None,
        }
    }

    /// Keeps the head sha git advertised for the gist `detail` shows, read (the detail) at
    /// `read`, when that read proves no change can share its `updated_at`: every commit moves
    /// `updated_at`. Returns whether it was kept.
    pub fn keep_head(&self, detail: &GistDetail, sha: &str, read: Option<ReadTime>) -> bool {
        let Some(sha) = full_sha(sha) else {
            return false;
        };
        self.keep_settled(
            detail.summary.updated_at,
            read,
            |cache_owner, at| Key::Head {
                cache_owner,
                id: detail.id().clone(),
                at,
            },
            || Entry::Head(sha.into()),
        )
    }

    /// Keeps the topics of every gist of a list page read at `read` (see
    /// [`keep_topics`](Self::keep_topics)).
    pub fn keep_listed(&self, page: &Page<GistSummary>, read: Option<ReadTime>) {
        for gist in &page.items {
            self.keep_topics(&gist.id, gist.updated_at, &gist.topics, read);
        }
    }

    /// The files of gist `id` as they were when its `updated_at` was `updated_at` (only the
    /// files and Opengist's cuts may be used from it).
    pub fn files_at_update(
        &self,
        id: &GistId,
        updated_at: DateTime<Utc>,
    ) -> Option<Arc<GistDetail>> {
        self.detail(&Key::Updated {
            cache_owner: self.cache_owner,
            id: id.clone(),
            at: at_key(updated_at),
        })
    }

    /// The files and commits of gist `id` at revision `sha` (a full 40-hex sha only).
    pub fn files_at_revision(&self, id: &GistId, sha: &str) -> Option<Arc<GistDetail>> {
        self.detail(&Key::Revision {
            cache_owner: self.cache_owner,
            id: id.clone(),
            sha: full_sha(sha)?,
        })
    }

    /// Keeps a gist read at its latest state (`GET /api/gists/:id`) under its `updated_at`,
    /// when `read` proves no change can share that `updated_at`. Returns whether it was kept.
    pub fn keep_current(&self, detail: &Arc<GistDetail>, read: Option<ReadTime>) -> bool {
        self.keep_settled(
            detail.summary.updated_at,
            read,
            |cache_owner, at| Key::Updated {
                cache_owner,
                id: detail.id().clone(),
                at,
            },
            || Entry::Detail(Arc::clone(detail)),
        )
    }

    /// Keeps a gist read at revision `sha` (`GET /api/gists/:id/:sha`), when `sha` is a full
    /// 40-hex sha and the answer starts at that very commit. Returns whether it was kept.
    pub fn keep_revision(&self, id: &GistId, sha: &Sha, detail: &Arc<GistDetail>) -> bool {
        let (Some(entries), Some(sha)) = (&self.entries, full_sha(sha.as_str())) else {
            return false;
        };
        let starts_there = detail
            .commits
            .first()
            .is_some_and(|c| c.version.eq_ignore_ascii_case(&sha));
        if !starts_there || detail.id() != id {
            return false;
        }
        entries.insert(
            Key::Revision {
                cache_owner: self.cache_owner,
                id: id.clone(),
                sha,
            },
            Entry::Detail(Arc::clone(detail)),
        );
        true
    }

    /// The whole raw file `filename` of gist `id` at revision `sha` (full 40-hex only).
    pub fn raw_file(&self, id: &GistId, sha: &str, filename: &str) -> Option<Arc<[u8]>> {
        let key = Key::Raw {
            cache_owner: self.cache_owner,
            id: id.clone(),
            sha: full_sha(sha)?,
            filename: filename.to_owned(),
        };
        match self.get(&key)? {
            Entry::Raw(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// Keeps a whole raw file read at revision `sha` (full 40-hex only), up to
    /// [`max_raw_bytes`](Self::max_raw_bytes). Returns whether it was kept.
    pub fn keep_raw_file(&self, id: &GistId, sha: &str, filename: &str, bytes: Arc<[u8]>) -> bool {
        let (Some(entries), Some(sha)) = (&self.entries, full_sha(sha)) else {
            return false;
        };
        if bytes.len() as u64 > self.max_raw_bytes() {
            return false;
        }
        entries.insert(
            Key::Raw {
                cache_owner: self.cache_owner,
                id: id.clone(),
                sha,
                filename: filename.to_owned(),
            },
            Entry::Raw(bytes),
        );
        true
    }

    /// Drops every entry of gist `id` now and again when the returned guard is dropped: held
    /// across a write, so whatever the write's outcome (done, refused, or unknown), nothing
    /// read before or during it is served after it.
    pub fn forget_after(&self, id: &GistId) -> ForgetOnDrop<'_> {
        self.forget_gist(id);
        ForgetOnDrop {
            cache: self,
            id: id.clone(),
        }
    }

    /// Drops every entry of gist `id` (after this server wrote to it, or tried to).
    pub fn forget_gist(&self, id: &GistId) {
        if let Some(entries) = &self.entries {
            entries.retain(|key, _| key.id() != id);
        }
    }
}

/// Forgets a gist's entries when dropped; see [`GistCache::forget_after`].
#[must_use = "the gist is forgotten again when this is dropped: hold it across the write"]
pub struct ForgetOnDrop<'a> {
    cache: &'a GistCache,
    id: GistId,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.cache.forget_gist(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::time::Duration;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";
    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn id() -> GistId {
        GistId::parse(ID).expect("id")
    }

    fn cache_owner() -> CacheOwner {
        CacheOwner::of("http://127.0.0.1:1", Some("og_one"))
    }

    fn detail(updated: &str, content: &str, sha: &str) -> Arc<GistDetail> {
        let value: Value = json!({
            "id": ID,
            "title": "t",
            "visibility": "private",
            "updated_at": updated,
            "files": {"a.txt": {"filename": "a.txt", "size": content.len(), "content": content}},
            "commits": [{"version": sha}],
        });
        Arc::new(serde_json::from_value(value).expect("detail"))
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("date")
            .with_timezone(&Utc)
    }

    /// A read that Opengist began answering at `date` (an HTTP date) and took `ms`.
    fn read_at(date: &str, ms: u64) -> Option<ReadTime> {
        ReadTime::from_date_header(Some(date), Duration::from_millis(ms))
    }

    #[test]
    fn a_settled_read_is_served_only_for_its_own_updated_at() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        assert!(cache.keep_current(&d, read_at("Tue, 01 Dec 2026 08:00:05 GMT", 10)));
        let hit = cache.files_at_update(&id(), at("2026-12-01T08:00:00Z"));
        assert_eq!(
            hit.map(|h| h.files["a.txt"].content.clone()).as_deref(),
            Some("one")
        );
        assert!(
            cache
                .files_at_update(&id(), at("2026-12-01T08:00:01Z"))
                .is_none()
        );
        assert!(
            cache
                .files_at_update(&id(), at("2026-12-01T07:59:59Z"))
                .is_none()
        );
    }

    #[test]
    fn a_read_within_the_second_of_its_update_is_not_kept() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        // Answered in the same second as the update: a second change could share it.
        assert!(!cache.keep_current(&d, read_at("Tue, 01 Dec 2026 08:00:00 GMT", 3)));
        // Answered in the next second, but the round trip may reach back into it.
        assert!(!cache.keep_current(&d, read_at("Tue, 01 Dec 2026 08:00:01 GMT", 3)));
        assert!(!cache.keep_current(&d, None));
        assert!(cache.is_empty());
    }

    #[test]
    fn revisions_are_kept_only_under_a_full_sha_the_answer_starts_at() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        let short = Sha::parse("0123abcd").expect("sha");
        assert!(!cache.keep_revision(&id(), &short, &d));
        let other = Sha::parse(&"f".repeat(40)).expect("sha");
        assert!(
            !cache.keep_revision(&id(), &other, &d),
            "answer is another commit"
        );
        let full = Sha::parse(&SHA.to_uppercase()).expect("sha");
        assert!(cache.keep_revision(&id(), &full, &d));
        assert!(cache.files_at_revision(&id(), SHA).is_some());
        assert!(
            cache
                .files_at_revision(&id(), &SHA.to_uppercase())
                .is_some()
        );
        assert!(cache.files_at_revision(&id(), "0123abcd").is_none());
    }

    #[test]
    fn one_owner_never_sees_anothers_entries() {
        let mine = GistCache::new(cache_owner(), 1 << 20);
        let theirs = GistCache::new(
            CacheOwner::of("http://127.0.0.1:1", Some("og_two")),
            1 << 20,
        );
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        assert!(mine.keep_current(&d, read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10)));
        assert!(
            theirs
                .files_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .is_none()
        );
        assert_ne!(
            CacheOwner::of("http://a", Some("og_x")),
            CacheOwner::of("http://b", Some("og_x")),
            "same token, other instance"
        );
        assert_ne!(
            CacheOwner::of("http://a", None),
            CacheOwner::of("http://a", Some("og_x"))
        );
    }

    #[test]
    fn views_of_one_store_never_see_each_others_entries() {
        // Two people's tokens on one team server: one store, one view each.
        let store = GistCache::new(cache_owner(), 1 << 20);
        let a = store.for_owner(CacheOwner::of("http://127.0.0.1:1", Some("og_a")));
        let b = store.for_owner(CacheOwner::of("http://127.0.0.1:1", Some("og_b")));
        let again_a = store.for_owner(CacheOwner::of("http://127.0.0.1:1", Some("og_a")));
        let d = detail("2026-12-01T08:00:00Z", "a's secret", SHA);
        let read = read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10);
        let updated = at("2026-12-01T08:00:00Z");
        assert!(a.keep_current(&d, read));
        let full = Sha::parse(SHA).expect("sha");
        assert!(a.keep_revision(&id(), &full, &d));
        assert!(a.keep_raw_file(&id(), SHA, "a.txt", Arc::from(&b"a's secret"[..])));
        assert!(a.keep_topics(&id(), Some(updated), &["t".to_owned()], read));
        assert!(a.keep_head(&d, SHA, read));
        // Positive control: the same token's view (another request of A's) hits every entry.
        assert!(again_a.files_at_update(&id(), updated).is_some());
        assert!(again_a.files_at_revision(&id(), SHA).is_some());
        assert!(again_a.raw_file(&id(), SHA, "a.txt").is_some());
        assert!(again_a.topics_at_update(&id(), updated).is_some());
        assert!(again_a.head_at_update(&id(), updated).is_some());
        // B's view of the same store, warm with A's reads, misses every one of them.
        assert!(b.files_at_update(&id(), updated).is_none());
        assert!(b.files_at_revision(&id(), SHA).is_none());
        assert!(b.raw_file(&id(), SHA, "a.txt").is_none());
        assert!(b.topics_at_update(&id(), updated).is_none());
        assert!(b.head_at_update(&id(), updated).is_none());
        // One store: the entries are counted once, and a write through any view forgets them.
        assert_eq!(store.len(), 5);
        assert_eq!(b.len(), 5);
        b.forget_gist(&id());
        assert!(again_a.files_at_update(&id(), updated).is_none());
        assert!(store.is_empty());
    }

    #[test]
    fn writes_forget_every_entry_of_the_gist() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        assert!(cache.keep_current(&d, read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10)));
        let full = Sha::parse(SHA).expect("sha");
        assert!(cache.keep_revision(&id(), &full, &d));
        assert!(cache.keep_raw_file(&id(), SHA, "a.txt", Arc::from(&b"one"[..])));
        let other = GistId::parse(&"b".repeat(32)).expect("id");
        assert!(cache.keep_raw_file(&other, SHA, "a.txt", Arc::from(&b"two"[..])));
        assert_eq!(cache.len(), 4);
        cache.forget_gist(&id());
        assert_eq!(cache.len(), 1);
        assert!(cache.raw_file(&other, SHA, "a.txt").is_some());
        assert!(cache.raw_file(&id(), SHA, "a.txt").is_none());
    }

    #[test]
    fn the_cache_stays_within_its_bytes() {
        let capacity = 256 * 1024;
        let cache = GistCache::new(cache_owner(), capacity);
        let body = "x".repeat(8 * 1024);
        for n in 0..200u32 {
            let id = format!("{n:032x}");
            let value = json!({
                "id": id, "visibility": "public", "updated_at": "2026-01-01T00:00:00Z",
                "files": {"f": {"filename": "f", "size": body.len(), "content": body}},
            });
            let d: Arc<GistDetail> = Arc::new(serde_json::from_value(value).expect("detail"));
            cache.keep_current(&d, read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10));
            assert!(cache.bytes() <= capacity, "{} > {capacity}", cache.bytes());
        }
        assert!(cache.len() > 5 && cache.len() < 200, "{}", cache.len());
        // A raw file over a sixteenth of the cache is not kept.
        let big: Arc<[u8]> = vec![0u8; (capacity / 16 + 1) as usize].into();
        assert!(!cache.keep_raw_file(&id(), SHA, "big", big));
    }

    fn listed(updated: &str, topics: &[&str]) -> Page<GistSummary> {
        let value = json!([{
            "id": ID, "visibility": "public", "updated_at": updated, "topics": topics,
        }]);
        Page {
            items: serde_json::from_value(value).expect("summaries"),
            page: 1,
            per_page: 100,
            total: Some(1),
            total_pages: Some(1),
            has_next: false,
        }
    }

    #[test]
    fn listed_topics_are_served_only_for_their_own_updated_at() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let page = listed("2026-12-01T08:00:00Z", &["rust", "cli"]);
        cache.keep_listed(&page, read_at("Tue, 01 Dec 2026 08:00:05 GMT", 10));
        let hit = cache.topics_at_update(&id(), at("2026-12-01T08:00:00Z"));
        assert_eq!(
            hit.as_deref(),
            Some(&["rust".to_owned(), "cli".to_owned()][..])
        );
        assert!(
            cache
                .topics_at_update(&id(), at("2026-12-01T08:00:01Z"))
                .is_none()
        );
        // No topics is an answer too: kept, so get_gist does not ask again.
        cache.keep_listed(
            &listed("2026-12-01T09:00:00Z", &[]),
            read_at("Tue, 01 Dec 2026 09:00:02 GMT", 1),
        );
        assert_eq!(
            cache
                .topics_at_update(&id(), at("2026-12-01T09:00:00Z"))
                .as_deref(),
            Some(&[][..])
        );
        // Files and topics are separate entries: neither answers for the other.
        assert!(
            cache
                .files_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .is_none()
        );
    }

    #[test]
    fn topics_listed_within_the_second_of_their_update_are_not_kept() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let page = listed("2026-12-01T08:00:00Z", &["rust"]);
        cache.keep_listed(&page, read_at("Tue, 01 Dec 2026 08:00:00 GMT", 3));
        cache.keep_listed(&page, read_at("Tue, 01 Dec 2026 08:00:01 GMT", 3));
        cache.keep_listed(&page, None);
        assert!(cache.is_empty());
        assert!(!cache.keep_topics(
            &id(),
            None,
            &[],
            read_at("Tue, 01 Dec 2026 09:00:00 GMT", 1)
        ));
    }

    #[test]
    fn writes_forget_a_gists_topics_and_other_owners_never_see_them() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let theirs = GistCache::new(
            CacheOwner::of("http://127.0.0.1:1", Some("og_two")),
            1 << 20,
        );
        let page = listed("2026-12-01T08:00:00Z", &["rust"]);
        cache.keep_listed(&page, read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10));
        assert!(
            theirs
                .topics_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .is_none()
        );
        cache.forget_gist(&id());
        assert!(
            cache
                .topics_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .is_none()
        );
    }

    #[test]
    fn a_head_is_kept_under_its_settled_updated_at_only() {
        let cache = GistCache::new(cache_owner(), 1 << 20);
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        assert!(!cache.keep_head(&d, SHA, read_at("Tue, 01 Dec 2026 08:00:00 GMT", 3)));
        assert!(!cache.keep_head(&d, "0123abcd", read_at("Tue, 01 Dec 2026 09:00:00 GMT", 3)));
        assert!(cache.keep_head(
            &d,
            &SHA.to_uppercase(),
            read_at("Tue, 01 Dec 2026 09:00:00 GMT", 3)
        ));
        assert_eq!(
            cache
                .head_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .as_deref(),
            Some(SHA)
        );
        assert!(
            cache
                .head_at_update(&id(), at("2026-12-01T08:00:01Z"))
                .is_none()
        );
        cache.forget_gist(&id());
        assert!(
            cache
                .head_at_update(&id(), at("2026-12-01T08:00:00Z"))
                .is_none()
        );
    }

    #[test]
    fn a_disabled_cache_keeps_nothing() {
        let cache = GistCache::disabled();
        let d = detail("2026-12-01T08:00:00Z", "one", SHA);
        assert!(!cache.keep_current(&d, read_at("Tue, 01 Dec 2026 09:00:00 GMT", 10)));
        assert!(!cache.keep_revision(&id(), &Sha::parse(SHA).expect("sha"), &d));
        assert!(!cache.keep_raw_file(&id(), SHA, "a.txt", Arc::from(&b"x"[..])));
        assert!(cache.is_empty() && cache.bytes() == 0);
    }
}
