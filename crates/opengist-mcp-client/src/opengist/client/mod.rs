//! The Opengist REST client: its construction and the request core every call goes through.
//! The reads (lists, one gist, commits, forks, raw files, users, likes, health, link
//! resolution) are in `reads.rs`; what requests share below the
//! methods (URLs, paging headers, raw-file windows, transport failures) is in `wire.rs`.
//!
//! Reads retry briefly on 502/503/504 and on connections dropped mid-request; writes never
//! retry. The raw write helper (`send_write`) is private to `opengist/`: the only way any
//! other module reaches a create, update or delete is through the methods that consume the
//! guard's clearance or approval (each in its operation's file beside this folder, e.g.
//! `update_gist.rs`); forks and likes are in `fork_gist.rs` and `set_gist_like.rs`, and the
//! like toggle is reachable only through [`OpengistClient::set_like`], which reads the state
//! first.
//!
//! Logging: `tracing` at debug level, method, path, status and timing only. Never the token,
//! never a body.

use std::error::Error as _;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ask_first::fact::Configured;
use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, Response, StatusCode, redirect};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use super::access::AccessCache;
use super::error::{
    self, CallInfo, OpengistError, Scope, TimeoutPhase, TokenUse, display_base, display_host,
};
use super::gist_ref::{GistRef, Sha};
use super::read_time::ReadTime;
use super::requests::GistId;
use super::responses::{
    ApiInfo, Commit, GistDetail, GistSummary, Health, LikeState, Page, RawFile, User,
};

/// Most items Opengist returns per page.
pub const MAX_PER_PAGE: u32 = 100;
/// Pages of a user's gist list [`OpengistClient::resolve`] reads, at most, to find a custom URL.
pub const RESOLVE_MAX_PAGES: u32 = 10;
/// Largest JSON answer read, in bytes (a gist of 50 files of 512 KiB, base64, fits).
pub const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;
/// Largest error body read, in bytes (only its `message` is ever used).
const MAX_ERROR_BYTES: u64 = 64 * 1024;
/// Backoff before each retry of a read.
const RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(100), Duration::from_millis(300)];
/// Longest connect timeout, whatever the request timeout.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to reach an Opengist instance.
#[derive(Clone)]
pub struct ClientOptions {
    /// The instance's base URL, normalised: http(s), no trailing slash, no `/api`.
    pub base_url: Url,
    /// The personal access token (`og_...`), if any. Sent as `Authorization: Bearer`.
    pub token: Option<String>,
    /// Accept invalid TLS certificates on this client only (self-signed instances).
    pub insecure_tls: bool,
    /// The whole-request timeout (connecting, sending, and reading the complete answer).
    pub request_timeout: Duration,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// How many requests go to Opengist at once, and how long one waits for a turn.
    pub limits: RequestLimits,
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("base_url", &display_base(&self.base_url))
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("insecure_tls", &self.insecure_tls)
            .field("request_timeout", &self.request_timeout)
            .field("user_agent", &self.user_agent)
            .field("limits", &self.limits)
            .finish()
    }
}

/// Which gist list to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    /// `GET /api/gists`: the token owner's gists (all of them with `gist:read`; only the public
    /// ones without it; every public gist when no token is sent).
    Mine,
    /// `GET /api/gists/public`: every public gist.
    Public,
    /// `GET /api/gists/liked`: gists the token owner liked.
    Liked,
    /// `GET /api/gists/forked`: gists the token owner forked.
    Forked,
    /// `GET /api/users/:username/gists`: that user's gists visible to this token.
    User(String),
    /// `GET /api/users/:username/liked`.
    UserLiked(String),
    /// `GET /api/users/:username/forked`.
    UserForked(String),
}

/// A client for one Opengist instance. Cheap to clone.
#[derive(Clone)]
pub struct OpengistClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// The connection pool, built on the first request ([`OpengistClient::http`]): building it
    /// reads and parses the system's CA certificates and sets up TLS, start-up time and memory
    /// that a server never called (or called only with tools that make no request) does not
    /// need. Shared by every client made from one with
    /// [`OpengistClient::with_token`] (it carries no credential: each request adds its own
    /// `Authorization`).
    http: Arc<OnceLock<reqwest::Client>>,
    /// What the connection pool is built from.
    http_setup: Arc<HttpSetup>,
    base: Url,
    /// The base URL as a question shows it (no credentials, no query; see [`Self::site`]).
    site: Configured,
    has_token: bool,
    request_timeout: Duration,
    connect_timeout: Duration,
    retry_delays: [Duration; 2],
    /// What the token may do, once learned (see `access.rs`).
    access: AccessCache,
    /// `Authorization: Bearer <token>`, sent with every API request. Sensitive.
    api_auth: Option<HeaderValue>,
    /// The token, for git's Basic credentials only (see `git_head.rs`); never logged.
    git_token: Option<String>,
    /// `Authorization: Token <token>`, the form Opengist's web pages accept (its API takes
    /// `Bearer`): sent only when asking a gist page which gist a link names. Sensitive.
    web_auth: Option<HeaderValue>,
    /// Where the token comes from, for messages about replacing it.
    token_use: TokenUse,
    /// Set once Opengist answered any request with 401: the token is unknown, revoked or
    /// expired (see [`OpengistClient::token_rejected`]).
    rejected: AtomicBool,
    /// Turns for requests to Opengist (see `limit.rs`), shared by every client made from one
    /// with [`OpengistClient::with_token`], so the caps hold for the whole process.
    limiter: Arc<limit::Limiter>,
}

/// A token's three header forms: `Bearer` for the API, the bare token for git, `Token` for
/// web pages. `None` for no token; an error for one that cannot be sent in a header.
type TokenHeaders = Option<(HeaderValue, String, Option<HeaderValue>)>;

