//! The Opengist REST client.
//!
//! Reads retry briefly on 502/503/504 and on connections dropped mid-request; writes never
//! retry. The raw write helper (`send_write`) is private to `opengist/`: the only way any
//! other module reaches a create, update or delete is through the methods that consume the
//! guard's clearance or approval (each in its operation's file beside this one, e.g.
//! `update_gist.rs`), and the like toggle is reachable only through
//! [`OpengistClient::set_like`], which reads the state first.
//!
//! Logging: `tracing` at debug level, method, path, status and timing only. Never the token,
//! never a body.

use std::error::Error as _;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, Response, StatusCode, redirect};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use super::access::AccessCache;
use super::error::{
    self, CallInfo, OpengistError, Scope, TimeoutPhase, display_base, display_host,
};
use super::gist_ref::{GistRef, Sha};
use super::read_time::ReadTime;
use super::requests::GistId;
use super::responses::{
    ApiInfo, Commit, ForkOutcome, GistDetail, GistSummary, Health, LikeChange, LikeState, Page,
    RawFile, User,
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
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("base_url", &display_base(&self.base_url))
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("insecure_tls", &self.insecure_tls)
            .field("request_timeout", &self.request_timeout)
            .field("user_agent", &self.user_agent)
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
    http: reqwest::Client,
    base: Url,
    has_token: bool,
    request_timeout: Duration,
    connect_timeout: Duration,
    retry_delays: [Duration; 2],
    /// What the token may do, once learned (see `access.rs`).
    access: AccessCache,
    /// The token, for git's Basic credentials only (see `git_head.rs`); never logged.
    git_token: Option<String>,
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
        let git_token = token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let has_token = match token.as_deref().map(str::trim) {
            Some(token) if !token.is_empty() => {
                let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                    OpengistError::ClientInit {
                        detail: "OPENGIST_TOKEN contains characters that cannot be sent in an HTTP header; copy the token again from Opengist (Settings → Access Tokens)".into(),
                    }
                })?;
                value.set_sensitive(true);
                headers.insert(header::AUTHORIZATION, value);
                true
            }
            _ => false,
        };
        let user_agent = HeaderValue::from_str(&user_agent)
            .unwrap_or_else(|_| HeaderValue::from_static("opengist-mcp"));
        let connect_timeout = request_timeout.min(MAX_CONNECT_TIMEOUT);
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .user_agent(user_agent)
            // Never follow a redirect: the token must not travel to another address, and a
            // POST must not silently turn into a GET.
            .redirect(redirect::Policy::none())
            .timeout(request_timeout)
            .connect_timeout(connect_timeout)
            .tls_danger_accept_invalid_certs(insecure_tls)
            .build()
            .map_err(|e| OpengistError::ClientInit {
                detail: format!(
                    "the HTTP client could not be built ({})",
                    if e.is_builder() {
                        "TLS or configuration"
                    } else {
                        "unknown cause"
                    }
                ),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                base,
                has_token,
                request_timeout,
                connect_timeout,
                retry_delays: RETRY_DELAYS,
                access: AccessCache::default(),
                git_token,
            }),
        })
    }

    /// The instance's base URL.
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// Whether a token is sent with each request.
    pub fn has_token(&self) -> bool {
        self.inner.has_token
    }

    // -----------------------------------------------------------------------------------
    // Reads.

    /// One page of a gist list, most recently updated first. `page` is 1-based (0 reads as
    /// 1); `per_page` is clamped to 1..=100; `since` keeps gists updated at or after it.
    pub async fn list_gists(
        &self,
        scope: ListScope,
        page: u32,
        per_page: u32,
        since: Option<DateTime<Utc>>,
    ) -> Result<Page<GistSummary>, OpengistError> {
        self.list_gists_timed(scope, page, per_page, since)
            .await
            .map(|(page, _)| page)
    }

    /// [`list_gists`](Self::list_gists), and when Opengist began answering at the earliest,
    /// which tells the cache whether the topics the page shows can be kept
    /// ([`GistCache::keep_listed`](crate::cache::GistCache::keep_listed)).
    pub async fn list_gists_timed(
        &self,
        scope: ListScope,
        page: u32,
        per_page: u32,
        since: Option<DateTime<Utc>>,
    ) -> Result<(Page<GistSummary>, Option<ReadTime>), OpengistError> {
        let (segments, call): (Vec<&str>, CallInfo) = match &scope {
            ListScope::Mine => (
                vec!["api", "gists"],
                CallInfo::new("list gists", Scope::GistRead, "the gist list"),
            ),
            ListScope::Public => (
                vec!["api", "gists", "public"],
                CallInfo::new("list public gists", Scope::GistRead, "the public gist list"),
            ),
            ListScope::Liked => (
                vec!["api", "gists", "liked"],
                CallInfo::new("list liked gists", Scope::AnyToken, "the liked gist list"),
            ),
            ListScope::Forked => (
                vec!["api", "gists", "forked"],
                CallInfo::new("list forked gists", Scope::AnyToken, "the forked gist list"),
            ),
            ListScope::User(name) | ListScope::UserLiked(name) | ListScope::UserForked(name) => {
                check_username(name)?;
                let tail = match scope {
                    ListScope::UserLiked(_) => "liked",
                    ListScope::UserForked(_) => "forked",
                    _ => "gists",
                };
                (
                    vec!["api", "users", name.as_str(), tail],
                    CallInfo::new(
                        "list a user's gists",
                        Scope::GistRead,
                        format!("user {name:?}"),
                    ),
                )
            }
        };
        let mut url = self.endpoint(&segments)?;
        let (page, per_page) = page_params(page, per_page);
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("page", &page.to_string());
            query.append_pair("per_page", &per_page.to_string());
            if let Some(since) = since {
                query.append_pair("since", &since.to_rfc3339_opts(SecondsFormat::Secs, true));
            }
        }
        self.get_page_timed(url, page, per_page, &call).await
    }

    /// A gist with its files (each content at most 512 KiB, at most 50 files), its 10 newest
    /// commits and up to 11 of its public forks. Its `topics` come back empty whatever the
    /// gist has: Opengist's single-gist lookup does not load them (lists show them).
    pub async fn get_gist(&self, id: &GistId) -> Result<GistDetail, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let mut detail: GistDetail = self.get_json(url, &call).await?;
        self.complete_head(&mut detail).await;
        Ok(detail)
    }

    /// [`get_gist`](Self::get_gist) as Opengist answers it, without asking git for a head
    /// the commit list may leave out (`detail.git_head` stays `None`: see `git_head.rs`;
    /// [`crate::cache::read_gist`] completes it, once per `updated_at`), and when Opengist
    /// began answering at the earliest (from its `Date` header), which tells the cache whether
    /// the read can be kept. A search, which reads only files, uses it as it is.
    pub async fn get_gist_timed(
        &self,
        id: &GistId,
    ) -> Result<(GistDetail, Option<ReadTime>), OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let (response, read) = self.send_read_timed(url, &call).await?;
        let response = self.check(response, &call).await?;
        let detail: GistDetail = self.parse_json(response, &call).await?;
        Ok((detail, read))
    }

    /// A gist as it stood at revision `sha` (4 to 40 hex digits, any case; Opengist refuses
    /// `HEAD` with a 400): its files, and that commit with up to 9 of its ancestors as
    /// `commits`. Title, description, visibility and counts are the gist's current ones. A
    /// sha that does not resolve is a 404, like a gist this token cannot see.
    pub async fn get_gist_at(&self, id: &GistId, sha: &Sha) -> Result<GistDetail, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), sha.as_str()])?;
        let call = CallInfo::new(
            "read a gist revision",
            Scope::GistRead,
            format!("gist {id} at revision {sha}"),
        );
        self.get_json(url, &call).await
    }

    /// One page of a gist's commits, newest first. Opengist sends no totals for commits.
    pub async fn list_commits(
        &self,
        id: &GistId,
        page: u32,
        per_page: u32,
    ) -> Result<Page<Commit>, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "commits"])?;
        let (page, per_page) = page_params(page, per_page);
        add_paging(&mut url, page, per_page);
        let call = CallInfo::new(
            "list a gist's commits",
            Scope::GistRead,
            format!("gist {id}"),
        );
        self.get_page(url, page, per_page, &call).await
    }

    /// One page of a gist's forks visible to this token.
    pub async fn list_forks(
        &self,
        id: &GistId,
        page: u32,
        per_page: u32,
    ) -> Result<Page<GistSummary>, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "forks"])?;
        let (page, per_page) = page_params(page, per_page);
        add_paging(&mut url, page, per_page);
        let call = CallInfo::new("list a gist's forks", Scope::GistRead, format!("gist {id}"));
        self.get_page(url, page, per_page, &call).await
    }

    /// A window of a file's raw bytes at revision `sha`: at most `max_bytes` from `offset`.
    /// Opengist serves the whole file here, never cut at 512 KiB; a name or revision that
    /// does not resolve is a 404.
    ///
    /// The body is streamed and reading stops once the window is filled (plus at most one
    /// chunk, to tell whether more follows when the size is unknown): the whole file is
    /// never buffered.
    pub async fn raw_file(
        &self,
        id: &GistId,
        sha: &Sha,
        filename: &str,
        offset: u64,
        max_bytes: u64,
    ) -> Result<RawFile, OpengistError> {
        // Opengist keeps only the last path element of a filename, so no file of a gist has
        // `/` in its name.
        if filename.is_empty() || filename == "." || filename == ".." || filename.contains('/') {
            return Err(OpengistError::InvalidArgument {
                message: "`filename` must name a file of the gist, as listed by get_gist".into(),
            });
        }
        if max_bytes == 0 {
            return Err(OpengistError::InvalidArgument {
                message: "`max_bytes` must be at least 1".into(),
            });
        }
        let url = self.raw_file_url(id, sha, filename)?;
        let call = CallInfo::new(
            "read a raw file",
            Scope::GistRead,
            format!("file {filename:?} of gist {id} at revision {sha}"),
        );
        let response = self
            .send_read(url, HeaderValue::from_static("*/*"), &call)
            .await?;
        let response = self.check(response, &call).await?;
        let total_bytes = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        read_window(response, offset, max_bytes, total_bytes, &call, self).await
    }

    /// The token owner's own account (needs `user:read`).
    pub async fn get_user_me(&self) -> Result<User, OpengistError> {
        let url = self.endpoint(&["api", "user"])?;
        let call = CallInfo::new(
            "read the token owner's account",
            Scope::UserRead,
            "the token owner's account",
        );
        self.get_json(url, &call).await
    }

    /// A user's public profile, by numeric id.
    pub async fn get_user_by_id(&self, id: u64) -> Result<User, OpengistError> {
        let id_text = id.to_string();
        let url = self.endpoint(&["api", "user", &id_text])?;
        let call = CallInfo::new("read a user", Scope::AnyToken, format!("user #{id}"));
        self.get_json(url, &call).await
    }

    /// A user's public profile, by username.
    pub async fn get_user_by_name(&self, username: &str) -> Result<User, OpengistError> {
        check_username(username)?;
        let url = self.endpoint(&["api", "users", username])?;
        let call = CallInfo::new("read a user", Scope::AnyToken, format!("user {username:?}"));
        self.get_json(url, &call).await
    }

    /// `GET /api/gists/:uuid/like` as Opengist answers it: 204 liked, 404 not liked OR not
    /// visible. Use [`liked`](Self::liked) to tell those two apart.
    pub async fn is_liked(&self, id: &GistId) -> Result<LikeState, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "like"])?;
        let call = CallInfo::new("check a like", Scope::AnyToken, format!("gist {id}"));
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        match response.status() {
            StatusCode::NO_CONTENT | StatusCode::OK => Ok(LikeState::Liked),
            StatusCode::NOT_FOUND => Ok(LikeState::NotLikedOrNotVisible),
            _ => Err(self.error_from(response, &call).await),
        }
    }

    /// Whether the token owner likes the gist. A gist this token cannot see is a
    /// [`OpengistError::NotFound`], not "not liked".
    pub async fn liked(&self, id: &GistId) -> Result<bool, OpengistError> {
        self.ensure_visible(id).await?;
        Ok(self.is_liked(id).await? == LikeState::Liked)
    }

    /// `GET /healthcheck`: Opengist's own health report (200, or 503 when its database is
    /// down).
    pub async fn healthcheck(&self) -> Result<Health, OpengistError> {
        #[derive(serde::Deserialize)]
        struct Body {
            #[serde(default)]
            opengist: Option<String>,
            #[serde(default)]
            database: Option<String>,
            #[serde(default)]
            time: Option<String>,
            #[serde(default)]
            version: Option<String>,
        }
        let url = self.endpoint(&["healthcheck"])?;
        let call = CallInfo::new(
            "check the instance's health",
            Scope::AnyToken,
            "/healthcheck",
        );
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        let status = response.status();
        if status != StatusCode::OK && status != StatusCode::SERVICE_UNAVAILABLE {
            return Err(self.error_from(response, &call).await);
        }
        let header_version = version_header(response.headers());
        let bytes = self.read_capped(response, MAX_ERROR_BYTES, &call).await?;
        let body: Body =
            serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
                operation: call.operation,
                detail: error::describe_json_error(&e),
            })?;
        Ok(Health {
            status: status.as_u16(),
            opengist: body.opengist,
            database: body.database,
            time: body.time,
            version: body.version.or(header_version),
        })
    }

    /// Probes the REST API with `GET /api/gists?per_page=1`. A disabled API is
    /// [`OpengistError::ApiDisabled`]; no API at all (Opengist before 1.13, or a wrong URL)
    /// is [`OpengistError::ApiNotFound`].
    pub async fn api_info(&self) -> Result<ApiInfo, OpengistError> {
        let mut url = self.endpoint(&["api", "gists"])?;
        url.query_pairs_mut().append_pair("per_page", "1");
        let call = CallInfo::new("list gists", Scope::GistRead, "the gist list");
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Err(OpengistError::ApiNotFound {
                base: display_base(&self.inner.base),
            });
        }
        let response = self.check(response, &call).await?;
        let version = version_header(response.headers());
        let total_gists = header_number::<u64>(response.headers(), "x-total");
        // The body must be a gist list, or this is not Opengist's API.
        let bytes = self.read_capped(response, MAX_JSON_BYTES, &call).await?;
        let _: Vec<GistSummary> =
            serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
                operation: call.operation,
                detail: error::describe_json_error(&e),
            })?;
        Ok(ApiInfo {
            version,
            total_gists,
            authenticated: self.inner.has_token,
        })
    }

    /// The uuid of a gist named by id or link. A custom URL is looked up in its owner's gist
    /// list (up to [`RESOLVE_MAX_PAGES`] pages of 100): that list holds the owner's public
    /// gists, plus all of them when the token is the owner's with `gist:read`. Custom URLs
    /// match regardless of case, as Opengist's own pages do.
    pub async fn resolve(&self, reference: &GistRef) -> Result<GistId, OpengistError> {
        let (user, slug) = match reference {
            GistRef::Id(id) => return Ok(id.clone()),
            GistRef::Slug { user, slug } => (user, slug),
        };
        for page in 1..=RESOLVE_MAX_PAGES {
            let list = self
                .list_gists(ListScope::User(user.clone()), page, MAX_PER_PAGE, None)
                .await?;
            if let Some(found) = list.items.iter().find(|g| slug_matches(g, slug)) {
                return Ok(found.id.clone());
            }
            if !list.has_next {
                return Err(OpengistError::NotFound {
                    resource: format!(
                        "a gist at {}/{user}/{slug} (an unlisted gist of another user can only be found by its 32-character hex id)",
                        display_base(&self.inner.base)
                    ),
                });
            }
        }
        Err(OpengistError::NotFound {
            resource: format!(
                "among the {} most recent gists of {user:?}, a gist at {}/{user}/{slug} (give its 32-character hex id instead)",
                RESOLVE_MAX_PAGES * MAX_PER_PAGE,
                display_base(&self.inner.base)
            ),
        })
    }

    // -----------------------------------------------------------------------------------
    // Writes that are not guarded (the guarded ones are each in their operation's file:
    // `create_gist.rs`, `update_gist.rs`, `delete_gist_files.rs`, `delete_gist.rs`). Never
    // retried.

    /// Forks someone else's gist, or finds the token owner's existing fork of it.
    pub async fn fork_gist(&self, id: &GistId) -> Result<ForkOutcome, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "forks"])?;
        let call = CallInfo::new("fork a gist", Scope::GistWrite, format!("gist {id}"));
        let response = self
            .send_write::<()>(Method::POST, url, None, &call)
            .await?;
        let status = response.status();
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            let error = self.error_from(response, &call).await;
            return Err(match error {
                OpengistError::Validation {
                    message: Some(ref m),
                    ..
                } if m.to_lowercase().contains("own") => OpengistError::CannotForkOwn {
                    resource: call.resource.clone(),
                },
                other => other,
            });
        }
        let response = self.check(response, &call).await?;
        let fork: GistSummary = self.parse_json(response, &call).await?;
        Ok(if status == StatusCode::CREATED {
            ForkOutcome::Created(fork)
        } else {
            ForkOutcome::Existing(fork)
        })
    }

    /// Likes or unlikes a gist, idempotently: Opengist's endpoint toggles, so this reads the
    /// state first (and whether the gist is visible at all), toggles only when needed, and
    /// reads it back to confirm.
    pub async fn set_like(&self, id: &GistId, liked: bool) -> Result<LikeChange, OpengistError> {
        let now = self.liked(id).await?;
        match (now, liked) {
            (true, true) => return Ok(LikeChange::AlreadyLiked),
            (false, false) => return Ok(LikeChange::AlreadyNotLiked),
            _ => {}
        }
        self.toggle_like(id).await?;
        let after = self.is_liked(id).await? == LikeState::Liked;
        if after != liked {
            return Err(OpengistError::LikeNotConfirmed { wanted: liked });
        }
        Ok(if liked {
            LikeChange::Liked
        } else {
            LikeChange::Unliked
        })
    }

    /// `PUT /api/gists/:uuid/like`: TOGGLES. Private: only [`set_like`](Self::set_like),
    /// which reads the state first, may call it.
    async fn toggle_like(&self, id: &GistId) -> Result<(), OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "like"])?;
        let call = CallInfo::new(
            "like or unlike a gist",
            Scope::UserWrite,
            format!("gist {id}"),
        );
        let response = self.send_write::<()>(Method::PUT, url, None, &call).await?;
        self.check(response, &call).await.map(drop)
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
            .inner
            .http
            .get(url.clone())
            // Opengist routes git requests by a `git/` user agent.
            .header(header::USER_AGENT, "git/2 (opengist-mcp)")
            .header(header::ACCEPT, "*/*");
        if private && let Some(token) = &self.inner.git_token {
            request = request.basic_auth(owner, Some(token));
        }
        let response = request
            .send()
            .await
            .map_err(|e| self.transport_error(&e, &call))?;
        tracing::debug!(
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
        let mut attempt = 0usize;
        loop {
            let started = Instant::now();
            let result = self
                .inner
                .http
                .get(url.clone())
                .header(header::ACCEPT, accept.clone())
                .send()
                .await;
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let retry_delay = self.inner.retry_delays.get(attempt).copied();
            match result {
                Ok(response) => {
                    let status = response.status().as_u16();
                    tracing::debug!(
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
        let mut request = self.inner.http.request(method.clone(), url.clone());
        if let Some(body) = body {
            let bytes = serde_json::to_vec(body).map_err(|_| OpengistError::InvalidArgument {
                message: "the request could not be encoded as JSON".into(),
            })?;
            request = request.body(bytes);
        }
        let result = request.send().await;
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok(response) => {
                tracing::debug!(method = %method, path = url.path(), status = response.status().as_u16(), elapsed_ms, "opengist request");
                Ok(response)
            }
            Err(e) => {
                tracing::debug!(method = %method, path = url.path(), failure = failure_kind(&e), elapsed_ms, "opengist request failed");
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
        // A body that cannot be read only loses Opengist's message, not the status.
        let body = self
            .read_capped(response, MAX_ERROR_BYTES, call)
            .await
            .unwrap_or_default();
        error::from_status(status, &body, call, &self.inner.base)
    }

    async fn parse_json<T: DeserializeOwned>(
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

/// Whether `slug` names this gist. `slug_url` is the gist's custom URL, or its uuid when it
/// has none; Opengist matches custom URLs regardless of case.
fn slug_matches(gist: &GistSummary, slug: &str) -> bool {
    gist.slug_url.eq_ignore_ascii_case(slug)
        || gist
            .html_url
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .is_some_and(|last| last.eq_ignore_ascii_case(slug))
}

fn check_username(name: &str) -> Result<(), OpengistError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c.is_control() || c == '/');
    if ok {
        Ok(())
    } else {
        Err(OpengistError::InvalidArgument {
            message: "`username` must be an Opengist username (letters, digits and dashes)".into(),
        })
    }
}

fn page_params(page: u32, per_page: u32) -> (u32, u32) {
    (page.max(1), per_page.clamp(1, MAX_PER_PAGE))
}

fn add_paging(url: &mut Url, page: u32, per_page: u32) {
    url.query_pairs_mut()
        .append_pair("page", &page.to_string())
        .append_pair("per_page", &per_page.to_string());
}

/// `base` + segments, each percent-encoded as a single path segment (`/`, `?`, `#`, `%`,
/// spaces and non-ASCII included).
pub(crate) fn build_url(base: &Url, segments: &[&str]) -> Result<Url, OpengistError> {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    {
        let mut path = url
            .path_segments_mut()
            .map_err(|()| OpengistError::ClientInit {
                detail: "the Opengist URL cannot have paths appended".into(),
            })?;
        path.pop_if_empty();
        path.extend(segments);
    }
    Ok(url)
}

/// The filename as the last segment of `GET /api/gists/:uuid/files/:sha/:filename`.
///
/// Two decodings stand between this segment and the name Opengist looks up. Its router hands
/// the handler the *decoded* segment when the request path is exactly Go's canonical
/// encoding of itself (Go then leaves `URL.RawPath` empty), and the raw, still-encoded segment
/// otherwise; the handler then query-unescapes the name once more (`%XX`, and `+` as a space)
/// before asking git. So:
/// - a name with neither `%` nor `+` goes in Go's canonical path encoding: the router decodes
///   it and the second unescape finds nothing to change;
/// - a name with `%` or `+` goes fully percent-encoded, in a form Go's canonical encoding
///   would not produce (`+` as `%2B`, or one letter or digit escaped), so the router passes
///   it through raw and the one unescape restores it exactly.
fn raw_filename_segment(name: &str) -> String {
    fn escape(out: &mut String, byte: u8) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        out.push('%');
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
    let mut out = String::with_capacity(name.len() * 3);
    if name.contains(['%', '+']) {
        // `+` escaped is enough to make the path non-canonical; without one, escape the
        // first letter or digit too. (A name with `%` but no letter or digit has no `%XX` in
        // it, which the second unescape would turn into something else.)
        let mut marked = name.contains('+');
        for &byte in name.as_bytes() {
            if unreserved(byte) && (marked || !byte.is_ascii_alphanumeric()) {
                out.push(char::from(byte));
            } else {
                marked |= byte.is_ascii_alphanumeric();
                escape(&mut out, byte);
            }
        }
    } else {
        // Go's path encoding: these stay literal, everything else is escaped.
        for &byte in name.as_bytes() {
            if unreserved(byte) || matches!(byte, b'$' | b'&' | b',' | b':' | b';' | b'=' | b'@') {
                out.push(char::from(byte));
            } else {
                escape(&mut out, byte);
            }
        }
    }
    out
}

fn header_number<T: std::str::FromStr>(headers: &HeaderMap, name: &str) -> Option<T> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Opengist's version, when a header carries it (`X-Opengist-Version`, or a `Server` header
/// naming Opengist).
fn version_header(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers
        .get("x-opengist-version")
        .and_then(|v| v.to_str().ok())
    {
        let v = v.trim();
        if !v.is_empty() && v.len() <= 64 {
            return Some(v.to_owned());
        }
    }
    let server = headers.get(header::SERVER)?.to_str().ok()?;
    let rest = server.trim().strip_prefix("Opengist/")?;
    let version = rest.split_whitespace().next()?;
    (!version.is_empty() && version.len() <= 64).then(|| version.to_owned())
}

/// The pagination headers of a list answer.
#[derive(Debug, Default, PartialEq, Eq)]
struct PageHeaders {
    page: Option<u32>,
    per_page: Option<u32>,
    total: Option<u64>,
    total_pages: Option<u32>,
    /// `Some(has rel=next)` when a `Link` header is present.
    link_next: Option<bool>,
}

impl PageHeaders {
    fn parse(headers: &HeaderMap) -> Self {
        let links: Vec<&str> = headers
            .get_all(header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        Self {
            page: header_number(headers, "x-page"),
            per_page: header_number(headers, "x-per-page"),
            total: header_number(headers, "x-total"),
            total_pages: header_number(headers, "x-total-pages"),
            link_next: (!links.is_empty()).then(|| links.iter().any(|l| link_has_next(l))),
        }
    }

    fn into_page<T>(self, items: Vec<T>, page: u32, per_page: u32) -> Page<T> {
        let page = self.page.unwrap_or(page);
        let per_page = self.per_page.unwrap_or(per_page);
        let by_totals = self.total_pages.map(|pages| page < pages);
        // Opengist always sends X-Page, and a Link only when there is a next or previous
        // page: X-Page without a next link means this is the last page.
        let has_next = match (self.link_next, by_totals, self.page) {
            (Some(next), totals, _) => next || totals.unwrap_or(false),
            (None, Some(totals), _) => totals,
            (None, None, Some(_)) => false,
            (None, None, None) => items.len() as u64 >= u64::from(per_page),
        };
        Page {
            items,
            page,
            per_page,
            total: self.total,
            total_pages: self.total_pages,
            has_next,
        }
    }
}

/// Whether an RFC 8288 `Link` header value has a `rel="next"` link.
fn link_has_next(value: &str) -> bool {
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let after_open = &rest[open + 1..];
        let Some(close) = after_open.find('>') else {
            return false;
        };
        let params_and_more = &after_open[close + 1..];
        let end = params_and_more.find('<').unwrap_or(params_and_more.len());
        let params = &params_and_more[..end];
        let is_next = params.split([';', ',']).any(|param| {
            param.split_once('=').is_some_and(|(key, value)| {
                key.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("next"))
            })
        });
        if is_next {
            return true;
        }
        rest = &params_and_more[end..];
    }
    false
}

/// Streams a window of a body: skips `offset` bytes, keeps at most `max_bytes`.
async fn read_window(
    mut response: Response,
    offset: u64,
    max_bytes: u64,
    total_bytes: Option<u64>,
    call: &CallInfo,
    client: &OpengistClient,
) -> Result<RawFile, OpengistError> {
    if total_bytes.is_some_and(|total| offset >= total) {
        // Past the end: nothing to read, and no reason to read through the file.
        return Ok(RawFile {
            bytes: Vec::new(),
            offset,
            total_bytes,
            truncated: false,
            is_utf8: true,
        });
    }
    let end = offset.saturating_add(max_bytes);
    let mut seen: u64 = 0;
    let mut out: Vec<u8> = Vec::with_capacity(max_bytes.min(1024 * 1024) as usize);
    let mut truncated = false;
    let failed = |e: reqwest::Error| client.transport_error(&e, call);
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        let start = seen;
        seen = seen.saturating_add(chunk.len() as u64);
        if seen <= offset {
            continue;
        }
        let from = offset.saturating_sub(start) as usize;
        let to = seen.min(end).saturating_sub(start) as usize;
        out.extend_from_slice(chunk.get(from..to).unwrap_or_default());
        if seen > end {
            truncated = true;
            break;
        }
        if seen == end {
            truncated = match total_bytes {
                Some(total) => total > end,
                None => loop {
                    match response.chunk().await.map_err(failed)? {
                        Some(more) if more.is_empty() => continue,
                        Some(_) => break true,
                        None => break false,
                    }
                },
            };
            break;
        }
    }
    // Dropping the response here closes the connection: the rest is never read.
    drop(response);
    let is_utf8 = utf8_window(&out, offset > 0, truncated);
    Ok(RawFile {
        bytes: out,
        offset,
        total_bytes,
        truncated,
        is_utf8,
    })
}

/// Whether `bytes` are UTF-8, forgiving a character cut at the start (when the window does
/// not start at 0) or at the end (when the file goes on).
pub(crate) fn utf8_window(bytes: &[u8], cut_start: bool, cut_end: bool) -> bool {
    let mut slice = bytes;
    if cut_start {
        let skip = slice
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        slice = slice.get(skip..).unwrap_or_default();
    }
    match std::str::from_utf8(slice) {
        Ok(_) => true,
        Err(e) => cut_end && e.error_len().is_none(),
    }
}

fn sources(e: &reqwest::Error) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(e.source(), |s: &&(dyn std::error::Error + 'static)| {
        (*s).source()
    })
}

fn has_io_kind(e: &reqwest::Error, kinds: &[std::io::ErrorKind]) -> bool {
    sources(e).any(|s| {
        s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| kinds.contains(&io.kind()))
    })
}

