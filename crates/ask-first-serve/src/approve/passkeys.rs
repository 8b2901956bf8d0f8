//! The enrolled passkeys: `<state dir>/passkeys.json`, one entry per passkey with the principal
//! it approves for. Only `passkeys add` (the operator, at the server's terminal) adds to it, and
//! `passkeys remove` takes one out; the approval page reads it on every use, so a passkey
//! enrolled or removed while the server runs counts at once. Every change is a read, a change
//! and a whole-file rename under an advisory lock (`passkeys.json.lock`), so a removal and the
//! page's counter update never undo each other.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name in the state directory.
pub const PASSKEYS_FILE: &str = "passkeys.json";

/// One enrolled passkey.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Enrolled {
    /// The principal whose questions it approves (`local` on stdio, `token:alice`, ...).
    pub(crate) principal: String,
    /// What the operator called it.
    pub(crate) name: String,
    /// When it was enrolled, Unix seconds.
    pub(crate) added_at: u64,
    /// The credential's id, base64url.
    pub(crate) credential_id: String,
    /// The user handle it was registered with, base64url.
    pub(crate) user_handle: String,
    /// Its public key and what never changes (`webauthn_rp`'s encoding, base64url). No secret:
    /// the private key never leaves the authenticator.
    pub(crate) static_state: String,
    /// Its signature counter and backup state, updated after each use, base64url.
    pub(crate) dynamic_state: String,
    /// The AAGUID its authenticator reported at enrolment (its model, as it says; a UUID),
    /// where `<PREFIX>_PASSKEY_AAGUIDS` lists the ones accepted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) aaguid: String,
}

/// One enrolled passkey, as `passkeys list` shows it (nothing secret: the private key never
/// leaves the authenticator).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PasskeyInfo {
    /// The principal whose questions it approves (`local`, `token:alice`, ...).
    pub principal: String,
    /// What the operator called it at enrolment (`--name`).
    pub name: String,
    /// The credential's id, base64url.
    pub credential_id: String,
    /// The AAGUID its authenticator reported at enrolment (its model, as it says), when known.
    pub aaguid: Option<String>,
    /// When it was enrolled, Unix seconds.
    pub added_at: u64,
}

impl PasskeyInfo {
    /// The credential id's first characters, enough to tell passkeys apart and to name one
    /// to `passkeys remove`.
    pub fn short_id(&self) -> &str {
        let end = self
            .credential_id
            .char_indices()
            .nth(SHORT_ID)
            .map_or(self.credential_id.len(), |(at, _)| at);
        &self.credential_id[..end]
    }
}

/// How many characters of a credential id [`PasskeyInfo::short_id`] shows.
const SHORT_ID: usize = 12;

impl From<&Enrolled> for PasskeyInfo {
    fn from(entry: &Enrolled) -> Self {
        Self {
            principal: entry.principal.clone(),
            name: entry.name.clone(),
            credential_id: entry.credential_id.clone(),
            aaguid: (!entry.aaguid.is_empty()).then(|| entry.aaguid.clone()),
            added_at: entry.added_at,
        }
    }
}

/// Why `passkeys remove` removed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemovePasskeyError {
    /// No passkey of the principal has that name or id.
    #[error(
        "no passkey of `{principal}` is named `{which}` or has an id starting so; {principal}'s passkeys: {enrolled} (see `passkeys list`)"
    )]
    NotFound {
        /// The principal.
        principal: String,
        /// The name or id asked for.
        which: String,
        /// The principal's passkeys, by name and short id, or `none`.
        enrolled: String,
    },
    /// Several of the principal's passkeys have that name or id prefix.
    #[error(
        "{count} passkeys of `{principal}` match `{which}`: {matching}; name one by its id (see `passkeys list`)"
    )]
    Ambiguous {
        /// The principal.
        principal: String,
        /// The name or id asked for.
        which: String,
        /// How many match.
        count: usize,
        /// The ones that match, by name and short id.
        matching: String,
    },
    /// The file could not be read or written.
    #[error(transparent)]
    File(#[from] PasskeyFileError),
}

/// Why the passkey file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PasskeyFileError {
    /// It could not be read or written.
    #[error(
        "the passkey file {path} cannot be used ({source}); check the state directory ({setting})"
    )]
    Io {
        /// The file.
        path: PathBuf,
        /// The state directory's setting.
        setting: String,
        /// What failed.
        source: std::io::Error,
    },
    /// It is not what `passkeys add` writes.
    #[error(
        "the passkey file {path} is damaged ({reason}); move it away and enrol the passkeys again with `passkeys add`"
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The passkey file of one state directory.
#[derive(Debug, Clone)]
pub(crate) struct PasskeyFile {
    path: PathBuf,
    setting: String,
}

impl PasskeyFile {
    pub(crate) fn new(state_dir: &Path, setting: &str) -> Self {
        Self {
            path: state_dir.join(PASSKEYS_FILE),
            setting: setting.to_owned(),
        }
    }

