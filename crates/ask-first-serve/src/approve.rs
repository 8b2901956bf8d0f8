//! The approval page: `GET /approve/<id>` shows one question the guard put as an approval
//! record, exactly as the form dialog shows it, with Approve and Decline; either needs a
//! passkey enrolled for the principal that asked (WebAuthn, user verification required).
//!
//! Where it is served: a server on streamable HTTP mounts it on its own router, at its own
//! address (one origin, one TLS proxy), at the server's public URL (`<PREFIX>_PUBLIC_URL`, else
//! the OAuth resource's origin, else `http://localhost:PORT` on a loopback address), behind the
//! gate's Host and Origin checks but not its credential check (a person opens it in a browser;
//! the passkey says who they are). A stdio server, or one with `<PREFIX>_APPROVAL_ADDR` set,
//! serves it on a loopback listener opened on first need (default `localhost` on a free port).
//! A loopback listener answers only requests addressed to `localhost` on the port it bound, and
//! expects exactly that origin of every passkey ceremony; it holds `[::1]` on that port too,
//! so no other local process receives the browsers its links send.
//!
//! Its URL carries the record's unguessable id and no credential; opening it decides nothing.
//! Every page has its own token, carried in its body and in a `SameSite=Strict` cookie, and its
//! POSTs must come from its own origin; its headers forbid framing, caching, sniffing and
//! referrers, and its Content-Security-Policy allows only its own nonce'd script and style and
//! requests to itself. Passkeys are enrolled out of a model's reach, by the operator's
//! `passkeys add` command ([`add_passkey`]), listed with `passkeys list` ([`list_passkeys`])
//! and taken out with `passkeys remove` ([`remove_passkey`]): the page reads the passkey file
//! on every use, so a removal counts at once.

mod aaguid;
mod ceremony;
mod command;
mod enrol;
mod evidence;
mod held;
mod html;
mod invite;
mod links;
mod login;
mod loopback;
mod page;
mod passkeys;
mod site;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ask_first_core::{
    ApprovalPages, ApprovalRoute, ApprovalStore, GuardBuilder, PageProof, RecordId,
};
use axum::Router;
use axum::http::HeaderMap;
use axum::middleware;
use axum::routing::{get, post};
use webauthn_rp::DiscoverableAuthenticationServerState;

pub use aaguid::AaguidList;
pub use command::{
    AddPasskey, PasskeysCommand, passkeys_listing, passkeys_state_dir, run_passkeys,
    run_passkeys_command,
};
pub use enrol::add_passkey;
pub use passkeys::{
    PASSKEYS_FILE, PasskeyFileError, PasskeyInfo, RemovePasskeyError, list_passkeys, remove_passkey,
};

pub(crate) use login::LoginSettings;

use crate::http::BrowserPages;
use crate::settings::{AllowedHost, AllowedOrigin};
use held::Held;
use passkeys::PasskeyFile;
use site::PublicBase;

/// How long a page's token and its passkey ceremony stay usable.
const PAGE_TTL: Duration = Duration::from_secs(15 * 60);

/// The approval settings a server reads: `<PREFIX>_APPROVAL_ROUTES`, `<PREFIX>_APPROVAL_ADDR`,
/// `<PREFIX>_PUBLIC_URL`, `<PREFIX>_PASSKEY_AAGUIDS` and `<PREFIX>_APPROVAL_WAIT_SECS`.
#[derive(Debug, Clone)]
pub struct ApprovalSettings {
    /// The routes in order; `None`: the guard's default.
    pub routes: Option<Vec<ApprovalRoute>>,
    /// Where the page's own loopback listener listens (`host:port`, `localhost:0` by default).
    pub addr: String,
    /// Whether `addr` was set: then an HTTP server serves the page there too, not on its own
    /// address.
    pub addr_set: bool,
    /// The server's public URL, as a browser reaches it (`https://mcp.example.com`).
    pub public_url: Option<String>,
    /// The authenticators enrolment accepts; `None`: any.
    pub aaguids: Option<AaguidList>,
    /// How long a call shown the page by a URL elicitation waits for the person before it
    /// answers with the link (`<PREFIX>_APPROVAL_WAIT_SECS`); `None`: the guard's default,
    /// 100 seconds.
    pub wait: Option<Duration>,
    /// The routes' setting's name.
    pub routes_setting: String,
    /// The public URL's setting's name.
    pub public_url_setting: String,
}