fn token_headers(token: Option<&str>) -> Result<TokenHeaders, OpengistError> {
    let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let mut api = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
        OpengistError::ClientInit {
            detail: "the access token contains characters that cannot be sent in an HTTP header; copy the token again from Opengist (Settings → Access Tokens)".into(),
        }
    })?;
    api.set_sensitive(true);
    let web = HeaderValue::from_str(&format!("Token {token}"))
        .ok()
        .map(|mut value| {
            value.set_sensitive(true);
            value
        });
    Ok(Some((api, token.to_owned(), web)))
}

fn split_credential(
    credential: TokenHeaders,
) -> (Option<HeaderValue>, Option<String>, Option<HeaderValue>) {
    match credential {
        Some((api, git, web)) => (Some(api), Some(git), web),
        None => (None, None, None),
    }
}

/// What the HTTP client is built from (see [`Inner::http`]).
struct HttpSetup {
    /// `Accept` and `Content-Type` (each request adds its own `Authorization`).
    headers: HeaderMap,
    user_agent: HeaderValue,
    request_timeout: Duration,
    connect_timeout: Duration,
    insecure_tls: bool,
}

impl HttpSetup {
    fn build(&self) -> Result<reqwest::Client, OpengistError> {
        install_tls_provider();
        reqwest::Client::builder()
            .default_headers(self.headers.clone())
            .user_agent(self.user_agent.clone())
            // Never follow a redirect: the token must not travel to another address, and a
            // POST must not silently turn into a GET.
            .redirect(redirect::Policy::none())
            .timeout(self.request_timeout)
            .connect_timeout(self.connect_timeout)
            .tls_danger_accept_invalid_certs(self.insecure_tls)
            .build()
            .map_err(|e| OpengistError::ClientInit {
                detail: match e.source() {
                    // The TLS set-up's own words (e.g. that no CA certificate was found on
                    // the system); they never hold the token.
                    Some(cause) if e.is_builder() => format!(
                        "the HTTP client could not be built (TLS set-up: {cause}; the system's CA certificates are read from SSL_CERT_FILE or SSL_CERT_DIR, else the usual places such as /etc/ssl/certs: install them, e.g. the ca-certificates package)"
                    ),
                    _ => "the HTTP client could not be built (TLS or configuration)".to_owned(),
                },
            })
    }
}

/// Makes rustls's `ring` crypto provider the process default, which the HTTP clients use (reqwest
/// is built with rustls but without a provider of its own: `ring` instead of aws-lc-rs keeps the
/// binary several MB smaller, with the same certificate verification). Call it before building
/// any `reqwest::Client`; [`OpengistClient`] does. Idempotent: when a provider is already
/// installed (by an earlier call, or by a program embedding this crate), that one stays.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl fmt::Debug for OpengistClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpengistClient")
            .field("base_url", &display_base(&self.inner.base))
            .field("has_token", &self.inner.has_token)
            .finish()
    }
}

impl OpengistClient {
    /// Builds a client. Fails when the base URL is not an http(s) URL with a host, or the
    /// token cannot be sent in a header; never echoes the token.
    pub fn new(options: ClientOptions) -> Result<Self, OpengistError> {
        let ClientOptions {
            base_url,
            token,
            insecure_tls,
            request_timeout,
            user_agent,
            limits,
        } = options;
        if !matches!(base_url.scheme(), "http" | "https")
            || base_url.host().is_none()
            || base_url.cannot_be_a_base()
        {
            return Err(OpengistError::ClientInit {
                detail: "the Opengist URL must be an http:// or https:// address with a host"
                    .into(),
            });
        }
        let mut base = base_url;
        base.set_query(None);
        base.set_fragment(None);
        let trimmed = base.path().trim_end_matches('/').to_owned();
        base.set_path(&trimmed);

        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let credential = token_headers(token.as_deref())?;
        let user_agent = HeaderValue::from_str(&user_agent)
            .unwrap_or_else(|_| HeaderValue::from_static("opengist-mcp"));
        let connect_timeout = request_timeout.min(MAX_CONNECT_TIMEOUT);
        let (api_auth, git_token, web_auth) = split_credential(credential);
        Ok(Self {
            inner: Arc::new(Inner {
                http: Arc::new(OnceLock::new()),
                http_setup: Arc::new(HttpSetup {
                    headers,
                    user_agent,
                    request_timeout,
                    connect_timeout,
                    insecure_tls,
                }),
                site: Configured::fixed(String::leak(display_base(&base))),
                base,
                has_token: api_auth.is_some(),
                request_timeout,
                connect_timeout,
                retry_delays: RETRY_DELAYS,
                access: AccessCache::default(),
                api_auth,
                git_token,
                web_auth,
                token_use: TokenUse::Configured,
                rejected: AtomicBool::new(false),
                limiter: Arc::new(limit::Limiter::new(limits)),
            }),
        })
    }

    /// Where this client's token comes from (for messages about replacing it).
    pub(crate) fn token_use(&self) -> TokenUse {
        self.inner.token_use
    }

    /// A client for the same instance acting with `token` (a person's own, in team mode):
    /// it shares this client's connection pool and its caps on requests to Opengist, and
    /// learns what its own token may do afresh. Fails only for a token that cannot be sent
    /// in a header; never echoes it.
    pub fn with_token(&self, token: &str) -> Result<Self, OpengistError> {
        let (api_auth, git_token, web_auth) = split_credential(token_headers(Some(token))?);
        let inner = &self.inner;
        Ok(Self {
            inner: Arc::new(Inner {
                http: Arc::clone(&inner.http),
                http_setup: Arc::clone(&inner.http_setup),
                base: inner.base.clone(),
                site: inner.site.clone(),
                has_token: api_auth.is_some(),
                request_timeout: inner.request_timeout,
                connect_timeout: inner.connect_timeout,
                retry_delays: inner.retry_delays,
                access: AccessCache::default(),
                api_auth,
                git_token,
                web_auth,
                token_use: TokenUse::PersonBearer,
                rejected: AtomicBool::new(false),
                limiter: Arc::clone(&inner.limiter),
            }),
        })
    }

