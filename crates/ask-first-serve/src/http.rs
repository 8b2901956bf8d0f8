//! Streamable HTTP serving for any guarded rmcp server, behind a gate.
//!
//! Routes:
//! - `/mcp`: rmcp's [`StreamableHttpService`]. Legacy (2025-11-25 and older) clients get
//!   stateful sessions (`Mcp-Session-Id`), so a pushed `elicitation/create` can be answered;
//!   2026-07-28 requests are served statelessly by rmcp whatever the session setting.
//! - `/healthz`: `GET` answers `200 ok`.
//!
//! Every request, `/healthz` included, passes the gate first, in this order (steps 1 and 2 are
//! [`host_origin::HostOriginLayer`], step 3 [`identity::IdentityLayer`]: tower layers a server
//! can mount on its own axum `Router`):
//! 1. `Host` (DNS-rebinding protection): `localhost`, `127.0.0.1` or `[::1]` with the bound
//!    port, the bound address itself, or an extra host from the allowed-hosts setting; else
//!    `403`. A missing or malformed `Host` is `400`.
//! 2. `Origin`, when present: `http(s)://localhost`, `127.0.0.1` or `[::1]` on any port, or an
//!    extra origin from the allowed-origins setting; else `403`.
//! 3. The credential ([`auth`], chosen by the `<PREFIX>_HTTP_AUTH` setting or given by the
//!    server, [`HttpOptions::authenticator`]): the shared bearer secret, a per-person token
//!    ([`tokens`]), or the server's own check, else `401` with `WWW-Authenticate` and a JSON
//!    body. Its verdict, an [`Identity`], goes into the request's extensions: the principal
//!    rule, the session binding, the caps, the audit log and the tool body
//!    ([`Identity::of`]) all read it. Only the explicit no-authentication setting (loopback only,
//!    announced on stderr at start) serves without a credential.
//!
//! Then, always (no option turns it off), every legacy session belongs to the credential that
//! opened it ([`Guard::holder_of`]: the principal under the server's guard, which a custom
//! [`GuardBuilder::principal`](ask_first_core::GuardBuilder::principal) can narrow, and which of
//! the person's credentials it was): a request naming another's `Mcp-Session-Id` (a tool call,
//! a dialog's answer, `DELETE`, a `GET` stream), another token of the same person's included,
//! is refused with `403 session_not_yours` before rmcp sees it. One
//! principal holds at most [`HttpBounds::sessions_per_principal`](crate::settings::HttpBounds)
//! legacy sessions at once (`429` past it), so one person cannot take every session place.
//! Under one shared secret every holder is one principal, so none of this separates them: the
//! start-up line says so.
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
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use ask_first_core::{Guard, HasGuard};

use crate::settings::{AllowedHost, AllowedOrigin, Secret, SettingNames, is_loopback};

pub mod auth;
mod connections;
pub mod envelope;
pub mod host_origin;
pub mod identity;
pub mod limits;
pub mod oauth;
mod owners;
pub mod sessions;
mod streams;
pub mod tokens;
pub mod wire;

pub use auth::{AuthFuture, Authenticate, Identity, Refusal, bearer_of};
pub use limits::HttpLimits;
pub use sessions::ReplicaSessionManager;
pub use tokens::{TokenFile, TokenFileError, add_token, run_tokens_add};

