//! The approval records in files under the state directory: they outlive the process, and
//! several processes sharing the directory decide and spend each record once.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::approval_record::{
    ApprovalRecord, ApprovalStore, DecideRefused, RecordFuture, RecordId, RecordState,
    RecordStoreError, TooManyPending,
};
use crate::target::Fingerprint;

/// The directory under the state directory that holds the records.
pub const APPROVALS_DIR: &str = "approvals";

/// Why the file store could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "the approval records directory {path} cannot be used ({source}); set {setting} to a directory this server may write"
)]
pub struct FileApprovalStoreError {
    path: PathBuf,
    setting: String,
    source: std::io::Error,
}

/// Approval records in files: `<dir>/approvals/<id>.json` (the record as asked, written once),
/// `<id>.decided` (`approved` or `declined`, made once: linked into place, which fails when
/// it exists) and `<id>.spent` (created once, exclusively). Every step is atomic in the file
/// system, so processes sharing the directory decide and spend each record once: the files
/// decide every change of state, never this process's memory.
///
/// **Its cost per call does not grow with the records kept.** The store keeps an index of the
/// unexpired records it knows (read from the directory when it is opened, then kept up as it
/// creates, decides and spends them): [`find_open`](ApprovalStore::find_open) looks up the
/// records about exactly the call asked about, and reads from disk only their state (a record
/// is written once; its state can change in another process). A record another process
/// created after this one opened is read when asked for by id, and reaches the index at the
/// next sweep; until then an identical retry here does not find it, and is asked again.
/// Expired records' files are removed by a sweep of the directory that runs at most once a
/// minute (at a `create`), not on every call. The pending records of each principal are
/// indexed too: the bound on them is counted from the index, and their states are read again
/// from disk only when the bound looks reached.
///
/// **One `fsync` per approved call: the spend's.** The call runs only after its record's
/// `<id>.spent` is on disk (the directory synced after the marker is created): a crash of the
/// machine after the call ran cannot bring the record back as approved. The other writes are
/// not synced, as losing them in a crash of the machine (never a crash or restart of this
/// process: they are in the operating system's cache at once) only means asking again: a
/// record lost before it was decided is asked again; a decision lost before its spend leaves
/// the record pending, asked again; a record or decision file left empty or torn reads as
/// unknown or declined (refused, never approved). Each file still appears whole or not at all
/// (written under a temporary name, then linked into place).
pub struct FileApprovalStore {
    dir: PathBuf,
    index: Mutex<Index>,
    /// Held by a `create` from its count to its write: this process's creates do not overshoot
    /// the bound on pending records.
    creating: Mutex<()>,
}

impl std::fmt::Debug for FileApprovalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The records themselves (their questions) are not shown.
        f.debug_struct("FileApprovalStore")
            .field("dir", &self.dir)
            .field("records", &self.lock().records.len())
            .finish()
    }
}

/// How often, at most, `create` sweeps the directory of expired records (seconds).
const SWEEP_EVERY_SECS: u64 = 60;

/// What names one exact call: its principal, operation, and binding and question fingerprints.
type CallKey = (String, String, String, String);

fn call_key(record: &ApprovalRecord) -> CallKey {
    (
        record.principal.clone(),
        record.operation.clone(),
        record.target.clone(),
        record.shown.clone(),
    )
}

/// The records a [`FileApprovalStore`] knows, in memory. The files are the truth: the state
/// kept here is the last one read or made, and only spent is final.
#[derive(Default)]
struct Index {
    /// Every record known and not yet swept.
    records: HashMap<RecordId, ApprovalRecord>,
    /// Per exact call, the ids of its records not known to be spent.
    open: HashMap<CallKey, Vec<RecordId>>,
    /// Per principal, the ids of its records last known pending.
    pending: HashMap<String, HashSet<RecordId>>,
    /// Record files that could not be read (torn or damaged): skipped by the sweep, as
    /// every look-up finds no record in them.
    unreadable: HashSet<RecordId>,
    /// When `create` sweeps next, Unix seconds.
    next_sweep: u64,
}

