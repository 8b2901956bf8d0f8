//! Streamable HTTP serving for any guarded rmcp server, behind a gate.
//!
//! Routes:
//! - `/mcp`: rmcp's [`StreamableHttpService`]. Legacy (2025-11-25 and older) clients get
//!   stateful sessions (`Mcp-Session-Id`), so a pushed `elicitation/create` can be answered;
//!   2026-07-28 requests are served statelessly by rmcp whatever the session setting.
//! - `/healthz`: `GET` answers `200 ok`.
//!
//! Every request, `/healthz` included, passes the gate first, in this order:
//! 1. `Host` (DNS-rebinding protection): `localhost`, `127.0.0.1` or `[::1]` with the bound
//!    port, the bound address itself, or an extra host from the allowed-hosts setting; else
//!    `403`. A missing or malformed `Host` is `400`.
//! 2. `Origin`, when present: `http(s)://localhost`, `127.0.0.1` or `[::1]` on any port, or an
//!    extra origin from the allowed-origins setting; else `403`.
//! 3. The credential ([`auth`]): `Authorization: Bearer <secret>`, compared in constant time,
//!    else `401` with `WWW-Authenticate: Bearer` and a JSON body. The secret is the configured
//!    one or, when none is configured on a loopback address, one made up at start and printed
//!    once on stderr with a ready client configuration. Only the explicit no-authentication
//!    setting (loopback only, announced on stderr at start) serves without one.
//!
//! Then, always (no option turns it off), every legacy session belongs to the principal that
//! opened it, under the server's own guard's rule ([`Guard::principal_of`], so a custom
//! [`GuardBuilder::principal`](ask_first_core::GuardBuilder::principal) covers it too): a
//! request naming another principal's `Mcp-Session-Id` (a tool call, a dialog's answer,
//! `DELETE`, a `GET` stream) is refused with `403 session_not_yours` before rmcp sees it.
//!
//! `/healthz` sits behind the bearer check on purpose: with a secret nothing at all answers
//! without it, so a probe from a load balancer must send the header too (Kubernetes:
//! `httpGet.httpHeaders`). With the no-authentication setting it answers anyone who passes the
//! Host/Origin checks.
//!
//! rmcp's own Host and Origin checks are configured with the same lists, as a second layer.
//! Binding a non-loopback address without a bearer secret is refused at start, with or without
//! the no-authentication setting. Every message names the settings as the server calls them
//! ([`HttpOptions::names`]).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use ask_first_core::{Guard, Guarded};

use crate::settings::{
    AllowedHost, AllowedOrigin, Origin, OriginPort, Secret, SettingNames, is_loopback,
    normalise_host,
};

mod auth;
pub mod limits;
pub mod oauth;
mod owners;
pub mod sessions;
mod streams;
pub mod wire;

pub use limits::HttpLimits;
pub use sessions::ReplicaSessionManager;

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";
/// The health check.
pub const HEALTH_PATH: &str = "/healthz";

/// What the gate accepts besides its built-in loopback names, the limits, and the names of
/// the settings that messages point to.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The settings' names, as the server calls them (every message names its fix by them).
    pub names: SettingNames,
    /// The bearer secret every request must carry; `None`: one made up at start (loopback
    /// only), unless `no_auth`.
    pub bearer_token: Option<Secret>,
    /// Serve without any authentication (the no-authentication setting, `true`): loopback only,
    /// never with a bearer secret, announced on stderr at start.
    pub no_auth: bool,
    /// Extra accepted `Host` values.
    pub allowed_hosts: Vec<AllowedHost>,
    /// Extra accepted `Origin` values.
    pub allowed_origins: Vec<AllowedOrigin>,
    /// Timeouts and caps against slow or numerous clients.
    pub limits: HttpLimits,
    /// The replica id legacy session ids start with (`<id>.<uuid>`), so a gateway can send a
    /// session to the replica that holds it; `None`: plain ids.
    pub session_prefix: Option<String>,
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
            allowed_hosts: settings.allowed_hosts.clone(),
            allowed_origins: settings.allowed_origins.clone(),
            limits: settings.limits,
            session_prefix: settings.replica_id.clone(),
        }
    }
}

