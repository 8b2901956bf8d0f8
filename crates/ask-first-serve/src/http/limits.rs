//! Limits that keep slow or numerous HTTP clients from exhausting the server.
//!
//! - **Header read timeout** ([`HttpLimits::header_timeout`]): a connection that has not sent
//!   a whole request head within it is closed. hyper's own `header_read_timeout`; it also
//!   bounds how long an idle keep-alive connection is held open.
//! - **Body read timeout** ([`HttpLimits::body_timeout`]): the whole request body must arrive
//!   within it, counted from the end of the head, else `408` and the connection is closed.
//!   tower-http's `RequestBodyTimeout` is not used: it restarts its clock at every frame, so a
//!   body trickled one byte every few seconds is never cut. MCP bodies are JSON that rmcp reads
//!   whole anyway, so reading it here first costs no extra memory at rest.
//! - **Connection cap** ([`HttpLimits::max_connections`]): at the cap, a connection just
//!   accepted takes the place of the oldest connection none of whose requests passed the gate;
//!   when every connection is authenticated, it waits for one to close, and the connections
//!   after it wait in the kernel's listen backlog instead of taking file descriptors.
//! - **Session cap** ([`HttpLimits::max_sessions`]): a legacy `initialize` that would open one
//!   session too many gets `503 Service Unavailable` with `Retry-After`; requests on existing
//!   sessions and stateless 2026-07-28 requests are not affected. Concurrent `initialize`s at
//!   the cap can overshoot it by their number.
//! - **Session idle timeout** ([`HttpLimits::session_idle`]): a legacy session with no traffic
//!   for that long is closed by rmcp; the memory it held goes back to the allocator and, on
//!   glibc, is returned to the operating system (`malloc_trim`) once sessions were closed.
//! - **Dialogs and long-lived streams** ([`HttpLimits::bounds`]): caps on guarded calls waiting
//!   on a person per session, per principal and in all, and on long-lived streams per principal
//!   and in all (below the connection cap), with an idle-stream timeout; enforced by
//!   [`crate::http`]'s stream layer (see [`HttpBounds`]).
//! - **Connections before identity** ([`HttpLimits::connections`]): per peer address,
//!   unauthenticated in all, a deadline to present a credential, and places reserved for
//!   authenticated connections; enforced at accept by `crate::http`'s connections module (see
//!   [`ConnectionBounds`]).
//!
//! Every refusal names the setting to change as the server calls it ([`SettingNames`]).
//!
//! The pieces are used by [`crate::http`]: [`HttpLimits::session_config`] for rmcp's session
//! manager, [`BodyLimitLayer`] around the routes (the body timeout and size), [`serve`] instead
//! of `axum::serve` ([`BodyLimitLayer`]'s page has the example of mounting it). The session
//! caps are the session binding's ([`SessionBindingLayer`](super::owners::SessionBindingLayer)), the dialog and stream
//! bounds the stream layer's ([`StreamBoundsLayer`](super::streams::StreamBoundsLayer)).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};

use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tower_layer::Layer;
use tower_service::Service;

use super::connections::{Connections, Marked};
pub use crate::settings::{
    ConnectionBounds, DEFAULT_BODY_TIMEOUT_SECS, DEFAULT_HEADER_TIMEOUT_SECS,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_SECS, HttpBounds,
    HttpLimits,
};
use crate::settings::{ConnectionNames, SettingNames};
/// Largest request body read, in bytes (what rmcp accepts: [`crate::http::wire::MAX_BODY_BYTES`]);
/// larger: `413`, before anything parses it.
pub const MAX_BODY_BYTES: usize = crate::http::wire::MAX_BODY_BYTES;
/// The `Retry-After` of a refused session, in seconds.
pub const SESSION_RETRY_AFTER_SECS: u64 = 30;

// The limits are plain settings (`crate::settings::HttpLimits`); what rmcp makes of them is
// HTTP's own.
impl HttpLimits {
    /// rmcp's session settings with this idle timeout.
    pub fn session_config(&self) -> SessionConfig {
        let mut config = SessionConfig::default();
        config.keep_alive = Some(self.session_idle);
        config
    }

    /// A session manager with this idle timeout.
    pub fn session_manager(&self) -> LocalSessionManager {
        let mut manager = LocalSessionManager::default();
        manager.session_config = self.session_config();
        manager
    }
}

/// Reads every request body once, whole, within the body timeout and up to
/// [`MAX_BODY_BYTES`] (see the [module](self)): a body that does not arrive in time is `408`, a
/// larger one `413`, each with `Connection: close`, before anything parses it. Put it inside
/// the gate, so nothing is read for a request the gate refuses. Refusals name the settings.
///
/// ```no_run
/// use ask_first_serve::SettingNames;
/// use ask_first_serve::http::limits::{BodyLimitLayer, HttpLimits};
/// use axum::{Router, routing::post};
///
/// let names = SettingNames::with_prefix("NOTES");
/// let app: Router = Router::new()
///     .route("/upload", post(|body: String| async move { body.len().to_string() }))
///     .layer(BodyLimitLayer::new(&HttpLimits::default(), &names));
/// ```
#[derive(Debug, Clone)]
pub struct BodyLimitLayer {
    timeout: Duration,
    timeout_setting: Arc<str>,
}