impl Index {
    fn insert(&mut self, record: ApprovalRecord) {
        if record.state != RecordState::Spent {
            let ids = self.open.entry(call_key(&record)).or_default();
            if !ids.contains(&record.id) {
                ids.push(record.id);
            }
        }
        self.note_pending(&record);
        self.records.insert(record.id, record);
    }

    /// Keeps `record` in its principal's pending set while it is pending, and only then.
    fn note_pending(&mut self, record: &ApprovalRecord) {
        if record.state == RecordState::Pending {
            self.pending
                .entry(record.principal.clone())
                .or_default()
                .insert(record.id);
        } else if let Some(ids) = self.pending.get_mut(&record.principal) {
            ids.remove(&record.id);
            if ids.is_empty() {
                self.pending.remove(&record.principal);
            }
        }
    }

    fn close(&mut self, record: &ApprovalRecord) {
        let key = call_key(record);
        if let Some(ids) = self.open.get_mut(&key) {
            ids.retain(|id| *id != record.id);
            if ids.is_empty() {
                self.open.remove(&key);
            }
        }
    }

    /// Notes what the files say of `id` now.
    fn set_state(&mut self, id: &RecordId, state: RecordState) {
        let Some(record) = self.records.get_mut(id) else {
            return;
        };
        record.state = state;
        let record = record.clone();
        self.note_pending(&record);
        if state == RecordState::Spent {
            self.close(&record);
        }
    }

    fn remove(&mut self, id: &RecordId) {
        if let Some(mut record) = self.records.remove(id) {
            self.close(&record);
            record.state = RecordState::Spent;
            self.note_pending(&record);
        }
    }

    /// The ids of `principal`'s records last known pending.
    fn pending_of(&self, principal: &str) -> Vec<RecordId> {
        self.pending
            .get(principal)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default()
    }
}

fn failed(error: impl std::fmt::Display) -> RecordStoreError {
    RecordStoreError(error.to_string())
}

fn not_found(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound
}

