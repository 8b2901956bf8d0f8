//! [`HttpError`]: why HTTP serving could not start or stopped.

use std::net::SocketAddr;

use super::{TokenFileError, oauth};

/// Why HTTP serving could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// A non-loopback address without a bearer secret.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without a bearer \
         secret: set {setting} (e.g. to the output of `openssl rand -hex 32`), or bind \
         127.0.0.1"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
        /// The bearer secret's setting.
        setting: String,
    },
    /// The no-authentication setting on a non-loopback address.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without \
         authentication ({no_auth}=true): unset {no_auth} and set {setting} (e.g. to the output \
         of `openssl rand -hex 32`), or bind 127.0.0.1"
    )]
    NoAuthNotLoopback {
        /// The address asked for.
        addr: SocketAddr,
        /// The no-authentication setting.
        no_auth: String,
        /// The bearer secret's setting.
        setting: String,
    },
    /// Both a bearer secret and the no-authentication setting.
    #[error(
        "{setting} and {no_auth}=true contradict each other: unset {no_auth} to require the \
         secret, or unset {setting} to serve without authentication"
    )]
    AuthConflict {
        /// The no-authentication setting.
        no_auth: String,
        /// The bearer secret's setting.
        setting: String,
    },
    /// The per-person token file cannot be used.
    #[error(transparent)]
    Tokens(#[from] TokenFileError),
    /// OAuth mode could not be set up.
    #[error(transparent)]
    OAuth(#[from] oauth::OAuthError),
    /// Mode `tokens` without its file.
    #[error(
        "{mode_setting}=tokens needs {setting}: the path of the file listing each person's \
         token hash"
    )]
    TokensFileMissing {
        /// The token file's setting.
        setting: String,
        /// The mode's setting.
        mode_setting: String,
    },
    /// A mode whose authenticator this server does not supply.
    #[error(
        "{setting}={mode} needs an authenticator this server does not have: choose `secret`, \
         `tokens`, `oauth` or `none` in {setting}"
    )]
    NoAuthenticator {
        /// The mode's setting.
        setting: String,
        /// The mode asked for.
        mode: String,
    },
    /// The server factory failed for the first session (it is called once at bind time, to
    /// learn the guard's principal rule).
    #[error("the MCP server could not be built: {source}")]
    Factory {
        /// What the factory said.
        #[source]
        source: std::io::Error,
    },
    /// The address could not be bound.
    #[error(
        "cannot listen on {addr}: {source}; is another process using the port, or is the \
         address not one of this machine's?"
    )]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("the HTTP server stopped with an error: {source}")]
    Serve {
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

impl HttpError {
    /// The process exit code for this error: 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}
