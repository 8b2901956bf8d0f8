//! How long the guard waits for a person: `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (and its flag);
//! which tools take only the approval page's yes: `OPENGIST_MCP_VERIFIED_TOOLS`.
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

/// Reads the tools that run only after the person's yes on the approval page with a passkey
/// (`OPENGIST_MCP_VERIFIED_TOOLS`, comma-separated); a name that is not one of this server's
/// tools is left out with a warning.
pub(super) fn verified_tools(source: &Source<'_>, warnings: &mut Vec<String>) -> Vec<String> {
    let Some(list) = source.get(var::OPENGIST_MCP_VERIFIED_TOOLS) else {
        return Vec::new();
    };
    let mut tools = Vec::new();
    for name in list
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        if crate::catalog::entry(name).is_some() {
            tools.push(name.to_owned());
        } else {
            warnings.push(format!(
                "{}: `{name}` is not a tool of this server; it is ignored",
                var::OPENGIST_MCP_VERIFIED_TOOLS
            ));
        }
    }
    tools
}
