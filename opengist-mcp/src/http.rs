//! Streamable HTTP serving: the guard framework's ([`ask_first::serve::http`]: the gate,
//! session-owner binding, limits, wire fixes and CORS), with this server's setting names so
//! that every message names an `OPENGIST_MCP_*` variable.

use ask_first::serve::SettingNames;
pub use ask_first::serve::http::*;

use crate::config::Config;

/// This server's setting names: the `OPENGIST_MCP_*` variables (the audit log's with its flag,
/// as its start-up error has always named it).
pub fn setting_names() -> SettingNames {
    SettingNames {
        audit_log: "OPENGIST_MCP_AUDIT_LOG (--audit-log)".to_owned(),
        ..SettingNames::with_prefix("OPENGIST_MCP")
    }
}

/// Default options (loopback, no bearer secret, default limits) naming this server's settings.
pub fn http_options() -> HttpOptions {
    HttpOptions::new(setting_names())
}

/// The options a parsed configuration asks for.
pub fn options_from_config(config: &Config) -> HttpOptions {
    HttpOptions {
        bearer_token: config.http_token.clone(),
        allowed_hosts: config.allowed_hosts.clone(),
        allowed_origins: config.allowed_origins.clone(),
        limits: config.http_limits,
        session_prefix: config.replica_id.clone(),
        ..http_options()
    }
}
