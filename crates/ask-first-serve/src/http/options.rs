//! [`HttpOptions`]: what the gate accepts, how it authenticates, its limits, and the names
//! of the settings its messages point to.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::settings::{AllowedHost, AllowedOrigin, AuthSettings, Secret, SettingNames};

use super::{Authenticate, HttpLimits};

/// What the gate accepts besides its built-in loopback names, how it authenticates, the
/// limits, and the names of the settings that messages point to.
#[derive(Clone, Default)]
pub struct HttpOptions {
    /// The settings' names, as the server calls them (every message names its fix by them).
    pub names: SettingNames,
    /// The bearer secret every request must carry; `None`: one made up at start (loopback
    /// only), unless `no_auth`.
    pub bearer_token: Option<Secret>,
    /// Serve without any authentication (the no-authentication setting, `true`): loopback only,
    /// never with a bearer secret, announced on stderr at start. The same as
    /// [`AuthMode::None`](crate::settings::AuthMode::None) in `auth`.
    pub no_auth: bool,
    /// How requests are authenticated (`<PREFIX>_HTTP_AUTH` and its modes' settings).
    pub auth: AuthSettings,
    /// The server's own verifier (the hook): when set, it authenticates every request, whatever
    /// `auth` says (a server maps its own mode, such as opengist-mcp's `opengist`, to it).
    pub authenticator: Option<Arc<dyn Authenticate>>,
    /// Extra accepted `Host` values.
    pub allowed_hosts: Vec<AllowedHost>,
    /// Extra accepted `Origin` values.
    pub allowed_origins: Vec<AllowedOrigin>,
    /// Timeouts and caps against slow or numerous clients.
    pub limits: HttpLimits,
    /// The replica id legacy session ids start with (`<id>.<uuid>`), so a gateway can send a
    /// session to the replica that holds it; `None`: plain ids.
    pub session_prefix: Option<String>,
    /// Pages a person opens in a browser (the approval page), mounted on the same address:
    /// called once the address is bound, with it; `None` from it mounts nothing.
    pub pages: Option<PagesAt>,
}

/// Builds the browser pages for the bound address ([`HttpOptions::pages`]).
pub type PagesAt = Arc<dyn Fn(SocketAddr) -> Option<BrowserPages> + Send + Sync>;

/// Pages a person opens in a browser, served on the MCP server's own address behind the gate's
/// Host and Origin checks, which also accept their public host and origin, but without its
/// credential check: the pages prove who is there themselves (a passkey).
#[derive(Debug)]
pub struct BrowserPages {
    /// The pages' routes.
    pub router: axum::Router,
    /// The public host they are reached at (`mcp.example.com`), accepted in `Host` for them.
    pub host: AllowedHost,
    /// Their public origin, accepted in `Origin` for them.
    pub origin: AllowedOrigin,
}

impl HttpOptions {
    /// Default options (loopback only, a secret made up at start, default limits) whose messages
    /// name the settings `names`.
    pub fn new(names: SettingNames) -> Self {
        Self {
            names,
            ..Self::default()
        }
    }

    /// The options [`ServeSettings`](crate::ServeSettings) read.
    pub fn from_settings(settings: &crate::ServeSettings) -> Self {
        Self {
            names: settings.names.clone(),
            bearer_token: settings.http_token.clone(),
            no_auth: settings.http_no_auth,
            auth: settings.auth.clone(),
            authenticator: None,
            allowed_hosts: settings.allowed_hosts.clone(),
            allowed_origins: settings.allowed_origins.clone(),
            limits: settings.limits,
            session_prefix: settings.replica_id.clone(),
            pages: None,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("names", &self.names)
            .field("bearer_token", &self.bearer_token)
            .field("no_auth", &self.no_auth)
            .field("auth", &self.auth)
            .field(
                "authenticator",
                &self.authenticator.as_ref().map(|_| "<server's own>"),
            )
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("limits", &self.limits)
            .field("session_prefix", &self.session_prefix)
            .field("pages", &self.pages.as_ref().map(|_| "<pages>"))
            .finish()
    }
}
