//! The approval page: `GET /approve/<id>` shows one question the guard put as an approval
//! record, exactly as the form dialog shows it, with Approve and Decline; either needs a
//! passkey enrolled for the principal that asked (WebAuthn, user verification required).
//!
//! The page is served on a loopback listener opened on first need (`<PREFIX>_APPROVAL_ADDR`,
//! default `localhost` on a free port), for stdio and HTTP servers alike. Its URL carries the
//! record's unguessable id and no credential; opening it decides nothing. Every page has its
//! own token, carried in its body and in a `SameSite=Strict` cookie, and its POSTs must come
//! from its own origin; its headers forbid framing, caching, sniffing and referrers, and its
//! Content-Security-Policy allows only its own nonce'd script and style and requests to itself.
//! Passkeys are enrolled out of a model's reach, by the operator's `passkeys add` command
//! ([`run_passkeys_command`]).

mod ceremony;
mod enrol;
mod html;
mod passkeys;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_first_core::{
    ApprovalPages, ApprovalRoute, ApprovalStore, GuardBuilder, RecordId, RecordState,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use webauthn_rp::DiscoverableAuthenticationServerState;

pub use enrol::run_passkeys_command;
pub use passkeys::{PASSKEYS_FILE, PasskeyFileError};

use ceremony::AssertionRefused;
use passkeys::PasskeyFile;

/// The cookie that carries a page's token.
const PAGE_COOKIE: &str = "ask_first_page";
/// How long a page's token and its passkey ceremony stay usable.
const PAGE_TTL: Duration = Duration::from_secs(15 * 60);
/// The most pages open at once; past it, the oldest are forgotten.
const MAX_PAGES: usize = 256;

/// The approval settings a server reads: `<PREFIX>_APPROVAL_ROUTES` and
/// `<PREFIX>_APPROVAL_ADDR`.
#[derive(Debug, Clone)]
pub struct ApprovalSettings {
    /// The routes in order; `None`: the guard's default.
    pub routes: Option<Vec<ApprovalRoute>>,
    /// Where the page listens (`host:port`, `localhost:0` by default).
    pub addr: String,
    /// The routes' setting's name.
    pub routes_setting: String,
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
        let mut builder = builder.page_setup(format!(
            "enrol a passkey with `{server} passkeys add` on the server's machine (then restart it), and keep `page` in {}",
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
        builder
    }

    /// Reads the settings named with `prefix` (`NOTES` reads `NOTES_APPROVAL_ROUTES`, ...).
    pub fn from_env(prefix: &str) -> Result<Self, ApprovalSettingError> {
        let routes_setting = format!("{prefix}_APPROVAL_ROUTES");
        let routes = match std::env::var(&routes_setting) {
            Ok(text) if !text.trim().is_empty() => {
                Some(ApprovalRoute::parse_list(&text).map_err(|reason| {
                    ApprovalSettingError::Routes {
                        setting: routes_setting.clone(),
                        reason,
                    }
                })?)
            }
            _ => None,
        };
        let addr = std::env::var(format!("{prefix}_APPROVAL_ADDR"))
            .ok()
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| format!("{}:0", ceremony::RP_HOST));
        Ok(Self {
            routes,
            addr,
            routes_setting,
        })
    }
}

/// A page open in a browser: its record, when it was served, and the passkey ceremony it
/// began, with the decision it is for.
struct OpenPage {
    record: RecordId,
    served: Instant,
    ceremony: Option<(bool, DiscoverableAuthenticationServerState)>,
}

struct Inner {
    server: String,
    records: Arc<dyn ApprovalStore>,
    passkeys: PasskeyFile,
    addr: String,
    port: tokio::sync::OnceCell<Result<u16, String>>,
    pages: Mutex<HashMap<String, OpenPage>>,
    decided: tokio::sync::Notify,
}

/// The approval page of one server: what the guard shows questions on
/// ([`ApprovalPages`]), serving them on its own loopback listener from the first question on.
#[derive(Clone)]
pub struct ApprovalPage {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ApprovalPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPage")
            .field("server", &self.inner.server)
            .field("addr", &self.inner.addr)
            .finish_non_exhaustive()
    }
}