/// A connection that was open and then dropped before a complete answer: safe to retry for
/// reads (never retried for writes, which may have taken effect).
fn was_dropped(e: &reqwest::Error) -> bool {
    use std::io::ErrorKind;
    if e.is_timeout() {
        return false;
    }
    has_io_kind(
        e,
        &[
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::BrokenPipe,
            ErrorKind::UnexpectedEof,
        ],
    ) || sources(e).any(|s| {
        // hyper's "incomplete message" has no public kind to match through reqwest.
        let text = s.to_string();
        text.contains("connection closed before message completed")
            || text.contains("connection reset")
    })
}

fn is_tls_problem(e: &reqwest::Error) -> bool {
    sources(e).any(|s| {
        let text = s.to_string().to_lowercase();
        text.contains("certificate") || text.contains("tls") || text.contains("handshake")
    })
}

/// A word for the logs; no URL, no body.
/// How a write's answer was lost, when the failure came after the connection was open (so the
/// request may have been delivered); `None` when it certainly was not sent (connect phase).
fn answer_lost(e: &reqwest::Error, request_timeout: Duration) -> Option<String> {
    if e.is_connect()
        || e.is_builder()
        || e.is_redirect()
        || has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused])
    {
        return None;
    }
    Some(if e.is_timeout() {
        format!(
            "no answer within the request timeout of {}s, OPENGIST_MCP_REQUEST_TIMEOUT_SECS",
            request_timeout.as_secs()
        )
    } else if was_dropped(e) {
        "the connection was closed before the answer arrived".to_owned()
    } else {
        "the answer could not be read".to_owned()
    })
}

fn failure_kind(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timeout"
    } else if has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused]) {
        "refused"
    } else if was_dropped(e) {
        "dropped"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() {
        "body"
    } else {
        "request"
    }
}

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
        })
        .expect("client")
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
        assert!(slug_matches(&summary, "my-notes"));
        assert!(slug_matches(&summary, "My-Notes"));
        assert!(!slug_matches(&summary, "my-note"));
        let no_slug: GistSummary = serde_json::from_value(serde_json::json!({
            "id": ID, "visibility": "public", "html_url": "https://g.example/alice/other/"
        }))
        .expect("summary");
        assert!(slug_matches(&no_slug, "other"));
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
