//! A server's own axum `Router` with the hardening mounted layer by layer, as SERVING.md shows
//! it ("Mounting the hardening on your own router"): each layer's refusal, with the request
//! that passes beside it, over real HTTP on loopback.

#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::sync::Arc;

use ask_first_core::{Guard, HasGuard, Identity};
use ask_first_serve::SettingNames;
use ask_first_serve::http::host_origin::HostOriginLayer;
use ask_first_serve::http::identity::IdentityLayer;
use ask_first_serve::http::limits::{BodyLimitLayer, HttpLimits};
use ask_first_serve::http::owners::SessionBindingLayer;
use ask_first_serve::http::streams::StreamBoundsLayer;
use ask_first_serve::http::wire::JsonRpcLayer;
use ask_first_serve::http::{AuthFuture, Authenticate, Refusal, ReplicaSessionManager, bearer_of};
use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

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

/// `Bearer alice` and `Bearer bob` are two people; anything else is refused.
struct People;

impl Authenticate for People {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let who = bearer_of(parts.headers.get(http::header::AUTHORIZATION))
            .filter(|token| matches!(*token, "alice" | "bob"))
            .map(|token| Identity::new(format!("token:{token}")).with_credential(token));
        Box::pin(async move { who.ok_or_else(|| Refusal::unauthorized("send Bearer alice")) })
    }
}

/// The server's own routes, and `/mcp` behind every layer of the hardening.
fn app(addr: SocketAddr) -> Router {
    let names = SettingNames::with_prefix("OWN");
    let mut limits = HttpLimits::default();
    limits.bounds.streams_per_principal = 1;
    let guard = Guard::builder("own").build();
    let auth: Arc<dyn Authenticate> = Arc::new(People);
    let host_origin = HostOriginLayer::new(addr, &[], &[], &names);
    // rmcp's service on the session manager the session binding watches.
    let sessions = Arc::new(limits.session_manager());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_allowed_hosts(host_origin.rmcp_allowed_hosts())
        .with_allowed_origins(host_origin.rmcp_allowed_origins());
    let manager = Arc::new(ReplicaSessionManager::new(sessions.clone(), None));
    let server = Plain {
        guard: guard.clone(),
    };
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), manager, config);
    let hardened = Router::new()
        .nest_service("/mcp", mcp)
        .layer(StreamBoundsLayer::new(guard.clone(), &limits, &names))
        .layer(SessionBindingLayer::new(
            sessions,
            guard,
            auth.clone(),
            &limits,
            &names,
        ))
        .layer(JsonRpcLayer::new())
        .layer(BodyLimitLayer::new(&limits, &names))
        .layer(IdentityLayer::new(auth))
        .layer(host_origin);
    // Added after the layers: the server's own route is not behind them.
    Router::new()
        .route("/status", get(|| async { "ok" }))
        .merge(hardened)
}

const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// One request on its own connection; the status and the whole answer (head and body).
async fn exchange(addr: SocketAddr, request: Vec<u8>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // A refusal may come before the whole body is sent, and close the connection.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    // A bound against a hang (every answer here closes its connection), not a speed check.
    let read = tokio::time::timeout(WAIT, stream.read_to_end(&mut answer)).await;
    assert!(
        read.is_ok(),
        "no end of the answer: {}",
        String::from_utf8_lossy(&answer)
    );
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn post(addr: SocketAddr, bearer: &str, session: Option<&str>, body: &[u8]) -> Vec<u8> {
    let session = session.map_or_else(String::new, |id| {
        format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-11-25\r\n")
    });
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {bearer}\r\n{session}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

fn get_stream(addr: SocketAddr, bearer: &str, session: &str) -> Vec<u8> {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {bearer}\r\n\
         Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n\
         Accept: text/event-stream\r\nConnection: close\r\n\r\n"
    )
    .into_bytes()
}

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A legacy session of `bearer`, initialized; its id.
async fn open_session(addr: SocketAddr, bearer: &str) -> String {
    let (status, answer) = exchange(addr, post(addr, bearer, None, INITIALIZE)).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let (status, answer) = exchange(addr, post(addr, bearer, Some(&id), INITIALIZED)).await;
    assert_eq!(status, 202, "{answer}");
    id
}

#[tokio::test]
async fn every_layer_refuses_on_a_servers_own_router_and_passes_the_right_request() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = app(addr);
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });

    // The server's own route: no credential asked.
    let status_page = format!("GET /status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    assert_eq!(exchange(addr, status_page.into_bytes()).await.0, 200);

    // HostOriginLayer, then IdentityLayer.
    let mut foreign = post(addr, "alice", None, PING);
    let at = foreign.windows(4).position(|w| w == b"Host").expect("host");
    foreign.splice(
        at..at + 6 + addr.to_string().len(),
        b"Host: evil.example".to_vec(),
    );
    assert_eq!(exchange(addr, foreign).await.0, 403);
    assert_eq!(
        exchange(addr, post(addr, "mallory", None, PING)).await.0,
        401
    );

    // BodyLimitLayer: a body past the limit, before anything parses it.
    let huge = vec![b' '; ask_first_serve::http::wire::MAX_BODY_BYTES + 1];
    assert_eq!(
        exchange(addr, post(addr, "alice", None, &huge)).await.0,
        413
    );

    // JsonRpcLayer: not JSON is a JSON-RPC parse error.
    let (status, answer) = exchange(addr, post(addr, "alice", None, b"{not json")).await;
    assert_eq!(status, 400);
    assert!(answer.contains("-32700"), "{answer}");

    // SessionBindingLayer: bob cannot use alice's session; alice can (the control).
    let alice = open_session(addr, "alice").await;
    let (status, answer) = exchange(addr, post(addr, "bob", Some(&alice), PING)).await;
    assert_eq!(status, 403);
    assert!(answer.contains("session_not_yours"), "{answer}");
    let (status, answer) = exchange(addr, post(addr, "alice", Some(&alice), PING)).await;
    assert_eq!(status, 200, "{answer}");

    // StreamBoundsLayer: one long-lived stream per person here; bob still gets his.
    let mut held = TcpStream::connect(addr).await.expect("connect");
    held.write_all(&get_stream(addr, "alice", &alice))
        .await
        .expect("write");
    let mut head = [0u8; 12];
    held.read_exact(&mut head).await.expect("status line");
    assert_eq!(&head[9..12], b"200");
    let (status, answer) = exchange(addr, get_stream(addr, "alice", &alice)).await;
    assert_eq!(status, 429);
    assert!(
        answer.contains("OWN_HTTP_STREAMS_PER_PRINCIPAL"),
        "{answer}"
    );
    let bob = open_session(addr, "bob").await;
    let mut other = TcpStream::connect(addr).await.expect("connect");
    other
        .write_all(&get_stream(addr, "bob", &bob))
        .await
        .expect("write");
    other.read_exact(&mut head).await.expect("status line");
    assert_eq!(&head[9..12], b"200");

    drop((held, other));
    serving.abort();
}
