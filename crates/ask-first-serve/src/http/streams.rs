//! Bounded work per session and per person: guarded calls waiting on a person, and long-lived
//! response streams.
//!
//! - **Dialogs.** Every `POST /mcp` carries a [`DialogCarrier`] (in its `http::request::Parts`
//!   extensions, which rmcp hands to the handler). Before the guard pushes an approval dialog
//!   it asks the carrier for a place: at most [`HttpBounds::dialogs_per_session`] dialogs
//!   waiting per legacy session, [`HttpBounds::dialogs_per_principal`] per principal (the
//!   guard's own rule, [`Guard::principal_of`], as the session binding uses) and
//!   [`HttpBounds::max_dialogs`] in all. Past a cap the call is answered at once with an error
//!   result naming the cap's setting and when a place frees at the latest (when the oldest
//!   dialog in that scope times out); no one is asked and nothing runs. A dialog also holds its
//!   response stream open, so it takes a stream place too (below).
//! - **The carrying stream.** When the client drops the response stream of a call whose dialog
//!   is pending (the connection closed before the answer), the carrier's token is cancelled:
//!   the guard withdraws the dialog at once, the call ends without running, and its places are
//!   freed, instead of waiting out the dialog timeout. Such a stream is not resumed with
//!   `Last-Event-ID`: the client asks again with a new call.
//! - **Long-lived streams**: a legacy session's `GET` stream, a `subscriptions/listen` stream,
//!   or a response stream held by a pending dialog. At most
//!   [`HttpBounds::streams_per_principal`] per principal and [`HttpBounds::stream_cap`] in all,
//!   which stays below the connection cap so short requests always find a connection. A `GET`
//!   or `listen` past a cap is refused before rmcp sees it: `429 Too Many Requests` (the
//!   principal's cap) or `503 Service Unavailable` (the server's), with `Retry-After` and a
//!   JSON body naming the setting.
//! - **Idle streams.** A `GET` or `listen` stream that carries nothing but keep-alives for
//!   [`HttpBounds::stream_idle`] is ended (the client may open another); rmcp's keep-alives
//!   (every 15 s) meanwhile end streams whose client is gone.
//!
//! - **Revoked credentials.** With an authenticator that asks for it
//!   ([`Authenticate::recheck_open_streams`]), the
//!   credential of every open `GET` or `listen` stream is asked about again every period, once
//!   per credential ([`StreamBoundsLayer::with_rechecks`]); the streams of one found revoked end.
//!
//! Every table here is bounded by its cap: nothing grows with calls or streams past the caps.
//!
//! [`StreamBoundsLayer`] mounts it on a router (its page has the example).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ask_first_core::{Caller, DialogCarrier, DialogSlot, Guard};
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;
use tower_service::Service;

use crate::settings::{BoundNames, HttpBounds, HttpLimits, SettingNames};

#[cfg(doc)]
use super::envelope::RequestMethod;
use super::owners::SessionBindingLayer;
use super::recheck::CredentialWatch;
use super::{Authenticate, MCP_PATH};

mod tracked;

use tracked::track;

/// The header rmcp names sessions with.
const SESSION_HEADER: &str = "mcp-session-id";
/// The JSON-RPC method of a 2026-07-28 notification stream.
const LISTEN_METHOD: &str = "subscriptions/listen";
/// The longest `Retry-After` of a refused stream, in seconds (the idle timeout if shorter).
const STREAM_RETRY_AFTER_SECS: u64 = 30;

/// The shared tables and caps of one HTTP server.
struct Bounds {
    guard: Guard,
    caps: HttpBounds,
    stream_cap: usize,
    names: BoundNames,
    /// Asks again about the credentials of open streams, when the authenticator wants it.
    watch: Option<Arc<CredentialWatch>>,
    next_id: AtomicU64,
    dialogs: Mutex<Vec<Dialog>>,
    streams: Mutex<StreamCounts>,
}

/// One dialog waiting on a person.
struct Dialog {
    id: u64,
    session: Option<Arc<str>>,
    principal: Arc<str>,
    /// When it times out at the latest.
    deadline: Instant,
}

#[derive(Default)]
struct StreamCounts {
    total: usize,
    per_principal: HashMap<Arc<str>, usize>,
}

