//! How the server is served and run as replicas: the framework's settings
//! (`ask_first_serve::ServeSettings`: `ELICITATION`, the `OPENGIST_MCP_HTTP_*`, `_ALLOWED_*`,
//! `_SEAL_KEY`, `_REDIS_URL`, `_AUDIT_LOG`, `_REPLICA_ID`, `_STATE_DIR`, `_OAUTH_*` variables),
//! read by the framework through a lookup that consults this server's flags first, then the
//! environment. Only what is this server's own is here: which flags feed which setting, the
//! warnings about secrets given as flags, and the `opengist` authentication mode's name.

use ask_first_serve::settings::{ServeSettings, bare_name};

use super::error::ConfigError;
use super::var::{self, Source};
use crate::cli::CliArgs;

/// The value of `OPENGIST_MCP_HTTP_AUTH` that serves a team: each person with their own
/// Opengist access token as the bearer (see [`crate::team`]).
pub const OPENGIST_AUTH_MODE: &str = "opengist";

/// The flag that feeds the framework's setting `var`, when this server has one: the flag its
/// declaration names ([`crate::config::SETTINGS`]), read from the parsed command line.
fn flag_of<'a>(args: &'a CliArgs, var: &str) -> Option<&'a Option<String>> {
    Some(match super::settings::setting(var)?.flag? {
        "http" => &args.http,
        "http-token" => &args.http_token,
        "seal-key" => &args.seal_key,
        "allowed-hosts" => &args.allowed_hosts,
        "allowed-origins" => &args.allowed_origins,
        "http-header-timeout-secs" => &args.http_header_timeout_secs,
        "http-body-timeout-secs" => &args.http_body_timeout_secs,
        "http-max-connections" => &args.http_max_connections,
        "http-max-sessions" => &args.http_max_sessions,
        "http-session-idle-secs" => &args.http_session_idle_secs,
        "redis-url" => &args.redis_url,
        "audit-log" => &args.audit_log,
        "replica-id" => &args.replica_id,
        _ => return None,
    })
}

/// Reads the framework's serving settings under this server's names
/// ([`crate::http::setting_names`]), a flag winning over its variable, and adds the warnings
/// that are this server's own (a secret given as a flag, HTTP-only settings on stdio). The
/// framework logs its own warnings (Redis without a shared seal key) when serving starts.
pub(super) fn parse(
    source: &Source<'_>,
    warnings: &mut Vec<String>,
) -> Result<ServeSettings, ConfigError> {
    let args = source.args;
    for (given, flag, variable, what) in [
        (&args.seal_key, "--seal-key", var::OPENGIST_MCP_SEAL_KEY, ""),
        (
            &args.http_token,
            "--http-token",
            var::OPENGIST_MCP_HTTP_TOKEN,
            "",
        ),
        (
            &args.redis_url,
            "--redis-url",
            var::OPENGIST_MCP_REDIS_URL,
            ", with any password in it",
        ),
    ] {
        if given.is_some() {
            warnings.push(format!(
                "{flag} is visible to every user of this machine (ps){what}; prefer {variable}"
            ));
        }
    }
    let settings = ServeSettings::from_lookup_with_modes(
        crate::http::setting_names(),
        &[OPENGIST_AUTH_MODE],
        |name| {
            let variable = bare_name(name);
            match flag_of(args, variable) {
                Some(Some(value)) => Some(value.clone()),
                _ => source.exact(variable),
            }
        },
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::config::SETTINGS;

    #[test]
    fn each_declared_flag_of_a_serving_setting_feeds_it() {
        let names = format!("{:?}", crate::http::setting_names());
        let mut fed = 0;
        for setting in SETTINGS {
            let Some(flag) = setting.flag else { continue };
            let args = CliArgs::try_parse_from(["opengist-mcp", &format!("--{flag}"), "v"]);
            let Ok(args) = args else { continue }; // a switch (`--read-only`) takes no value
            let framework = names.contains(&format!("\"{}", setting.var));
            match flag_of(&args, setting.var) {
                Some(Some(value)) => {
                    assert!(framework, "{}: not a serving setting", setting.var);
                    assert_eq!(value, "v");
                    fed += 1;
                }
                _ => assert!(!framework, "--{flag} does not feed {}", setting.var),
            }
        }
        // Positive control: the thirteen serving flags were found.
        assert_eq!(fed, 13);
    }
}
