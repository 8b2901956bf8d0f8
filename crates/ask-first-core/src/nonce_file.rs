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
//! more expired records than live ones.
//!
//! **Every record is read or opening fails.** A damaged record anywhere, the last one
//! included, and a log that ends in the middle of a record make [`FileNonceStore::open`] fail,
//! naming the file and the fix. A record cannot be told apart from a damaged one, and one
//! dropped would let the answer it recorded work again after the restart; a crash while
//! appending (before the `fsync` that would have made the answer count) leaves such a tail
//! too, and is refused the same way.
//!
//! **One process at a time, through the log's own lock.** [`FileNonceStore::open`] takes an
//! exclusive advisory lock (`flock`) on the log file itself and holds it for the store's life;
//! another process opening the same log is refused. Two processes sharing one log could each
//! spend the same answer once. There is no separate lock file whose removal would let a
//! second process in. A rewrite locks the new file before renaming it over the old one, and an
//! opener checks that the file it locked is still the one at the log's path (else it opens
//! again), so the lock follows the log through every rewrite. A log moved aside or deleted
//! while its process runs makes that process refuse every answer from then on (it can no
//! longer record one where the next process will look). Replicas share Redis instead.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::nonce::{NonceStore, NonceStoreError, SpendFuture};
use crate::seal::Nonce;

/// The log's file name inside the state directory.
pub const SPENT_LOG_FILE: &str = "spent-answers.log";

/// The first bytes of the log: its format and version.
const MAGIC: &[u8; 8] = b"MCPGSP01";
const HASH_LEN: usize = 32;
const RECORD_LEN: usize = HASH_LEN + 8 + 8;
/// How many times opening tries again when the file it locked was replaced meanwhile (by the
/// holder's rewrite, just before it stopped).
const OPEN_TRIES: usize = 8;

/// Why the store could not be opened. Every message names the path and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// Another process holds the log's lock.
    #[error(
        "another process is using the spent-answer log {path} (it holds the log's lock, until \
         it stops): stop that process first, or give this one a state directory of its own \
         with {setting}; replicas that share a seal key share Redis instead"
    )]
    Locked {
        /// The log.
        path: PathBuf,
        /// The setting naming its directory.
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
    /// A record of the log cannot be read.
    #[error(
        "the spent-answer log {path} is damaged at byte {offset} ({problem}): a record that \
         cannot be read may be an answer already used, which would work again if it were \
         dropped, so this server does not start on it. Stop every server using this state \
         directory, wait until every answer the log may hold has expired (the longest lifetime \
         of a requestState or confirm_token after the log was last written: 15 minutes unless \
         the server sets longer), then move the file aside and start again"
    )]
    Damaged {
        /// The log.
        path: PathBuf,
        /// Where the damage starts.
        offset: u64,
        /// What is wrong there.
        problem: &'static str,
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
    /// The log, locked for this process; appended to.
    file: File,
    /// The log's identity (device, inode) when this process locked or last rewrote it.
    identity: Option<(u64, u64)>,
    /// Live entries: nonce hash → expiry.
    spent: HashMap<[u8; HASH_LEN], u64>,
    /// Records in the file, live or not.
    records: usize,
}