impl ApprovalPage {
    /// The page of `server`, its passkeys in `state_dir` (`state_setting` names that setting in
    /// errors), its records in `records`, listening at `addr` once needed.
    pub fn new(
        server: &str,
        state_dir: &Path,
        state_setting: &str,
        records: Arc<dyn ApprovalStore>,
        addr: &str,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                server: server.to_owned(),
                records,
                passkeys: PasskeyFile::new(state_dir, state_setting),
                addr: addr.to_owned(),
                port: tokio::sync::OnceCell::new(),
                pages: Mutex::new(HashMap::new()),
                decided: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The port the page listens on, binding it on first need.
    async fn port(&self) -> Result<u16, String> {
        let inner = self.inner.clone();
        self.inner
            .port
            .get_or_init(|| async move { listen(inner).await })
            .await
            .clone()
    }
}

/// Binds the page's listener and serves it in the background; its port.
async fn listen(inner: Arc<Inner>) -> Result<u16, String> {
    let (host, port) = inner
        .addr
        .rsplit_once(':')
        .ok_or_else(|| format!("the approval page address `{}` has no port", inner.addr))?;
    let port: u16 = port.parse().map_err(|_| {
        format!(
            "the approval page address `{}` has no valid port",
            inner.addr
        )
    })?;
    // WebAuthn's relying party is `localhost`: the page is served there, on loopback only.
    if host != ceremony::RP_HOST && host != "127.0.0.1" {
        return Err(format!(
            "the approval page must be served on localhost (its passkeys are for `localhost`), not `{host}`"
        ));
    }
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .map_err(|e| format!("the approval page cannot listen on {}: {e}", inner.addr))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let router = Router::new()
        .route("/approve/{id}", get(show))
        .route("/approve/{id}/begin", post(begin))
        .route("/approve/{id}/finish", post(finish))
        .with_state(inner);
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::warn!(%error, "the approval page stopped");
        }
    });
    tracing::info!(port, "approval page listening on localhost");
    Ok(port)
}

impl ApprovalPages for ApprovalPage {
    fn url<'a>(
        &'a self,
        id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move {
            let port = self.port().await?;
            Ok(format!("http://{}:{port}/approve/{id}", ceremony::RP_HOST))
        })
    }

    fn ready(&self) -> bool {
        self.inner.passkeys.any()
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

/// This listener's own origin (`http://localhost:PORT`), when `headers` say the request was
/// made to it (its `Host`), else `None` (a rebinding name, a proxy).
fn own_origin(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let port = host.strip_prefix(&format!("{}:", ceremony::RP_HOST))?;
    port.parse::<u16>().ok()?;
    Some(format!("http://{host}"))
}

/// The page token in the request's cookie.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == PAGE_COOKIE)
        .map(|(_, value)| value.to_owned())
}

