//! How long the guard waits for a person: `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (and its flag).
//! `ELICITATION` and the seal key are the framework's serving settings (see `serving`).

use std::time::Duration;

use super::error::ConfigError;
use super::var::{self, Source};

/// Default of `OPENGIST_MCP_DIALOG_TIMEOUT_SECS`.
pub const DEFAULT_DIALOG_TIMEOUT_SECS: u64 = 600;
/// Largest accepted `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (a day).
pub const MAX_DIALOG_TIMEOUT_SECS: u64 = 86_400;

/// Reads how long a confirmation dialog may wait for a person.
pub(super) fn dialog_timeout(source: &Source<'_>) -> Result<Duration, ConfigError> {
    Ok(Duration::from_secs(source.number(
        var::OPENGIST_MCP_DIALOG_TIMEOUT_SECS,
        1,
        MAX_DIALOG_TIMEOUT_SECS,
        DEFAULT_DIALOG_TIMEOUT_SECS,
    )?))
}