impl FileNonceStore {
    /// Opens (creating it and `dir` when missing) the log in `dir`, locks it for this process,
    /// reads every record and prunes what expired before `now` (Unix seconds). `setting` is the
    /// name of the setting that chose `dir`, for messages.
    pub fn open(dir: &Path, setting: &str, now: u64) -> Result<Self, FileNonceStoreError> {
        create_private_dir(dir).map_err(|source| FileNonceStoreError::Directory {
            path: dir.to_owned(),
            setting: setting.to_owned(),
            source,
        })?;
        let path = dir.join(SPENT_LOG_FILE);
        let io = |source| FileNonceStoreError::Io {
            path: path.clone(),
            source,
        };
        let mut locked = lock_log(&path, setting)?;
        let mut bytes = Vec::new();
        locked.seek(SeekFrom::Start(0)).map_err(io)?;
        locked.read_to_end(&mut bytes).map_err(io)?;
        let spent =
            parse_log(&bytes, now).map_err(|(offset, problem)| FileNonceStoreError::Damaged {
                path: path.clone(),
                offset,
                problem,
            })?;
        if bytes.len() > MAGIC.len() {
            tracing::debug!(live = spent.len(), "read the spent-answer log");
        }
        let file = rewrite(&path, &spent).map_err(io)?;
        // The new log is locked and in place: the old one's lock can go.
        drop(locked);
        let identity = identity(&file.metadata().map_err(io)?);
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                path,
                file,
                identity,
                records: spent.len(),
                spent,
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
        let shown = inner.path.display().to_string();
        let failed = |error: std::io::Error| {
            NonceStoreError(format!(
                "could not record a spent answer in {shown}: {error}; check the disk and the \
                 file's permissions"
            ))
        };
        let at_path = std::fs::metadata(&inner.path).map_err(failed)?;
        if identity(&at_path) != inner.identity {
            // Another file is at the log's path now (moved aside, deleted and recreated): a
            // record written here would not be where the next process looks.
            return Err(NonceStoreError(format!(
                "the spent-answer log {shown} is no longer the file this process locked (it was \
                 moved or deleted while the server ran): answers are refused until the server \
                 restarts; restart it once no other process uses that state directory"
            )));
        }
        let record = record(&hash, expires_at);
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
            let rewritten =
                rewrite(&path, &inner.spent).and_then(|file| Ok((file.metadata()?, file)));
            match rewritten {
                Ok((meta, file)) => {
                    inner.file = file;
                    inner.identity = identity(&meta);
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

/// Opens the log at `path` (creating it empty when missing) and locks it, making sure the file
/// locked is the one at `path` (a holder's rewrite may have replaced it since it was opened).
fn lock_log(path: &Path, setting: &str) -> Result<File, FileNonceStoreError> {
    let io = |source| FileNonceStoreError::Io {
        path: path.to_owned(),
        source,
    };
    for _ in 0..OPEN_TRIES {
        let file = private_file(path, false).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(FileNonceStoreError::Locked {
                    path: path.to_owned(),
                    setting: setting.to_owned(),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(io(source)),
        }
        let locked = identity(&file.metadata().map_err(io)?);
        match std::fs::metadata(path) {
            Ok(at_path) if identity(&at_path) == locked => return Ok(file),
            // Replaced (or removed) since it was opened: open what is there now.
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(io(error)),
        }
    }
    Err(io(std::io::Error::other(
        "the file kept being replaced while it was opened; make sure no other process rewrites it",
    )))
}

/// A file's identity: its device and inode numbers (`None` where the platform has none).
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// A file's identity: its device and inode numbers (`None` where the platform has none).
#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

fn record(hash: &[u8; HASH_LEN], expires_at: u64) -> [u8; RECORD_LEN] {
    let mut record = [0u8; RECORD_LEN];
    record[..HASH_LEN].copy_from_slice(hash);
    record[HASH_LEN..HASH_LEN + 8].copy_from_slice(&expires_at.to_le_bytes());
    let check = Sha256::digest(&record[..HASH_LEN + 8]);
    record[HASH_LEN + 8..].copy_from_slice(&check[..8]);
    record
}

/// The live entries of a log's bytes, or where and how it is damaged: every record must be
/// whole and its checksum right (see the module documentation). An empty file is an empty log
/// (one just created by [`lock_log`]).
fn parse_log(bytes: &[u8], now: u64) -> Result<HashMap<[u8; HASH_LEN], u64>, (u64, &'static str)> {
    let mut spent = HashMap::new();
    if bytes.is_empty() {
        return Ok(spent);
    }
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err((0, "it does not start as a spent-answer log does"));
    }
    let body = &bytes[MAGIC.len()..];
    for (index, chunk) in body.chunks(RECORD_LEN).enumerate() {
        let offset = (MAGIC.len() + index * RECORD_LEN) as u64;
        if chunk.len() < RECORD_LEN {
            return Err((offset, "the log ends in the middle of a record"));
        }
        let mut hash = [0u8; HASH_LEN];
        hash.copy_from_slice(&chunk[..HASH_LEN]);
        let mut expiry = [0u8; 8];
        expiry.copy_from_slice(&chunk[HASH_LEN..HASH_LEN + 8]);
        let expiry = u64::from_le_bytes(expiry);
        if record(&hash, expiry)[HASH_LEN + 8..] != chunk[HASH_LEN + 8..] {
            return Err((offset, "a record's checksum does not match its content"));
        }
        if expiry > now {
            spent.insert(hash, expiry);
        }
    }
    Ok(spent)
}

/// Writes `spent` as a new log next to `path`, locks it, syncs it, renames it over `path`,
/// syncs the directory, and returns the new log (locked, positioned at its end for appending).
/// The caller holds the lock of the log it replaces until the new one is in place.
fn rewrite(path: &Path, spent: &HashMap<[u8; HASH_LEN], u64>) -> std::io::Result<File> {
    let temporary = path.with_extension("log.new");
    let mut file = private_file(&temporary, true)?;
    // Nobody else opens this name, so the lock is free; taken before the rename, so the file
    // is never at the log's path unlocked.
    file.try_lock().map_err(|error| match error {
        std::fs::TryLockError::Error(error) => error,
        std::fs::TryLockError::WouldBlock => std::io::Error::other(format!(
            "{} is locked by another process",
            temporary.display()
        )),
    })?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + spent.len() * RECORD_LEN);
    bytes.extend_from_slice(MAGIC);
    for (hash, expiry) in spent {
        bytes.extend_from_slice(&record(hash, *expiry));
    }
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)?;
    if let Some(parent) = path.parent() {
        // The rename is durable once the directory is synced (where directories can be opened).
        if let Ok(directory) = File::open(parent) {
            let _ = directory.sync_all();
        }
    }
    Ok(file)
}

/// Opens `path` for reading and writing, creating it (owner-only) when missing; `truncate`
/// empties it.
fn private_file(path: &Path, truncate: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .create(true)
        .read(true)
        .write(true)
        .truncate(truncate);
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

    /// A log holding three spent answers, closed; returns the directory and the log's bytes.
    fn log_with_three(name: &str) -> (PathBuf, Vec<u8>) {
        let dir = temp_dir(name);
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        for byte in 1..=3u8 {
            assert_eq!(store.spend_blocking(&[byte; 16], 1000, 10), Ok(true));
        }
        drop(store);
        let bytes = std::fs::read(dir.join(SPENT_LOG_FILE)).expect("the log");
        assert_eq!(bytes.len(), MAGIC.len() + 3 * RECORD_LEN);
        (dir, bytes)
    }

    /// Opening fails on `damaged` with a message naming the file, where and the fix; the
    /// intact log (positive control) opens and its answers are still spent.
    fn refused_then_restored(dir: &Path, intact: &[u8], damaged: &[u8], offset: u64) {
        let path = dir.join(SPENT_LOG_FILE);
        std::fs::write(&path, damaged).expect("damage the log");
        let error = FileNonceStore::open(dir, SETTING, 20).expect_err("fails closed");
        assert!(
            matches!(&error, FileNonceStoreError::Damaged { offset: at, .. } if *at == offset),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("move the file aside"), "{message}");
        assert_eq!(
            std::fs::read(&path).expect("the log"),
            damaged,
            "left as it was"
        );
        std::fs::write(&path, intact).expect("restore the log");
        let store = FileNonceStore::open(dir, SETTING, 20).expect("the intact log opens");
        for byte in 1..=3u8 {
            assert_eq!(store.spend_blocking(&[byte; 16], 1000, 20), Ok(false));
        }
        assert_eq!(store.spend_blocking(&[4; 16], 1000, 20), Ok(true));
    }

    #[test]
    fn a_flipped_byte_in_the_last_record_refuses_to_open() {
        let (dir, intact) = log_with_three("flipped-last");
        let mut damaged = intact.clone();
        let last = damaged.len() - RECORD_LEN + 5;
        damaged[last] ^= 0x01;
        refused_then_restored(
            &dir,
            &intact,
            &damaged,
            (MAGIC.len() + 2 * RECORD_LEN) as u64,
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_torn_tail_refuses_to_open() {
        let (dir, intact) = log_with_three("torn");
        // A half-written fourth record.
        let mut torn = intact.clone();
        torn.extend_from_slice(&[0xAB; RECORD_LEN / 2]);
        refused_then_restored(&dir, &intact, &torn, (MAGIC.len() + 3 * RECORD_LEN) as u64);
        // The last record cut short.
        let cut = &intact[..intact.len() - 1];
        refused_then_restored(&dir, &intact, cut, (MAGIC.len() + 2 * RECORD_LEN) as u64);
        // A header cut short.
        refused_then_restored(&dir, &intact, &intact[..3], 0);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn damage_before_the_last_record_refuses_to_open() {
        let (dir, intact) = log_with_three("damaged");
        let mut damaged = intact.clone();
        damaged[MAGIC.len() + 3] ^= 0xFF;
        refused_then_restored(&dir, &intact, &damaged, MAGIC.len() as u64);
        // A file that is no log at all is refused too.
        refused_then_restored(&dir, &intact, b"something else entirely", 0);
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
        let message = error.to_string();
        assert!(message.contains(SETTING), "{message}");
        assert!(
            message.contains(&first.path().display().to_string()),
            "{message}"
        );
        // The log is the only file: there is no lock file to remove, and nothing says to.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .expect("the directory")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        assert_eq!(names, [SPENT_LOG_FILE]);
        for word in ["lock file", "delete", "remove"] {
            assert!(!message.contains(word), "{message}");
        }
        drop(first);
        FileNonceStore::open(&dir, SETTING, 10).expect("free again");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_lock_follows_the_log_through_a_compaction() {
        let dir = temp_dir("lock-compact");
        let first = FileNonceStore::open(&dir, SETTING, 0).expect("opens");
        let path = dir.join(SPENT_LOG_FILE);
        let before = identity(&std::fs::metadata(&path).expect("the log"));
        for index in 0..1100u32 {
            let mut nonce = [0u8; 16];
            nonce[..4].copy_from_slice(&index.to_le_bytes());
            assert_eq!(
                first.spend_blocking(&nonce, u64::from(index) + 1, u64::from(index)),
                Ok(true)
            );
        }
        let after = identity(&std::fs::metadata(&path).expect("the log"));
        assert_ne!(before, after, "compacting replaced the file");
        let error = FileNonceStore::open(&dir, SETTING, 2000).expect_err("still locked");
        assert!(
            matches!(error, FileNonceStoreError::Locked { .. }),
            "{error}"
        );
        // And spending goes on in the new file.
        assert_eq!(first.spend_blocking(&[7; 16], 5000, 1100), Ok(true));
        drop(first);
        let reopened = FileNonceStore::open(&dir, SETTING, 1100).expect("free again");
        assert_eq!(reopened.spend_blocking(&[7; 16], 5000, 1100), Ok(false));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_log_moved_aside_while_running_refuses_every_answer() {
        let dir = temp_dir("moved");
        let store = FileNonceStore::open(&dir, SETTING, 10).expect("opens");
        assert_eq!(store.spend_blocking(&[1; 16], 1000, 10), Ok(true));
        let path = dir.join(SPENT_LOG_FILE);
        std::fs::rename(&path, dir.join("aside.log")).expect("move the log aside");
        // Another process may now create and lock a new log at the path.
        let other = FileNonceStore::open(&dir, SETTING, 10).expect("a new log");
        let error = store
            .spend_blocking(&[2; 16], 1000, 10)
            .expect_err("refused: the record would not be where the next process looks");
        assert!(error.0.contains("no longer the file"), "{}", error.0);
        assert_eq!(other.spend_blocking(&[2; 16], 1000, 10), Ok(true));
        std::fs::remove_dir_all(&dir).ok();
    }
}
