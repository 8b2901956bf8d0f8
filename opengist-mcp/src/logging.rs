//! Logging to stderr.
//!
//! THE RULE, for every module of this crate: never log an access token, a bearer secret, a seal
//! key, the text of a confirmation question, a person's answer, or gist content (titles,
//! descriptions, file names and file contents included). Log what happened and server-side
//! facts: a tool name, a gist id, a status code, a count, a duration. On stdio, stdout carries
//! the MCP protocol, so nothing here ever writes to stdout.
//!
//! The filter comes from `RUST_LOG` (default [`DEFAULT_FILTER`]). Colours are used only when
//! stderr is a terminal.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// The filter used when `RUST_LOG` is unset, empty or invalid.
pub const DEFAULT_FILTER: &str = "opengist_mcp=info,warn";

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// Something else already installed a global subscriber.
    #[error("logging was already set up in this process; call logging::init once, first in main")]
    AlreadyInitialized,
}

impl LoggingError {
    /// The process exit code for this error: 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}

/// The filter for a `RUST_LOG` value, and whether that value had to be replaced by the default
/// (it was not a valid filter).
pub fn filter(rust_log: Option<&str>) -> (EnvFilter, bool) {
    match rust_log.map(str::trim).filter(|value| !value.is_empty()) {
        None => (EnvFilter::new(DEFAULT_FILTER), false),
        Some(directives) => match EnvFilter::try_new(directives) {
            Ok(filter) => (filter, false),
            Err(_) => (EnvFilter::new(DEFAULT_FILTER), true),
        },
    }
}

/// Installs the global subscriber: formatted lines on stderr, filtered by `rust_log` (pass the
/// value of `RUST_LOG`), no ANSI colours unless stderr is a terminal. An invalid filter falls
/// back to [`DEFAULT_FILTER`] and says so in a warning once logging is up.
pub fn init(rust_log: Option<&str>) -> Result<(), LoggingError> {
    let (filter, replaced) = filter(rust_log);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialized)?;
    if replaced {
        tracing::warn!(
            default = DEFAULT_FILTER,
            "RUST_LOG is not a valid log filter (see the tracing-subscriber EnvFilter syntax); \
             using the default"
        );
    }
    Ok(())
}

/// [`init`] with the process's `RUST_LOG` (a value that is not UTF-8 counts as invalid).
pub fn init_from_env() -> Result<(), LoggingError> {
    match std::env::var("RUST_LOG") {
        Ok(value) => init(Some(&value)),
        Err(std::env::VarError::NotPresent) => init(None),
        // Not UTF-8: certainly not a valid filter; use a string that fails to parse.
        Err(std::env::VarError::NotUnicode(_)) => init(Some("=")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_invalid_filters() {
        assert!(!filter(None).1);
        assert!(!filter(Some("")).1);
        assert!(!filter(Some("debug")).1);
        assert!(!filter(Some("opengist_mcp=trace,rmcp=warn")).1);
        assert!(filter(Some("=")).1);
        assert!(filter(Some("opengist_mcp=notalevel")).1);
        assert_eq!(
            filter(None).0.to_string(),
            EnvFilter::new(DEFAULT_FILTER).to_string()
        );
    }
}
