//! Who may use the HTTP endpoint: the credential check behind the gate's Host and Origin
//! checks, as one small abstraction ([`Authenticator`]) so that other ways of authenticating
//! (per-person tokens, OAuth) can slot in beside the ones here.
//!
//! How [`bind_http`](crate::http::bind_http) chooses, in this order:
//! 1. the bearer-secret setting is set: every request needs `Authorization: Bearer <secret>`
//!    ([`SharedSecret`]);
//! 2. the no-authentication setting is `true` (loopback only): nothing is checked
//!    ([`Anonymous`]), and a start-up line on stderr says so;
//! 3. neither, on a loopback address: the server makes up a random secret for this run
//!    ([`mint_secret`]), prints it once on stderr with a ready client configuration, and
//!    requires it as in 1. It is never logged (tracing never sees it) and never written
//!    anywhere else;
//! 4. neither, on another address: refused at start.
//!
//! Host and Origin checks stop web pages in a browser, not local processes: without a secret,
//! any process of any local user that can reach the port acts with the server's full rights.

use http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::settings::Secret;

/// Why a request's credentials were refused: a status and a message for the caller.
pub(crate) struct AuthRefusal<'a> {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: &'a str,
}

/// Checks one request's credentials. The gate calls it after the Host and Origin checks.
pub(crate) trait Authenticator: Send + Sync + 'static {
    /// `Ok` when the request may go on.
    fn authenticate(&self, headers: &HeaderMap) -> Result<(), AuthRefusal<'_>>;
}

/// One bearer secret shared by every client (configured, or made up at start).
pub(crate) struct SharedSecret {
    /// SHA-256 of the secret: comparing digests keeps the comparison's time independent of
    /// the secret's length too.
    digest: [u8; 32],
    refused: String,
}

impl SharedSecret {
    /// `refused` is the message a request without the secret gets (naming where to find it).
    pub(crate) fn new(secret: &Secret, refused: String) -> Self {
        Self {
            digest: Sha256::digest(secret.expose().as_bytes()).into(),
            refused,
        }
    }
}

impl Authenticator for SharedSecret {
    fn authenticate(&self, headers: &HeaderMap) -> Result<(), AuthRefusal<'_>> {
        let presented = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| token.trim_start())
            });
        let ok = presented.is_some_and(|token| {
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            bool::from(digest.ct_eq(&self.digest))
        });
        if ok {
            return Ok(());
        }
        tracing::warn!("refused an HTTP request without the right bearer secret");
        Err(AuthRefusal {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: &self.refused,
        })
    }
}

/// No authentication: only when the operator asked for it, on loopback.
pub(crate) struct Anonymous;

impl Authenticator for Anonymous {
    fn authenticate(&self, _headers: &HeaderMap) -> Result<(), AuthRefusal<'_>> {
        Ok(())
    }
}

/// A random bearer secret for one run: 32 bytes from the operating system's generator, as
/// 64 hex characters.
pub(crate) fn mint_secret() -> Secret {
    use std::fmt::Write;
    let bytes: [u8; 32] = rand::random();
    let mut text = String::with_capacity(64);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    Secret::new(text)
}
