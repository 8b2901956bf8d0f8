//! The enrolled passkeys: `<state dir>/passkeys.json`, one entry per passkey with the principal
//! it approves for. Only `passkeys add` (the operator, at the server's terminal) adds to it;
//! the approval page reads it on every use, so a passkey enrolled while the server runs counts
//! at once.

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

    /// Adds one passkey.
    pub(crate) fn add(&self, enrolled: Enrolled) -> Result<(), PasskeyFileError> {
        let mut all = self.load()?;
        all.push(enrolled);
        self.save(&all)
    }

    /// Records a use's new dynamic state on the passkey with `credential_id`.
    pub(crate) fn update(
        &self,
        credential_id: &str,
        dynamic_state: String,
    ) -> Result<(), PasskeyFileError> {
        let mut all = self.load()?;
        for entry in &mut all {
            if entry.credential_id == credential_id {
                entry.dynamic_state.clone_from(&dynamic_state);
            }
        }
        self.save(&all)
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
