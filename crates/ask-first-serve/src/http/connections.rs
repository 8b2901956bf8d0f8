//! Bounds on connections before their caller is identified, enforced where connections are
//! accepted ([`ConnectionBounds`](crate::settings::ConnectionBounds) names the settings):
//!
//! - **Per peer address**: one address holds at most [`ConnectionBounds::peer_cap`](crate::settings::ConnectionBounds::peer_cap)
//!   connections. A new connection from an address at its cap takes the place of that
//!   address's oldest idle unauthenticated connection, which is closed; when it has none, the
//!   new one is answered `503` and closed.
//! - **Unauthenticated, in all**: at most [`ConnectionBounds::unauthenticated_cap`](crate::settings::ConnectionBounds::unauthenticated_cap) connections
//!   are open before one of their requests passed the gate. A new connection past it takes the
//!   place of an idle unauthenticated connection, which is closed: the oldest of the address
//!   that holds the most. An idle connection that presented nothing is the cheapest one to lose,
//!   the address flooding the server loses its own first, and a client that sends its request
//!   at once (every real one) is authenticated long before its place can be taken.
//! - **Credential deadline**: a connection none of whose requests passed the gate within
//!   [`ConnectionBounds::credential_deadline`](crate::settings::ConnectionBounds::credential_deadline) of its accept is closed. A refused request (a
//!   `401`) does not count: the client may retry on the same connection within the deadline.
//! - **Reserve**: unauthenticated connections never take the last
//!   [`ConnectionBounds::reserve_of`](crate::settings::ConnectionBounds::reserve_of) places of the connection cap, so authenticated
//!   connections (open streams, kept-alive clients) keep their places however many
//!   connections nobody has identified. At the connection cap itself, a new connection takes
//!   the place of an idle unauthenticated one, chosen as above (`crate::http::limits::serve`):
//!   only authenticated and presenting connections make a newcomer wait.
//!
//! A connection becomes authenticated when a request of it reaches [`mark_authenticated`],
//! which `crate::http` puts just inside the gate. While a request of an unauthenticated
//! connection is before the gate or being answered, that connection is *presenting* and is
//! never the one closed for a newcomer (a caller's first request is not cut); when every
//! unauthenticated place is presenting, a newcomer is answered `503` and closed. After a
//! refused request the connection is idle again. Tower's and hyper's own limits are per
//! service or per connection, not per peer or per authentication state, hence this module.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::limits::HttpLimits;
use crate::settings::ConnectionNames;

/// The `Retry-After` of a connection refused at the per-peer cap, in seconds.
pub(super) const PEER_RETRY_AFTER_SECS: u64 = 5;

/// Every connection open, by peer address and authentication state.
pub(crate) struct Connections {
    peer_cap: usize,
    unauthenticated_cap: usize,
    deadline: Duration,
    /// The per-peer refusal, written before closing (names the setting).
    peer_refusal: Vec<u8>,
    /// The refusal when every unauthenticated place is presenting (names the setting).
    busy_refusal: Vec<u8>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    open: HashMap<u64, Open>,
    /// Connections open that no request has authenticated yet (idle or presenting).
    unauthenticated: usize,
    peers: HashMap<IpAddr, Peer>,
}

struct Open {
    peer: IpAddr,
    stage: Stage,
    close: Arc<Notify>,
}

/// Where a connection stands with the gate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No request yet, or the last one was refused: may be closed for a newcomer.
    Idle,
    /// A request of it is before the gate or being answered: kept, so that a caller's first
    /// request is never cut for a newcomer.
    Presenting,
    /// A request of it passed the gate.
    Authenticated,
}

#[derive(Default)]
struct Peer {
    open: usize,
    /// Its idle unauthenticated connections, oldest first (ids grow with time).
    idle: BTreeSet<u64>,
}

impl State {
    /// Forgets connection `id` (idempotent).
    fn release(&mut self, id: u64) {
        let Some(open) = self.open.remove(&id) else {
            return;
        };
        if open.stage != Stage::Authenticated {
            self.unauthenticated = self.unauthenticated.saturating_sub(1);
        }
        if let Some(peer) = self.peers.get_mut(&open.peer) {
            peer.open = peer.open.saturating_sub(1);
            peer.idle.remove(&id);
            if peer.open == 0 {
                self.peers.remove(&open.peer);
            }
        }
    }

    /// Closes connection `id` and gives its place away at once.
    fn evict(&mut self, id: u64) {
        if let Some(open) = self.open.get(&id) {
            open.close.notify_one();
        }
        self.release(id);
    }

