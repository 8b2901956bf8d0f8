//! Streamable HTTP serving: the guard framework's ([`ask_first_serve::http`]: the gate,
//! session-owner binding, limits, wire fixes and CORS), with this server's setting names so
//! that every message names an `OPENGIST_MCP_*` variable.

use ask_first_serve::SettingNames;
pub use ask_first_serve::http::*;

use crate::config::Config;

/// This server's setting names: the `OPENGIST_MCP_*` variables (the audit log's with its flag,
/// as its start-up error has always named it).
pub fn setting_names() -> SettingNames {
    SettingNames {
        audit_log: "OPENGIST_MCP_AUDIT_LOG (--audit-log)".to_owned(),
        ..SettingNames::with_prefix("OPENGIST_MCP")
    }
}

/// Default options (loopback, a bearer secret made up at start, default limits) naming this
/// server's settings.
pub fn http_options() -> HttpOptions {
    HttpOptions::new(setting_names())
}

/// The options a parsed configuration asks for.
pub(crate) fn options_from_config(config: &Config) -> HttpOptions {
    HttpOptions {
        bearer_token: config.http_token.clone(),
        no_auth: config.http_no_auth,
        auth: config.http_auth.clone(),
        allowed_hosts: config.allowed_hosts.clone(),
        allowed_origins: config.allowed_origins.clone(),
        limits: config.http_limits,
        session_prefix: config.replica_id.clone(),
        ..http_options()
    }
}

/// The options for serving `server` as `config` asks: `options_from_config`, and on a team
/// server (`OPENGIST_MCP_HTTP_AUTH=opengist`) its authenticator, which checks every request's
/// bearer with Opengist (see `crate::team`); then one line on stderr says how callers
/// authenticate.
pub fn options_for(server: &crate::OpengistServer, config: &Config) -> HttpOptions {
    let mut options = options_from_config(config);
    if let Some(team) = server.team_authenticator() {
        eprintln!(
            "opengist-mcp: serving a team (OPENGIST_MCP_HTTP_AUTH=opengist): each HTTP client \
             sends its own Opengist access token as the bearer (Authorization: Bearer <token>), \
             checked with Opengist, and acts as that Opengist account; OPENGIST_TOKEN is not used"
        );
        let team: std::sync::Arc<dyn Authenticate> = team;
        options.authenticator = Some(team);
    }
    options
}