use crate::settings::{AuthMode, AuthSettings};

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";
/// The health check.
pub const HEALTH_PATH: &str = "/healthz";

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
    /// [`AuthMode::None`] in `auth`.
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
            .finish()
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
    /// The per-person token file cannot be used.
    #[error(transparent)]
    Tokens(#[from] TokenFileError),
    /// OAuth mode could not be set up (issue 26).
    #[error(transparent)]
    OAuth(#[from] oauth::OAuthError),
    /// Mode `tokens` without its file.
    #[error(
        "{mode_setting}=tokens needs {setting}: the path of the file listing each person's \
         token hash"
    )]
    TokensFileMissing {
        /// The token file's setting.
        setting: String,
        /// The mode's setting.
        mode_setting: String,
    },
    /// A mode whose authenticator this server does not supply.
    #[error(
        "{setting}={mode} needs an authenticator this server does not have: choose `secret`, \
         `tokens`, `oauth` or `none` in {setting}"
    )]
    NoAuthenticator {
        /// The mode's setting.
        setting: String,
        /// The mode asked for.
        mode: String,
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
    connection_names: crate::settings::ConnectionNames,
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
            connection_names,
            cancel,
        } = self;
        tracing::info!(address = %local_addr, path = MCP_PATH, "serving MCP over streamable HTTP");
        limits::serve(listener, router, limits, &connection_names, async move {
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
    S: rmcp::ServerHandler + HasGuard + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let credential = Credential::choose(addr, &options)?;
    let guard: Guard = factory()
        .map_err(|source| HttpError::Factory { source })?
        .guard()
        .clone();
    let (listener, local_addr) = bind_then_announce(addr, |local_addr| {
        announce(&credential, local_addr, &options.names)
    })
    .map_err(|source| HttpError::Bind { addr, source })?;
    let routes = Router::new()
        .route(HEALTH_PATH, get(|| async { "ok" }))
        .fallback(|| async {
            json_error(
                StatusCode::NOT_FOUND,
                "not_found",
                "nothing here: the MCP endpoint is /mcp and the health check is /healthz",
            )
        });
    let authenticator = credential.authenticator(&options.names);
    let (router, token) = hardened(routes, local_addr, factory, &options, guard, authenticator);
    Ok(BoundHttp {
        listener,
        local_addr,
        router,
        limits: options.limits,
        connection_names: options.names.connections.clone(),
        cancel: Box::new(move || token.cancel()),
    })
}

/// `routes` and the MCP endpoint behind the whole hardening, in order from the outside: CORS,
/// the authenticator's public routes, the gate (Host and Origin, then who is calling), the
/// body limits and session cap, the JSON-RPC wire checks, the session binding, the dialog and
/// stream bounds. Also the token that ends every MCP session and stream.
fn hardened<S, F>(
    routes: Router,
    local_addr: SocketAddr,
    factory: F,
    options: &HttpOptions,
    guard: Guard,
    authenticator: Arc<dyn Authenticate>,
) -> (Router, CancellationToken)
where
    S: rmcp::ServerHandler + HasGuard + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let public_routes = authenticator.public_routes();
    let host_origin = host_origin::HostOriginLayer::new(
        local_addr,
        &options.allowed_hosts,
        &options.allowed_origins,
        &options.names,
    );
    let config = StreamableHttpServerConfig::default()
        // Stateful sessions for legacy clients: a pushed elicitation needs a channel back.
        .with_legacy_session_mode(true)
        // The one body limit, also enforced (before any parse) by the limits layer.
        .with_max_request_body_bytes(wire::MAX_BODY_BYTES)
        .with_allowed_hosts(host_origin.rmcp_allowed_hosts())
        .with_allowed_origins(host_origin.rmcp_allowed_origins());
    let token = config.cancellation_token.clone();
    let sessions = Arc::new(options.limits.session_manager());
    let bounds = streams::Bounds::new(
        guard.clone(),
        options.limits.bounds,
        options.limits.max_connections,
        options.names.bounds.clone(),
    );
    let owners = owners::SessionOwners::new(
        sessions.clone(),
        guard,
        authenticator.clone(),
        options
            .limits
            .bounds
            .session_cap(options.limits.max_sessions),
        options.names.bounds.sessions_per_principal.clone(),
    );
    let manager = ReplicaSessionManager::new(sessions.clone(), options.session_prefix.clone());
    let service: StreamableHttpService<S, ReplicaSessionManager> =
        StreamableHttpService::new(factory, Arc::new(manager), config);

    let router = routes
        .nest_service(MCP_PATH, service)
        // Inside the session binding: caps on dialogs and long-lived streams.
        .layer(middleware::from_fn_with_state(bounds, streams::bound))
        .layer(middleware::from_fn_with_state(
            owners,
            owners::bind_sessions,
        ))
        // Inside the gate: JSON-RPC errors for bodies rmcp would answer 415, the DELETE status.
        .layer(middleware::from_fn(wire::json_rpc_body));
    // The gate: the Host and Origin checks first, then who is calling.
    let router = limits::layer(router, options.limits, sessions, &options.names)
        // Just inside the gate: a request that passed it marks its connection authenticated.
        .layer(middleware::from_fn(connections::mark_authenticated))
        .layer(identity::IdentityLayer::new(authenticator))
        .layer(host_origin);
    // Outside the gate: what the authenticator serves to anyone (e.g. OAuth metadata).
    let router = match public_routes {
        Some(public) => public.merge(router),
        None => router,
    };
    // Outside the gate: a browser's preflight carries no Authorization.
    let router = wire::with_cors(router, &options.allowed_origins);

    (router, token)
}

