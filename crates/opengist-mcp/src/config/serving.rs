//! How the server is served and run as replicas: the framework's settings
//! (`ask_first_serve::ServeSettings`: `ELICITATION`, the `OPENGIST_MCP_HTTP_*`, `_ALLOWED_*`,
//! `_SEAL_KEY`, `_REDIS_URL`, `_AUDIT_LOG`, `_REPLICA_ID`, `_STATE_DIR`, `_OAUTH_*` variables),
//! read by the framework through a lookup that consults this server's flags first, then the
//! environment (each flag is its setting's row in [`super::SETTINGS`]). Only what is this
//! server's own is here: the warnings about secrets given as flags, and the `opengist`
//! authentication mode's name.

use ask_first_serve::settings::{ServeSettings, bare_name};

use super::error::ConfigError;
use super::var::Source;

/// The value of `OPENGIST_MCP_HTTP_AUTH` that serves a team: each person with their own
/// Opengist access token as the bearer (see the `team` module).
pub const OPENGIST_AUTH_MODE: &str = "opengist";

/// Reads the framework's serving settings under this server's names
/// ([`super::var::setting_names`]), a flag winning over its variable, and adds the warnings
/// that are this server's own (a secret given as a flag, HTTP-only settings on stdio). The
/// framework logs its own warnings (Redis without a shared seal key) when serving starts.
pub(super) fn parse(
    source: &Source<'_>,
    warnings: &mut Vec<String>,
) -> Result<ServeSettings, ConfigError> {
    for var in source.flags.vars() {
        if let Some(setting) = super::var::setting(var)
            && let (true, Some(flag)) = (setting.secret, setting.flag)
        {
            warnings.push(format!(
                "--{} is visible to every user of this machine (ps); prefer \
                 the variable {var}",
                flag.name
            ));
        }
    }
    let settings = ServeSettings::from_lookup_with_modes(
        super::var::setting_names(),
        &[OPENGIST_AUTH_MODE],
        |name| source.flag_or_exact(bare_name(name)),
    )?;
    if settings.http_addr.is_none()
        && (!settings.allowed_hosts.is_empty() || !settings.allowed_origins.is_empty())
    {
        warnings.push(
            "OPENGIST_MCP_ALLOWED_HOSTS / OPENGIST_MCP_ALLOWED_ORIGINS only apply to HTTP \
             (--http); they are ignored on stdio"
                .to_owned(),
        );
    }
    Ok(settings)
}