/// Which stream cap refused.
enum StreamCap {
    Principal,
    Server,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Bounds {
    /// The tables for a server whose guard tells principals apart, with `caps` below
    /// `max_connections` connections; refusals name the settings `names`. The streams' credentials
    /// are watched by `watch`, if given.
    fn new(
        guard: Guard,
        caps: HttpBounds,
        max_connections: usize,
        names: BoundNames,
        watch: Option<Arc<CredentialWatch>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            guard,
            caps,
            stream_cap: caps.stream_cap(max_connections),
            names,
            watch,
            next_id: AtomicU64::new(0),
            dialogs: Mutex::new(Vec::new()),
            streams: Mutex::new(StreamCounts::default()),
        })
    }

    /// The watch of the credential of the stream `parts` opens, and the token that ends it.
    fn watch(
        &self,
        parts: &http::request::Parts,
    ) -> (Option<super::recheck::Watch>, Option<CancellationToken>) {
        match self.watch.as_ref().and_then(|watch| watch.watch(parts)) {
            Some((watch, end)) => (Some(watch), Some(end)),
            None => (None, None),
        }
    }

    fn stream_retry_after(&self) -> u64 {
        self.caps
            .stream_idle
            .as_secs()
            .clamp(1, STREAM_RETRY_AFTER_SECS)
    }

    /// A long-lived stream place for `principal`, or the cap that refused it.
    fn open_stream(self: &Arc<Self>, principal: &Arc<str>) -> Result<StreamPlace, StreamCap> {
        let mut counts = lock(&self.streams);
        if counts.total >= self.stream_cap {
            return Err(StreamCap::Server);
        }
        let mine = counts.per_principal.get(principal).copied().unwrap_or(0);
        if mine >= self.caps.streams_per_principal {
            return Err(StreamCap::Principal);
        }
        counts.total += 1;
        counts.per_principal.insert(principal.clone(), mine + 1);
        Ok(StreamPlace {
            bounds: self.clone(),
            principal: principal.clone(),
        })
    }

    fn close_stream(&self, principal: &Arc<str>) {
        let mut counts = lock(&self.streams);
        counts.total = counts.total.saturating_sub(1);
        if let Some(mine) = counts.per_principal.get_mut(principal) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                counts.per_principal.remove(principal);
            }
        }
    }

    /// The answer to a stream request past a cap.
    fn stream_refusal(&self, cap: &StreamCap) -> Response {
        let retry = self.stream_retry_after();
        let (status, code, message) = match cap {
            StreamCap::Principal => (
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams_for_principal",
                format!(
                    "these credentials already hold {} long-lived streams (GET streams, \
                     subscriptions/listen, calls waiting on a person), the most allowed per \
                     caller ({}); close one, or retry in {retry} s",
                    self.caps.streams_per_principal, self.names.streams_per_principal
                ),
            ),
            StreamCap::Server => (
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_streams",
                format!(
                    "this server already holds {} long-lived streams (GET streams, \
                     subscriptions/listen, calls waiting on a person), the most allowed ({}); \
                     retry in {retry} s",
                    self.stream_cap, self.names.max_streams
                ),
            ),
        };
        tracing::warn!(code, "refused a long-lived stream: a stream cap is reached");
        let mut response = super::json_error(status, code, &message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry));
        response
    }

    /// A place for a dialog of `session` and `principal` that may wait up to `timeout`, with
    /// its stream place; or the refusal the call is answered with.
    fn admit_dialog(
        self: &Arc<Self>,
        session: Option<&Arc<str>>,
        principal: &Arc<str>,
        timeout: Duration,
    ) -> Result<DialogSlot, String> {
        let now = Instant::now();
        let mut dialogs = lock(&self.dialogs);
        let refused = |count: usize, scope: &str, setting: &str, of: &dyn Fn(&Dialog) -> bool| {
            let oldest = dialogs
                .iter()
                .filter(|dialog| of(dialog))
                .map(|dialog| dialog.deadline)
                .min()
                .unwrap_or(now + timeout);
            let left = oldest.saturating_duration_since(now);
            let retry = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            let retry = retry.max(1);
            tracing::warn!(
                scope,
                "refused an approval dialog: a cap on dialogs in flight is reached"
            );
            format!(
                "Nothing was changed and no one was asked: {scope} already has {count} guarded \
                 calls waiting for a person's answer, the most allowed ({setting}). Answer, \
                 decline or cancel one of them, or retry in {retry} s, when the oldest of them \
                 times out at the latest."
            )
        };
        if dialogs.len() >= self.caps.max_dialogs {
            return Err(refused(
                dialogs.len(),
                "this server",
                &self.names.max_dialogs,
                &|_| true,
            ));
        }
        if let Some(session) = session {
            let of = |dialog: &Dialog| dialog.session.as_ref() == Some(session);
            let count = dialogs.iter().filter(|dialog| of(dialog)).count();
            if count >= self.caps.dialogs_per_session {
                return Err(refused(
                    count,
                    "this session",
                    &self.names.dialogs_per_session,
                    &of,
                ));
            }
        }
        let of = |dialog: &Dialog| dialog.principal == *principal;
        let count = dialogs.iter().filter(|dialog| of(dialog)).count();
        if count >= self.caps.dialogs_per_principal {
            return Err(refused(
                count,
                "this caller (these credentials, over all their sessions)",
                &self.names.dialogs_per_principal,
                &of,
            ));
        }
        let stream = match self.open_stream(principal) {
            Ok(stream) => stream,
            Err(cap) => {
                let (scope, setting) = match cap {
                    StreamCap::Principal => ("this caller", &self.names.streams_per_principal),
                    StreamCap::Server => ("this server", &self.names.max_streams),
                };
                tracing::warn!(
                    scope,
                    "refused an approval dialog: a cap on long-lived streams is reached"
                );
                return Err(format!(
                    "Nothing was changed and no one was asked: {scope} already holds the most \
                     long-lived streams allowed ({setting}), and a dialog would hold one more \
                     open. Close a stream or answer a pending dialog, or retry in {} s.",
                    self.stream_retry_after()
                ));
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        dialogs.push(Dialog {
            id,
            session: session.cloned(),
            principal: principal.clone(),
            deadline: now + timeout,
        });
        Ok(DialogSlot::new((
            DialogPlace {
                bounds: self.clone(),
                id,
            },
            stream,
        )))
    }

    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        (lock(&self.dialogs).len(), lock(&self.streams).total)
    }
}