    /// Whether Opengist has answered a request of this client with 401 (its token is
    /// unknown, revoked or expired). Never reset: a client is made for one token.
    pub fn token_rejected(&self) -> bool {
        self.inner.rejected.load(Ordering::Relaxed)
    }

    /// The HTTP client, built on first use (see [`Inner::http`]). A failure (no CA
    /// certificates on the system, say) is this request's error, and the next request tries
    /// again.
    fn http(&self) -> Result<&reqwest::Client, OpengistError> {
        if let Some(http) = self.inner.http.get() {
            return Ok(http);
        }
        let built = self.inner.http_setup.build()?;
        Ok(self.inner.http.get_or_init(|| built))
    }

    /// The instance's base URL.
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// The instance's base URL as a question shows it: the operator's setting, without
    /// credentials, query or a `/` at its end. Made once per configured client (clients made
    /// with [`Self::with_token`] share it), so leaking it to a `&'static str` costs one string
    /// per configuration, never one per request.
    pub fn site(&self) -> &Configured {
        &self.inner.site
    }

    /// Whether a token is sent with each request.
    pub fn has_token(&self) -> bool {
        self.inner.has_token
    }

    // -----------------------------------------------------------------------------------
    // What the token may do (see `access.rs`; learned by the probes of `probes.rs`).

    /// What the token may do, as remembered.
    pub(super) fn access_cache(&self) -> &AccessCache {
        &self.inner.access
    }