impl FileApprovalStore {
    /// Opens (creating it when missing, mode 0700) `<state_dir>/approvals` and reads the
    /// records in it. `setting` names the state directory's setting in the error.
    pub fn open(state_dir: &Path, setting: &str) -> Result<Self, FileApprovalStoreError> {
        let dir = state_dir.join(APPROVALS_DIR);
        let made = {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&dir)
        };
        let error = |source| FileApprovalStoreError {
            path: dir.clone(),
            setting: setting.to_owned(),
            source,
        };
        made.map_err(error)?;
        let store = Self {
            dir: dir.clone(),
            index: Mutex::new(Index::default()),
            creating: Mutex::new(()),
        };
        // Every unexpired record into the index. Nothing is removed here: the first `create`
        // sweeps (its `next_sweep` is now).
        let now = crate::clock::now_unix();
        store.scan(now, false).map_err(error)?;
        store.lock().next_sweep = now;
        Ok(store)
    }

    /// The directory holding the records.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn file(&self, id: &RecordId, ext: &str) -> PathBuf {
        self.dir.join(format!("{id}.{ext}"))
    }

    /// Reads a record's file, as written (pending); `None` when missing or unreadable.
    fn read_record(&self, id: &RecordId) -> io::Result<Option<ApprovalRecord>> {
        let text = match std::fs::read_to_string(self.file(id, "json")) {
            Ok(text) => text,
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(serde_json::from_str(&text)
            .ok()
            .as_ref()
            .and_then(ApprovalRecord::from_json)
            .filter(|record| record.id == *id))
    }

    /// A record's state as its files say now. A decision file that cannot be read as one
    /// (torn) reads as declined.
    fn state_on_disk(&self, id: &RecordId) -> io::Result<RecordState> {
        if std::fs::exists(self.file(id, "spent"))? {
            return Ok(RecordState::Spent);
        }
        match std::fs::read_to_string(self.file(id, "decided")) {
            Ok(decided) => Ok(RecordState::parse(decided.trim()).unwrap_or(RecordState::Declined)),
            Err(e) if not_found(&e) => Ok(RecordState::Pending),
            Err(e) => Err(e),
        }
    }

    /// The unexpired record `id`, from the index, else from its file (then indexed); its
    /// state as last known, and whether that was read just now.
    fn known(&self, id: &RecordId, now: u64) -> io::Result<Option<(ApprovalRecord, bool)>> {
        let cached = self.lock().records.get(id).cloned();
        let found = match cached {
            Some(record) => Some((record, false)),
            None => match self.read_record(id)? {
                Some(mut record) => {
                    record.state = self.state_on_disk(id)?;
                    if record.expires_at > now {
                        self.lock().insert(record.clone());
                    }
                    Some((record, true))
                }
                None => None,
            },
        };
        Ok(found.filter(|(record, _)| record.expires_at > now))
    }

    /// The unexpired record `id` with its state as the files say now.
    fn current(&self, id: &RecordId, now: u64) -> io::Result<Option<ApprovalRecord>> {
        let Some((mut record, fresh)) = self.known(id, now)? else {
            return Ok(None);
        };
        if !fresh && record.state != RecordState::Spent {
            record.state = self.state_on_disk(id)?;
            self.lock().set_state(id, record.state);
        }
        Ok(Some(record))
    }

    /// Reads every record file of the directory not in the index yet (another process's, or
    /// all of them when opening) into the index, and, when `remove` is set, removes the files
    /// of the records that expired before `now`.
    fn scan(&self, now: u64, remove: bool) -> io::Result<()> {
        for entry in std::fs::read_dir(&self.dir)? {
            let name = entry?.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(RecordId::parse)
            else {
                continue;
            };
            let expires_at = {
                let index = self.lock();
                if index.unreadable.contains(&id) {
                    continue;
                }
                index.records.get(&id).map(|r| r.expires_at)
            };
            let expires_at = match expires_at {
                Some(expires_at) => expires_at,
                None => match self.read_record(&id)? {
                    Some(mut record) => {
                        let expires_at = record.expires_at;
                        if expires_at > now {
                            record.state = self.state_on_disk(&id)?;
                            self.lock().insert(record);
                        }
                        expires_at
                    }
                    // Gone meanwhile (another process's sweep) or torn: handled as before
                    // this store kept an index, an unknown record.
                    None => {
                        if std::fs::exists(self.file(&id, "json"))? {
                            self.lock().unreadable.insert(id);
                        }
                        continue;
                    }
                },
            };
            if remove && expires_at <= now {
                // The record's file last: until then, what is left still reads as expired.
                for ext in ["decided", "spent", "json"] {
                    match std::fs::remove_file(self.file(&id, ext)) {
                        Err(e) if !not_found(&e) => return Err(e),
                        _ => {}
                    }
                }
                self.lock().remove(&id);
            }
        }
        Ok(())
    }

    /// Sweeps when the last sweep is [`SWEEP_EVERY_SECS`] old. A sweep that fails is logged
    /// and tried again at the next due time: the records it would have removed have expired
    /// and are refused anyway.
    fn sweep_when_due(&self, now: u64) {
        {
            let mut index = self.lock();
            if index.next_sweep > now {
                return;
            }
            index.next_sweep = now.saturating_add(SWEEP_EVERY_SECS);
        }
        if let Err(error) = self.scan(now, true) {
            tracing::warn!(dir = %self.dir.display(), %error, "expired approval records could not be swept");
        }
    }

    /// Writes `contents` to a fresh temporary file and links it to `path`, which fails when
    /// `path` exists: the file appears once, whole. Not synced (see the type's documentation).
    fn place_once(&self, path: &Path, contents: &[u8]) -> io::Result<bool> {
        let temp = self.dir.join(format!(".tmp-{}", RecordId::random()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| file.write_all(contents));
        let linked = written.and_then(|()| std::fs::hard_link(&temp, path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Creates `<id>.spent` and, when `sync`, puts it on disk: `true` the one time it is
    /// created here.
    fn mark_spent(&self, id: &RecordId, sync: bool) -> io::Result<bool> {
        let marker = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.file(id, "spent"))
        {
            Ok(marker) => marker,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(e),
        };
        if !sync {
            return Ok(true);
        }
        // The marker is empty: its name is all it says, and a name is on disk once its
        // directory is synced. (Where a directory cannot be opened, the file is synced.)
        #[cfg(unix)]
        {
            drop(marker);
            std::fs::File::open(&self.dir)?.sync_all()?;
        }
        #[cfg(not(unix))]
        marker.sync_all()?;
        Ok(true)
    }

    /// How many of `principal`'s records are pending and unexpired at `now`, their states read
    /// again from disk (they may have been decided in another process).
    fn pending_now(&self, principal: &str, now: u64) -> io::Result<usize> {
        let ids = self.lock().pending_of(principal);
        let mut count = 0;
        for id in ids {
            match self.current(&id, now)? {
                Some(record) if record.state == RecordState::Pending => count += 1,
                Some(_) => {}
                None => self.lock().remove(&id),
            }
        }
        Ok(count)
    }

    /// Whether `principal` may have another pending record under `max_pending`: counted from
    /// the index, and from disk when the index says the bound is reached.
    fn below_bound(&self, principal: &str, max_pending: usize, now: u64) -> io::Result<bool> {
        if self.lock().pending_of(principal).len() < max_pending {
            return Ok(true);
        }
        Ok(self.pending_now(principal, now)? < max_pending)
    }
}

fn done<'a, T: Send + 'a>(value: io::Result<T>) -> RecordFuture<'a, T> {
    Box::pin(std::future::ready(value.map_err(failed)))
}

impl ApprovalStore for FileApprovalStore {
    fn create<'a>(
        &'a self,
        record: &'a ApprovalRecord,
        max_pending: usize,
        now: u64,
    ) -> RecordFuture<'a, Result<(), TooManyPending>> {
        self.sweep_when_due(crate::clock::now_unix());
        let _creating = self
            .creating
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let created = (|| {
            if !self.below_bound(&record.principal, max_pending, now)? {
                return Ok(Err(TooManyPending { limit: max_pending }));
            }
            let mut stored = record.to_json();
            stored["state"] = RecordState::Pending.as_str().into();
            // Not synced: a pending record lost in a crash of the machine is asked again.
            if !self.place_once(
                &self.file(&record.id, "json"),
                stored.to_string().as_bytes(),
            )? {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "a record with this id exists already",
                ));
            }
            let mut record = record.clone();
            record.state = RecordState::Pending;
            self.lock().insert(record);
            Ok(Ok(()))
        })();
        done(created)
    }

    fn count_pending<'a>(&'a self, principal: &'a str, now: u64) -> RecordFuture<'a, usize> {
        done(self.pending_now(principal, now))
    }

    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>> {
        done(self.current(id, now))
    }

    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>> {
        let decided = (|| {
            if self.known(id, now)?.is_none() {
                return Ok(Err(DecideRefused::Unknown));
            }
            let state = if approve {
                RecordState::Approved
            } else {
                RecordState::Declined
            };
            // Not synced: a decision lost in a crash of the machine leaves the record
            // pending (asked again), or, torn, declined; the spend syncs it with its marker.
            if !self.place_once(&self.file(id, "decided"), state.as_str().as_bytes())? {
                return Ok(Err(DecideRefused::AlreadyDecided));
            }
            self.lock().set_state(id, state);
            Ok(Ok(()))
        })();
        done(decided)
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        let spent = (|| {
            match self.current(id, now)? {
                Some(record) if record.state == RecordState::Approved => {}
                _ => return Ok(false),
            }
            // The one sync a call waits for: the call runs only once its spend is on disk.
            // The marker exists from here on even if the sync fails (then refused: the
            // record is spent without its call having run).
            // The marker is there, made here or by another process: spent. On an error the
            // files say which (read again next time).
            let result = self.mark_spent(id, true);
            if result.is_ok() {
                self.lock().set_state(id, RecordState::Spent);
            }
            result
        })();
        done(spent)
    }

    fn spend_declined<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        let spent = (|| {
            match self.current(id, now)? {
                Some(record) if record.state == RecordState::Declined => {}
                _ => return Ok(false),
            }
            // Not synced: a told decline lost in a crash of the machine is only told again.
            let result = self.mark_spent(id, false);
            if result.is_ok() {
                self.lock().set_state(id, RecordState::Spent);
            }
            result
        })();
        done(spent)
    }

    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Vec<ApprovalRecord>> {
        let found = (|| {
            let key = (
                principal.to_owned(),
                operation.to_owned(),
                target.to_string(),
                shown.to_string(),
            );
            let ids = self.lock().open.get(&key).cloned().unwrap_or_default();
            let mut records = Vec::with_capacity(ids.len());
            for id in ids {
                records.extend(self.current(&id, now)?.filter(|record| {
                    record.state != RecordState::Spent
                        && record.is_for(principal, operation, target, shown)
                }));
            }
            Ok(records)
        })();
        done(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_memory::MemoryApprovalStore;

    crate::wording!(struct Q = "q";);
    crate::wording!(struct R = "r";);

    fn fingerprints() -> (Fingerprint, Fingerprint) {
        (
            Fingerprint::of_question(&crate::question::Question::new::<Q>([])),
            Fingerprint::of_question(&crate::question::Question::new::<R>([])),
        )
    }

    /// Stores `record` below any bound.
    fn add(store: &dyn ApprovalStore, record: &ApprovalRecord) {
        block(store.create(record, usize::MAX, 0)).expect("below the bound");
    }

    /// The one open record about a call, if any.
    fn one(mut records: Vec<ApprovalRecord>) -> Option<ApprovalRecord> {
        assert!(records.len() <= 1, "{records:?}");
        records.pop()
    }

    fn block<T>(future: RecordFuture<'_, T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
            .expect("store answers")
    }

    /// What every store must do: decide once, spend once, only approved, only unexpired, and
    /// find only the record about exactly this call.
    fn lifecycle(store: &dyn ApprovalStore) {
        let (a, b) = fingerprints();
        let record = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 100);
        add(store, &record);
        assert_eq!(
            block(store.get(&record.id, 10)).map(|r| r.state),
            Some(RecordState::Pending)
        );
        assert!(
            !block(store.spend(&record.id, 10)),
            "a pending record never spends"
        );
        assert_eq!(
            one(block(store.find_open("p", "op", &a, &a, 10))).map(|r| r.id),
            Some(record.id)
        );
        assert_eq!(one(block(store.find_open("q", "op", &a, &a, 10))), None);
        assert_eq!(one(block(store.find_open("p", "op", &a, &b, 10))), None);
        assert_eq!(one(block(store.find_open("p", "op", &b, &a, 10))), None);
        assert_eq!(block(store.decide(&record.id, true, 10)), Ok(()));
        assert_eq!(
            block(store.decide(&record.id, false, 10)),
            Err(DecideRefused::AlreadyDecided)
        );
        assert!(block(store.spend(&record.id, 10)), "approved spends once");
        assert!(!block(store.spend(&record.id, 10)), "and only once");
        assert_eq!(
            block(store.get(&record.id, 10)).map(|r| r.state),
            Some(RecordState::Spent)
        );
        assert_eq!(one(block(store.find_open("p", "op", &a, &a, 10))), None);

        let declined = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 100);
        add(store, &declined);
        assert!(
            !block(store.spend_declined(&declined.id, 10)),
            "a pending record is not a told decline"
        );
        assert_eq!(block(store.decide(&declined.id, false, 10)), Ok(()));
        assert!(
            !block(store.spend(&declined.id, 10)),
            "a declined record never spends"
        );
        // Found as declined until the decline is told, once; then the call is asked afresh.
        assert_eq!(
            one(block(store.find_open("p", "op", &a, &a, 10))).map(|r| (r.id, r.state)),
            Some((declined.id, RecordState::Declined))
        );
        assert!(block(store.spend_declined(&declined.id, 10)), "told once");
        assert!(!block(store.spend_declined(&declined.id, 10)), "only once");
        assert!(!block(store.spend(&declined.id, 10)), "and never approves");
        assert_eq!(one(block(store.find_open("p", "op", &a, &a, 10))), None);
        assert_eq!(
            block(store.get(&declined.id, 10)).map(|r| r.state),
            Some(RecordState::Spent)
        );

        let late = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 20);
        add(store, &late);
        assert_eq!(block(store.decide(&late.id, true, 10)), Ok(()));
        assert!(
            !block(store.spend(&late.id, 20)),
            "an expired record never spends"
        );
        assert_eq!(block(store.get(&late.id, 20)), None);
        assert_eq!(
            block(store.decide(&RecordId::random(), true, 10)),
            Err(DecideRefused::Unknown)
        );
    }

    /// The bound on pending records: per principal, only pending ones, only unexpired ones.
    fn bounded(store: &dyn ApprovalStore) {
        let (a, b) = fingerprints();
        let ask = |principal: &str, expires_at| {
            ApprovalRecord::pending(
                principal,
                principal,
                "t",
                "op",
                &a,
                &b,
                "Q".into(),
                expires_at,
            )
        };
        let first = ask("p", 100);
        block(store.create(&first, 3, 10)).expect("one");
        block(store.create(&ask("p", 100), 3, 10)).expect("two");
        let short = ask("p", 20);
        block(store.create(&short, 3, 10)).expect("three");
        assert_eq!(block(store.count_pending("p", 10)), 3);
        let refused = ask("p", 100);
        assert_eq!(
            block(store.create(&refused, 3, 10)),
            Err(TooManyPending { limit: 3 })
        );
        assert_eq!(block(store.get(&refused.id, 10)), None, "nothing stored");
        // The control: another principal is not affected.
        block(store.create(&ask("q", 100), 3, 10)).expect("another principal");
        assert_eq!(block(store.count_pending("q", 10)), 1);
        // A decided record frees its place; so does an expired one.
        assert_eq!(block(store.decide(&first.id, true, 10)), Ok(()));
        block(store.create(&ask("p", 100), 3, 10)).expect("a place freed by a decision");
        assert!(block(store.create(&ask("p", 100), 3, 10)).is_err());
        assert_eq!(block(store.count_pending("p", 20)), 2, "one expired");
        block(store.create(&ask("p", 100), 3, 20)).expect("a place freed by expiry");
    }

    #[test]
    fn memory_store_lifecycle() {
        lifecycle(&MemoryApprovalStore::new());
        bounded(&MemoryApprovalStore::new());
    }

    #[test]
    fn file_store_bounds_pending_records_per_principal() {
        let dir = state_dir();
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        bounded(&store);
        // Decided in another process: read from disk when the bound looks reached.
        let other = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let (a, _) = fingerprints();
        let mut records = Vec::new();
        for _ in 0..2 {
            let record = ApprovalRecord::pending("r", "r", "t", "op", &a, &a, "Q".into(), 100);
            block(store.create(&record, 2, 10)).expect("below the bound");
            records.push(record);
        }
        let other_principal = ApprovalRecord::pending("s", "s", "t", "op", &a, &a, "Q".into(), 100);
        assert!(
            block(store.create(&other_principal, 2, 10)).is_ok(),
            "s is not r"
        );
        let third = ApprovalRecord::pending("r", "r", "t", "op", &a, &a, "Q".into(), 100);
        assert!(block(store.create(&third, 2, 10)).is_err());
        assert_eq!(block(other.decide(&records[0].id, false, 10)), Ok(()));
        block(store.create(&third, 2, 10)).expect("the other process's decision seen");
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn file_store_lifecycle_and_two_processes_share_it() {
        let dir = std::env::temp_dir().join(format!("ask-first-approvals-{}", RecordId::random()));
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        lifecycle(&store);
        // A second store over the same directory (another process) sees the same records,
        // and what one spent the other cannot.
        let (a, _) = fingerprints();
        let record = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 100);
        add(&store, &record);
        let other = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        assert_eq!(block(other.decide(&record.id, true, 10)), Ok(()));
        assert!(block(store.spend(&record.id, 10)));
        assert!(!block(other.spend(&record.id, 10)));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    fn state_dir() -> PathBuf {
        std::env::temp_dir().join(format!("ask-first-approvals-{}", RecordId::random()))
    }

    fn about(fp: &Fingerprint, expires_at: u64) -> ApprovalRecord {
        ApprovalRecord::pending("p", "p", "tool", "op", fp, fp, "Q".into(), expires_at)
    }

    #[test]
    fn a_restart_rebuilds_the_index_of_open_records() {
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, b) = fingerprints();
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let (pending, approved) = (about(&a, now + 900), about(&b, now + 900));
        add(&store, &pending);
        add(&store, &approved);
        assert_eq!(block(store.decide(&approved.id, true, now)), Ok(()));
        drop(store);

        let reopened = FileApprovalStore::open(&dir, "STATE_DIR").expect("reopens");
        assert_eq!(reopened.lock().records.len(), 2, "read back when opened");
        // `find_open` looks only in the index: found means rebuilt.
        let found = |fp: &Fingerprint| {
            one(block(reopened.find_open("p", "op", fp, fp, now))).map(|r| (r.id, r.state))
        };
        assert_eq!(found(&a), Some((pending.id, RecordState::Pending)));
        assert_eq!(found(&b), Some((approved.id, RecordState::Approved)));
        assert!(block(reopened.spend(&approved.id, now)));
        assert_eq!(found(&b), None, "spent: no longer open");
        assert_eq!(found(&a), Some((pending.id, RecordState::Pending)));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_spent_record_stays_spent_after_reopening() {
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, _) = fingerprints();
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let record = about(&a, now + 900);
        add(&store, &record);
        assert_eq!(block(store.decide(&record.id, true, now)), Ok(()));
        assert!(block(store.spend(&record.id, now)), "spent once");
        drop(store);

        let reopened = FileApprovalStore::open(&dir, "STATE_DIR").expect("reopens");
        assert!(store_path_has(&reopened, &record.id, "spent"));
        assert_eq!(
            block(reopened.get(&record.id, now)).map(|r| r.state),
            Some(RecordState::Spent)
        );
        assert!(!block(reopened.spend(&record.id, now)), "never twice");
        assert_eq!(one(block(reopened.find_open("p", "op", &a, &a, now))), None);
        assert_eq!(
            block(reopened.decide(&record.id, true, now)),
            Err(DecideRefused::AlreadyDecided)
        );
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_record_keeps_its_evidence_on_disk() {
        use crate::evidence::{Evidence, EvidenceItem};
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, _) = fingerprints();
        let mut record = about(&a, now + 900);
        record.evidence = Evidence::new().group(
            "Files deleted",
            [EvidenceItem::new("</pre><script>", b"0123456789")],
        );
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        block(store.create(&record, usize::MAX, now)).expect("below the bound");
        drop(store);
        let reopened = FileApprovalStore::open(&dir, "STATE_DIR").expect("reopens");
        assert_eq!(block(reopened.get(&record.id, now)), Some(record));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    fn store_path_has(store: &FileApprovalStore, id: &RecordId, ext: &str) -> bool {
        store.file(id, ext).exists()
    }

    #[test]
    fn expired_records_are_swept_at_a_create_once_a_minute() {
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, b) = fingerprints();
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let (expired, live) = (about(&a, now - 1), about(&b, now + 900));
        // The first create after opening sweeps before it writes: `expired` is written after.
        add(&store, &expired);
        assert_eq!(block(store.decide(&expired.id, true, 0)), Ok(()));
        // Within the minute: no sweep, the expired record's files stay.
        add(&store, &live);
        assert!(store_path_has(&store, &expired.id, "json"));
        assert!(store_path_has(&store, &expired.id, "decided"));
        assert!(
            block(store.get(&expired.id, 0)).is_some(),
            "known before the sweep"
        );

        store.lock().next_sweep = now; // a minute later
        add(&store, &about(&a, now + 900));
        assert!(!store_path_has(&store, &expired.id, "json"), "swept");
        assert!(!store_path_has(&store, &expired.id, "decided"), "swept");
        assert!(!store.lock().records.contains_key(&expired.id));
        assert_eq!(block(store.get(&expired.id, 0)), None, "gone from disk too");
        assert_eq!(
            block(store.get(&live.id, now)).map(|r| r.id),
            Some(live.id),
            "the live one stays"
        );
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn another_process_record_is_read_by_id_and_indexed_at_the_next_sweep() {
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, b) = fingerprints();
        let here = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let there = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let theirs = about(&a, now + 900);
        add(&there, &theirs);
        let open_here = || one(block(here.find_open("p", "op", &a, &a, now))).map(|r| r.id);
        assert_eq!(open_here(), None, "not in this index yet: asked again");
        assert_eq!(
            one(block(there.find_open("p", "op", &a, &a, now))).map(|r| r.id),
            Some(theirs.id)
        );

        here.lock().next_sweep = now;
        add(&here, &about(&b, now + 900));
        assert_eq!(open_here(), Some(theirs.id), "indexed by the sweep");
        // Decided and spent there: this process reads the state from the files.
        assert_eq!(block(there.decide(&theirs.id, true, now)), Ok(()));
        assert!(block(there.spend(&theirs.id, now)));
        assert_eq!(open_here(), None);
        assert!(!block(here.spend(&theirs.id, now)));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_torn_record_is_unknown_and_opening_goes_on() {
        let dir = state_dir();
        let now = crate::clock::now_unix();
        let (a, _) = fingerprints();
        let store = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        let whole = about(&a, now + 900);
        add(&store, &whole);
        let torn = about(&a, now + 900);
        let text = torn.to_json().to_string();
        std::fs::write(store.file(&torn.id, "json"), &text[..text.len() / 2]).expect("torn");
        std::fs::write(store.file(&torn.id, "decided"), "approved").expect("decided");
        drop(store);

        let reopened = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens beside it");
        assert_eq!(block(reopened.get(&torn.id, now)), None);
        assert!(!block(reopened.spend(&torn.id, now)), "never approves");
        assert_eq!(
            block(reopened.decide(&torn.id, true, now)),
            Err(DecideRefused::Unknown)
        );
        assert_eq!(
            one(block(reopened.find_open("p", "op", &a, &a, now))).map(|r| r.id),
            Some(whole.id),
            "the whole record beside it is found"
        );
        reopened.lock().next_sweep = now;
        add(&reopened, &about(&a, now + 900));
        assert!(store_path_has(&reopened, &torn.id, "json"), "left in place");
        assert!(reopened.lock().unreadable.contains(&torn.id));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
