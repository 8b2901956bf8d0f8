//! Enrolment through the running HTTP server, for pages served at a public URL: a passkey is
//! bound to the host it was made on, so one for `https://mcp.example.com` must be enrolled
//! there, not on `passkeys add`'s own `localhost` listener.
//!
//! `passkeys add` (on the server's machine, with the server's settings) writes an invitation
//! into the state directory, `enrolments/<SHA-256 of the code>.json` (principal, name, expiry;
//! mode 0600), and prints `<public URL>/enrol/<code>`. The server serves that link while the
//! invitation is there and unexpired; the first passkey enrolled through it takes the file
//! (renamed, so it works once even across processes) and the server writes the outcome beside
//! it, which the command waits for. Only someone who can write the state directory invites:
//! nothing a model can call reaches it.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_first_core::RecordId;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::enrol::{self, EnrolState, Enrolment};
use super::passkeys::PasskeyFile;
use super::site::{self, LOOPBACK_HOST, PublicBase};
use super::{Inner, html, now};

/// The folder of invitations in the state directory.
const FOLDER: &str = "enrolments";
/// The most invitations a server keeps open in memory at once.
const MAX_OPEN: usize = 64;

/// An invitation as `passkeys add` writes it.
#[derive(Debug, Serialize, Deserialize)]
struct Invitation {
    principal: String,
    name: String,
    expires_at: u64,
}

/// The invitations a server has opened pages for, by code.
#[derive(Default)]
pub(crate) struct Invites(Mutex<HashMap<String, Arc<Enrolment>>>);

fn file_of(dir: &Path, code: &str) -> PathBuf {
    let digest = Sha256::digest(code.as_bytes());
    let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(FOLDER).join(format!("{name}.json"))
}

/// The public base `passkeys add` enrols through, when the server's pages are served at one
/// whose passkeys `localhost` cannot make: `<PREFIX>_PUBLIC_URL` when set, else the OAuth
/// resource's origin when its host is not `localhost`. `None`: enrol on the own listener.
pub(crate) fn server_base(prefix: &str) -> Option<Result<PublicBase, String>> {
    let var = |name: String| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let setting = format!("{prefix}_PUBLIC_URL");
    if let Some(url) = var(setting.clone()) {
        return Some(site::public_base(Some(url.trim()), None, None, &setting));
    }
    // The resource's origin, where the server serves the pages when it can hold passkeys (see
    // `site::public_base`); else (localhost, an IP address) the own listener's `localhost`.
    let resource = var(format!("{prefix}_OAUTH_RESOURCE"))?;
    match site::public_base(None, Some(resource.trim()), None, &setting) {
        Ok(base) if base.rp != LOOPBACK_HOST => Some(Ok(base)),
        _ => None,
    }
}

/// Takes the invitation `file` for one enrolment: `false` when it is gone (used, or expired).
pub(crate) fn claim(file: &Path) -> bool {
    std::fs::rename(file, file.with_extension("taken")).is_ok()
}

/// Writes the outcome of the enrolment through `file` for `passkeys add`: the AAGUID its
/// authenticator reported when enrolled, else what failed.
pub(crate) fn report(file: &Path, outcome: Result<&str, &str>) {
    let text = match outcome {
        Ok(aaguid) => format!("enrolled {aaguid}"),
        Err(error) => format!("failed {error}"),
    };
    if let Err(error) = std::fs::write(file.with_extension("done"), text) {
        tracing::warn!(%error, "the enrolment's outcome could not be written");
    }
}

