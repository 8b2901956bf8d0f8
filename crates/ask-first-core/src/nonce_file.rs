//! A spent-answer store in a file, for one process whose seal key outlives it.
//!
//! With a fixed seal key, a `requestState` or `confirm_token` sealed before a restart still
//! opens after it; an in-memory store would have forgotten that it was spent. [`FileNonceStore`]
//! keeps spent nonces in an append-only log under the server's state directory, so a spent
//! answer stays spent across restarts until it expires.
//!
//! The log (`spent-answers.log`) is a sequence of fixed-size records: the SHA-256 of the nonce
//! (the file never holds a nonce itself), the seal's expiry (Unix seconds, little-endian) and a
//! checksum of both. An answer counts as spent only once its record has been written and
//! `fsync`ed: [`NonceStore::spend`] says `true` after that, never before, and a write or
//! `fsync` that fails is an error (the guard then refuses the answer: fail closed).
//!
//! On opening, expired records are pruned (the log is rewritten to a temporary file, synced and
//! renamed over the old one); the log is compacted the same way while running once it holds
//! more expired records than live ones. A torn last record (a crash while appending, before the
//! `fsync` that would have made it count) is dropped; a damaged record anywhere else makes
//! opening fail, naming the file and the fix, rather than forget what it may hold.
//!
//! One process at a time: [`FileNonceStore::open`] takes an exclusive lock on
//! `spent-answers.lock` next to the log, held until the store is dropped, and refuses to open
//! when another process holds it (two processes sharing one log could each spend the same
//! answer once). Replicas share Redis instead.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::nonce::{NonceStore, NonceStoreError, SpendFuture};
use crate::seal::Nonce;

/// The log's file name inside the state directory.
pub const SPENT_LOG_FILE: &str = "spent-answers.log";
/// The lock file's name inside the state directory.
pub const SPENT_LOCK_FILE: &str = "spent-answers.lock";

/// The first bytes of the log: its format and version.
const MAGIC: &[u8; 8] = b"MCPGSP01";
const HASH_LEN: usize = 32;
const RECORD_LEN: usize = HASH_LEN + 8 + 8;

/// Why the store could not be opened. Every message names the path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum FileNonceStoreError {
    /// The state directory could not be created or read.
    #[error(
        "cannot use the state directory {path}: {source}; create it (writable by this user) or \
         point {setting} at a directory that is"
    )]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The setting naming it.
        setting: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// Another process holds the lock.
    #[error(
        "another process is using the spent-answer log in {path} (its lock file {lock} is \
         held): stop that process, or give this one its own {setting}; replicas that share a \
         seal key share Redis instead"
    )]
    Locked {
        /// The state directory.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The setting naming the directory.
        setting: String,
    },
    /// The log could not be read or written.
    #[error("cannot use the spent-answer log {path}: {source}; check its permissions and the disk")]
    Io {
        /// The log.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The log is damaged before its last record.
    #[error(
        "the spent-answer log {path} is damaged at byte {offset}: it is not safe to guess which \
         answers it recorded as spent. Stop the server, wait until every answer it may hold has \
         expired (15 minutes after it last ran), then move the file aside and start again"
    )]
    Damaged {
        /// The log.
        path: PathBuf,
        /// Where the damage starts.
        offset: u64,
    },
}

/// Spent nonces in an append-only log file, surviving restarts (see the module documentation).
///
/// Cheap to clone: clones share the file and its lock.
#[derive(Debug, Clone)]
pub struct FileNonceStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    file: File,
    /// Live entries: nonce hash → expiry.
    spent: HashMap<[u8; HASH_LEN], u64>,
    /// Records in the file, live or not.
    records: usize,
    /// Held for the store's life; dropping it releases the lock.
    _lock: File,
}