/// Why the approval settings cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalSettingError {
    /// The routes setting does not parse.
    #[error("{setting}: {reason}")]
    Routes {
        /// The setting.
        setting: String,
        /// What is wrong.
        reason: String,
    },
    /// The public URL cannot serve the pages.
    #[error("{reason}")]
    PublicUrl {
        /// What is wrong, naming the setting.
        reason: String,
    },
    /// The AAGUID allowlist does not parse.
    #[error(
        "{setting}: `{entry}` is not a list of AAGUIDs (comma-separated UUIDs such as 01020304-0506-0708-0102-030405060708)"
    )]
    Aaguids {
        /// The setting.
        setting: String,
        /// The entry that is not a UUID.
        entry: String,
    },
    /// The wait on the page is not a number of seconds in range.
    #[error(
        "{setting}: a whole number of seconds from 1 to {MAX_APPROVAL_WAIT_SECS}: how long a call shown the approval page waits for the person's decision before answering with the link (default 100, below clients' usual 120-second request timeout)"
    )]
    Wait {
        /// The setting.
        setting: String,
    },
    /// The page's login at the identity provider cannot be set up.
    #[error("{reason}")]
    Login {
        /// What is wrong, naming the setting.
        reason: String,
    },
    /// The record store cannot be opened.
    #[error(transparent)]
    Store(#[from] ask_first_core::FileApprovalStoreError),
}

impl ApprovalSettings {
    /// The guard builder with the operator's routes, how to enable the page named for the
    /// operator of `server`, and `page` with its record store when there is one.
    pub fn configure(
        &self,
        builder: GuardBuilder,
        server: &str,
        page: Option<&ApprovalPage>,
    ) -> GuardBuilder {
        let login_setting = self
            .routes_setting
            .replace("_APPROVAL_ROUTES", "_APPROVAL_LOGIN_CLIENT_ID");
        let mut builder = builder.page_setup(format!(
            "enrol a passkey with `{server} passkeys add` on the server's machine (then restart it), or in oauth mode set {login_setting} to let the person approve by signing in at the identity provider, and keep `page` in {}",
            self.routes_setting
        ));
        if let Some(page) = page {
            builder = builder
                .approval_pages(Arc::new(page.clone()))
                .approval_store(page.inner.records.clone());
        }
        if let Some(routes) = &self.routes {
            builder = builder.approval_routes(routes.clone());
        }
        if let Some(wait) = self.wait {
            builder = builder.approval_wait(wait);
        }
        builder
    }

    /// Reads the settings named with `prefix` (`NOTES` reads `NOTES_APPROVAL_ROUTES`, ...).
    pub fn from_env(prefix: &str) -> Result<Self, ApprovalSettingError> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let routes_setting = format!("{prefix}_APPROVAL_ROUTES");
        let routes = match var(&routes_setting) {
            Some(text) => Some(ApprovalRoute::parse_list(&text).map_err(|reason| {
                ApprovalSettingError::Routes {
                    setting: routes_setting.clone(),
                    reason,
                }
            })?),
            None => None,
        };
        let addr = var(&format!("{prefix}_APPROVAL_ADDR"));
        let public_url_setting = format!("{prefix}_PUBLIC_URL");
        let public_url = var(&public_url_setting);
        if let Some(url) = &public_url {
            site::public_base(Some(url), None, None, &public_url_setting)
                .map_err(|reason| ApprovalSettingError::PublicUrl { reason })?;
        }
        let wait_setting = format!("{prefix}_APPROVAL_WAIT_SECS");
        let wait = match var(&wait_setting) {
            Some(text) => Some(approval_wait(&text).ok_or(ApprovalSettingError::Wait {
                setting: wait_setting,
            })?),
            None => None,
        };
        Ok(Self {
            routes,
            wait,
            aaguids: AaguidList::from_env(prefix)?,
            addr_set: addr.is_some(),
            addr: addr.unwrap_or_else(|| format!("{}:0", site::LOOPBACK_HOST)),
            public_url,
            routes_setting,
            public_url_setting,
        })
    }
}