    /// `GET <base>/<owner>/<uuid>.git/info/refs?service=git-upload-pack`: git's smart-HTTP
    /// ref advertisement (see `git_head.rs`), at most 64 KiB of it. A private gist's needs
    /// the owner's name and the token as Basic credentials. Any answer but 200 is an empty
    /// advertisement. Read-only; retried like every read.
    pub(super) async fn git_ref_advertisement(
        &self,
        owner: &str,
        id: &GistId,
        private: bool,
    ) -> Result<Vec<u8>, OpengistError> {
        check_username(owner)?;
        let repository = format!("{}.git", id.as_str());
        let mut url = self.endpoint(&[owner, &repository, "info", "refs"])?;
        url.query_pairs_mut()
            .append_pair("service", "git-upload-pack");
        let call = CallInfo::new(
            "read a gist's head revision",
            Scope::GistRead,
            format!("gist {id}"),
        );
        let started = Instant::now();
        let mut request = self
            .http()?
            .get(url.clone())
            // Opengist routes git requests by a `git/` user agent.
            .header(header::USER_AGENT, "git/2 (opengist-mcp)")
            .header(header::ACCEPT, "*/*");
        if private && let Some(token) = &self.inner.git_token {
            request = request.basic_auth(owner, Some(token));
        } else if let Some(value) = &self.inner.api_auth {
            request = request.header(header::AUTHORIZATION, value.clone());
        }
        let turn = self.inner.limiter.turn(&call).await?;
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(&e, &call))?;
        drop(turn);
        tracing::debug!(
            target: LOG_TARGET,
            method = "GET",
            path = url.path(),
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "opengist git request"
        );
        if response.status() != StatusCode::OK {
            return Ok(Vec::new());
        }
        self.read_capped(response, MAX_ERROR_BYTES, &call).await
    }

    // -----------------------------------------------------------------------------------
    // Plumbing.

    /// `<base>/<segments...>`, each segment percent-encoded as one path segment.
    pub(super) fn endpoint(&self, segments: &[&str]) -> Result<Url, OpengistError> {
        build_url(&self.inner.base, segments)
    }

    fn raw_file_url(&self, id: &GistId, sha: &Sha, filename: &str) -> Result<Url, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "files", sha.as_str()])?;
        // Appended already encoded: `set_path` keeps `%XX` escapes as they are.
        let path = format!("{}/{}", url.path(), raw_filename_segment(filename));
        url.set_path(&path);
        Ok(url)
    }

    /// A 404 for a gist this token cannot see; cheap (one commit).
    async fn ensure_visible(&self, id: &GistId) -> Result<(), OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "commits"])?;
        add_paging(&mut url, 1, 1);
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        self.check(response, &call).await.map(drop)
    }

    /// A JSON GET as [`send_read`](Self::send_read) sends it, and when Opengist began
    /// answering at the earliest (its `Date` header less the time the request took).
    async fn send_read_timed(
        &self,
        url: Url,
        call: &CallInfo,
    ) -> Result<(Response, Option<ReadTime>), OpengistError> {
        let started = Instant::now();
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), call)
            .await?;
        let date = response
            .headers()
            .get(header::DATE)
            .and_then(|v| v.to_str().ok());
        let read = ReadTime::from_date_header(date, started.elapsed());
        Ok((response, read))
    }

    /// GET with retries on 502/503/504 and dropped connections. Returns any status.
    async fn send_read(
        &self,
        url: Url,
        accept: HeaderValue,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        self.send_get(url, accept, None, call).await
    }

    /// [`send_read`](Self::send_read), with `authorization` in place of the API's when given.
    async fn send_get(
        &self,
        url: Url,
        accept: HeaderValue,
        authorization: Option<&HeaderValue>,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        let mut attempt = 0usize;
        loop {
            let started = Instant::now();
            let mut request = self
                .http()?
                .get(url.clone())
                .header(header::ACCEPT, accept.clone());
            if let Some(value) = authorization.or(self.inner.api_auth.as_ref()) {
                request = request.header(header::AUTHORIZATION, value.clone());
            }
            let turn = self.inner.limiter.turn(call).await?;
            let result = request.send().await;
            drop(turn);
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let retry_delay = self.inner.retry_delays.get(attempt).copied();
            match result {
                Ok(response) => {
                    let status = response.status().as_u16();
                    tracing::debug!(
                    target: LOG_TARGET,
                                method = "GET",
                                path = url.path(),
                                status,
                                elapsed_ms,
                                attempt,
                                "opengist request"
                            );
                    match retry_delay {
                        Some(delay) if matches!(status, 502..=504) => {
                            drop(response);
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                        }
                        _ => return Ok(response),
                    }
                }
                Err(e) => {
                    tracing::debug!(
                    target: LOG_TARGET,
                                method = "GET",
                                path = url.path(),
                                failure = failure_kind(&e),
                                elapsed_ms,
                                attempt,
                                "opengist request failed"
                            );
                    match retry_delay {
                        Some(delay) if was_dropped(&e) => {
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                        }
                        _ => return Err(self.transport_error(&e, call)),
                    }
                }
            }
        }
    }

    /// The one way a request with a side effect is sent. Never retried. Private to
    /// `opengist/`: the public write methods (here and in each guarded operation's file)
    /// consume a clearance or approval before calling it.
    pub(super) async fn send_write<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: Url,
        body: Option<&B>,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        let started = Instant::now();
        let mut request = self.http()?.request(method.clone(), url.clone());
        if let Some(value) = &self.inner.api_auth {
            request = request.header(header::AUTHORIZATION, value.clone());
        }
        if let Some(body) = body {
            let bytes = serde_json::to_vec(body).map_err(|_| OpengistError::InvalidArgument {
                message: "the request could not be encoded as JSON".into(),
            })?;
            request = request.body(bytes);
        }
        let turn = self.inner.limiter.turn(call).await?;
        let result = request.send().await;
        drop(turn);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok(response) => {
                tracing::debug!(target: LOG_TARGET, method = %method, path = url.path(), status = response.status().as_u16(), elapsed_ms, "opengist request");
                Ok(response)
            }
            Err(e) => {
                tracing::debug!(target: LOG_TARGET, method = %method, path = url.path(), failure = failure_kind(&e), elapsed_ms, "opengist request failed");
                // Past the connect phase the request may have reached Opengist: say so, never
                // "try again" (the write tools read back to learn the outcome).
                Err(match answer_lost(&e, self.inner.request_timeout) {
                    Some(cause) => OpengistError::AnswerLost {
                        operation: call.operation,
                        cause,
                    },
                    None => self.transport_error(&e, call),
                })
            }
        }
    }

    async fn get_json<T: DeserializeOwned>(
        &self,
        url: Url,
        call: &CallInfo,
    ) -> Result<T, OpengistError> {
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), call)
            .await?;
        let response = self.check(response, call).await?;
        self.parse_json(response, call).await
    }

    async fn get_page<T: DeserializeOwned>(
        &self,
        url: Url,
        page: u32,
        per_page: u32,
        call: &CallInfo,
    ) -> Result<Page<T>, OpengistError> {
        self.get_page_timed(url, page, per_page, call)
            .await
            .map(|(page, _)| page)
    }

    /// One page of a list, and when Opengist began answering it at the earliest.
    async fn get_page_timed<T: DeserializeOwned>(
        &self,
        url: Url,
        page: u32,
        per_page: u32,
        call: &CallInfo,
    ) -> Result<(Page<T>, Option<ReadTime>), OpengistError> {
        let (response, read) = self.send_read_timed(url, call).await?;
        let response = self.check(response, call).await?;
        let headers = PageHeaders::parse(response.headers());
        let items: Vec<T> = self.parse_json(response, call).await?;
        Ok((headers.into_page(items, page, per_page), read))
    }

    /// Passes 2xx through; turns anything else into its error.
    pub(super) async fn check(
        &self,
        response: Response,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(self.error_from(response, call).await)
        }
    }

    pub(super) async fn error_from(&self, response: Response, call: &CallInfo) -> OpengistError {
        let status = response.status().as_u16();
        if matches!(status, 401 | 403) {
            // The token or its scopes may have changed: learn them again on next use.
            self.inner.access.forget();
        }
        if status == 401 && self.inner.has_token {
            self.inner.rejected.store(true, Ordering::Relaxed);
        }
        // A body that cannot be read only loses Opengist's message, not the status.
        let body = self
            .read_capped(response, MAX_ERROR_BYTES, call)
            .await
            .unwrap_or_default();
        error::from_status(status, &body, call, &self.inner.base)
            .with_token_use(self.inner.token_use)
    }

    pub(super) async fn parse_json<T: DeserializeOwned>(
        &self,
        response: Response,
        call: &CallInfo,
    ) -> Result<T, OpengistError> {
        let bytes = self.read_capped(response, MAX_JSON_BYTES, call).await?;
        serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
            operation: call.operation,
            detail: error::describe_json_error(&e),
        })
    }

    /// Reads a body chunk by chunk, refusing more than `limit` bytes. A body cut short by a
    /// limit of [`MAX_ERROR_BYTES`] is returned cut.
    pub(super) async fn read_capped(
        &self,
        mut response: Response,
        limit: u64,
        call: &CallInfo,
    ) -> Result<Vec<u8>, OpengistError> {
        // Sized once when Opengist sends a Content-Length (Go's HTTP server does for small
        // answers), instead of growing by doubling.
        let expected = response.content_length().unwrap_or(0).min(limit);
        let mut out = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(&e, call))?
        {
            let room = limit.saturating_sub(out.len() as u64) as usize;
            if chunk.len() > room {
                if limit == MAX_ERROR_BYTES {
                    out.extend_from_slice(chunk.get(..room).unwrap_or_default());
                    return Ok(out);
                }
                return Err(OpengistError::ResponseTooLarge {
                    operation: call.operation,
                    limit,
                });
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// After a successful PATCH: the gist from the answer, or read back.
    pub(super) async fn written_detail(
        &self,
        response: Response,
        id: &GistId,
        call: &CallInfo,
    ) -> Result<GistDetail, OpengistError> {
        let response = self.check(response, call).await?;
        let parsed = match self.read_capped(response, MAX_JSON_BYTES, call).await {
            Ok(body) => serde_json::from_slice::<GistDetail>(&body).ok(),
            Err(_) => None,
        };
        if let Some(mut detail) = parsed {
            self.complete_head(&mut detail).await;
            return Ok(detail);
        }
        self.get_gist(id)
            .await
            .map_err(|e| OpengistError::WrittenButUnread {
                id: id.to_string(),
                action: "updated",
                reason: e.to_string(),
            })
    }

    fn transport_error(&self, e: &reqwest::Error, call: &CallInfo) -> OpengistError {
        let base = &self.inner.base;
        if e.is_timeout() {
            let (phase, after) = if e.is_connect() {
                (TimeoutPhase::Connect, self.inner.connect_timeout)
            } else {
                (TimeoutPhase::Request, self.inner.request_timeout)
            };
            return OpengistError::Timeout {
                phase,
                after,
                host: display_host(base),
                operation: call.operation,
            };
        }
        if has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused]) {
            return OpengistError::ConnectionRefused {
                base: display_base(base),
            };
        }
        let detail = if e.is_dns() {
            "its host name could not be resolved (check OPENGIST_URL)"
        } else if is_tls_problem(e) {
            "the TLS handshake failed (for a self-signed certificate set OPENGIST_INSECURE_TLS=true; for a plain-http instance use http://)"
        } else if was_dropped(e) {
            "the connection was closed before a complete answer arrived (a proxy or the instance may have dropped it); try again"
        } else if e.is_connect() {
            "the connection could not be opened (check OPENGIST_URL and the network)"
        } else if e.is_body() || e.is_decode() {
            "the answer could not be read to the end; try again"
        } else {
            "the request failed before an answer arrived; try again"
        };
        OpengistError::Connection {
            base: display_base(base),
            detail,
        }
    }
}