/// A long-lived stream's place, freed when dropped.
struct StreamPlace {
    bounds: Arc<Bounds>,
    principal: Arc<str>,
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        self.bounds.close_stream(&self.principal);
    }
}

/// A dialog's place, freed when dropped.
struct DialogPlace {
    bounds: Arc<Bounds>,
    id: u64,
}

impl Drop for DialogPlace {
    fn drop(&mut self) {
        lock(&self.bounds.dialogs).retain(|dialog| dialog.id != self.id);
    }
}

/// The dialog and stream bounds (see the [module](self)), as a tower layer. Mount it inside the
/// gate and the session binding, around rmcp's service: it reads the gate's identity (through
/// the guard's principal rule) and the envelope layer's record of the method
/// ([`RequestMethod`]). Refusals name the settings.
///
/// ```no_run
/// use ask_first_core::Guard;
/// use ask_first_serve::SettingNames;
/// use ask_first_serve::http::limits::HttpLimits;
/// use ask_first_serve::http::streams::StreamBoundsLayer;
/// use axum::Router;
///
/// # fn app(mcp: Router, guard: Guard) -> Router {
/// let bounds = StreamBoundsLayer::new(
///     guard,
///     &HttpLimits::default(),
///     &SettingNames::with_prefix("NOTES"),
/// );
/// mcp.layer(bounds)
/// # }
/// ```
#[derive(Clone)]
pub struct StreamBoundsLayer {
    bounds: Arc<Bounds>,
}

impl std::fmt::Debug for StreamBoundsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamBoundsLayer").finish_non_exhaustive()
    }
}

impl StreamBoundsLayer {
    /// The caps of `limits` (the stream cap below its connection cap), counting principals by
    /// `guard`'s rule; refusals name the settings as `names` call them.
    pub fn new(guard: Guard, limits: &HttpLimits, names: &SettingNames) -> Self {
        Self::watched(guard, limits, names, None)
    }