impl BodyLimitLayer {
    /// The body timeout of `limits`; messages name its setting as `names` call it.
    pub fn new(limits: &HttpLimits, names: &SettingNames) -> Self {
        Self {
            timeout: limits.body_timeout,
            timeout_setting: names.body_timeout.as_str().into(),
        }
    }
}

impl<S> Layer<S> for BodyLimitLayer {
    type Service = BodyLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BodyLimit {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`BodyLimitLayer`] makes.
#[derive(Debug, Clone)]
pub struct BodyLimit<S> {
    inner: S,
    layer: BodyLimitLayer,
}

impl<S> Service<Request> for BodyLimit<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = S::Error;
    type Future = super::ResponseFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mut inner = super::take_ready(&mut self.inner);
        let layer = self.layer.clone();
        Box::pin(async move {
            let has_body = !matches!(
                *request.method(),
                Method::GET | Method::HEAD | Method::DELETE | Method::OPTIONS
            );
            if !has_body {
                return inner.call(request).await;
            }
            let (parts, body) = request.into_parts();
            match read_body(body, &layer).await {
                Ok(bytes) => {
                    inner
                        .call(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
                Err(refused) => Ok(refused),
            }
        })
    }
}

/// The whole body, or the answer to send instead.
async fn read_body(body: Body, layer: &BodyLimitLayer) -> Result<axum::body::Bytes, Response> {
    let read = axum::body::to_bytes(body, MAX_BODY_BYTES);
    match tokio::time::timeout(layer.timeout, read).await {
        Err(_) => {
            tracing::warn!("cut an HTTP request whose body did not arrive in time");
            Err(refusal(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                &format!(
                    "the request body did not arrive within {} s ({}); send it at once",
                    layer.timeout.as_secs(),
                    layer.timeout_setting
                ),
                true,
            ))
        }
        Ok(Err(_)) => Err(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            &format!(
                "the request body is larger than {MAX_BODY_BYTES} bytes or broke off; send \
                 smaller content"
            ),
            true,
        )),
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

/// `503` with `Retry-After` for an `initialize` past the server's session cap (`max_sessions`,
/// the setting `setting`; idle sessions close after `idle`).
pub(crate) fn too_many_sessions(max_sessions: usize, setting: &str, idle: Duration) -> Response {
    tracing::warn!(
        max_sessions,
        "refused a new MCP session: the session cap is reached"
    );
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_sessions",
        &format!(
            "this server already holds {max_sessions} sessions ({setting}); idle ones close \
             after {} s; try again later",
            idle.as_secs()
        ),
        false,
    );
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(SESSION_RETRY_AFTER_SECS),
    );
    response
}

fn refusal(status: StatusCode, code: &str, message: &str, close: bool) -> Response {
    let body = serde_json::json!({ "error": code, "message": message }).to_string();
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Body::from(body),
    )
        .into_response();
    if close {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Serves `router` on `listener` with the header timeout, the connection cap and the bounds on
/// connections before identity (see [`ConnectionBounds`]; refusals name the settings
/// `names`) until `shutdown` completes, then lets open requests finish.
pub async fn serve<G>(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    names: &ConnectionNames,
    shutdown: G,
) -> std::io::Result<()>
where
    G: Future + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let admission = Connections::new(&limits, names);
    let (stop, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!(%error, "could not accept an HTTP connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Each SSE answer goes out in more than one write; without TCP_NODELAY the second
        // waits for the client's delayed ACK, about 40 ms per call on a reused connection.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        // At the cap, the oldest connection that presented no credential gives its place.
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                admission.close_one_unauthenticated();
                tokio::select! {
                    permit = permits.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                    _ = &mut shutdown => break,
                }
            }
        };
        let Some(admitted) = admission.admit(peer.ip(), &tcp) else {
            continue;
        };
        let service = Marked::new(TowerToHyperService::new(router.clone()), admitted.mark());
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            let mut connection = pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "an HTTP connection ended with an error");
                    }
                }
                // Dropping the connection closes it.
                () = admitted.must_close() => {}
                _ = async { let _ = stopped.wait_for(|stop| *stop).await; } => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// Hands memory back to the operating system after sessions closed: glibc keeps freed memory in
/// its per-thread arenas (RSS stays at its peak) unless asked to trim.
pub(crate) fn spawn_memory_return(sessions: Arc<LocalSessionManager>) {
    tokio::spawn(async move {
        let mut last = 0usize;
        let mut ticks = tokio::time::interval(Duration::from_secs(5));
        loop {
            ticks.tick().await;
            if Arc::strong_count(&sessions) == 1 {
                return;
            }
            let now = sessions.sessions.read().await.len();
            if now < last {
                trim_heap();
            }
            last = now;
        }
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_heap() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: glibc's malloc_trim only releases free memory; it takes the allocator's own
    // locks and may be called from any thread at any time.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_heap() {}