async fn show(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let nonce = random_token();
    if own_origin(&headers).is_none() {
        return html::text(
            StatusCode::MISDIRECTED_REQUEST,
            "This page is served on localhost only.",
        );
    }
    let record = match RecordId::parse(&id) {
        Some(id) => inner.records.get(&id, now()).await,
        None => Ok(None),
    };
    let record = match record {
        // Only the page's own records: a CIBA record is decided by the identity provider.
        Ok(Some(record)) if record.route == "page" => record,
        Ok(_) => {
            let page = html::notice_page(
                "No such question",
                "There is no question here, or it has expired. Nothing was changed.",
                &nonce,
            );
            return html::page_response(StatusCode::NOT_FOUND, page, &nonce, None);
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now; reload later.",
            );
        }
    };
    if record.state != RecordState::Pending {
        let page = html::notice_page(
            "Already answered",
            &format!(
                "This question was already answered: it is {}.",
                record.state.as_str()
            ),
            &nonce,
        );
        return html::page_response(StatusCode::GONE, page, &nonce, None);
    }
    let token = random_token();
    {
        let mut pages = match inner.pages.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        pages.retain(|_, p| p.served.elapsed() < PAGE_TTL);
        while pages.len() >= MAX_PAGES {
            let Some(oldest) = pages
                .iter()
                .min_by_key(|(_, p)| p.served)
                .map(|(token, _)| token.clone())
            else {
                break;
            };
            pages.remove(&oldest);
        }
        pages.insert(
            token.clone(),
            OpenPage {
                record: record.id,
                served: Instant::now(),
                ceremony: None,
            },
        );
    }
    let page = html::approval_page(
        &inner.server,
        &record.tool,
        &record.question,
        &nonce,
        &token,
    );
    let cookie = format!(
        "{PAGE_COOKIE}={token}; Path=/approve/{id}; HttpOnly; SameSite=Strict; Max-Age={}",
        PAGE_TTL.as_secs()
    );
    html::page_response(StatusCode::OK, page, &nonce, Some(cookie))
}

/// Why a POST was refused: its status and the text said.
pub(crate) type Refusal = (StatusCode, String);

/// A POST's JSON body, after the checks every POST passes: made to this listener, from its own
/// origin, with the page's token in both the cookie and the body.
fn checked_post(headers: &HeaderMap, body: &[u8]) -> Result<(String, serde_json::Value), Refusal> {
    let refused = |text: &str| Err((StatusCode::FORBIDDEN, text.to_owned()));
    let Some(origin) = own_origin(headers) else {
        return refused("This page is served on localhost only.");
    };
    let sent_origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if sent_origin != Some(origin.as_str()) {
        return refused("Refused: this request did not come from the page itself.");
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "Refused: the request is not JSON.".to_owned(),
        ));
    };
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if token.is_empty() || cookie_token(headers).as_deref() != Some(token) {
        return refused(
            "Refused: this request does not carry the page's own token; reload the page.",
        );
    }
    Ok((origin, body))
}

async fn begin(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (_, body) = match checked_post(&headers, &body) {
        Ok(checked) => checked,
        Err((status, text)) => return html::text(status, text),
    };
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    let approve = match body.get("decision").and_then(|d| d.as_str()) {
        Some("approve") => true,
        Some("decline") => false,
        _ => {
            return html::text(
                StatusCode::BAD_REQUEST,
                "Refused: the decision is neither approve nor decline.",
            );
        }
    };
    let started = match ceremony::start_authentication() {
        Ok(started) => started,
        Err(error) => {
            tracing::warn!(%error, "approval page: the passkey request could not begin");
            return html::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The passkey request could not begin.",
            );
        }
    };
    let mut pages = match inner.pages.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    };
    match pages.get_mut(token) {
        Some(page) if page.record.to_string() == id && page.served.elapsed() < PAGE_TTL => {
            page.ceremony = Some((approve, started.state));
        }
        _ => {
            return html::text(
                StatusCode::FORBIDDEN,
                "Refused: this page has expired or was used; reload it.",
            );
        }
    }
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    (StatusCode::OK, headers, started.options).into_response()
}