/// Why HTTP serving could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A non-loopback address without a bearer secret.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without a bearer \
         secret: set {setting} (e.g. to the output of `openssl rand -hex 32`), or bind \
         127.0.0.1"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
        /// The bearer secret's setting.
        setting: String,
    },
    /// The no-authentication setting on a non-loopback address.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without \
         authentication ({no_auth}=true): unset {no_auth} and set {setting} (e.g. to the output \
         of `openssl rand -hex 32`), or bind 127.0.0.1"
    )]
    NoAuthNotLoopback {
        /// The address asked for.
        addr: SocketAddr,
        /// The no-authentication setting.
        no_auth: String,
        /// The bearer secret's setting.
        setting: String,
    },
    /// Both a bearer secret and the no-authentication setting.
    #[error(
        "{setting} and {no_auth}=true contradict each other: unset {no_auth} to require the \
         secret, or unset {setting} to serve without authentication"
    )]
    AuthConflict {
        /// The no-authentication setting.
        no_auth: String,
        /// The bearer secret's setting.
        setting: String,
    },
    /// The server factory failed for the first session (it is called once at bind time, to
    /// learn the guard's principal rule).
    #[error("the MCP server could not be built: {source}")]
    Factory {
        /// What the factory said.
        #[source]
        source: std::io::Error,
    },
    /// The address could not be bound.
    #[error(
        "cannot listen on {addr}: {source}; is another process using the port, or is the \
         address not one of this machine's?"
    )]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("the HTTP server stopped with an error: {source}")]
    Serve {
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

impl HttpError {
    /// The process exit code for this error: 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}

/// A listening socket with its routes, not yet serving. Lets a caller (or a test) learn the
/// bound address, e.g. after binding port 0, before serving.
pub struct BoundHttp {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    limits: HttpLimits,
    cancel: Box<dyn FnOnce() + Send>,
}

impl std::fmt::Debug for BoundHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundHttp")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl BoundHttp {
    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then closes every MCP session and stream and waits
    /// for open requests to finish.
    pub async fn serve<G>(self, shutdown: G) -> Result<(), HttpError>
    where
        G: Future + Send + 'static,
    {
        let Self {
            listener,
            local_addr,
            router,
            limits,
            cancel,
        } = self;
        tracing::info!(address = %local_addr, path = MCP_PATH, "serving MCP over streamable HTTP");
        limits::serve(listener, router, limits, async move {
            shutdown.await;
            tracing::info!("shutting down the HTTP server");
            // Ends SSE streams and sessions, so graceful shutdown does not wait on them.
            cancel();
        })
        .await
        .map_err(|source| HttpError::Serve { source })
    }
}

/// Binds `addr` and builds the routes around a fresh `S` per MCP session (`factory`).
/// Refuses a non-loopback address without a bearer secret, and a bearer secret together with
/// the no-authentication setting. Without either setting (loopback) it makes up a secret for
/// this run and prints it on stderr with a client configuration ([`auth`] says how it chooses). The factory is called once here,
/// for the guard whose principal rule binds every legacy session to its opener.
pub async fn bind_http<S, F>(
    addr: SocketAddr,
    factory: F,
    options: HttpOptions,
) -> Result<BoundHttp, HttpError>
where
    S: rmcp::ServerHandler + Guarded + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let names = &options.names;
    let credential = match (&options.bearer_token, options.no_auth) {
        (Some(_), true) => {
            return Err(HttpError::AuthConflict {
                no_auth: names.http_no_auth.clone(),
                setting: names.http_token.clone(),
            });
        }
        (Some(secret), false) => Credential::Configured(secret.clone()),
        (None, true) if !is_loopback(addr.ip()) => {
            return Err(HttpError::NoAuthNotLoopback {
                addr,
                no_auth: names.http_no_auth.clone(),
                setting: names.http_token.clone(),
            });
        }
        (None, true) => Credential::None,
        (None, false) if !is_loopback(addr.ip()) => {
            return Err(HttpError::TokenRequired {
                addr,
                setting: names.http_token.clone(),
            });
        }
        (None, false) => Credential::Minted(auth::mint_secret()),
    };
    let guard: Guard = factory()
        .map_err(|source| HttpError::Factory { source })?
        .guard()
        .clone();
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| HttpError::Bind { addr, source })?;

    announce(&credential, local_addr, &options.names);
    let gate = Gate::new(
        local_addr,
        &options,
        credential.authenticator(&options.names),
    );
    let config = StreamableHttpServerConfig::default()
        // Stateful sessions for legacy clients: a pushed elicitation needs a channel back.
        .with_legacy_session_mode(true)
        // The one body limit, also enforced (before any parse) by the limits layer.
        .with_max_request_body_bytes(wire::MAX_BODY_BYTES)
        .with_allowed_hosts(gate.rmcp_allowed_hosts())
        .with_allowed_origins(gate.rmcp_allowed_origins());
    let token = config.cancellation_token.clone();
    let sessions = Arc::new(options.limits.session_manager());
    let bounds = streams::Bounds::new(
        guard.clone(),
        options.limits.bounds,
        options.limits.max_connections,
        options.names.bounds.clone(),
    );
    let owners = owners::SessionOwners::new(sessions.clone(), guard);
    let manager = ReplicaSessionManager::new(sessions.clone(), options.session_prefix.clone());
    let service: StreamableHttpService<S, ReplicaSessionManager> =
        StreamableHttpService::new(factory, Arc::new(manager), config);

    let router = Router::new()
        .route(HEALTH_PATH, get(|| async { "ok" }))
        .nest_service(MCP_PATH, service)
        .fallback(|| async {
            json_error(
                StatusCode::NOT_FOUND,
                "not_found",
                "nothing here: the MCP endpoint is /mcp and the health check is /healthz",
            )
        })
        // Inside the session binding: caps on dialogs and long-lived streams.
        .layer(middleware::from_fn_with_state(bounds, streams::bound))
        .layer(middleware::from_fn_with_state(
            owners,
            owners::bind_sessions,
        ))
        // Inside the gate: JSON-RPC errors for bodies rmcp would answer 415, the DELETE status.
        .layer(middleware::from_fn(wire::json_rpc_body));
    let router = limits::layer(router, options.limits, sessions, &options.names)
        .layer(middleware::from_fn_with_state(Arc::new(gate), check));
    // Outside the gate: a browser's preflight carries no Authorization.
    let router = wire::with_cors(router, &options.allowed_origins);

    Ok(BoundHttp {
        listener,
        local_addr,
        router,
        limits: options.limits,
        cancel: Box::new(move || token.cancel()),
    })
}