mod limit;
mod reads;
mod wire;
pub use limit::{
    DEFAULT_MAX_REQUESTS, DEFAULT_MAX_REQUESTS_PER_PRINCIPAL, DEFAULT_QUEUE_SECS, RequestLimits,
    as_principal,
};
pub(crate) use wire::utf8_window;

/// The target of this client's log events: the module path they had while the client was a
/// module of `opengist-mcp`, so `RUST_LOG` filters written against it
/// (`opengist_mcp::opengist=debug`) and the lines on stderr stay as they were.
pub(super) const LOG_TARGET: &str = "opengist_mcp::opengist::client";
use wire::*;

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

    fn base() -> Url {
        Url::parse("https://gist.example.com").expect("url")
    }

    fn id() -> GistId {
        GistId::parse(ID).expect("id")
    }

    fn client(base: &str, token: Option<&str>, timeout: Duration) -> OpengistClient {
        OpengistClient::new(ClientOptions {
            base_url: Url::parse(base).expect("url"),
            token: token.map(str::to_owned),
            insecure_tls: false,
            request_timeout: timeout,
            user_agent: "opengist-mcp-test".into(),
            limits: RequestLimits::default(),
        })
        .expect("client")
    }

    #[test]
    fn the_site_a_question_links_carries_no_credentials_query_or_trailing_slash() {
        let c = client(
            "https://ana:hunter2@gist.example.com/og/?next=x#top",
            None,
            Duration::from_secs(5),
        );
        assert_eq!(c.site().as_str(), "https://gist.example.com/og");
        // Every client made for a person's token shows the same site.
        let person = c.with_token("og_person").expect("client");
        assert_eq!(person.site(), c.site());
        assert_eq!(
            client("http://127.0.0.1:6157", None, Duration::from_secs(5))
                .site()
                .as_str(),
            "http://127.0.0.1:6157"
        );
    }

    #[test]
    fn raw_file_urls_encode_the_filename_as_one_segment() {
        let c = client("https://gist.example.com", None, Duration::from_secs(5));
        let sha = Sha::parse("0123abcd").expect("sha");
        let url = |name: &str| c.raw_file_url(&id(), &sha, name).expect("url").to_string();
        assert_eq!(
            url("my notes.md"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/my%20notes.md")
        );
        assert_eq!(
            url("a#b?c.txt"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/a%23b%3Fc.txt")
        );
        assert_eq!(
            url("résumé ✓.md"),
            format!(
                "https://gist.example.com/api/gists/{ID}/files/0123abcd/r%C3%A9sum%C3%A9%20%E2%9C%93.md"
            )
        );
        assert_eq!(
            url("notes (1).md"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/notes%20%281%29.md")
        );
        assert_eq!(
            url("k=v;x@y,$&:.md"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/k=v;x@y,$&:.md")
        );
        // `+` and `%` are sent in a deliberately non-canonical form (see raw_filename_segment).
        assert_eq!(
            url("c++.md"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/c%2B%2B.md")
        );
        assert_eq!(
            url("a%20b.md"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/%61%2520b.md")
        );
        assert_eq!(
            url("%"),
            format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/%25")
        );
    }

    /// Go's `net/url` escaping of a path (`shouldEscape` in `encodePath` mode).
    fn go_escape_path(path: &[u8]) -> String {
        let mut out = String::new();
        for &b in path {
            if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }

    fn percent_decode(text: &str, plus_is_space: bool) -> Option<Vec<u8>> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'%' => {
                    let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                    out.push(u8::from_str_radix(hex, 16).ok()?);
                    i += 3;
                }
                b'+' if plus_is_space => {
                    out.push(b' ');
                    i += 1;
                }
                b => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        Some(out)
    }

    /// The name Opengist looks up for a request path: Go keeps the raw path only when it is
    /// not the canonical encoding of the decoded one; the router (echo v4) matches on the raw
    /// path if kept, else on the decoded one, without unescaping parameters; the handler's git
    /// layer query-unescapes the name (returning it unchanged when that fails).
    fn name_opengist_sees(raw_path: &str) -> String {
        let decoded = percent_decode(raw_path, false).expect("valid escapes");
        let routed = if go_escape_path(&decoded) == raw_path {
            String::from_utf8(decoded).expect("utf-8")
        } else {
            raw_path.to_owned()
        };
        let param = routed.rsplit('/').next().expect("segment").to_owned();
        percent_decode(&param, true)
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or(param)
    }

    #[test]
    fn raw_file_names_survive_opengists_two_decodings() {
        let c = client("https://gist.example.com", None, Duration::from_secs(5));
        let sha = Sha::parse("0123abcd").expect("sha");
        for name in [
            "notes.md",
            "my notes.md",
            "notes (1).md",
            "c++.md",
            "a+b c.md",
            "a%20b.md",
            "100%.txt",
            "50% off+tax.md",
            "%",
            "%%",
            "% %",
            "'quoted' *star* !bang [x] {y} ^|`\\",
            "k=v;x@y,$&:.md",
            "résumé ✓.md",
            "#hash?.md",
            "-_.~",
        ] {
            let url = c.raw_file_url(&id(), &sha, name).expect("url");
            assert_eq!(
                name_opengist_sees(url.path()),
                name,
                "{name:?} sent as {url}"
            );
        }
    }

    #[test]
    fn endpoints_keep_the_base_path() {
        let c = client("https://example.com/og/", None, Duration::from_secs(5));
        assert_eq!(
            c.endpoint(&["api", "gists"]).expect("url").as_str(),
            "https://example.com/og/api/gists"
        );
        let c = client("http://127.0.0.1:6157", None, Duration::from_secs(5));
        assert_eq!(
            c.endpoint(&["api", "users", "a b", "gists"])
                .expect("url")
                .as_str(),
            "http://127.0.0.1:6157/api/users/a%20b/gists"
        );
        assert_eq!(
            c.endpoint(&["healthcheck"]).expect("url").as_str(),
            "http://127.0.0.1:6157/healthcheck"
        );
    }

    #[test]
    fn bad_base_urls_and_tokens_are_refused_without_echo() {
        let make = |base: &str, token: &str| {
            OpengistClient::new(ClientOptions {
                base_url: Url::parse(base).expect("url"),
                token: Some(token.to_owned()),
                insecure_tls: false,
                request_timeout: Duration::from_secs(1),
                user_agent: "t".into(),
                limits: RequestLimits::default(),
            })
        };
        assert!(matches!(
            make("ftp://x.example", "og_x"),
            Err(OpengistError::ClientInit { .. })
        ));
        assert!(matches!(
            make("mailto:a@b.example", "og_x"),
            Err(OpengistError::ClientInit { .. })
        ));
        let err = make("https://x.example", "og_sec\nret").expect_err("bad header");
        assert!(!err.to_string().contains("og_sec"));
        let ok = make("https://x.example", "og_secret").expect("client");
        assert!(ok.has_token());
        assert!(!format!("{ok:?}").contains("og_secret"));
        let options = ClientOptions {
            base_url: base(),
            token: Some("og_secret".into()),
            insecure_tls: false,
            request_timeout: Duration::from_secs(1),
            user_agent: "t".into(),
            limits: RequestLimits::default(),
        };
        assert!(!format!("{options:?}").contains("og_secret"));
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).expect("value"));
        }
        map
    }

    #[test]
    fn page_headers_are_read() {
        let h = headers(&[
            ("x-page", "2"),
            ("x-per-page", "30"),
            ("x-total", "75"),
            ("x-total-pages", "3"),
            (
                "link",
                r#"<https://g.example/api/gists?page=3&per_page=30>; rel="next", <https://g.example/api/gists?page=1&per_page=30>; rel="prev""#,
            ),
        ]);
        let parsed = PageHeaders::parse(&h);
        assert_eq!(
            parsed,
            PageHeaders {
                page: Some(2),
                per_page: Some(30),
                total: Some(75),
                total_pages: Some(3),
                link_next: Some(true),
            }
        );
        let page = parsed.into_page(vec![1, 2, 3], 9, 9);
        assert_eq!((page.page, page.per_page, page.has_next), (2, 30, true));
        assert_eq!((page.total, page.total_pages), (Some(75), Some(3)));
    }

    #[test]
    fn last_pages_and_missing_headers() {
        // Last page: a prev link only.
        let last = PageHeaders::parse(&headers(&[
            ("x-page", "3"),
            ("x-per-page", "30"),
            (
                "link",
                r#"<https://g.example/api/gists?page=2>; rel="prev""#,
            ),
        ]));
        assert!(!last.into_page(vec![0; 30], 3, 30).has_next);
        // Commits: X-Page and Link only, no totals.
        let commits = PageHeaders::parse(&headers(&[
            ("x-page", "1"),
            ("x-per-page", "2"),
            ("link", r#"<https://g.example/x?page=2>; rel=next"#),
        ]));
        let page = commits.into_page(vec![1, 2], 1, 2);
        assert!(page.has_next && page.total.is_none() && page.total_pages.is_none());
        // X-Page alone: Opengist writes no Link on a single page.
        let single = PageHeaders::parse(&headers(&[("x-page", "1")]));
        assert!(!single.into_page(vec![1, 2], 1, 2).has_next);
        // Nothing at all: inferred from a full page.
        assert!(PageHeaders::default().into_page(vec![1, 2], 1, 2).has_next);
        assert!(!PageHeaders::default().into_page(vec![1], 1, 2).has_next);
        // Garbage headers are absent headers.
        let junk = PageHeaders::parse(&headers(&[("x-page", "two"), ("x-total", "-1")]));
        assert_eq!(junk, PageHeaders::default());
    }

    #[test]
    fn link_header_variants() {
        assert!(link_has_next(r#"<a>; rel="next""#));
        assert!(link_has_next(r#"<a>;rel=next"#));
        assert!(link_has_next(
            r#"<a,b>; rel="prev", <c>; title="x"; rel="last next""#
        ));
        assert!(link_has_next(r#"<a>; REL="Next""#));
        assert!(!link_has_next(r#"<a>; rel="prev""#));
        assert!(!link_has_next(r#"<a>; rel="nextish""#));
        assert!(!link_has_next("garbage"));
        assert!(!link_has_next("<unterminated; rel=next"));
        assert!(!link_has_next(""));
    }

    #[test]
    fn paging_is_clamped() {
        assert_eq!(page_params(0, 0), (1, 1));
        assert_eq!(page_params(3, 500), (3, 100));
        assert_eq!(page_params(1, 30), (1, 30));
    }

    #[test]
    fn versions_from_headers() {
        assert_eq!(
            version_header(&headers(&[("x-opengist-version", "1.15.1")])).as_deref(),
            Some("1.15.1")
        );
        assert_eq!(
            version_header(&headers(&[("server", "Opengist/1.15.1 (linux)")])).as_deref(),
            Some("1.15.1")
        );
        assert_eq!(version_header(&headers(&[("server", "nginx")])), None);
    }

    #[test]
    fn utf8_windows_forgive_cut_characters_only_at_cut_edges() {
        let text = "héllo ✓".as_bytes();
        assert!(utf8_window(text, false, false));
        // Cut inside "✓" at the end.
        let cut_end = &text[..text.len() - 1];
        assert!(utf8_window(cut_end, false, true));
        assert!(!utf8_window(cut_end, false, false));
        // Starting inside "é".
        assert!(utf8_window(&text[2..], true, false));
        assert!(!utf8_window(&text[2..], false, false));
        assert!(!utf8_window(&[0xff, 0xfe, 0x00], false, true));
    }

    #[test]
    fn slugs_match_slug_url_or_the_html_url() {
        let summary: GistSummary = serde_json::from_value(serde_json::json!({
            "id": ID, "visibility": "public", "slug_url": "my-notes",
            "html_url": "https://g.example/alice/my-notes"
        }))
        .expect("summary");
        assert!(link_matches(&summary, "my-notes"));
        assert!(link_matches(&summary, "My-Notes"));
        assert!(!link_matches(&summary, "my-note"));
        // Opengist's `uuid LIKE 'name%'`: a prefix, in any case, `_` for any one character.
        assert!(link_matches(&summary, ID));
        assert!(link_matches(&summary, &ID[..4].to_uppercase()));
        assert!(link_matches(&summary, "3f_a"));
        assert!(!link_matches(&summary, "3f2b"));
        assert!(!link_matches(&summary, &format!("{ID}0")));
        let no_slug: GistSummary = serde_json::from_value(serde_json::json!({
            "id": ID, "visibility": "public", "html_url": "https://g.example/alice/other/"
        }))
        .expect("summary");
        assert!(link_matches(&no_slug, "other"));
    }

    /// A response whose body arrives in the given chunks, with no server involved.
    fn chunked(chunks: &[&'static [u8]], content_length: Option<u64>) -> Response {
        let items: Vec<Result<&'static [u8], std::io::Error>> =
            chunks.iter().map(|c| Ok(*c)).collect();
        let mut builder = http::Response::builder().status(200);
        if let Some(length) = content_length {
            builder = builder.header(header::CONTENT_LENGTH, length);
        }
        let body = reqwest::Body::wrap_stream(futures::stream::iter(items));
        Response::from(builder.body(body).expect("response"))
    }

    async fn window(
        chunks: &[&'static [u8]],
        length: Option<u64>,
        offset: u64,
        max: u64,
    ) -> RawFile {
        let c = client("http://127.0.0.1:9", None, Duration::from_secs(5));
        let call = CallInfo::new("read a raw file", Scope::GistRead, "file");
        read_window(chunked(chunks, length), offset, max, length, &call, &c)
            .await
            .expect("window")
    }

    #[tokio::test]
    async fn windows_across_chunk_boundaries() {
        let chunks: &[&[u8]] = &[b"0123456", b"789abcd", b"efghijk", b"lmn"];
        // Spanning three chunks, more follows.
        let w = window(chunks, None, 5, 12).await;
        assert_eq!(w.bytes, b"56789abcdefg");
        assert!(w.truncated && w.is_utf8 && w.total_bytes.is_none());
        // Ending exactly at a chunk boundary, size unknown: one more chunk is peeked.
        let w = window(chunks, None, 0, 14).await;
        assert_eq!(w.bytes, b"0123456789abcd");
        assert!(w.truncated);
        // Ending exactly at the end of the file.
        let w = window(chunks, None, 10, 14).await;
        assert_eq!(w.bytes, b"abcdefghijklmn");
        assert!(!w.truncated);
        // The whole file, with room to spare.
        let w = window(chunks, Some(24), 0, 1000).await;
        assert_eq!(w.bytes.len(), 24);
        assert!(!w.truncated);
        assert_eq!(w.total_bytes, Some(24));
        // Exactly at the cap with a known size: no peeking needed.
        let w = window(chunks, Some(24), 20, 4).await;
        assert_eq!(w.bytes, b"klmn");
        assert!(!w.truncated);
        // Past the end.
        let w = window(chunks, Some(24), 24, 10).await;
        assert!(w.bytes.is_empty() && !w.truncated);
        let w = window(chunks, None, 100, 10).await;
        assert!(w.bytes.is_empty() && !w.truncated);
    }

    #[tokio::test]
    async fn windows_report_binary_and_cut_text() {
        let text = "añb✓c".as_bytes(); // a, ñ (2 bytes), b, ✓ (3 bytes), c
        let leaked: &'static [u8] = Box::leak(text.to_vec().into_boxed_slice());
        // Cut inside ✓ at the end: still text.
        let w = window(&[leaked], None, 0, 5).await;
        assert!(w.truncated && w.is_utf8);
        // Starting inside ñ: still text.
        let w = window(&[leaked], None, 2, 100).await;
        assert!(w.is_utf8);
        let w = window(&[b"\x89PNG\r\n\x1a\n\x00\xff"], None, 0, 100).await;
        assert!(!w.is_utf8);
    }

    // -- The private write path against an in-process fake (faults only). --

    mod fake {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        use axum::Router;
        use axum::http::StatusCode;
        use axum::routing::any;

        /// Serves `status` to every request and counts the hits.
        pub(super) async fn always(status: u16) -> (String, Arc<AtomicUsize>) {
            let hits = Arc::new(AtomicUsize::new(0));
            let counter = hits.clone();
            let app = Router::new().fallback(any(move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    (
                        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                        r#"{"message":"unavailable","status":503}"#,
                    )
                }
            }));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            (format!("http://{addr}"), hits)
        }
    }

    #[tokio::test]
    async fn a_401_or_403_forgets_what_the_token_may_do() {
        use super::super::access::{Grant, TokenAccess};
        for status in [401, 403] {
            let (base, _) = fake::always(status).await;
            let c = client(&base, Some("og_test"), Duration::from_secs(5));
            c.access_cache().set(Arc::new(TokenAccess {
                identity: None,
                gist_read: Grant::Present,
                gist_write: Grant::Present,
                user_read: Grant::Missing,
                user_write: Grant::Missing,
            }));
            assert!(c.known_token_access().is_some());
            let _ = c.get_gist(&id()).await.expect_err("refused");
            assert!(
                c.known_token_access().is_none(),
                "{status}: still remembered"
            );
        }
    }

    #[tokio::test]
    async fn writes_are_never_retried() {
        use std::sync::atomic::Ordering;
        for method in [Method::POST, Method::PATCH, Method::DELETE, Method::PUT] {
            let (base, hits) = fake::always(503).await;
            let c = client(&base, Some("og_test"), Duration::from_secs(5));
            let url = c.endpoint(&["api", "gists", ID]).expect("url");
            let call = CallInfo::new("update a gist", Scope::GistWrite, format!("gist {ID}"));
            let response = c
                .send_write(
                    method.clone(),
                    url,
                    Some(&serde_json::json!({"title": "x"})),
                    &call,
                )
                .await
                .expect("a response");
            let error = c.check(response, &call).await.expect_err("503");
            assert!(
                matches!(error, OpengistError::Server { status: 503, .. }),
                "{error}"
            );
            assert_eq!(hits.load(Ordering::SeqCst), 1, "{method} was retried");
        }
    }

    /// Accepts connections, reads what arrives, and then hangs up (`hang_up`) or says nothing.
    async fn silent_peer(hang_up: bool) -> String {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    if !hang_up {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                });
            }
        });
        format!("http://{addr}")
    }

    /// A create request through the one write path, as the write tools send it.
    async fn post_a_gist(c: &OpengistClient) -> Result<Response, OpengistError> {
        let url = c.endpoint(&["api", "gists"]).expect("url");
        let call = CallInfo::new("create a gist", Scope::GistWrite, "the new gist");
        c.send_write(Method::POST, url, Some(&serde_json::json!({"x": 1})), &call)
            .await
    }

    #[tokio::test]
    async fn a_write_whose_answer_is_lost_says_so_and_never_try_again() {
        for hang_up in [true, false] {
            let base = silent_peer(hang_up).await;
            let c = client(&base, Some("og_test"), Duration::from_secs(1));
            let error = post_a_gist(&c).await.expect_err("no answer");
            assert!(
                matches!(error, OpengistError::AnswerLost { .. }),
                "hang_up={hang_up}: {error:?}"
            );
            assert!(error.write_may_have_applied());
            let text = error.to_string();
            assert!(text.contains("may or may not have applied"), "{text}");
            assert!(!text.contains("try again"), "{text}");
        }
    }

    #[tokio::test]
    async fn a_check_whose_answer_is_lost_says_nothing_was_changed() {
        for hang_up in [true, false] {
            let base = silent_peer(hang_up).await;
            let c = client(&base, Some("og_test"), Duration::from_secs(1));
            let error = c.check_can_create().await.expect_err("no answer");
            assert!(
                matches!(error, OpengistError::CheckAnswerLost { .. }),
                "hang_up={hang_up}: {error:?}"
            );
            assert!(!error.write_may_have_applied(), "the check writes nothing");
            let text = error.to_string();
            assert!(text.contains("could not be made"), "{text}");
            assert!(text.contains("nothing was changed"), "{text}");
            assert!(!text.contains("may or may not"), "{text}");
            assert!(!text.contains("applied"), "{text}");
        }
    }

    #[tokio::test]
    async fn a_write_that_could_not_connect_was_not_sent() {
        let unused = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", unused.local_addr().expect("addr"));
        drop(unused);
        let c = client(&base, Some("og_test"), Duration::from_secs(1));
        let error = post_a_gist(&c).await.expect_err("refused");
        assert!(
            matches!(error, OpengistError::ConnectionRefused { .. }),
            "{error:?}"
        );
        assert!(!error.write_may_have_applied());
    }

    #[tokio::test]
    async fn reads_retry_on_503_twice_then_give_up() {
        use std::sync::atomic::Ordering;
        let (base, hits) = fake::always(503).await;
        let c = client(&base, None, Duration::from_secs(5));
        let error = c.get_gist(&id()).await.expect_err("503");
        assert!(
            matches!(error, OpengistError::Server { status: 503, .. }),
            "{error}"
        );
        assert_eq!(hits.load(Ordering::SeqCst), 3);
    }
}