    /// The state directory's setting.
    pub(crate) fn setting(&self) -> &str {
        &self.setting
    }

    fn io(&self, source: std::io::Error) -> PasskeyFileError {
        PasskeyFileError::Io {
            path: self.path.clone(),
            setting: self.setting.clone(),
            source,
        }
    }

    /// Every enrolled passkey; none when the file does not exist.
    pub(crate) fn load(&self) -> Result<Vec<Enrolled>, PasskeyFileError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        serde_json::from_str(&text).map_err(|e| PasskeyFileError::Damaged {
            path: self.path.clone(),
            reason: e.to_string(),
        })
    }

    /// Whether any passkey is enrolled (an unreadable file counts as none).
    pub(crate) fn any(&self) -> bool {
        self.load().is_ok_and(|all| !all.is_empty())
    }

    /// Whether a passkey is enrolled for `principal` (an unreadable file counts as none).
    pub(crate) fn any_for(&self, principal: &str) -> bool {
        self.load()
            .is_ok_and(|all| all.iter().any(|entry| entry.principal == principal))
    }

    /// Adds one passkey.
    pub(crate) fn add(&self, enrolled: Enrolled) -> Result<(), PasskeyFileError> {
        self.change(|all| {
            all.push(enrolled);
            Ok::<_, PasskeyFileError>(())
        })
    }

    /// Removes the passkey of `principal` whose credential id is `which`, else whose name is
    /// `which`, else whose credential id starts with `which`; exactly one must match.
    pub(crate) fn remove(
        &self,
        principal: &str,
        which: &str,
    ) -> Result<PasskeyInfo, RemovePasskeyError> {
        self.change(|all| {
            let theirs = |entry: &&Enrolled| entry.principal == principal;
            let tests: [&dyn Fn(&Enrolled) -> bool; 3] =
                [&|e| e.credential_id == which, &|e| e.name == which, &|e| {
                    !which.is_empty() && e.credential_id.starts_with(which)
                }];
            let shown = |entries: &[&Enrolled]| {
                let names: Vec<String> = entries
                    .iter()
                    .map(|e| {
                        let info = PasskeyInfo::from(*e);
                        format!("`{}` ({})", info.name, info.short_id())
                    })
                    .collect();
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            };
            for test in tests {
                let matching: Vec<&Enrolled> =
                    all.iter().filter(theirs).filter(|e| test(e)).collect();
                match matching.len() {
                    0 => continue,
                    1 => {
                        let id = matching[0].credential_id.clone();
                        let removed = PasskeyInfo::from(matching[0]);
                        all.retain(|e| !(e.principal == principal && e.credential_id == id));
                        return Ok(removed);
                    }
                    count => {
                        return Err(RemovePasskeyError::Ambiguous {
                            principal: principal.to_owned(),
                            which: which.to_owned(),
                            count,
                            matching: shown(&matching),
                        });
                    }
                }
            }
            let enrolled: Vec<&Enrolled> = all.iter().filter(theirs).collect();
            Err(RemovePasskeyError::NotFound {
                principal: principal.to_owned(),
                which: which.to_owned(),
                enrolled: shown(&enrolled),
            })
        })
    }

    /// Records a use's new dynamic state on the passkey with `credential_id`.
    pub(crate) fn update(
        &self,
        credential_id: &str,
        dynamic_state: String,
    ) -> Result<(), PasskeyFileError> {
        self.change(|all| {
            for entry in all.iter_mut() {
                if entry.credential_id == credential_id {
                    entry.dynamic_state.clone_from(&dynamic_state);
                }
            }
            Ok::<_, PasskeyFileError>(())
        })
    }

    /// Reads the file, lets `edit` change the entries and writes them back, all under the
    /// file's lock; nothing is written when `edit` fails.
    fn change<T, E: From<PasskeyFileError>>(
        &self,
        edit: impl FnOnce(&mut Vec<Enrolled>) -> Result<T, E>,
    ) -> Result<T, E> {
        let _lock = self.lock()?;
        let mut all = self.load()?;
        let out = edit(&mut all)?;
        self.save(&all)?;
        Ok(out)
    }

    /// The exclusive advisory lock on `passkeys.json.lock`, held until dropped.
    fn lock(&self) -> Result<std::fs::File, PasskeyFileError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(self.path.with_extension("json.lock"))
            .map_err(|e| self.io(e))?;
        file.lock().map_err(|e| self.io(e))?;
        Ok(file)
    }

    /// Writes the whole file: a temporary file beside it, then renamed over it (mode 0600).
    fn save(&self, all: &[Enrolled]) -> Result<(), PasskeyFileError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let text = serde_json::to_string_pretty(all).map_err(|e| PasskeyFileError::Damaged {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        let temp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&temp).and_then(|mut file| {
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            file.sync_all()
        });
        written
            .and_then(|()| std::fs::rename(&temp, &self.path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&temp);
                self.io(e)
            })
    }
}