impl FileNonceStore {
    /// Opens (creating it and `dir` when missing) the log in `dir`, prunes what expired before
    /// `now` (Unix seconds) and locks it for this process. `setting` is the name of the setting
    /// that chose `dir`, for messages.
    pub fn open(dir: &Path, setting: &str, now: u64) -> Result<Self, FileNonceStoreError> {
        let directory = |source| FileNonceStoreError::Directory {
            path: dir.to_owned(),
            setting: setting.to_owned(),
            source,
        };
        create_private_dir(dir).map_err(directory)?;
        let lock_path = dir.join(SPENT_LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(directory)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(FileNonceStoreError::Locked {
                    path: dir.to_owned(),
                    lock: lock_path,
                    setting: setting.to_owned(),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(directory(source)),
        }
        let path = dir.join(SPENT_LOG_FILE);
        let io = |source| FileNonceStoreError::Io {
            path: path.clone(),
            source,
        };
        let bytes = match File::open(&path) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).map_err(io)?;
                bytes
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(io(error)),
        };
        let spent = parse_log(&bytes, now).map_err(|offset| FileNonceStoreError::Damaged {
            path: path.clone(),
            offset,
        })?;
        if bytes.len() > MAGIC.len() {
            tracing::debug!(live = spent.len(), "read the spent-answer log");
        }
        let file = rewrite(&path, &spent).map_err(io)?;
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                path,
                file,
                records: spent.len(),
                spent,
                _lock: lock,
            })),
        })
    }

    /// The log's path.
    pub fn path(&self) -> PathBuf {
        self.lock().path.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Records `nonce` as spent (blocking: writes and syncs the file). `Ok(true)` the first
    /// time, once the record is on disk.
    pub fn spend_blocking(
        &self,
        nonce: &Nonce,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, NonceStoreError> {
        let hash: [u8; HASH_LEN] = Sha256::digest(nonce).into();
        let mut inner = self.lock();
        if inner.spent.get(&hash).is_some_and(|expiry| *expiry > now) {
            return Ok(false);
        }
        if expires_at <= now {
            // It cannot open anyway; nothing to record, and nothing to run.
            return Ok(false);
        }
        let record = record(&hash, expires_at);
        let shown = inner.path.display().to_string();
        let failed = |error: std::io::Error| {
            NonceStoreError(format!(
                "could not record a spent answer in {shown}: {error}; check the disk and the \
                 file's permissions"
            ))
        };
        inner.file.write_all(&record).map_err(failed)?;
        inner.file.sync_data().map_err(failed)?;
        inner.spent.insert(hash, expires_at);
        inner.records += 1;
        let live = {
            inner.spent.retain(|_, expiry| *expiry > now);
            inner.spent.len()
        };
        if inner.records > 2 * live + 1024 {
            let path = inner.path.clone();
            match rewrite(&path, &inner.spent) {
                Ok(file) => {
                    inner.file = file;
                    inner.records = live;
                }
                // The old log stays valid and keeps growing; the next spend tries again.
                Err(error) => tracing::warn!(%error, "could not compact the spent-answer log"),
            }
        }
        Ok(true)
    }
}

impl NonceStore for FileNonceStore {
    fn spend<'a>(&'a self, nonce: &'a Nonce, expires_at: u64, now: u64) -> SpendFuture<'a> {
        let store = self.clone();
        let nonce = *nonce;
        Box::pin(async move {
            // fsync blocks: off the async workers when a runtime can take it.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(move || store.spend_blocking(&nonce, expires_at, now))
                    .await
                    .map_err(|error| {
                        NonceStoreError(format!("recording a spent answer stopped: {error}"))
                    })?,
                Err(_) => store.spend_blocking(&nonce, expires_at, now),
            }
        })
    }
}

fn record(hash: &[u8; HASH_LEN], expires_at: u64) -> [u8; RECORD_LEN] {
    let mut record = [0u8; RECORD_LEN];
    record[..HASH_LEN].copy_from_slice(hash);
    record[HASH_LEN..HASH_LEN + 8].copy_from_slice(&expires_at.to_le_bytes());
    let check = Sha256::digest(&record[..HASH_LEN + 8]);
    record[HASH_LEN + 8..].copy_from_slice(&check[..8]);
    record
}