    /// The same caps; and when `auth` asks for it
    /// ([`Authenticate::recheck_open_streams`]), the credential of every open `GET` and
    /// `listen` stream asked about again each period, once per credential: the streams of one
    /// found revoked end, and `sessions` closes its sessions. Make it inside a Tokio runtime
    /// (it starts the task that asks).
    pub fn with_rechecks(
        guard: Guard,
        limits: &HttpLimits,
        names: &SettingNames,
        auth: Arc<dyn Authenticate>,
        sessions: &SessionBindingLayer,
    ) -> Self {
        let watch = CredentialWatch::start(auth, sessions.revocation_hook());
        Self::watched(guard, limits, names, watch)
    }

    fn watched(
        guard: Guard,
        limits: &HttpLimits,
        names: &SettingNames,
        watch: Option<Arc<CredentialWatch>>,
    ) -> Self {
        Self {
            bounds: Bounds::new(
                guard,
                limits.bounds,
                limits.max_connections,
                names.bounds.clone(),
                watch,
            ),
        }
    }
}

impl<S> Layer<S> for StreamBoundsLayer {
    type Service = StreamBounds<S>;

    fn layer(&self, inner: S) -> Self::Service {
        StreamBounds {
            inner,
            bounds: self.bounds.clone(),
        }
    }
}

/// The service [`StreamBoundsLayer`] makes.
#[derive(Clone)]
pub struct StreamBounds<S> {
    inner: S,
    bounds: Arc<Bounds>,
}

impl<S> std::fmt::Debug for StreamBounds<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamBounds").finish_non_exhaustive()
    }
}

impl<S> Service<Request> for StreamBounds<S>
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
        let inner = super::take_ready(&mut self.inner);
        Box::pin(bound(self.bounds.clone(), request, inner))
    }
}