async fn finish(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (origin, body) = match checked_post(&headers, &body) {
        Ok(checked) => checked,
        Err((status, text)) => return html::text(status, text),
    };
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    // The page's token and its ceremony work once: taken out whatever comes next.
    let page = {
        let mut pages = match inner.pages.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        pages.remove(token)
    };
    let Some(OpenPage {
        record: record_id,
        served,
        ceremony: Some((approve, state)),
    }) = page
    else {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: no passkey request is open on this page; reload it.",
        );
    };
    if record_id.to_string() != id || served.elapsed() >= PAGE_TTL {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: this page has expired; reload it.",
        );
    }
    let record = match inner.records.get(&record_id, now()).await {
        Ok(Some(record)) if record.state == RecordState::Pending => record,
        Ok(_) => {
            return html::text(
                StatusCode::GONE,
                "This question was already answered, or has expired.",
            );
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now.",
            );
        }
    };
    let credential = body
        .get("credential")
        .map(|c| c.to_string())
        .unwrap_or_default();
    let enrolled = match inner.passkeys.load() {
        Ok(enrolled) => enrolled,
        Err(error) => {
            tracing::warn!(%error, "approval page: the passkeys cannot be read");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The enrolled passkeys cannot be read.",
            );
        }
    };
    let verified = ceremony::finish_authentication(
        state,
        credential.as_bytes(),
        &origin,
        &enrolled,
        &record.principal,
    );
    let (server, principal) = (&inner.server, &record.principal);
    let enrol = format!(
        "The operator enrols a passkey for `{principal}` on the server's machine with `{server} passkeys add --principal {principal}`."
    );
    let (index, dynamic) = match verified {
        Ok(verified) => verified,
        Err(refused) => {
            let text = match refused {
                AssertionRefused::NotEnrolled => format!(
                    "Nothing was decided: this passkey is not enrolled on {server}. {enrol}"
                ),
                AssertionRefused::OtherPrincipal => format!(
                    "Nothing was decided: this passkey approves another principal's questions, not those of `{principal}`, which asked this. {enrol}"
                ),
                AssertionRefused::Invalid(why) => format!("Nothing was decided: {why}."),
            };
            tracing::info!(record = %record_id, "approval page: a passkey answer was refused");
            return html::text(StatusCode::FORBIDDEN, text);
        }
    };
    if let (Some(entry), Some(dynamic)) = (enrolled.get(index), dynamic)
        && let Err(error) = inner.passkeys.update(&entry.credential_id, dynamic)
    {
        tracing::warn!(%error, "approval page: the passkey's counter could not be saved");
    }
    match inner.records.decide(&record_id, approve, now()).await {
        Ok(Ok(())) => {
            inner.decided.notify_waiters();
            tracing::info!(record = %record_id, approved = approve, "approval page: decided");
            html::text(
                StatusCode::OK,
                if approve {
                    "Approved. The call runs once, as shown; you may close this page."
                } else {
                    "Declined. Nothing will be changed; you may close this page."
                },
            )
        }
        Ok(Err(refused)) => {
            html::text(StatusCode::GONE, format!("Nothing was decided: {refused}."))
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The decision could not be recorded; try again.",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        map
    }

    #[test]
    fn only_requests_to_localhost_and_from_the_page_itself_pass() {
        assert_eq!(
            own_origin(&headers(&[("host", "localhost:4000")])).as_deref(),
            Some("http://localhost:4000")
        );
        for host in [
            "evil.example:4000",
            "127.0.0.1:4000",
            "localhost",
            "localhost:x",
        ] {
            assert_eq!(own_origin(&headers(&[("host", host)])), None, "{host}");
        }
        let body = br#"{"token":"abc","decision":"approve"}"#;
        let good = [
            ("host", "localhost:4000"),
            ("origin", "http://localhost:4000"),
            ("cookie", "other=1; ask_first_page=abc"),
        ];
        assert!(checked_post(&headers(&good), body).is_ok());
        for (drop, why) in [(1, "no origin"), (2, "no cookie")] {
            let mut pairs = good.to_vec();
            pairs.remove(drop);
            assert!(checked_post(&headers(&pairs), body).is_err(), "{why}");
        }
        let mut foreign = good.to_vec();
        foreign[1] = ("origin", "http://localhost:4001");
        assert!(checked_post(&headers(&foreign), body).is_err());
        let mut other_token = good.to_vec();
        other_token[2] = ("cookie", "ask_first_page=abd");
        assert!(checked_post(&headers(&other_token), body).is_err());
    }
}
