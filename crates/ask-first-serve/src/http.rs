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
//! Each piece is a public tower layer a server can mount on its own axum `Router` (SERVING.md
//! shows how), and [`bind_http`] is their composition, from the outside in:
//! [`HostOriginLayer`](host_origin::HostOriginLayer), [`IdentityLayer`](identity::IdentityLayer),
//! [`BodyLimitLayer`](limits::BodyLimitLayer), [`JsonRpcLayer`](wire::JsonRpcLayer) (which
//! reads each body's JSON-RPC envelope once, for every layer inside it:
//! [`envelope::RequestMethod`]), [`SessionBindingLayer`](owners::SessionBindingLayer) and
//! [`StreamBoundsLayer`](streams::StreamBoundsLayer).
//!
//! rmcp's own Host and Origin checks are configured with the same lists, as a second layer.
//! Binding a non-loopback address without a bearer secret is refused at start, with or without
//! the no-authentication setting. Every message names the settings as the server calls them
//! ([`HttpOptions::names`]).

use std::net::SocketAddr;
use std::pin::Pin;
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

pub mod auth;
mod connections;
mod credential;
pub mod envelope;
mod error;
pub mod host_origin;
pub mod identity;
pub mod limits;
pub mod oauth;
mod options;
pub mod owners;
mod recheck;
pub mod sessions;
pub mod streams;
pub mod tokens;
pub mod wire;

pub use auth::{AuthFuture, Authenticate, Identity, Refusal, bearer_of};
pub use error::HttpError;
pub use limits::HttpLimits;
pub use options::{BrowserPages, HttpOptions, PagesAt};
pub use sessions::ReplicaSessionManager;
pub use tokens::{TokenFile, TokenFileError, add_token, run_tokens_add};

use credential::{Credential, announce};

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";
/// The health check.
pub const HEALTH_PATH: &str = "/healthz";

/// The future of every hardening layer's service: the response, or the inner service's error.
pub type ResponseFuture<E> = Pin<Box<dyn Future<Output = Result<Response, E>> + Send>>;

/// The inner service, ready (polled by `poll_ready`), to serve one request; a clone takes its
/// place for the next (the tower idiom for a service whose future outlives `call`'s borrow).
fn take_ready<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
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
    let (limits, names) = (&options.limits, &options.names);
    let binding = owners::SessionBindingLayer::new(
        sessions.clone(),
        guard.clone(),
        authenticator.clone(),
        limits,
        names,
    );
    // Open streams' credentials asked about again, when the authenticator wants it; a
    // credential found revoked loses its streams and its sessions.
    let bounds = streams::StreamBoundsLayer::with_rechecks(
        guard,
        limits,
        names,
        authenticator.clone(),
        &binding,
    );
    let manager = ReplicaSessionManager::new(sessions, options.session_prefix.clone());
    let service: StreamableHttpService<S, ReplicaSessionManager> =
        StreamableHttpService::new(factory, Arc::new(manager), config);

    // From the inside out (the last layer added is the outermost).
    let router = routes
        .nest_service(MCP_PATH, service)
        // Caps on dialogs and long-lived streams.
        .layer(bounds)
        // Each legacy session answers only to the credential that opened it; session caps.
        .layer(binding)
        // JSON-RPC errors for bodies rmcp would answer 415, the DELETE status; the one read of
        // the envelope the layers inside share.
        .layer(wire::JsonRpcLayer::new())
        // The body read once, within its timeout and size, before anything parses it.
        .layer(limits::BodyLimitLayer::new(limits, names))
        // Just inside the gate: a request that passed it marks its connection authenticated.
        .layer(middleware::from_fn(connections::mark_authenticated))
        // The gate: the Host and Origin checks first, then who is calling.
        .layer(identity::IdentityLayer::new(authenticator))
        .layer(host_origin);
    // Outside the gate: what the authenticator serves to anyone (e.g. OAuth metadata).
    let router = match public_routes {
        Some(public) => public.merge(router),
        None => router,
    };
    // Beside the gate: the browser pages, behind its Host and Origin checks only.
    let router = match options.pages.as_ref().and_then(|pages| pages(local_addr)) {
        Some(pages) => {
            let mut hosts = options.allowed_hosts.clone();
            hosts.push(pages.host);
            let mut origins = options.allowed_origins.clone();
            origins.push(pages.origin);
            let checks =
                host_origin::HostOriginLayer::new(local_addr, &hosts, &origins, &options.names);
            pages.router.layer(checks).merge(router)
        }
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
    use crate::settings::{Secret, SettingNames};

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