/// Counts long-lived streams and attaches the dialog carrier.
async fn bound<S>(bounds: Arc<Bounds>, request: Request, mut inner: S) -> Result<Response, S::Error>
where
    S: Service<Request, Response = Response>,
{
    if request.uri().path() != MCP_PATH {
        return inner.call(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let principal: Arc<str> = bounds.guard.principal_of(&Caller::http(&parts)).into();
    let session: Option<Arc<str>> = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(Arc::from);
    let idle = Some(bounds.caps.stream_idle);
    match parts.method {
        Method::GET => {
            let place = match bounds.open_stream(&principal) {
                Ok(place) => place,
                Err(cap) => return Ok(bounds.stream_refusal(&cap)),
            };
            let (watch, revoked) = bounds.watch(&parts);
            let response = inner.call(Request::from_parts(parts, body)).await?;
            Ok(track(
                response,
                Some(Box::new((place, watch))),
                None,
                idle,
                revoked,
            ))
        }
        Method::POST => {
            // From every body: a 2026-07-28 request is served statelessly even when it names a
            // session, so a session header proves nothing about the method.
            let (body, method) = super::envelope::method_of(&parts.extensions, body).await;
            if method.get() == Some(LISTEN_METHOD) {
                let place = match bounds.open_stream(&principal) {
                    Ok(place) => place,
                    Err(cap) => return Ok(bounds.stream_refusal(&cap)),
                };
                let (watch, revoked) = bounds.watch(&parts);
                let response = inner.call(Request::from_parts(parts, body)).await?;
                return Ok(track(
                    response,
                    Some(Box::new((place, watch))),
                    None,
                    idle,
                    revoked,
                ));
            }
            let gone = CancellationToken::new();
            let admission = bounds.clone();
            let carrier = DialogCarrier::new(gone.clone()).with_admission(move |timeout| {
                admission.admit_dialog(session.as_ref(), &principal, timeout)
            });
            parts.extensions.insert(carrier);
            let response = inner.call(Request::from_parts(parts, body)).await?;
            Ok(track(response, None, Some(gone.drop_guard()), None, None))
        }
        _ => inner.call(Request::from_parts(parts, body)).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(caps: HttpBounds, connections: usize) -> Arc<Bounds> {
        Bounds::new(
            Guard::builder("test").build(),
            caps,
            connections,
            BoundNames::with_prefix("NOTES"),
            None,
        )
    }

    fn key(text: &str) -> Arc<str> {
        Arc::from(text)
    }

    #[test]
    fn dialog_caps_per_session_principal_and_server_and_places_come_back() {
        let caps = HttpBounds {
            max_dialogs: 5,
            dialogs_per_session: 2,
            dialogs_per_principal: 3,
            ..HttpBounds::default()
        };
        let bounds = bounds(caps, 256);
        let timeout = Duration::from_secs(600);
        let (alice, bob) = (key("alice"), key("bob"));
        let (s1, s2, s3) = (key("s1"), key("s2"), key("s3"));
        let a1 = bounds
            .admit_dialog(Some(&s1), &alice, timeout)
            .expect("first");
        let a2 = bounds
            .admit_dialog(Some(&s1), &alice, timeout)
            .expect("second");
        let refused = bounds
            .admit_dialog(Some(&s1), &alice, timeout)
            .expect_err("session cap");
        assert!(refused.contains("this session"), "{refused}");
        assert!(
            refused.contains("NOTES_HTTP_DIALOGS_PER_SESSION"),
            "{refused}"
        );
        assert!(
            refused.contains("retry in 600 s") || refused.contains("retry in 599 s"),
            "{refused}"
        );
        let a3 = bounds
            .admit_dialog(Some(&s2), &alice, timeout)
            .expect("other session");
        let refused = bounds
            .admit_dialog(Some(&s3), &alice, timeout)
            .expect_err("principal cap");
        assert!(
            refused.contains("NOTES_HTTP_DIALOGS_PER_PRINCIPAL"),
            "{refused}"
        );
        let b1 = bounds.admit_dialog(Some(&s3), &bob, timeout).expect("bob");
        let b2 = bounds.admit_dialog(None, &bob, timeout).expect("bob again");
        let refused = bounds
            .admit_dialog(None, &bob, timeout)
            .expect_err("server cap");
        assert!(refused.contains("NOTES_HTTP_MAX_DIALOGS"), "{refused}");
        assert_eq!(bounds.counts(), (5, 5));
        drop((a1, a2, a3, b1, b2));
        assert_eq!(bounds.counts(), (0, 0));
        assert!(lock(&bounds.streams).per_principal.is_empty());
        bounds
            .admit_dialog(Some(&s1), &alice, timeout)
            .expect("a freed place");
    }

    #[test]
    fn stream_caps_stay_below_the_connections() {
        let caps = HttpBounds {
            streams_per_principal: 2,
            ..HttpBounds::default()
        };
        let bounds = bounds(caps, 4);
        assert_eq!(bounds.stream_cap, 3);
        let (alice, bob) = (key("alice"), key("bob"));
        let one = bounds.open_stream(&alice).ok().expect("one");
        let _two = bounds.open_stream(&alice).ok().expect("two");
        assert!(matches!(
            bounds.open_stream(&alice),
            Err(StreamCap::Principal)
        ));
        let _three = bounds.open_stream(&bob).ok().expect("three");
        assert!(matches!(bounds.open_stream(&bob), Err(StreamCap::Server)));
        let refusal = bounds.stream_refusal(&StreamCap::Server);
        assert_eq!(refusal.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(refusal.headers().contains_key(header::RETRY_AFTER));
        assert_eq!(
            bounds.stream_refusal(&StreamCap::Principal).status(),
            StatusCode::TOO_MANY_REQUESTS
        );
        drop(one);
        bounds.open_stream(&bob).ok().expect("a freed place");
    }

    #[tokio::test]
    async fn an_idle_stream_ends_and_frees_its_place() {
        let bounds = bounds(HttpBounds::default(), 256);
        let place = bounds.open_stream(&key("alice")).ok().expect("place");
        let response = track(
            tracked::tests::event_stream(vec![b"data: ack\n\n", b":\n\n"], false),
            Some(Box::new(place)),
            None,
            Some(Duration::from_millis(200)),
            None,
        );
        // Keep-alives do not count as events: the body ends after the idle time.
        let bytes = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .expect("body");
        assert_eq!(&bytes[..], b"data: ack\n\n:\n\n");
        assert_eq!(bounds.counts(), (0, 0));
    }
}
