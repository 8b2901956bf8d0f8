//! Streamable HTTP serving: the guard framework's ([`ask_first_serve::http`]: the gate,
//! session-owner binding, limits, wire fixes and CORS), with this server's setting names so
//! that every message names an `OPENGIST_MCP_*` variable (and its flag, where it has one).

use ask_first_serve::SettingNames;
pub use ask_first_serve::http::*;

/// This server's setting names: the `OPENGIST_MCP_*` variables, each followed by its flag
/// where it has one (`OPENGIST_MCP_AUDIT_LOG (--audit-log)`), as messages show them; the
/// variable is the name's first word (`ask_first_serve::settings::bare_name`). The bearer
/// secret's stays bare: HTTP clients read it in every 401 answer, where a flag means nothing.
pub fn setting_names() -> SettingNames {
    let names = SettingNames::with_prefix("OPENGIST_MCP");
    let with_flag = |name: String, flag: &str| format!("{name} (--{flag})");
    SettingNames {
        http_addr: with_flag(names.http_addr, "http"),
        allowed_hosts: with_flag(names.allowed_hosts, "allowed-hosts"),
        allowed_origins: with_flag(names.allowed_origins, "allowed-origins"),
        header_timeout: with_flag(names.header_timeout, "http-header-timeout-secs"),
        body_timeout: with_flag(names.body_timeout, "http-body-timeout-secs"),
        max_connections: with_flag(names.max_connections, "http-max-connections"),
        max_sessions: with_flag(names.max_sessions, "http-max-sessions"),
        session_idle: with_flag(names.session_idle, "http-session-idle-secs"),
        seal_key: with_flag(names.seal_key, "seal-key"),
        redis_url: with_flag(names.redis_url, "redis-url"),
        audit_log: with_flag(names.audit_log, "audit-log"),
        replica_id: with_flag(names.replica_id, "replica-id"),
        ..names
    }
}

/// Default options (loopback, a bearer secret made up at start, default limits) naming this
/// server's settings.
pub fn http_options() -> HttpOptions {
    HttpOptions::new(setting_names())
}
