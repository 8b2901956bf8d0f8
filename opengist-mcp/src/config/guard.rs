//! How the guard asks: `ELICITATION`, `OPENGIST_MCP_SEAL_KEY` and
//! `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (and their flags).

use std::time::Duration;

use ask_first::SealKey;
use ask_first_serve::settings::{self as serving, SealKeyProblem};

use super::error::ConfigError;
use super::var::{self, Source};

/// Default of `OPENGIST_MCP_DIALOG_TIMEOUT_SECS`.
pub const DEFAULT_DIALOG_TIMEOUT_SECS: u64 = 600;
/// Largest accepted `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (a day).
pub const MAX_DIALOG_TIMEOUT_SECS: u64 = 86_400;

/// The setting's variable and flag, as messages name them.
const DIALOG_TIMEOUT_SETTING: &str = "OPENGIST_MCP_DIALOG_TIMEOUT_SECS (--dialog-timeout-secs)";

/// The guard part of [`super::Config`].
pub(super) struct GuardSettings {
    pub(super) elicitation: bool,
    pub(super) seal_key: SealKey,
    pub(super) seal_key_configured: bool,
    pub(super) dialog_timeout: Duration,
}

impl GuardSettings {
    /// Reads the guard's settings, adding the warnings they call for.
    pub(super) fn parse(
        source: &Source<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<Self, ConfigError> {
        let args = source.args;
        // Strict on purpose: an empty value is refused too, exactly as the guard crate says.
        let elicitation =
            ask_first_core::parse_elicitation(source.exact(var::ELICITATION).as_deref())?;

        if args.seal_key.is_some() {
            warnings.push(
                "--seal-key is visible to every user of this machine (ps); prefer \
                 OPENGIST_MCP_SEAL_KEY"
                    .to_owned(),
            );
        }
        let (seal_key, seal_key_configured) =
            match source.flag_or_env(&args.seal_key, var::OPENGIST_MCP_SEAL_KEY) {
                Some(raw) => (parse_seal_key(&raw)?, true),
                None => (SealKey::random(), false),
            };

        let dialog_timeout = Duration::from_secs(source.number(
            &args.dialog_timeout_secs,
            var::OPENGIST_MCP_DIALOG_TIMEOUT_SECS,
            DIALOG_TIMEOUT_SETTING,
            1,
            MAX_DIALOG_TIMEOUT_SECS,
            DEFAULT_DIALOG_TIMEOUT_SECS,
        )?);

        Ok(Self {
            elicitation,
            seal_key,
            seal_key_configured,
            dialog_timeout,
        })
    }
}

/// Hex or base64, at least 32 bytes: the framework's parser, with this server's messages.
fn parse_seal_key(raw: &str) -> Result<SealKey, ConfigError> {
    serving::parse_seal_key(raw).map_err(|problem| match problem {
        SealKeyProblem::Encoding => ConfigError::SealKeyEncoding,
        SealKeyProblem::TooShort(bytes) => ConfigError::SealKeyTooShort { bytes },
    })
}