/// The MCP endpoint (`/mcp`) behind the whole hardening, for a server that serves its own
/// axum `Router` (see [`McpRoutes::new`]).
#[derive(Debug)]
pub struct McpRoutes {
    /// `/mcp` (and what the authenticator serves to anyone, such as OAuth metadata), each
    /// behind the gate, the limits and the bounds: merge it into the server's own router. The
    /// server's own routes stay as they are.
    pub router: Router,
    /// Cancel it at shutdown: it ends every MCP session and stream, so a graceful shutdown
    /// does not wait on them.
    pub sessions: CancellationToken,
}

impl McpRoutes {
    /// The routes for a server bound to `local_addr`, around a fresh `S` per MCP session, with
    /// the credential `options` choose (announced on stderr as [`bind_http`] does). The accept
    /// loop's own bounds (header timeout, connection cap) are [`bind_http`]'s: a server that
    /// serves with `axum::serve` instead sets its own. Call it inside a Tokio runtime (it
    /// starts the task that returns the memory of ended sessions).
    ///
    /// ```no_run
    /// # use ask_first_core::{Guard, HasGuard};
    /// # #[derive(Clone)] struct Notes { guard: Guard }
    /// # impl HasGuard for Notes { fn guard(&self) -> &Guard { &self.guard } }
    /// # impl rmcp::ServerHandler for Notes {}
    /// use std::net::SocketAddr;
    ///
    /// use ask_first_serve::SettingNames;
    /// use ask_first_serve::http::{HttpOptions, McpRoutes};
    /// use axum::{Router, routing::get};
    ///
    /// # async fn run(notes: Notes) -> Result<(), Box<dyn std::error::Error>> {
    /// let addr = SocketAddr::from(([127, 0, 0, 1], 8080));
    /// let listener = tokio::net::TcpListener::bind(addr).await?;
    /// let options = HttpOptions::new(SettingNames::with_prefix("NOTES"));
    /// let mcp = McpRoutes::new(listener.local_addr()?, move || Ok(notes.clone()), options)?;
    /// let app = Router::new().route("/status", get(|| async { "ok" })).merge(mcp.router);
    /// axum::serve(listener, app).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new<S, F>(
        local_addr: SocketAddr,
        factory: F,
        options: HttpOptions,
    ) -> Result<Self, HttpError>
    where
        S: rmcp::ServerHandler + HasGuard + Send + 'static,
        F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    {
        let credential = Credential::choose(local_addr, &options)?;
        let guard: Guard = factory()
            .map_err(|source| HttpError::Factory { source })?
            .guard()
            .clone();
        announce(&credential, local_addr, &options.names);
        let authenticator = credential.authenticator(&options.names);
        let (router, sessions) = hardened(
            Router::new(),
            local_addr,
            factory,
            &options,
            guard,
            authenticator,
        );
        Ok(Self { router, sessions })
    }
}