/// The passkeys enrolled in `state_dir` (`state_setting` names that setting in errors), in the
/// order they were enrolled: what `passkeys list` prints. None when nothing was enrolled.
pub fn list_passkeys(
    state_dir: &Path,
    state_setting: &str,
) -> Result<Vec<PasskeyInfo>, PasskeyFileError> {
    let all = PasskeyFile::new(state_dir, state_setting).load()?;
    Ok(all.iter().map(PasskeyInfo::from).collect())
}

/// Removes one passkey of `principal` from `state_dir`: the one whose credential id is
/// `which`, else whose name is `which`, else whose credential id starts with `which` (the short
/// id `passkeys list` prints). Exactly one must match; a running server refuses it from its
/// next use on (it reads the file on every use). The removed passkey is returned.
pub fn remove_passkey(
    state_dir: &Path,
    state_setting: &str,
    principal: &str,
    which: &str,
) -> Result<PasskeyInfo, RemovePasskeyError> {
    PasskeyFile::new(state_dir, state_setting).remove(principal, which)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(principal: &str, name: &str, id: &str) -> Enrolled {
        Enrolled {
            principal: principal.to_owned(),
            name: name.to_owned(),
            added_at: 1_700_000_000,
            credential_id: id.to_owned(),
            user_handle: "u".to_owned(),
            static_state: "s".to_owned(),
            dynamic_state: "d".to_owned(),
            aaguid: String::new(),
        }
    }

    fn dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ask-first-passkeys-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn passkeys_are_listed_and_removed_by_name_or_id_for_one_principal() {
        let dir = dir("remove");
        let file = PasskeyFile::new(&dir, "X_STATE_DIR");
        assert!(list_passkeys(&dir, "X_STATE_DIR").expect("list").is_empty());
        assert!(!file.any() && !file.any_for("local"));
        for e in [
            entry("local", "laptop", "AAAAbbbbCCCCdddd1111"),
            entry("local", "key", "AAAAbbbbCCCCdddd2222"),
            entry("local", "key", "ZZZZ0000"),
            entry("token:alice", "laptop", "QQQQ"),
        ] {
            file.add(e).expect("add");
        }
        assert!(file.any_for("token:alice") && !file.any_for("token:bob"));
        let listed = list_passkeys(&dir, "X_STATE_DIR").expect("list");
        assert_eq!(listed.len(), 4);
        assert_eq!(listed[0].short_id(), "AAAAbbbbCCCC");
        assert_eq!(listed[0].aaguid, None);
        // Two of local's are named `key`: the name alone is not enough.
        let twice = remove_passkey(&dir, "X_STATE_DIR", "local", "key").expect_err("ambiguous");
        assert!(
            matches!(twice, RemovePasskeyError::Ambiguous { count: 2, .. }),
            "{twice}"
        );
        // An id prefix shared by two is refused too; the whole id is not.
        assert!(remove_passkey(&dir, "X_STATE_DIR", "local", "AAAAbbbb").is_err());
        let removed =
            remove_passkey(&dir, "X_STATE_DIR", "local", "AAAAbbbbCCCCdddd2222").expect("by id");
        assert_eq!(removed.name, "key");
        // Now one `key` is left: the name names it.
        let removed = remove_passkey(&dir, "X_STATE_DIR", "local", "key").expect("by name");
        assert_eq!(removed.credential_id, "ZZZZ0000");
        // alice's `laptop` is hers: removing local's leaves it.
        let removed = remove_passkey(&dir, "X_STATE_DIR", "local", "laptop").expect("by name");
        assert_eq!(removed.principal, "local");
        let missing = remove_passkey(&dir, "X_STATE_DIR", "local", "laptop").expect_err("gone");
        assert!(
            missing.to_string().contains("local's passkeys: none"),
            "{missing}"
        );
        let left = list_passkeys(&dir, "X_STATE_DIR").expect("list");
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].principal, "token:alice");
        assert!(!file.any_for("local") && file.any());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_counter_update_keeps_a_removal() {
        let dir = dir("update");
        let file = PasskeyFile::new(&dir, "X_STATE_DIR");
        file.add(entry("local", "a", "A1")).expect("add");
        file.add(entry("local", "b", "B1")).expect("add");
        remove_passkey(&dir, "X_STATE_DIR", "local", "a").expect("remove");
        file.update("B1", "d2".to_owned()).expect("update");
        file.update("A1", "d3".to_owned())
            .expect("update of a removed passkey");
        let all = file.load().expect("load");
        assert_eq!(all.len(), 1);
        assert_eq!(
            (all[0].credential_id.as_str(), all[0].dynamic_state.as_str()),
            ("B1", "d2")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
