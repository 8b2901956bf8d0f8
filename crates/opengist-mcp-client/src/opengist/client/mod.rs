//! The Opengist REST client: its options and construction. The request core every call goes
//! through (sending, retries, status checks, parsing) is in `request.rs`; the reads (lists,
//! one gist, commits, forks, raw files, users, likes, health, link resolution) are in
//! `reads.rs`; what requests share below the methods (URLs, paging headers, raw-file
//! windows, transport failures) is in `wire.rs`; the concurrency limits in `limit.rs`.
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
}

mod limit;
mod reads;
mod request;
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
mod tests;