/// [`bind_http`] then [`BoundHttp::serve`].
pub async fn serve_http<S, F, G>(
    addr: SocketAddr,
    factory: F,
    options: HttpOptions,
    shutdown: G,
) -> Result<(), HttpError>
where
    S: rmcp::ServerHandler + Guarded + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    G: Future + Send + 'static,
{
    bind_http(addr, factory, options)
        .await?
        .serve(shutdown)
        .await
}

/// An accepted `Host`: a host and a port (`None`: any port).
#[derive(Debug, Clone)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

/// The checks run before every route.
struct Gate {
    hosts: Vec<HostRule>,
    origins: Vec<AllowedOrigin>,
    /// The credential check.
    auth: Box<dyn auth::Authenticator>,
    port: u16,
    /// The messages, naming the server's settings.
    host_refused: String,
    origin_refused: String,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Gate {
    fn new(
        local_addr: SocketAddr,
        options: &HttpOptions,
        auth: Box<dyn auth::Authenticator>,
    ) -> Self {
        let port = local_addr.port();
        let mut hosts: Vec<HostRule> = LOOPBACK_NAMES
            .iter()
            .map(|name| HostRule {
                host: (*name).to_owned(),
                port: Some(port),
            })
            .collect();
        let bound = normalise_host(&local_addr.ip().to_string());
        if !hosts.iter().any(|rule| rule.host == bound) {
            hosts.push(HostRule {
                host: bound,
                port: Some(port),
            });
        }
        hosts.extend(options.allowed_hosts.iter().map(|extra| HostRule {
            host: extra.host.clone(),
            port: extra.port,
        }));
        let mut origins: Vec<AllowedOrigin> = ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                LOOPBACK_NAMES.iter().map(|host| AllowedOrigin::Tuple {
                    scheme: (*scheme).to_owned(),
                    host: (*host).to_owned(),
                    port: OriginPort::Any,
                })
            })
            .collect();
        origins.extend(options.allowed_origins.iter().cloned());
        Self {
            hosts,
            origins,
            auth,
            port,
            host_refused: format!(
                "this Host is not accepted (protection against DNS rebinding); to reach the \
                 server under another name, add it to {}",
                options.names.allowed_hosts
            ),
            origin_refused: format!(
                "this Origin is not accepted; to allow a browser application, add its origin \
                 to {}",
                options.names.allowed_origins
            ),
        }
    }

    /// The same host list, in rmcp's syntax (an entry without a port matches any port there;
    /// a `Host` without a port is compared as port 80 here, so on port 80 the bare names are
    /// added for rmcp too).
    fn rmcp_allowed_hosts(&self) -> Vec<String> {
        let mut list: Vec<String> = self
            .hosts
            .iter()
            .map(|rule| {
                AllowedHost {
                    host: rule.host.clone(),
                    port: rule.port,
                }
                .to_string()
            })
            .collect();
        if self.port == 80 {
            list.extend(LOOPBACK_NAMES.iter().map(|name| {
                AllowedHost {
                    host: (*name).to_owned(),
                    port: None,
                }
                .to_string()
            }));
        }
        list
    }

    fn rmcp_allowed_origins(&self) -> Vec<String> {
        self.origins.iter().map(ToString::to_string).collect()
    }

    fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Rejection<'_>> {
        self.check_host(headers, uri)?;
        self.check_origin(headers)?;
        self.check_bearer(headers)
    }

    fn check_host(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Rejection<'_>> {
        let bad = || Rejection {
            status: StatusCode::BAD_REQUEST,
            code: "bad_host",
            message: "the Host header is missing or malformed",
        };
        let text = match headers.get(header::HOST) {
            Some(value) => value.to_str().map_err(|_| bad())?,
            // HTTP/2 carries the authority in the URI instead.
            None => uri.authority().ok_or_else(bad)?.as_str(),
        };
        // The same parser as the configured entries: no user info, a port that fits 16 bits.
        let AllowedHost { host, port } = AllowedHost::parse(text).ok_or_else(bad)?;
        let effective_port = port.unwrap_or(80);
        let allowed = self.hosts.iter().any(|rule| {
            rule.host == host && rule.port.is_none_or(|allowed| allowed == effective_port)
        });
        if allowed {
            Ok(())
        } else {
            tracing::warn!("refused an HTTP request whose Host header is not allowed");
            Err(Rejection {
                status: StatusCode::FORBIDDEN,
                code: "host_not_allowed",
                message: &self.host_refused,
            })
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Rejection<'_>> {
        let Some(value) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let refused = || {
            tracing::warn!("refused an HTTP request whose Origin header is not allowed");
            Rejection {
                status: StatusCode::FORBIDDEN,
                code: "origin_not_allowed",
                message: &self.origin_refused,
            }
        };
        let text = value.to_str().map_err(|_| refused())?;
        // The one Origin parser and matcher, shared with CORS.
        let origin = Origin::parse(text).ok_or_else(refused)?;
        if origin.is_in(&self.origins) {
            Ok(())
        } else {
            Err(refused())
        }
    }

    fn check_bearer(&self, headers: &HeaderMap) -> Result<(), Rejection<'_>> {
        self.auth
            .authenticate(headers)
            .map_err(|refusal| Rejection {
                status: refusal.status,
                code: refusal.code,
                message: refusal.message,
            })
    }
}

