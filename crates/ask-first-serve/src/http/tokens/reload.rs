//! Reading the token file again when it changes, and acting only on a version that is whole.
//!
//! A file rewritten in place (`>`, an editor writing over it, a script in a loop) is empty or
//! half-written for a moment. A version is acted on only once it has **settled**: read twice,
//! at least [`SETTLE`] apart, with the same content and the same size, modification and change
//! times and inode, and not written to while it was read (its metadata the same before and
//! after the read). Until then the list in force stays: a token listed before and after a
//! rewrite is never refused in between, and a token the rewrite removes is refused as soon as
//! the new version settled. A settled version that cannot be used (unreadable, malformed,
//! gone) refuses every request with `503` until it is fixed, as a typo'd revocation must not
//! leave the revoked token working.

use std::fs::Metadata;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{Entries, MAX_FILE_BYTES, RELOAD_CHECK, TokenFileError, parse};

/// How long a changed version must stay the same before it is acted on; also how often the
/// file is read while a change settles.
pub const SETTLE: Duration = Duration::from_millis(200);

/// What identifies one version of the file: the SHA-256 of its content.
pub(super) type Stamp = [u8; 32];

/// The metadata that changes with every write of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Written {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    changed: (i64, i64),
    #[cfg(unix)]
    inode: (u64, u64),
}

impl Written {
    fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt as _;
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            changed: (meta.ctime(), meta.ctime_nsec()),
            #[cfg(unix)]
            inode: (meta.dev(), meta.ino()),
        }
    }
}

/// One look at the file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    /// Read whole: its metadata and content's digest (the content alongside, not compared).
    File { written: Written, stamp: Stamp },
    /// It could not be read: why, as the refusal says it.
    Unusable(String),
    /// It was written to while it was read.
    Moving,
}

/// The file's content, refused past [`MAX_FILE_BYTES`] (before and after reading it).
pub(super) fn read_text(path: &Path, setting: &str) -> Result<String, TokenFileError> {
    read_with_meta(path, setting).map(|(text, _, _)| text)
}

/// The content, with the metadata before and after reading it.
fn read_with_meta(
    path: &Path,
    setting: &str,
) -> Result<(String, Metadata, Metadata), TokenFileError> {
    let read_error = |source| TokenFileError::Read {
        setting: setting.to_owned(),
        path: path.to_owned(),
        source,
    };
    let too_large = || TokenFileError::TooLarge {
        setting: setting.to_owned(),
        path: path.to_owned(),
    };
    let before = std::fs::metadata(path).map_err(read_error)?;
    if before.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let after = std::fs::metadata(path).map_err(read_error)?;
    Ok((text, before, after))
}

/// Reads and parses the file, with the digest of the content parsed.
pub(super) fn read(path: &Path, setting: &str) -> Result<(Stamp, Entries), TokenFileError> {
    let text = read_text(path, setting)?;
    let stamp: Stamp = Sha256::digest(text.as_bytes()).into();
    Ok((stamp, Entries::new(parse(&text, setting, path)?)))
}

/// The list in force and what the last looks at the file saw.
pub(super) struct Loaded {
    /// The list in force, or (`Err`) why the settled version cannot be used: every request is
    /// refused until it is fixed.
    entries: Result<Arc<Entries>, String>,
    /// The digest of the content in force (`None`: none could be read).
    stamp: Option<Stamp>,
    /// A changed version seen, and when it was first seen so: acted on once it settled.
    changing: Option<(Seen, Instant)>,
    /// When the file was last looked at.
    pub(super) checked: Instant,
}

impl Loaded {
    /// The list read at start, whose content has digest `stamp`.
    pub(super) fn new(stamp: Stamp, entries: Entries) -> Self {
        Self {
            entries: Ok(Arc::new(entries)),
            stamp: Some(stamp),
            changing: None,
            checked: Instant::now(),
        }
    }

    /// The list in force, after looking at the file again if it is due: every
    /// [`RELOAD_CHECK`], or every [`SETTLE`] while a change settles.
    pub(super) fn current(&mut self, path: &Path, setting: &str) -> Result<Arc<Entries>, String> {
        let every = if self.changing.is_some() {
            SETTLE
        } else {
            RELOAD_CHECK
        };
        if self.checked.elapsed() >= every {
            self.checked = Instant::now();
            self.look(path, setting);
        }
        self.entries.clone()
    }

    /// Looks at the file once, and acts on a changed version that settled.
    fn look(&mut self, path: &Path, setting: &str) {
        let (seen, text) = match read_with_meta(path, setting) {
            Ok((text, before, after)) => {
                let written = Written::of(&after);
                if Written::of(&before) != written {
                    (Seen::Moving, None)
                } else {
                    let stamp: Stamp = Sha256::digest(text.as_bytes()).into();
                    if self.stamp == Some(stamp) {
                        // The version in force, read whole: whatever was seen changing did
                        // not last.
                        self.changing = None;
                        return;
                    }
                    (Seen::File { written, stamp }, Some(text))
                }
            }
            Err(error) => (Seen::Unusable(error.to_string()), None),
        };
        let settled = matches!(&self.changing, Some((before, since))
            if *before == seen && seen != Seen::Moving && since.elapsed() >= SETTLE);
        if !settled {
            if self
                .changing
                .as_ref()
                .is_none_or(|(before, _)| *before != seen)
            {
                self.changing = Some((seen, Instant::now()));
            }
            return;
        }
        self.changing = None;
        self.apply(seen, text, path, setting);
    }