/// The live entries of a log's bytes; `Err(offset)` where damage starts before the last
/// record. A short or garbled last record is dropped (it never counted: see the module docs).
fn parse_log(bytes: &[u8], now: u64) -> Result<HashMap<[u8; HASH_LEN], u64>, u64> {
    let mut spent = HashMap::new();
    if bytes.is_empty() {
        return Ok(spent);
    }
    if bytes.len() < MAGIC.len() {
        // A crash while writing the header of a new log: it recorded nothing.
        return if MAGIC.starts_with(bytes) {
            Ok(spent)
        } else {
            Err(0)
        };
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err(0);
    }
    let body = &bytes[MAGIC.len()..];
    let whole = body.len() / RECORD_LEN;
    for index in 0..whole {
        let chunk = &body[index * RECORD_LEN..(index + 1) * RECORD_LEN];
        let mut hash = [0u8; HASH_LEN];
        hash.copy_from_slice(&chunk[..HASH_LEN]);
        let mut expiry = [0u8; 8];
        expiry.copy_from_slice(&chunk[HASH_LEN..HASH_LEN + 8]);
        let expiry = u64::from_le_bytes(expiry);
        if record(&hash, expiry)[HASH_LEN + 8..] != chunk[HASH_LEN + 8..] {
            let last = index + 1 == whole && body.len().is_multiple_of(RECORD_LEN);
            if last {
                tracing::warn!("dropped a torn last record of the spent-answer log");
                break;
            }
            return Err((MAGIC.len() + index * RECORD_LEN) as u64);
        }
        if expiry > now {
            spent.insert(hash, expiry);
        }
    }
    if !body.len().is_multiple_of(RECORD_LEN) {
        tracing::warn!("dropped a torn last record of the spent-answer log");
    }
    Ok(spent)
}

/// Writes `spent` as a new log next to `path`, syncs it, renames it over `path`, syncs the
/// directory, and returns the new log opened for appending.
fn rewrite(path: &Path, spent: &HashMap<[u8; HASH_LEN], u64>) -> std::io::Result<File> {
    let temporary = path.with_extension("log.new");
    {
        let mut file = private_file(&temporary)?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + spent.len() * RECORD_LEN);
        bytes.extend_from_slice(MAGIC);
        for (hash, expiry) in spent {
            bytes.extend_from_slice(&record(hash, *expiry));
        }
        file.write_all(&bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&temporary, path)?;
    if let Some(parent) = path.parent() {
        // The rename is durable once the directory is synced (where directories can be opened).
        if let Ok(directory) = File::open(parent) {
            let _ = directory.sync_all();
        }
    }
    OpenOptions::new().append(true).open(path)
}