/// The longest accepted `<PREFIX>_APPROVAL_WAIT_SECS`.
const MAX_APPROVAL_WAIT_SECS: u64 = 3600;

/// A wait on the page, from a setting's text: whole seconds, 1 to [`MAX_APPROVAL_WAIT_SECS`].
fn approval_wait(text: &str) -> Option<Duration> {
    text.parse::<u64>()
        .ok()
        .filter(|secs| (1..=MAX_APPROVAL_WAIT_SECS).contains(secs))
        .map(Duration::from_secs)
}

/// A page open in a browser (held under its token, for its record): the passkey ceremony it
/// began, with the decision it is for.
struct OpenPage {
    ceremony: Option<(bool, DiscoverableAuthenticationServerState)>,
}

struct Inner {
    server: String,
    records: Arc<dyn ApprovalStore>,
    passkeys: PasskeyFile,
    state_dir: PathBuf,
    addr: String,
    /// The port of the page's own loopback listener, once it listens.
    port: tokio::sync::OnceCell<u16>,
    /// Set when an HTTP server mounted the pages on its own address.
    mounted: OnceLock<PublicBase>,
    /// The other loopback family's address on the pages' port, held while the pages serve.
    other_family: Mutex<Option<socket2::Socket>>,
    pages: Held<OpenPage>,
    invites: invite::Invites,
    aaguids: Option<AaguidList>,
    decided: tokio::sync::Notify,
    /// Set in `oauth` mode when the page offers a login at the identity provider.
    login: OnceLock<login::Login>,
}

impl Inner {
    /// The origin a request to the pages is for: the public one where mounted (the gate
    /// checked its `Host`), else this loopback listener's, when its `Host` names exactly the
    /// port it bound.
    fn origin(&self, headers: &HeaderMap) -> Option<String> {
        match self.mounted.get() {
            Some(base) => Some(base.origin.clone()),
            None => site::loopback_origin(headers, *self.port.get()?),
        }
    }

    /// Forgets every page and sign-in of `record`, decided: they can decide nothing more.
    fn forget(&self, record: &RecordId) {
        self.pages.forget(record);
        if let Some(login) = self.login.get() {
            login.forget(record);
        }
    }

    /// The WebAuthn relying party id the pages are served for.
    fn rp(&self) -> &str {
        self.mounted
            .get()
            .map_or(site::LOOPBACK_HOST, |base| base.rp.as_str())
    }

    /// Whether a passkey approves on this page (unless the operator offers only the login).
    fn offers_passkey(&self) -> bool {
        self.login.get().is_none_or(|login| login.passkey)
    }

    /// Whether cookies must be `Secure` (the pages are served on https).
    fn secure(&self) -> bool {
        self.mounted
            .get()
            .is_some_and(|base| base.origin.starts_with("https:"))
    }
}

/// The approval page of one server: what the guard shows questions on
/// ([`ApprovalPages`]), served on the HTTP server's own address once mounted there
/// ([`ApprovalPage::mount`]), else on its own loopback listener from the first question on.
#[derive(Clone)]
pub struct ApprovalPage {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ApprovalPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPage")
            .field("server", &self.inner.server)
            .field("addr", &self.inner.addr)
            .field("mounted", &self.inner.mounted.get())
            .finish_non_exhaustive()
    }
}

