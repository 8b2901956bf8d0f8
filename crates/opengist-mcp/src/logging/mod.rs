//! Logging to stderr.
//!
//! THE RULE, for every module of this crate: never log an access token, a bearer secret, a seal
//! key, the text of a confirmation question, a person's answer, or gist content (titles,
//! descriptions, file names and file contents included). Log what happened and server-side
//! facts: a tool name, a gist id, a status code, a count, a duration. On stdio, stdout carries
//! the MCP protocol, so nothing here ever writes to stdout.
//!
//! The filter comes from `RUST_LOG` (default `DEFAULT_FILTER`). Colours are used only when
//! stderr is a terminal.
//!
//! The MCP SDK (rmcp) logs every message it sends and receives at `debug`/`trace`, and session
//! ids at `info`: questions, answers, `requestState` seals, confirm tokens, gist titles, file
//! names and contents. So whatever `RUST_LOG` says, the SDK's events below `warn` are dropped,
//! unless the protocol-trace switch `PROTOCOL_TRACE_VAR` is set: then they are logged, after
//! a loud warning, and even then every line goes through `redact`, which blanks seals,
//! confirm tokens, dialog answers and session ids (it runs on every line, switch or not).

use std::io::IsTerminal as _;

use tracing::Level;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{FilterExt as _, filter_fn};
use tracing_subscriber::fmt;
use tracing_subscriber::prelude::*;

mod redact;

/// The switch that lets the SDK's message logging through (still redacted): `1`, `true`, `yes`
/// or `on`. Unset, empty, `0`, `false`, `no` or `off`: off.
pub(crate) const PROTOCOL_TRACE_VAR: &str = "OPENGIST_MCP_PROTOCOL_TRACE";

/// The crates whose message logging is held back below `warn` without the protocol-trace
/// switch: the MCP SDK logs whole protocol messages and session ids.
const SDK_TARGETS: [&str; 2] = ["rmcp", "rmcp_macros"];

fn is_sdk(target: &str) -> bool {
    SDK_TARGETS.iter().any(|sdk| {
        target
            .strip_prefix(sdk)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Reads the protocol-trace switch's value.
pub(crate) fn parse_protocol_trace(value: Option<&str>) -> Result<bool, LoggingError> {
    let Some(value) = value else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        _ => Err(LoggingError::InvalidProtocolTrace {
            value: value.to_owned(),
        }),
    }
}

/// The filter used when `RUST_LOG` is unset, empty or invalid.
pub(crate) const DEFAULT_FILTER: &str = "opengist_mcp=info,ask_first_serve=info,warn";

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// Something else already installed a global subscriber.
    #[error("logging was already set up in this process; call logging::init once, first in main")]
    AlreadyInitialized,
    /// The protocol-trace switch has a value that is neither on nor off.
    #[error(
        "OPENGIST_MCP_PROTOCOL_TRACE={value:?} is not a switch: set it to 1 (log the MCP SDK's \
         protocol messages, redacted) or 0 / unset it (the default)"
    )]
    InvalidProtocolTrace {
        /// The value found.
        value: String,
    },
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
/// back to `DEFAULT_FILTER` and says so in a warning once logging is up.
pub fn init(rust_log: Option<&str>) -> Result<(), LoggingError> {
    init_with(rust_log, false)
}

/// [`init`], with the SDK's protocol messages let through (redacted) when `protocol_trace`.
pub(crate) fn init_with(rust_log: Option<&str>, protocol_trace: bool) -> Result<(), LoggingError> {
    let (filter, replaced) = filter(rust_log);
    let sdk_cap = filter_fn(move |meta| {
        protocol_trace || !is_sdk(meta.target()) || *meta.level() <= Level::WARN
    });
    let layer = fmt::layer()
        .with_writer(redact::RedactingStderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(filter.and(sdk_cap));
    tracing_subscriber::registry()
        .with(layer)
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialized)?;
    if protocol_trace {
        tracing::warn!(
            "PROTOCOL TRACE IS ON ({PROTOCOL_TRACE_VAR}): the MCP SDK's messages are logged at \
             the levels RUST_LOG allows, including questions, gist titles, file names and \
             contents; seals, confirm tokens, dialog answers and session ids are redacted. Do \
             not share these logs; unset {PROTOCOL_TRACE_VAR} to turn it off"
        );
    }
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
/// Also reads `PROTOCOL_TRACE_VAR`.
pub fn init_from_env() -> Result<(), LoggingError> {
    let protocol_trace = match std::env::var(PROTOCOL_TRACE_VAR) {
        Ok(value) => parse_protocol_trace(Some(&value))?,
        Err(std::env::VarError::NotPresent) => false,
        Err(std::env::VarError::NotUnicode(value)) => {
            return Err(LoggingError::InvalidProtocolTrace {
                value: value.to_string_lossy().into_owned(),
            });
        }
    };
    match std::env::var("RUST_LOG") {
        Ok(value) => init_with(Some(&value), protocol_trace),
        Err(std::env::VarError::NotPresent) => init_with(None, protocol_trace),
        // Not UTF-8: certainly not a valid filter; use a string that fails to parse.
        Err(std::env::VarError::NotUnicode(_)) => init_with(Some("="), protocol_trace),
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

    #[test]
    fn the_sdk_is_told_apart_by_target() {
        assert!(is_sdk("rmcp"));
        assert!(is_sdk("rmcp::service"));
        assert!(is_sdk(
            "rmcp::transport::streamable_http_server::session::local"
        ));
        assert!(!is_sdk("rmcpx"));
        assert!(!is_sdk("opengist_mcp::http"));
    }

    #[test]
    fn the_protocol_trace_switch_is_on_off_or_an_error() {
        for off in [
            None,
            Some(""),
            Some("0"),
            Some("false"),
            Some("OFF"),
            Some(" no "),
        ] {
            assert!(!parse_protocol_trace(off).expect("off"), "{off:?}");
        }
        for on in ["1", "true", "Yes", "on"] {
            assert!(parse_protocol_trace(Some(on)).expect("on"), "{on}");
        }
        let error = parse_protocol_trace(Some("verbose")).expect_err("not a switch");
        assert!(
            error
                .to_string()
                .contains("OPENGIST_MCP_PROTOCOL_TRACE=\"verbose\"")
        );
    }
}