fn private_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ask-first-nonce-file-{name}-{}-{}",
            std::process::id(),
            rand::random::<u64>()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }

    const SETTING: &str = "NOTES_STATE_DIR";

    #[test]
    fn a_nonce_spends_once_and_stays_spent_after_reopening() {
        let dir = temp_dir("reopen");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 10), Ok(true));
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 11), Ok(false));
        assert_eq!(store.spend_blocking(&[2; 16], 1000, 12), Ok(true));
        drop(store);
        let store = FileNonceStore::open(&dir, SETTING, 20).expect("reopens");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 20), Ok(false));
        assert_eq!(store.spend_blocking(&[2; 16], 1000, 20), Ok(false));
        assert_eq!(store.spend_blocking(&[3; 16], 1000, 20), Ok(true));
        // The file holds hashes, never a nonce.
        let bytes = std::fs::read(dir.join(SPENT_LOG_FILE)).expect("the log");
        assert!(!bytes.windows(16).any(|window| window == [1; 16]));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn expired_entries_are_pruned_on_opening() {
        let dir = temp_dir("prune");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        assert_eq!(store.spend_blocking(&[1; 16], 100, 10), Ok(true));
        assert_eq!(store.spend_blocking(&[2; 16], 5000, 10), Ok(true));
        drop(store);
        let store = FileNonceStore::open(&dir, SETTING, 200).expect("reopens");
        let length = std::fs::metadata(dir.join(SPENT_LOG_FILE))
            .expect("the log")
            .len();
        assert_eq!(
            length,
            (MAGIC.len() + RECORD_LEN) as u64,
            "one live record left"
        );
        assert_eq!(store.spend_blocking(&[2; 16], 5000, 200), Ok(false));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_expired_answer_is_never_reported_fresh() {
        let dir = temp_dir("expired");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        assert_eq!(store.spend_blocking(&[9; 16], 10, 10), Ok(false));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_log_is_compacted_while_running() {
        let dir = temp_dir("compact");
        let store = FileNonceStore::open(&dir, SETTING, 0).expect("opens");
        for index in 0..1100u32 {
            let mut nonce = [0u8; 16];
            nonce[..4].copy_from_slice(&index.to_le_bytes());
            assert_eq!(
                store.spend_blocking(&nonce, u64::from(index) + 1, u64::from(index)),
                Ok(true)
            );
        }
        let length = std::fs::metadata(dir.join(SPENT_LOG_FILE))
            .expect("the log")
            .len();
        assert!(
            length < (MAGIC.len() + 1100 * RECORD_LEN) as u64,
            "compacted: {length} bytes"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_torn_tail_is_dropped_and_what_came_before_stays_spent() {
        let dir = temp_dir("torn");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 10), Ok(true));
        drop(store);
        let path = dir.join(SPENT_LOG_FILE);
        let mut file = OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("the log");
        file.write_all(&[0xAB; RECORD_LEN / 2])
            .expect("a torn tail");
        drop(file);
        let store = FileNonceStore::open(&dir, SETTING, 20).expect("a torn tail is tolerated");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 20), Ok(false));
        assert_eq!(store.spend_blocking(&[4; 16], 1000, 20), Ok(true));
        drop(store);
        // A whole last record whose checksum is wrong was never synced as written: dropped too.
        let mut bytes = std::fs::read(&path).expect("the log");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&path, &bytes).expect("garble the last record");
        let store = FileNonceStore::open(&dir, SETTING, 30).expect("tolerated");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 30), Ok(false));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn damage_before_the_last_record_refuses_to_open() {
        let dir = temp_dir("damaged");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        for byte in 1..=3u8 {
            assert_eq!(store.spend_blocking(&[byte; 16], 1000, 10), Ok(true));
        }
        drop(store);
        let path = dir.join(SPENT_LOG_FILE);
        let mut bytes = std::fs::read(&path).expect("the log");
        bytes[MAGIC.len() + 3] ^= 0xFF;
        std::fs::write(&path, &bytes).expect("damage the first record");
        let error = FileNonceStore::open(&dir, SETTING, 20).expect_err("fails closed");
        assert!(
            matches!(error, FileNonceStoreError::Damaged { offset, .. } if offset == MAGIC.len() as u64),
            "{error}"
        );
        assert!(error.to_string().contains("move the file aside"), "{error}");
        // A file that is no log at all is refused too.
        std::fs::write(&path, b"something else entirely").expect("overwrite");
        assert!(FileNonceStore::open(&dir, SETTING, 20).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_second_opener_is_refused_while_the_first_holds_the_lock() {
        let dir = temp_dir("lock");
        let first = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        let error = FileNonceStore::open(&dir, SETTING, 10).expect_err("locked");
        assert!(
            matches!(error, FileNonceStoreError::Locked { .. }),
            "{error}"
        );
        assert!(error.to_string().contains(SETTING), "{error}");
        drop(first);
        FileNonceStore::open(&dir, SETTING, 10).expect("free again");
        std::fs::remove_dir_all(&dir).ok();
    }
}
