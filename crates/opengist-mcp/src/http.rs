//! Streamable HTTP serving: the guard framework's ([`ask_first_serve::http`]: the gate,
//! session-owner binding, limits, wire fixes and CORS), with this server's setting names so
//! that every message names an `OPENGIST_MCP_*` variable (and its flag, where it has one).

pub use ask_first_serve::http::*;

pub use crate::config::var::setting_names;

/// Default options (loopback, a bearer secret made up at start, default limits) naming this
/// server's settings.
pub fn http_options() -> HttpOptions {
    HttpOptions::new(setting_names())
}