/// `passkeys add` through the server at `base`: writes the invitation, prints the link and
/// waits for the outcome or the expiry. The process exit code.
pub(crate) async fn through_server(
    server: &str,
    base: &PublicBase,
    dir: &Path,
    principal: &str,
    name: &str,
    valid: Duration,
) -> i32 {
    let code = RecordId::random().to_string();
    let file = file_of(dir, &code);
    let invitation = Invitation {
        principal: principal.to_owned(),
        name: name.to_owned(),
        expires_at: now() + valid.as_secs(),
    };
    if let Err(error) = write_private(&file, &invitation) {
        eprintln!(
            "cannot write the invitation {}: {error}; check the state directory",
            file.display()
        );
        return 1;
    }
    println!(
        "Open this link within {} to enrol a passkey that approves the questions of `{principal}` on {server}'s approval page at {} (it works once; {server} must be serving HTTP there):\n{}/enrol/{code}",
        enrol::minutes(valid),
        base.origin,
        base.origin,
    );
    let _ = std::io::stdout().flush();
    let done = file.with_extension("done");
    let deadline = Instant::now() + valid;
    loop {
        if let Ok(outcome) = std::fs::read_to_string(&done) {
            let _ = std::fs::remove_file(&done);
            let _ = std::fs::remove_file(file.with_extension("taken"));
            if let Some(aaguid) = outcome.strip_prefix("enrolled ") {
                println!(
                    "Enrolled passkey `{name}` for `{principal}` in {} (its authenticator reports the AAGUID {aaguid}).",
                    dir.join(super::PASSKEYS_FILE).display()
                );
                return 0;
            }
            let why = outcome.strip_prefix("failed ").unwrap_or(&outcome);
            eprintln!("The passkey could not be saved: {why}");
            return 1;
        }
        // Past the expiry the invitation is withdrawn, unless the server has just taken it.
        if Instant::now() >= deadline && std::fs::remove_file(&file).is_ok() {
            eprintln!("The enrolment link expired: no passkey was enrolled.");
            return 1;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn write_private(file: &Path, invitation: &Invitation) -> std::io::Result<()> {
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(file)?;
    out.write_all(&serde_json::to_vec(invitation).map_err(std::io::Error::other)?)?;
    out.sync_all()
}

impl Inner {
    /// The enrolment of invitation `code`: the one already opened, else read from the state
    /// directory while unexpired. Only where the pages are mounted on the HTTP server.
    fn invitation(&self, code: &str, open: bool) -> Option<Arc<Enrolment>> {
        self.mounted.get()?;
        let mut invites = match self.invites.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        invites.retain(|_, e| Instant::now() < e.expires);
        if let Some(found) = invites.get(code) {
            return Some(found.clone());
        }
        if !open || invites.len() >= MAX_OPEN || RecordId::parse(code).is_none() {
            return None;
        }
        let file = file_of(&self.state_dir, code);
        let text = std::fs::read(&file).ok()?;
        let invitation: Invitation = serde_json::from_slice(&text).ok()?;
        let left = invitation.expires_at.checked_sub(now())?;
        let enrolment = Arc::new(Enrolment {
            server: self.server.clone(),
            code: code.to_owned(),
            principal: invitation.principal,
            name: invitation.name,
            expires: Instant::now() + Duration::from_secs(left),
            file: PasskeyFile::new(&self.state_dir, self.passkeys.setting()),
            claim: Some(file),
            aaguids: self.aaguids.clone(),
            state: Mutex::new(EnrolState::default()),
            done: tokio::sync::Notify::new(),
        });
        invites.insert(code.to_owned(), enrolment.clone());
        Some(enrolment)
    }
}

fn none_here() -> Response {
    html::text(StatusCode::NOT_FOUND, "There is no enrolment here.")
}

pub(crate) async fn show(
    State(inner): State<Arc<Inner>>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    match inner.invitation(&code, true) {
        Some(enrolment) => enrol::show(
            &enrolment,
            inner.origin(&headers),
            &code,
            &headers,
            inner.secure(),
        ),
        None => none_here(),
    }
}

pub(crate) async fn begin(
    State(inner): State<Arc<Inner>>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match inner.invitation(&code, false) {
        Some(e) => enrol::start(
            &e,
            inner.origin(&headers),
            inner.rp(),
            &code,
            &headers,
            &body,
        ),
        None => none_here(),
    }
}

pub(crate) async fn finish(
    State(inner): State<Arc<Inner>>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match inner.invitation(&code, false) {
        Some(e) => {
            let origin = inner.origin(&headers);
            enrol::complete(&e, origin, inner.rp(), &code, &headers, &body)
        }
        None => none_here(),
    }
}