impl ApprovalPage {
    /// The page of `server`, its passkeys in `state_dir` (`state_setting` names that setting in
    /// errors), its records in `records`, listening at `settings.addr` once needed unless
    /// mounted, enrolling through the server only the authenticators `settings.aaguids` lists.
    pub fn new(
        server: &str,
        state_dir: &Path,
        state_setting: &str,
        records: Arc<dyn ApprovalStore>,
        settings: &ApprovalSettings,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                server: server.to_owned(),
                records,
                passkeys: PasskeyFile::new(state_dir, state_setting),
                state_dir: state_dir.to_owned(),
                addr: settings.addr.clone(),
                port: tokio::sync::OnceCell::new(),
                mounted: OnceLock::new(),
                other_family: Mutex::new(None),
                pages: Held::new(PAGE_TTL),
                invites: invite::Invites::default(),
                aaguids: settings.aaguids.clone(),
                decided: tokio::sync::Notify::new(),
                login: OnceLock::new(),
            }),
        }
    }

    /// The pages' routes for an HTTP server bound to `local`, at its public URL (`public_url`,
    /// else the origin of the OAuth `resource`, else `http://localhost:PORT` on loopback):
    /// from then on the page's links point there and its loopback listener is never opened.
    /// `None`, with a warning naming `setting` (the public URL's), when no such URL can serve
    /// passkeys; the page then stays on its loopback listener.
    pub fn mount(
        &self,
        local: SocketAddr,
        public_url: Option<&str>,
        resource: Option<&str>,
        setting: &str,
    ) -> Option<BrowserPages> {
        let base = match site::public_base(public_url, resource, Some(local), setting) {
            Ok(base) => base,
            Err(why) => {
                tracing::warn!(
                    "the approval page is served on its own loopback listener, not on the HTTP server's address: {why}"
                );
                return None;
            }
        };
        let url = url::Url::parse(&base.origin).ok()?;
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", base.rp),
            None => base.rp.clone(),
        };
        let host = AllowedHost::parse(&authority)?;
        let origin = AllowedOrigin::parse(&base.origin)?;
        if site::names_loopback(&base.rp) && url.port_or_known_default() == Some(local.port()) {
            match loopback::hold_other_family(local) {
                Ok(held) => self.hold(held),
                Err(why) => {
                    tracing::warn!(
                        "the approval page is served on its own loopback listener, not on the HTTP server's address: {why}"
                    );
                    return None;
                }
            }
        }
        tracing::info!(origin = %base.origin, "approval page served on the HTTP server's own address");
        let _ = self.inner.mounted.set(base);
        Some(BrowserPages {
            router: routes(self.inner.clone()),
            host,
            origin,
        })
    }

    /// Offers approving with a login at the identity provider besides (or instead of) a
    /// passkey.
    pub(crate) fn offer_login(&self, login: login::Login) {
        let _ = self.inner.login.set(login);
    }

    /// Keeps `socket` (the other loopback family's address) for as long as the pages serve.
    fn hold(&self, socket: Option<socket2::Socket>) {
        let mut slot = match self.inner.other_family.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *slot = socket;
    }

    /// The port the page listens on, binding it on first need (again on the next need when
    /// binding failed: another process may have let the port go).
    async fn port(&self) -> Result<u16, String> {
        let page = self.clone();
        self.inner
            .port
            .get_or_try_init(|| async move { page.listen().await })
            .await
            .copied()
    }

    /// Binds the page's listener and serves it in the background; its port.
    async fn listen(&self) -> Result<u16, String> {
        let addr = &self.inner.addr;
        let (host, port) = addr
            .rsplit_once(':')
            .ok_or_else(|| format!("the approval page address `{addr}` has no port"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| format!("the approval page address `{addr}` has no valid port"))?;
        // WebAuthn's relying party is `localhost`: the page is served there, on loopback only.
        if host != site::LOOPBACK_HOST && host != "127.0.0.1" {
            return Err(format!(
                "the approval page must be served on localhost (its passkeys are for `localhost`), not `{host}`"
            ));
        }
        let bound = loopback::bind(port).map_err(|e| format!("the approval page: {e}"))?;
        let listener = tokio::net::TcpListener::from_std(bound.listener)
            .map_err(|e| format!("the approval page cannot listen on {addr}: {e}"))?;
        let port = bound.port;
        self.hold(bound.held);
        let router = routes(self.inner.clone())
            .layer(middleware::from_fn_with_state(port, site::pinned_host));
        // A request that comes before the port is recorded (no link names it yet) is refused
        // as misdirected.
        let serve = axum::serve(listener, router);
        tokio::spawn(async move {
            if let Err(error) = serve.await {
                tracing::warn!(%error, "the approval page stopped");
            }
        });
        tracing::info!(port, "approval page listening on localhost");
        Ok(port)
    }
}

