//! The approval record stores of one machine: in memory, and in files under the state
//! directory (they outlive the process, and several processes sharing the directory decide and
//! spend each record once).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::approval_record::{
    ApprovalRecord, ApprovalStore, DecideRefused, RecordFuture, RecordId, RecordState,
    RecordStoreError,
};
use crate::target::Fingerprint;

/// An in-memory record store for a single process. Forgets records once expired.
#[derive(Debug, Default)]
pub struct MemoryApprovalStore {
    records: Mutex<HashMap<RecordId, ApprovalRecord>>,
}

impl MemoryApprovalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, now: u64, f: impl FnOnce(&mut HashMap<RecordId, ApprovalRecord>) -> R) -> R {
        let mut records = match self.records.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        records.retain(|_, record| record.expires_at > now);
        f(&mut records)
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> RecordFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl ApprovalStore for MemoryApprovalStore {
    fn create<'a>(&'a self, record: &'a ApprovalRecord) -> RecordFuture<'a, ()> {
        self.with(0, |records| records.insert(record.id, record.clone()));
        ready(())
    }

    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>> {
        ready(self.with(now, |records| records.get(id).cloned()))
    }

    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>> {
        ready(self.with(now, |records| {
            let record = records.get_mut(id).ok_or(DecideRefused::Unknown)?;
            if record.state != RecordState::Pending {
                return Err(DecideRefused::AlreadyDecided);
            }
            record.state = if approve {
                RecordState::Approved
            } else {
                RecordState::Declined
            };
            Ok(())
        }))
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        ready(self.with(now, |records| match records.get_mut(id) {
            Some(record) if record.state == RecordState::Approved => {
                record.state = RecordState::Spent;
                true
            }
            _ => false,
        }))
    }

    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Option<ApprovalRecord>> {
        ready(self.with(now, |records| {
            newest_open(records.values(), principal, operation, target, shown)
        }))
    }
}

/// The newest (latest expiry) pending or approved record about exactly this call.
fn newest_open<'a>(
    records: impl Iterator<Item = &'a ApprovalRecord>,
    principal: &str,
    operation: &str,
    target: &Fingerprint,
    shown: &Fingerprint,
) -> Option<ApprovalRecord> {
    records
        .filter(|r| matches!(r.state, RecordState::Pending | RecordState::Approved))
        .filter(|r| r.is_for(principal, operation, target, shown))
        .max_by_key(|r| r.expires_at)
        .cloned()
}

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
/// system, so processes sharing the directory decide and spend each record once.
#[derive(Debug)]
pub struct FileApprovalStore {
    dir: PathBuf,
}

fn failed(error: impl std::fmt::Display) -> RecordStoreError {
    RecordStoreError(error.to_string())
}

impl FileApprovalStore {
    /// Opens (creating it when missing, mode 0700) `<state_dir>/approvals`. `setting` names the
    /// state directory's setting in the error.
    pub fn open(state_dir: &Path, setting: &str) -> Result<Self, FileApprovalStoreError> {
        let dir = state_dir.join(APPROVALS_DIR);
        let made = {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&dir)
        };
        made.map_err(|source| FileApprovalStoreError {
            path: dir.clone(),
            setting: setting.to_owned(),
            source,
        })?;
        Ok(Self { dir })
    }

    /// The directory holding the records.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn file(&self, id: &RecordId, ext: &str) -> PathBuf {
        self.dir.join(format!("{id}.{ext}"))
    }

    /// Reads a record and its state from its files; `None` when missing or unreadable.
    fn read(&self, id: &RecordId) -> Result<Option<ApprovalRecord>, RecordStoreError> {
        let text = match std::fs::read_to_string(self.file(id, "json")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failed(e)),
        };
        let Some(mut record) = serde_json::from_str(&text)
            .ok()
            .as_ref()
            .and_then(ApprovalRecord::from_json)
        else {
            return Ok(None);
        };
        if record.id != *id {
            return Ok(None);
        }
        record.state = if self.file(id, "spent").exists() {
            RecordState::Spent
        } else {
            match std::fs::read_to_string(self.file(id, "decided")) {
                Ok(decided) => RecordState::parse(decided.trim()).unwrap_or(RecordState::Declined),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => RecordState::Pending,
                Err(e) => return Err(failed(e)),
            }
        };
        Ok(Some(record))
    }

    fn read_live(
        &self,
        id: &RecordId,
        now: u64,
    ) -> Result<Option<ApprovalRecord>, RecordStoreError> {
        Ok(self.read(id)?.filter(|r| r.expires_at > now))
    }

    /// Removes the files of records that expired before `now`.
    fn sweep(&self, now: u64) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(RecordId::parse)
            else {
                continue;
            };
            if matches!(self.read(&id), Ok(Some(r)) if r.expires_at <= now) {
                for ext in ["decided", "spent", "json"] {
                    let _ = std::fs::remove_file(self.file(&id, ext));
                }
            }
        }
    }

    /// Writes `contents` to a fresh temporary file and links it to `path`, which fails when
    /// `path` exists: the file appears once, whole.
    fn place_once(&self, path: &Path, contents: &[u8]) -> Result<bool, RecordStoreError> {
        let temp = self.dir.join(format!(".tmp-{}", RecordId::random()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(contents)?;
                file.sync_all()
            });
        let linked = written.and_then(|()| std::fs::hard_link(&temp, path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(failed(e)),
        }
    }
}