    /// The idle unauthenticated connection to close when a cap in all is reached: the oldest
    /// of the address that holds the most. Oldest alone would favour whoever re-opens fastest
    /// (a client that re-opens each connection closed always holds the newest ones).
    fn victim(&self) -> Option<u64> {
        self.peers
            .values()
            .filter_map(|peer| Some((peer.idle.len(), *peer.idle.first()?)))
            .max_by_key(|&(count, oldest)| (count, std::cmp::Reverse(oldest)))
            .map(|(_, oldest)| oldest)
    }

    /// Moves connection `id` from its stage to `stage` (never back from authenticated).
    fn set_stage(&mut self, id: u64, stage: Stage) {
        let Some(open) = self.open.get_mut(&id) else {
            return;
        };
        let was = open.stage;
        if was == stage || was == Stage::Authenticated {
            return;
        }
        open.stage = stage;
        if stage == Stage::Authenticated {
            self.unauthenticated = self.unauthenticated.saturating_sub(1);
        }
        if let Some(peer) = self.peers.get_mut(&open.peer) {
            if stage == Stage::Idle {
                peer.idle.insert(id);
            } else {
                peer.idle.remove(&id);
            }
        }
    }
}

impl Connections {
    /// The bookkeeping for `limits`; refusals name the settings `names`.
    pub(crate) fn new(limits: &HttpLimits, names: &ConnectionNames) -> Arc<Self> {
        let bounds = limits.connections;
        let peer_cap = bounds.peer_cap(limits.max_connections);
        let body = serde_json::json!({
            "error": "too_many_connections_from_this_address",
            "message": format!(
                "this address already holds {peer_cap} connections to this server ({}); close \
                 one, or behind a reverse proxy raise the setting",
                names.per_peer
            ),
        })
        .to_string();
        let busy = serde_json::json!({
            "error": "too_many_unauthenticated_connections",
            "message": format!(
                "this server holds as many connections without a credential as it may ({}), \
                 all of them being checked; try again",
                names.max_unauthenticated
            ),
        })
        .to_string();
        Arc::new(Self {
            peer_cap,
            unauthenticated_cap: bounds.unauthenticated_cap(limits.max_connections),
            deadline: bounds.credential_deadline,
            peer_refusal: refusal(&body),
            busy_refusal: refusal(&busy),
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every update leaves the maps consistent, so a panic elsewhere cannot corrupt them.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes one idle unauthenticated connection (the oldest of the address holding the
    /// most), if any, so that a new one can take its place at the connection cap.
    pub(crate) fn close_one_unauthenticated(&self) {
        let mut state = self.state();
        if let Some(victim) = state.victim() {
            tracing::debug!("closed an unauthenticated connection at the connection cap");
            state.evict(victim);
        }
    }

    /// Admits a connection just accepted from `peer`, closing an idle unauthenticated one
    /// where a cap is reached; `None`: refused (its address, or the server, holds as many
    /// unauthenticated connections as it may and none of them idle, or its address holds only
    /// authenticated connections, as many as it may), and `tcp` was sent the refusal.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr, tcp: &TcpStream) -> Option<Admitted> {
        let peer = peer.to_canonical();
        let close = Arc::new(Notify::new());
        let id = {
            let mut state = self.state();
            let held = state.peers.get(&peer).map_or(0, |p| p.open);
            if held >= self.peer_cap {
                let oldest = state.peers.get(&peer).and_then(|p| p.idle.first().copied());
                match oldest {
                    Some(oldest) => state.evict(oldest),
                    None => {
                        drop(state);
                        tracing::debug!("refused a connection: its address holds its cap");
                        // Best effort: the socket is new, so its send buffer is empty.
                        let _ = tcp.try_write(&self.peer_refusal);
                        return None;
                    }
                }
            }
            if state.unauthenticated >= self.unauthenticated_cap {
                match state.victim() {
                    Some(victim) => {
                        tracing::debug!("closed an unauthenticated connection for a new one");
                        state.evict(victim);
                    }
                    None => {
                        drop(state);
                        tracing::debug!(
                            "refused a connection: every unauthenticated place is presenting"
                        );
                        let _ = tcp.try_write(&self.busy_refusal);
                        return None;
                    }
                }
            }
            let id = state.next_id;
            state.next_id += 1;
            state.open.insert(
                id,
                Open {
                    peer,
                    stage: Stage::Idle,
                    close: close.clone(),
                },
            );
            state.unauthenticated += 1;
            let entry = state.peers.entry(peer).or_default();
            entry.open += 1;
            entry.idle.insert(id);
            id
        };
        Some(Admitted {
            mark: ConnectionMark(Arc::new(Mark {
                id,
                connections: self.clone(),
                authenticated: AtomicBool::new(false),
            })),
            close,
            deadline: self.deadline,
        })
    }
}

/// A connection's place, held by its task: given back when dropped.
pub(crate) struct Admitted {
    mark: ConnectionMark,
    close: Arc<Notify>,
    deadline: Duration,
}

impl Admitted {
    /// What each request of the connection carries, for [`mark_authenticated`].
    pub(crate) fn mark(&self) -> ConnectionMark {
        self.mark.clone()
    }

    /// Completes when the connection must be closed: its place was given to a newer
    /// connection, or the deadline passed with no request through the gate.
    pub(crate) async fn must_close(&self) {
        let deadline = async {
            tokio::time::sleep(self.deadline).await;
            if self.mark.0.authenticated.load(Ordering::Acquire) {
                std::future::pending::<()>().await;
            }
            tracing::debug!("closed a connection that presented no credential in time");
        };
        tokio::select! {
            () = self.close.notified() => {}
            () = deadline => {}
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mark = &self.mark.0;
        mark.connections.state().release(mark.id);
    }
}

/// Which connection a request came on (a request extension set at accept).
#[derive(Clone)]
pub(crate) struct ConnectionMark(Arc<Mark>);

struct Mark {
    id: u64,
    connections: Arc<Connections>,
    authenticated: AtomicBool,
}

/// A `503` that closes the connection, with `body` (JSON).
fn refusal(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: {PEER_RETRY_AFTER_SECS}\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl Mark {
    fn set_stage(&self, stage: Stage) {
        self.connections.state().set_stage(self.id, stage);
    }
}

/// Marks the request's connection authenticated: put it just inside the gate, so that only a
/// request that passed it marks its connection.
pub(crate) async fn mark_authenticated(request: Request, next: Next) -> Response {
    if let Some(ConnectionMark(mark)) = request.extensions().get::<ConnectionMark>()
        && !mark.authenticated.swap(true, Ordering::AcqRel)
    {
        mark.set_stage(Stage::Authenticated);
    }
    next.run(request).await
}

/// While a request of a connection that has not authenticated is before the gate or being
/// answered, that connection is kept from being closed for a newcomer; after it, a connection
/// the gate refused is idle again.
struct Presenting(Option<Arc<Mark>>);

impl Presenting {
    fn start(mark: &ConnectionMark) -> Self {
        if mark.0.authenticated.load(Ordering::Acquire) {
            return Self(None);
        }
        mark.0.set_stage(Stage::Presenting);
        Self(Some(mark.0.clone()))
    }
}

impl Drop for Presenting {
    fn drop(&mut self) {
        if let Some(mark) = &self.0
            && !mark.authenticated.load(Ordering::Acquire)
        {
            mark.set_stage(Stage::Idle);
        }
    }
}

/// A hyper service that gives every request its connection's [`ConnectionMark`].
pub(crate) struct Marked<S> {
    inner: S,
    mark: ConnectionMark,
}

impl<S> Marked<S> {
    /// `inner`, its requests carrying `mark`.
    pub(crate) fn new(inner: S, mark: ConnectionMark) -> Self {
        Self { inner, mark }
    }
}

impl<S, B> hyper::service::Service<http::Request<B>> for Marked<S>
where
    S: hyper::service::Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn call(&self, mut request: http::Request<B>) -> Self::Future {
        let presenting = Presenting::start(&self.mark);
        request.extensions_mut().insert(self.mark.clone());
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await;
            drop(presenting);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ConnectionBounds;

    fn connections(per_peer: usize, unauthenticated: usize) -> Arc<Connections> {
        let limits = HttpLimits {
            max_connections: 100,
            connections: ConnectionBounds {
                per_peer,
                max_unauthenticated: unauthenticated,
                reserve: Some(0),
                ..ConnectionBounds::default()
            },
            ..HttpLimits::default()
        };
        Connections::new(&limits, &ConnectionNames::with_prefix("NOTES"))
    }

    async fn socket() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (client, server) = tokio::join!(TcpStream::connect(addr), listener.accept());
        (client.expect("connect"), server.expect("accept").0)
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    fn authenticate(admitted: &Admitted) {
        let mark = &admitted.mark.0;
        mark.authenticated.store(true, Ordering::Release);
        mark.set_stage(Stage::Authenticated);
    }

    #[tokio::test]
    async fn a_peer_at_its_cap_loses_its_oldest_unauthenticated_connection() {
        let connections = connections(2, 100);
        let (_client, tcp) = socket().await;
        let first = connections.admit(ip(1), &tcp).expect("first");
        let second = connections.admit(ip(1), &tcp).expect("second");
        // Another address is not counted with this one.
        let _other = connections.admit(ip(2), &tcp).expect("another address");
        let third = connections.admit(ip(1), &tcp).expect("third takes a place");
        // The oldest one was told to close, the others were not.
        first.must_close().await;
        assert!(kept(&second) && kept(&third));
    }

    #[tokio::test]
    async fn a_peer_whose_connections_are_all_authenticated_is_refused() {
        let connections = connections(1, 100);
        let (mut client, tcp) = socket().await;
        let first = connections.admit(ip(1), &tcp).expect("first");
        authenticate(&first);
        assert!(connections.admit(ip(1), &tcp).is_none(), "refused");
        let mut answer = vec![0u8; 32];
        let read = tokio::io::AsyncReadExt::read(&mut client, &mut answer)
            .await
            .expect("read");
        assert!(answer[..read].starts_with(b"HTTP/1.1 503"));
        // Once it is gone, the address has a place again.
        drop(first);
        assert!(connections.admit(ip(1), &tcp).is_some());
    }

    fn kept(admitted: &Admitted) -> bool {
        futures::FutureExt::now_or_never(admitted.must_close()).is_none()
    }

    #[tokio::test]
    async fn the_unauthenticated_cap_gives_the_oldest_place_away_and_spares_the_authenticated() {
        let connections = connections(100, 2);
        let (_client, tcp) = socket().await;
        let signed = connections.admit(ip(1), &tcp).expect("signed");
        authenticate(&signed);
        let idle_a = connections.admit(ip(2), &tcp).expect("a");
        let idle_b = connections.admit(ip(3), &tcp).expect("b");
        let newer = connections.admit(ip(4), &tcp).expect("newer");
        idle_a.must_close().await;
        assert!(kept(&idle_b) && kept(&newer) && kept(&signed));
        assert_eq!(connections.state().unauthenticated, 2);
        drop((idle_a, idle_b, newer, signed));
        let state = connections.state();
        assert!(state.open.is_empty() && state.peers.is_empty());
    }

    #[tokio::test]
    async fn a_connection_whose_request_is_being_answered_is_kept_and_idle_again_after_a_refusal() {
        let connections = connections(100, 2);
        let (mut client, tcp) = socket().await;
        let first = connections.admit(ip(1), &tcp).expect("first");
        let second = connections.admit(ip(2), &tcp).expect("second");
        let presenting = Presenting::start(&first.mark());
        // Both places taken, the older one presenting: the newer, idle one gives its place.
        let third = connections.admit(ip(3), &tcp).expect("third");
        second.must_close().await;
        assert!(kept(&first));
        let _third_presenting = Presenting::start(&third.mark());
        // Now both are presenting: a newcomer is refused, naming the setting.
        assert!(connections.admit(ip(4), &tcp).is_none());
        let mut answer = vec![0u8; 512];
        let read = tokio::io::AsyncReadExt::read(&mut client, &mut answer)
            .await
            .expect("read");
        let answer = String::from_utf8_lossy(&answer[..read]);
        assert!(
            answer.contains("NOTES_HTTP_MAX_UNAUTHENTICATED"),
            "{answer}"
        );
        // The request was refused by the gate: idle again, and the oldest to go.
        drop(presenting);
        let _fourth = connections.admit(ip(4), &tcp).expect("fourth");
        first.must_close().await;
        assert!(kept(&third));
    }

    #[tokio::test]
    async fn the_address_holding_the_most_loses_first_however_new_its_connections() {
        let connections = connections(100, 3);
        let (_client, tcp) = socket().await;
        let caller = connections.admit(ip(1), &tcp).expect("caller");
        let flood_a = connections.admit(ip(9), &tcp).expect("a");
        let flood_b = connections.admit(ip(9), &tcp).expect("b");
        let flood_c = connections.admit(ip(9), &tcp).expect("c");
        flood_a.must_close().await;
        connections.close_one_unauthenticated();
        flood_b.must_close().await;
        // The positive control: the caller's connection, the oldest of all, is kept.
        assert!(kept(&caller) && kept(&flood_c));
    }
}