/// The pages' routes over `inner`: the approval page, and the enrolment links `passkeys add`
/// hands out through the server.
fn routes(inner: Arc<Inner>) -> Router {
    Router::new()
        .route("/approve/{id}", get(page::show))
        .route("/approve/{id}/begin", post(page::begin))
        .route("/approve/{id}/finish", post(page::finish))
        .route("/approve/{id}/login", get(login::start))
        .route("/approve/{id}/decide", post(login::decide))
        .route(login::CALLBACK_PATH, get(login::callback))
        .route("/enrol/{code}", get(invite::show))
        .route("/enrol/{code}/begin", post(invite::begin))
        .route("/enrol/{code}/finish", post(invite::finish))
        .with_state(inner)
}

impl ApprovalPages for ApprovalPage {
    fn url<'a>(
        &'a self,
        id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move {
            if let Some(base) = self.inner.mounted.get() {
                return Ok(format!("{}/approve/{id}", base.origin));
            }
            let port = self.port().await?;
            Ok(format!(
                "http://{}:{port}/approve/{id}",
                site::LOOPBACK_HOST
            ))
        })
    }

    fn ready(&self) -> bool {
        self.inner.login.get().is_some()
            || (self.inner.offers_passkey() && self.inner.passkeys.any())
    }

    fn ready_for(&self, principal: &str) -> bool {
        self.inner.login.get().is_some()
            || (self.inner.offers_passkey() && self.inner.passkeys.any_for(principal))
    }

    fn proof(&self) -> PageProof {
        match self.inner.login.get() {
            None => PageProof::Passkey,
            Some(login) if login.passkey && self.inner.passkeys.any() => PageProof::PasskeyOrLogin,
            Some(_) => PageProof::Login,
        }
    }

    fn changed<'a>(&'a self, _id: &'a RecordId) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            // A decision on this process's page wakes the guard at once; one taken on another
            // replica's page is seen by reading the store again, a second later at most.
            tokio::select! {
                () = self.inner.decided.notified() => {}
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        })
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn random_token() -> String {
    format!("{}{}", RecordId::random(), RecordId::random())
}

#[cfg(test)]
mod settings_tests {
    use super::*;

    fn settings(wait: Option<Duration>) -> ApprovalSettings {
        ApprovalSettings {
            routes: None,
            addr: "localhost:0".to_owned(),
            addr_set: false,
            public_url: None,
            aaguids: None,
            wait,
            routes_setting: "NOTES_APPROVAL_ROUTES".to_owned(),
            public_url_setting: "NOTES_PUBLIC_URL".to_owned(),
        }
    }

    #[test]
    fn the_wait_is_whole_seconds_in_range_and_reaches_the_guard() {
        assert_eq!(approval_wait("3"), Some(Duration::from_secs(3)));
        assert_eq!(approval_wait("3600"), Some(Duration::from_secs(3600)));
        for bad in ["0", "3601", "-1", "1.5", "100s", ""] {
            assert_eq!(approval_wait(bad), None, "{bad}");
        }
        let guard = |wait| {
            let builder = ask_first_core::Guard::builder("notes");
            format!(
                "{:?}",
                settings(wait).configure(builder, "notes", None).build()
            )
        };
        // Unset: the guard's default, below a client's usual 120-second timeout.
        assert!(
            guard(None).contains("approval_wait: 100s"),
            "{}",
            guard(None)
        );
        let set = guard(Some(Duration::from_secs(7)));
        assert!(set.contains("approval_wait: 7s"), "{set}");
        let error = ApprovalSettingError::Wait {
            setting: "NOTES_APPROVAL_WAIT_SECS".to_owned(),
        };
        assert!(
            error.to_string().starts_with("NOTES_APPROVAL_WAIT_SECS: ")
                && error.to_string().contains("3600"),
            "{error}"
        );
    }
}
