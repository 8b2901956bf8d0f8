//! Streamable HTTP serving: the guard framework's ([`ask_first_serve::http`]: the gate,
//! session-owner binding, limits, wire fixes and CORS), with this server's setting names so
//! that every message names an `OPENGIST_MCP_*` variable (and its flag, where it has one).

use ask_first_serve::SettingNames;
pub use ask_first_serve::http::*;

/// This server's setting names: the `OPENGIST_MCP_*` variables, each followed by its flag
/// where its declaration ([`crate::config::SETTINGS`]) has one (`OPENGIST_MCP_AUDIT_LOG
/// (--audit-log)`), as messages show them; the variable is the name's first word
/// (`ask_first_serve::settings::bare_name`). The bearer secret's stays bare: HTTP clients read
/// it in every 401 answer, where a flag means nothing.
pub fn setting_names() -> SettingNames {
    let mut names = SettingNames::with_prefix("OPENGIST_MCP");
    let bearer = names.http_token.clone();
    for name in names.each_mut() {
        if *name != bearer
            && let Some(setting) = crate::config::settings::setting(name)
        {
            *name = setting.shown_name();
        }
    }
    names
}

/// Default options (loopback, a bearer secret made up at start, default limits) naming this
/// server's settings.
pub fn http_options() -> HttpOptions {
    HttpOptions::new(setting_names())
}