/// [`bind_http`] then [`BoundHttp::serve`].
pub async fn serve_http<S, F, G>(
    addr: SocketAddr,
    factory: F,
    options: HttpOptions,
    shutdown: G,
) -> Result<(), HttpError>
where
    S: rmcp::ServerHandler + HasGuard + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    G: Future + Send + 'static,
{
    bind_http(addr, factory, options)
        .await?
        .serve(shutdown)
        .await
}

/// The credential [`bind_http`] chose.
enum Credential {
    /// The bearer secret setting.
    Configured(Secret),
    /// Made up at start, printed once on stderr.
    Minted(Secret),
    /// The no-authentication setting.
    None,
    /// Per-person tokens from a file.
    Tokens(Arc<TokenFile>, std::path::PathBuf),
    /// The server's own authenticator.
    Own(Arc<dyn Authenticate>),
    /// OAuth 2.1 access tokens from one issuer.
    OAuth(Arc<oauth::OAuthVerifier>),
}

impl Credential {
    /// The credential `options` ask for on `addr` ([`auth`] says how it chooses).
    fn choose(addr: SocketAddr, options: &HttpOptions) -> Result<Self, HttpError> {
        let names = &options.names;
        if let Some(own) = &options.authenticator {
            return Ok(Self::Own(own.clone()));
        }
        match &options.auth.mode {
            AuthMode::Tokens => {
                let Some(path) = &options.auth.tokens_file else {
                    return Err(HttpError::TokensFileMissing {
                        setting: names.http_tokens_file.clone(),
                        mode_setting: names.http_auth.clone(),
                    });
                };
                let file = TokenFile::load(path, &names.http_tokens_file)?;
                return Ok(Self::Tokens(Arc::new(file), path.clone()));
            }
            // --- issue 26 (oauth): `AuthMode::OAuth` builds its authenticator here ---
            AuthMode::OAuth => {
                let config = oauth::OAuthConfig::from_settings(
                    &options.auth.oauth,
                    &names.oauth,
                    &names.http_auth,
                )?;
                return Ok(Self::OAuth(Arc::new(oauth::OAuthVerifier::new(
                    config,
                    &names.oauth,
                )?)));
            }
            AuthMode::Server(_) => {
                return Err(HttpError::NoAuthenticator {
                    setting: names.http_auth.clone(),
                    mode: options.auth.mode.to_string(),
                });
            }
            AuthMode::Secret | AuthMode::None => {}
        }
        let no_auth = options.no_auth || options.auth.mode == AuthMode::None;
        Ok(match (&options.bearer_token, no_auth) {
            (Some(_), true) => {
                return Err(HttpError::AuthConflict {
                    no_auth: names.http_no_auth.clone(),
                    setting: names.http_token.clone(),
                });
            }
            (Some(secret), false) => Self::Configured(secret.clone()),
            (None, true) if !is_loopback(addr.ip()) => {
                return Err(HttpError::NoAuthNotLoopback {
                    addr,
                    no_auth: names.http_no_auth.clone(),
                    setting: names.http_token.clone(),
                });
            }
            (None, true) => Self::None,
            (None, false) if !is_loopback(addr.ip()) => {
                return Err(HttpError::TokenRequired {
                    addr,
                    setting: names.http_token.clone(),
                });
            }
            (None, false) => Self::Minted(auth::mint_secret()),
        })
    }

    fn authenticator(&self, names: &SettingNames) -> Arc<dyn Authenticate> {
        match self {
            Self::Configured(secret) => Arc::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`, the secret being the \
                     value of {} on the server",
                    names.http_token
                ),
            )),
            Self::Minted(secret) => Arc::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`: no {} is set, so the \
                     server made up a secret at start and printed it on its stderr (set {} to \
                     choose one)",
                    names.http_token, names.http_token
                ),
            )),
            Self::None => Arc::new(auth::Anonymous),
            Self::Tokens(file, _) => file.clone(),
            Self::Own(own) => own.clone(),
            Self::OAuth(verifier) => verifier.clone(),
        }
    }
}