/// The credential [`bind_http`] chose.
enum Credential {
    /// The bearer secret setting.
    Configured(Secret),
    /// Made up at start, printed once on stderr.
    Minted(Secret),
    /// The no-authentication setting.
    None,
}

impl Credential {
    fn authenticator(&self, names: &SettingNames) -> Box<dyn auth::Authenticator> {
        match self {
            Self::Configured(secret) => Box::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`, the secret being the \
                     value of {} on the server",
                    names.http_token
                ),
            )),
            Self::Minted(secret) => Box::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`: no {} is set, so the \
                     server made up a secret at start and printed it on its stderr (set {} to \
                     choose one)",
                    names.http_token, names.http_token
                ),
            )),
            Self::None => Box::new(auth::Anonymous),
        }
    }
}

/// Says on stderr (never through tracing, so never into a log collector) how to authenticate:
/// the made-up secret with a client configuration, or that there is no authentication.
fn announce(credential: &Credential, local_addr: SocketAddr, names: &SettingNames) {
    match credential {
        Credential::Configured(_) => {}
        Credential::Minted(secret) => {
            let url = format!("http://{local_addr}{MCP_PATH}");
            let client = serde_json::json!({
                "type": "http",
                "url": url,
                "headers": { "Authorization": format!("Bearer {}", secret.expose()) },
            });
            eprintln!(
                "No {token} is set, so this run requires a secret made up at start (shown only \
                 here). Send it on every request:\n\n    Authorization: Bearer {secret}\n\n\
                 A client configuration for this run:\n\n    {client}\n\n\
                 To keep one secret across restarts, set {token}; to serve without \
                 authentication (any local process then acts with this server's full rights), \
                 set {no_auth}=true.",
                token = names.http_token,
                no_auth = names.http_no_auth,
                secret = secret.expose(),
            );
        }
        Credential::None => eprintln!(
            "WARNING: {no_auth}=true: serving HTTP at http://{local_addr}{MCP_PATH} without \
             authentication. Any process on this machine that can reach the port acts with this \
             server's full rights (Host and Origin checks stop web pages, not processes). Set \
             {token} and unset {no_auth} to require a secret.",
            no_auth = names.http_no_auth,
            token = names.http_token,
        ),
    }
}

async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Err(rejection) = gate.check(request.headers(), request.uri()) {
        return rejection.into_response();
    }
    next.run(request).await
}

/// Why the gate refused a request.
struct Rejection<'a> {
    status: StatusCode,
    code: &'static str,
    message: &'a str,
}

impl IntoResponse for Rejection<'_> {
    fn into_response(self) -> Response {
        let mut response = json_error(self.status, self.code, self.message);
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub(crate) fn json_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({ "error": code, "message": message }).to_string();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Body::from(body),
    )
        .into_response()
}

/// The gate's verdict on one request's headers, for fuzzing and tests: `Ok(())` when the
/// request would be let through to the routes, else the status it would be refused with.
/// Without a bearer secret in `options` it checks no credential (as the no-authentication
/// setting).
/// `local_addr` is the address the server is bound to.
#[doc(hidden)]
pub fn gate_verdict(
    local_addr: SocketAddr,
    options: &HttpOptions,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<(), StatusCode> {
    let credential = match &options.bearer_token {
        Some(secret) => Credential::Configured(secret.clone()),
        None => Credential::None,
    };
    Gate::new(
        local_addr,
        options,
        credential.authenticator(&options.names),
    )
    .check(headers, uri)
    .map_err(|rejection| rejection.status)
}