    /// Puts a settled version in force.
    fn apply(&mut self, seen: Seen, text: Option<String>, path: &Path, setting: &str) {
        let parsed = match (&seen, text) {
            (Seen::File { .. }, Some(text)) => {
                parse(&text, setting, path).map_err(|error| error.to_string())
            }
            (Seen::Unusable(why), _)
                if self.stamp.is_none() && self.entries.as_ref().err() == Some(why) =>
            {
                return;
            }
            (Seen::Unusable(why), _) => Err(why.clone()),
            _ => return,
        };
        self.stamp = match seen {
            Seen::File { stamp, .. } => Some(stamp),
            _ => None,
        };
        match parsed {
            Ok(entries) => {
                let entries = Entries::new(entries);
                tracing::info!(
                    people = entries.len(),
                    "re-read the HTTP token file after it changed"
                );
                self.entries = Ok(Arc::new(entries));
            }
            Err(error) => {
                tracing::error!(
                    "the HTTP token file cannot be used; refusing every request until it is \
                     fixed: {error}"
                );
                self.entries = Err(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::super::{TokenFile, add_token};
    use super::*;

    const SETTING: &str = "NOTES_HTTP_TOKENS_FILE";

    fn headers(token: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        let value = format!("Bearer {token}").parse().expect("header");
        headers.insert(http::header::AUTHORIZATION, value);
        headers
    }

    fn dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ask-first-reload-{}-{}",
            std::process::id(),
            super::super::super::auth::random_hex()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    /// Rewrites `path` in place (truncated, then written in two parts), as `>` or an editor
    /// writing over the file does.
    fn rewrite_in_place(path: &Path, text: &str) {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .expect("open");
        let (head, tail) = text.split_at(text.len() / 2);
        file.write_all(head.as_bytes()).expect("head");
        file.flush().expect("flush");
        file.write_all(tail.as_bytes()).expect("tail");
    }

    #[test]
    fn a_token_listed_before_and_after_in_place_rewrites_is_never_refused() {
        let dir = dir();
        let path = dir.join("tokens");
        let alice = add_token(&path, "alice", SETTING).expect("alice");
        let bob = add_token(&path, "bob", SETTING).expect("bob");
        let text = std::fs::read_to_string(&path).expect("text");
        let file = TokenFile::load(&path, SETTING).expect("loads");
        let stop = AtomicBool::new(false);
        let (checked, refused) = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    rewrite_in_place(&path, &text);
                }
            });
            let (mut checked, mut refused) = (0, 0);
            let until = Instant::now() + Duration::from_secs(3);
            while Instant::now() < until {
                // Due at once, every time: every check looks at the file.
                file.loaded.lock().expect("lock").checked -= RELOAD_CHECK;
                checked += 1;
                refused += usize::from(file.check(&headers(alice.token.expose())).is_err());
            }
            stop.store(true, Ordering::Relaxed);
            (checked, refused)
        });
        assert!(checked > 100, "{checked} checks");
        assert_eq!(refused, 0, "{refused} of {checked} checks refused alice");
        // The control: a rewrite that removes bob refuses him once it settled, and only him.
        let without_bob: String = text
            .lines()
            .filter(|line| !line.starts_with("bob "))
            .map(|line| format!("{line}\n"))
            .collect();
        rewrite_in_place(&path, &without_bob);
        let until = Instant::now() + Duration::from_secs(5);
        while file.check(&headers(bob.token.expose())).is_ok() {
            assert!(Instant::now() < until, "bob is still let in");
            std::thread::sleep(Duration::from_millis(20));
            file.loaded.lock().expect("lock").checked -= RELOAD_CHECK;
        }
        assert!(file.check(&headers(alice.token.expose())).is_ok());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_moment_empty_or_half_written_changes_nothing_and_a_lasting_one_is_acted_on() {
        let dir = dir();
        let path = dir.join("tokens");
        let alice = add_token(&path, "alice", SETTING).expect("alice");
        let text = std::fs::read_to_string(&path).expect("text");
        let file = TokenFile::load(&path, SETTING).expect("loads");
        let look = || {
            file.loaded.lock().expect("lock").checked -= RELOAD_CHECK;
            file.check(&headers(alice.token.expose()))
        };
        for moment in [String::new(), text[..text.len() / 2].to_owned()] {
            std::fs::write(&path, &moment).expect("moment");
            assert!(look().is_ok(), "refused on a moment's {moment:?}");
            std::fs::write(&path, &text).expect("whole again");
            std::thread::sleep(SETTLE);
            assert!(look().is_ok());
            assert!(look().is_ok());
        }
        // Lasting: empty revokes everyone; half-written (malformed) refuses with 503.
        std::fs::write(&path, "").expect("empty");
        assert!(look().is_ok(), "not yet settled");
        std::thread::sleep(SETTLE);
        let refused = look().expect_err("an empty file lists nobody");
        assert_eq!(refused.status(), http::StatusCode::UNAUTHORIZED);
        std::fs::write(&path, &text[..text.len() / 2]).expect("torn");
        let _ = look();
        std::thread::sleep(SETTLE);
        let refused = look().expect_err("a torn file fails closed");
        assert_eq!(refused.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        std::fs::write(&path, &text).expect("fixed");
        let _ = look();
        std::thread::sleep(SETTLE);
        assert!(look().is_ok(), "fixed, alice is let in again");
        std::fs::remove_dir_all(dir).ok();
    }
}