/// The start-up line of the shared-secret mode: what it proves.
fn one_principal_line(names: &SettingNames) -> String {
    format!(
        "Every client holding this secret is ONE principal: they share sessions' ownership, \
         approvals and caps, and any of them can act on another's session. To tell people \
         apart, give each their own token ({auth}=tokens with {file}) or use OAuth \
         ({auth}=oauth).",
        auth = names.http_auth,
        file = names.http_tokens_file,
    )
}

/// Binds `addr`, runs `announce` with the address bound, and only then listens: whoever waits
/// for the port to accept connections (a script, a test, a supervisor) finds the start-up lines
/// (a made-up secret among them) already written in full.
fn bind_then_announce(
    addr: SocketAddr,
    announce: impl FnOnce(SocketAddr),
) -> std::io::Result<(TcpListener, SocketAddr)> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does on Unix: a restart can bind while old connections linger.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let local_addr = socket.local_addr()?;
    announce(local_addr);
    Ok((socket.listen(LISTEN_BACKLOG)?, local_addr))
}

/// The listen backlog, as `TcpListener::bind` sets it.
const LISTEN_BACKLOG: u32 = 1024;

/// Says on stderr (never through tracing, so never into a log collector) how to authenticate:
/// the made-up secret with a client configuration, that every holder of a secret is one
/// principal, how many per-person tokens are listed, or that there is no authentication.
fn announce(credential: &Credential, local_addr: SocketAddr, names: &SettingNames) {
    match credential {
        Credential::Configured(_) => eprintln!(
            "HTTP clients authenticate with the shared bearer secret {token}. {line}",
            token = names.http_token,
            line = one_principal_line(names),
        ),
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
                 set {no_auth}=true.\n{line}",
                token = names.http_token,
                no_auth = names.http_no_auth,
                secret = secret.expose(),
                line = one_principal_line(names),
            );
        }
        Credential::None => eprintln!(
            "WARNING: {no_auth}=true (or {auth}=none): serving HTTP at \
             http://{local_addr}{MCP_PATH} without authentication: no credential at all. Any \
             process on this machine that can reach the port acts with this server's full rights, and every caller is \
             one principal (Host and Origin checks stop web pages, not processes). Set {token} \
             and unset {no_auth} to require a secret, or {auth}=tokens for per-person tokens.",
            no_auth = names.http_no_auth,
            auth = names.http_auth,
            token = names.http_token,
        ),
        Credential::Tokens(file, path) => eprintln!(
            "HTTP clients authenticate with per-person tokens: {count} listed in {setting} \
             ({path}), re-read when it changes; each person is their own principal \
             (token:<name>).",
            count = file.token_count().unwrap_or(0),
            setting = names.http_tokens_file,
            path = path.display(),
        ),
        Credential::Own(_) => {}
        Credential::OAuth(verifier) => {
            let config = verifier.config();
            eprintln!(
                "HTTP clients authenticate with OAuth 2.1 access tokens (JWT) issued by {issuer} \
                 for the resource {resource}; each subject is its own principal \
                 (oauth:<issuer>#<subject>). Protected Resource Metadata: {metadata}",
                issuer = config.issuer,
                resource = config.resource,
                metadata = verifier.metadata_url(),
            );
            // Read the issuer's keys now, so the first request does not wait on them.
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.prefetch().await });
        }
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
/// setting); a server's own authenticator in `options` is asked, and counts as refusing when it
/// cannot answer at once.
/// `local_addr` is the address the server is bound to.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn gate_verdict(
    local_addr: SocketAddr,
    options: &HttpOptions,
    headers: &http::HeaderMap,
    uri: &http::Uri,
) -> Result<(), StatusCode> {
    use futures::FutureExt as _;
    let credential = match (&options.authenticator, &options.bearer_token) {
        (Some(own), _) => Credential::Own(own.clone()),
        (None, Some(secret)) => Credential::Configured(secret.clone()),
        (None, None) => Credential::None,
    };
    let host_origin = host_origin::HostOriginLayer::new(
        local_addr,
        &options.allowed_hosts,
        &options.allowed_origins,
        &options.names,
    );
    if let Some(status) = host_origin.refusal(headers, uri) {
        return Err(status);
    }
    let auth = credential.authenticator(&options.names);
    let mut request = http::Request::builder()
        .uri(uri.clone())
        .body(())
        .map_err(|_| StatusCode::BAD_REQUEST)?;
    *request.headers_mut() = headers.clone();
    let (mut parts, ()) = request.into_parts();
    match auth.authenticate(&mut parts).now_or_never() {
        Some(Ok(_)) => Ok(()),
        Some(Err(refusal)) => Err(refusal.status()),
        None => Err(StatusCode::SERVICE_UNAVAILABLE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Plain {
        guard: Guard,
    }
    impl HasGuard for Plain {
        fn guard(&self) -> &Guard {
            &self.guard
        }
    }
    impl rmcp::ServerHandler for Plain {}

    /// The status line's code of one raw HTTP/1.1 request to `addr`.
    async fn status_of(addr: SocketAddr, request: String) -> u16 {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.expect("status line");
        std::str::from_utf8(&head[9..12])
            .expect("ascii")
            .parse()
            .expect("a status code")
    }

    #[tokio::test]
    async fn mcp_routes_merged_into_a_servers_router_are_gated_and_its_own_routes_are_not() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let mut options = HttpOptions::new(SettingNames::with_prefix("T"));
        options.bearer_token = Some(Secret::new("a-secret-of-at-least-16"));
        let server = Plain {
            guard: Guard::builder("t").build(),
        };
        let mcp = McpRoutes::new(addr, move || Ok(server.clone()), options).expect("routes");
        let app = Router::new()
            .route("/mine", get(|| async { "mine" }))
            .merge(mcp.router);
        let serving = tokio::spawn(async move { axum::serve(listener, app).await });
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let post = |host: &str, auth: &str| {
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            )
        };
        let local = format!("127.0.0.1:{}", addr.port());
        let bearer = "Authorization: Bearer a-secret-of-at-least-16\r\n";
        // The server's own route: no credential needed.
        let own = format!("GET /mine HTTP/1.1\r\nHost: {local}\r\nConnection: close\r\n\r\n");
        assert_eq!(status_of(addr, own).await, 200);
        // The MCP endpoint: the gate's refusals, and the request that passes (the control).
        assert_eq!(status_of(addr, post(&local, "")).await, 401);
        assert_eq!(status_of(addr, post("evil.example", bearer)).await, 403);
        assert_eq!(status_of(addr, post(&local, bearer)).await, 200);
        mcp.sessions.cancel();
        serving.abort();
    }

    #[tokio::test]
    async fn the_start_up_lines_are_written_before_the_port_accepts_connections() {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        let mut refused_while_announcing = None;
        let (listener, local_addr) = bind_then_announce(loopback, |bound| {
            refused_while_announcing = Some(
                std::net::TcpStream::connect(bound)
                    .map_err(|error| error.kind())
                    .err(),
            );
        })
        .expect("bound");
        assert_eq!(
            refused_while_announcing,
            Some(Some(std::io::ErrorKind::ConnectionRefused)),
            "the port accepted a connection before the announcement was written"
        );
        // The positive control: once it returns, the port accepts.
        let accepted = tokio::join!(
            listener.accept(),
            tokio::net::TcpStream::connect(local_addr)
        );
        assert!(accepted.0.is_ok() && accepted.1.is_ok(), "{accepted:?}");
    }
}