fn done<'a, T: Send + 'a>(value: Result<T, RecordStoreError>) -> RecordFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl ApprovalStore for FileApprovalStore {
    fn create<'a>(&'a self, record: &'a ApprovalRecord) -> RecordFuture<'a, ()> {
        self.sweep(crate::clock::now_unix());
        let mut stored = record.to_json();
        stored["state"] = RecordState::Pending.as_str().into();
        let placed = self.place_once(
            &self.file(&record.id, "json"),
            stored.to_string().as_bytes(),
        );
        done(placed.and_then(|fresh| {
            fresh
                .then_some(())
                .ok_or_else(|| failed("a record with this id exists already"))
        }))
    }

    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>> {
        done(self.read_live(id, now))
    }

    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>> {
        let decided = (|| {
            if self.read_live(id, now)?.is_none() {
                return Ok(Err(DecideRefused::Unknown));
            }
            let state = if approve {
                RecordState::Approved
            } else {
                RecordState::Declined
            };
            let fresh = self.place_once(&self.file(id, "decided"), state.as_str().as_bytes())?;
            Ok(fresh.then_some(()).ok_or(DecideRefused::AlreadyDecided))
        })();
        done(decided)
    }

    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool> {
        let spent = (|| {
            match self.read_live(id, now)? {
                Some(record) if record.state == RecordState::Approved => {}
                _ => return Ok(false),
            }
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(self.file(id, "spent"))
            {
                Ok(file) => file.sync_all().map(|()| true).map_err(failed),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(failed(e)),
            }
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
    ) -> RecordFuture<'a, Option<ApprovalRecord>> {
        let found = (|| {
            let entries = std::fs::read_dir(&self.dir).map_err(failed)?;
            let mut records = Vec::new();
            for entry in entries.flatten() {
                let name = entry.file_name();
                if let Some(id) = name
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .and_then(RecordId::parse)
                    && let Some(record) = self.read_live(&id, now)?
                {
                    records.push(record);
                }
            }
            Ok(newest_open(
                records.iter(),
                principal,
                operation,
                target,
                shown,
            ))
        })();
        done(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::wording!(struct Q = "q";);
    crate::wording!(struct R = "r";);

    fn fingerprints() -> (Fingerprint, Fingerprint) {
        (
            Fingerprint::of_question(&crate::question::Question::new::<Q>([])),
            Fingerprint::of_question(&crate::question::Question::new::<R>([])),
        )
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
        block(store.create(&record));
        assert_eq!(
            block(store.get(&record.id, 10)).map(|r| r.state),
            Some(RecordState::Pending)
        );
        assert!(
            !block(store.spend(&record.id, 10)),
            "a pending record never spends"
        );
        assert_eq!(
            block(store.find_open("p", "op", &a, &a, 10)).map(|r| r.id),
            Some(record.id)
        );
        assert_eq!(block(store.find_open("q", "op", &a, &a, 10)), None);
        assert_eq!(block(store.find_open("p", "op", &a, &b, 10)), None);
        assert_eq!(block(store.find_open("p", "op", &b, &a, 10)), None);
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
        assert_eq!(block(store.find_open("p", "op", &a, &a, 10)), None);

        let declined = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 100);
        block(store.create(&declined));
        assert_eq!(block(store.decide(&declined.id, false, 10)), Ok(()));
        assert!(
            !block(store.spend(&declined.id, 10)),
            "a declined record never spends"
        );

        let late = ApprovalRecord::pending("p", "p", "tool", "op", &a, &a, "Q".into(), 20);
        block(store.create(&late));
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

    #[test]
    fn memory_store_lifecycle() {
        lifecycle(&MemoryApprovalStore::new());
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
        block(store.create(&record));
        let other = FileApprovalStore::open(&dir, "STATE_DIR").expect("opens");
        assert_eq!(block(other.decide(&record.id, true, 10)), Ok(()));
        assert!(block(store.spend(&record.id, 10)));
        assert!(!block(other.spend(&record.id, 10)));
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
