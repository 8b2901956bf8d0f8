//! Bounded attacks on loopback against the HTTP server's limits: partial request heads, a
//! trickled body, a connection cap, a session cap, and the bounds on connections before
//! identity (per peer address, unauthenticated in all, the credential deadline, the reserve).
//! Each test starts the real server (`bind_http` + `serve`, as the binary does) with short
//! limits, attacks it with raw TCP, and checks that the attack is cut while an authenticated
//! request still gets through. Figures (memory before and after, a legitimate call's latency)
//! are printed by `scripts/http-attack` and `scripts/http-bounds-attack`, not asserted here.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use opengist_mcp::OpengistServer;
use opengist_mcp::config::Secret;
use opengist_mcp::http::limits::ConnectionBounds;
use opengist_mcp::http::{HttpLimits, HttpOptions, bind_http, http_options};
use rmcp::model::{ClientConfig, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

const TOKEN: &str = "limits-test-bearer-secret-0123";

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn start(limits: HttpLimits) -> Running {
    // reqwest is built without a crypto provider of its own (the binary installs ring's).
    opengist_mcp::opengist::install_tls_provider();
    let options = HttpOptions {
        bearer_token: Some(Secret::new(TOKEN)),
        limits,
        ..http_options()
    };
    let bound = bind_http(
        "127.0.0.1:0".parse().expect("address"),
        || Ok(OpengistServer::unconfigured()),
        options,
    )
    .await
    .expect("binds");
    let addr = bound.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// Short timeouts, and no bound on connections before identity but the connection cap: the
/// tests of the header timeout and of the cap see those alone.
fn limits() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_secs(2),
        body_timeout: Duration::from_secs(2),
        max_connections: 1024,
        max_sessions: 1000,
        session_idle: Duration::from_secs(300),
        connections: ConnectionBounds {
            per_peer: 65_536,
            max_unauthenticated: 65_536,
            reserve: Some(0),
            credential_deadline: Duration::from_secs(3600),
        },
        ..HttpLimits::default()
    }
}

/// Timeouts far beyond any test's wait, so that a connection closed during a test was closed
/// by the connection bound under test, with `connections` as the bounds.
fn bounded(max_connections: usize, connections: ConnectionBounds) -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_secs(600),
        max_connections,
        connections,
        ..limits()
    }
}

/// An authenticated `GET /healthz`, with a deadline.
async fn healthz(addr: SocketAddr, within: Duration) -> Result<u16, String> {
    let client = reqwest::Client::new();
    let request = client
        .get(format!("http://{addr}/healthz"))
        .bearer_auth(TOKEN)
        .send();
    match tokio::time::timeout(within, request).await {
        Err(_) => Err(format!("no answer within {within:?}")),
        Ok(Err(error)) => Err(error.to_string()),
        Ok(Ok(response)) => Ok(response.status().as_u16()),
    }
}

/// Opens `count` connections that each send an unfinished request head.
async fn partial_heads(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let mut tcp = TcpStream::connect(addr).await.expect("connects");
        tcp.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
            .await
            .expect("writes");
        held.push(tcp);
    }
    held
}

/// How long after `since` each connection was closed by the server (`None`: still open at
/// `deadline`).
async fn cut_times(
    held: Vec<TcpStream>,
    since: Instant,
    deadline: Duration,
) -> Vec<Option<Duration>> {
    let waits = held.into_iter().map(|mut tcp| async move {
        let mut buf = [0u8; 1024];
        let end = since + deadline;
        loop {
            match tokio::time::timeout_at(end.into(), tcp.read(&mut buf)).await {
                Err(_) => return None,
                Ok(Ok(0) | Err(_)) => return Some(since.elapsed()),
                Ok(Ok(_)) => {}
            }
        }
    });
    futures::future::join_all(waits).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hundred_partial_heads_are_cut_and_an_authenticated_request_gets_through() {
    let running = start(limits()).await;
    let since = Instant::now();
    let held = partial_heads(running.addr, 300).await;
    assert_eq!(
        healthz(running.addr, Duration::from_secs(10)).await,
        Ok(200),
        "an authenticated request during the attack"
    );
    let cuts = cut_times(held, since, Duration::from_secs(15)).await;
    let open = cuts.iter().filter(|cut| cut.is_none()).count();
    let latest = cuts.iter().flatten().max().copied();
    assert_eq!(
        open, 0,
        "connections still open after 15 s (header timeout 2 s): {open} of 300"
    );
    assert!(
        cuts.iter()
            .flatten()
            .all(|cut| *cut >= Duration::from_millis(1500)),
        "a connection was cut before its header timeout: {cuts:?}"
    );
    println!("300 partial heads: all cut, the last after {latest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn at_the_connection_cap_a_new_connection_takes_the_place_of_one_that_presented_nothing() {
    let running = start(bounded(
        16,
        ConnectionBounds {
            reserve: Some(0),
            ..limits().connections
        },
    ))
    .await;
    let mut held = partial_heads(running.addr, 16).await;
    // Every place is taken by a connection that presented nothing: a new, authenticated
    // request is served, and the oldest of them was closed for it.
    let mut tcp = connect_from(running.addr, LOOPBACK).await;
    assert_eq!(exchange(&mut tcp, running.addr, Some(TOKEN)).await, 200);
    let mut oldest = held.remove(0);
    assert!(
        closed(&mut oldest).await,
        "the oldest connection was not closed"
    );
    // The positive control: the newer ones keep their places.
    assert!(held.iter().all(still_open), "a newer connection was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_trickled_body_is_cut_with_408() {
    let running = start(limits()).await;
    let mut tcp = TcpStream::connect(running.addr).await.expect("connects");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 1000\r\n\r\n",
        running.addr
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    let since = Instant::now();
    let (mut read, mut write) = tcp.into_split();
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            if write.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let mut answer = Vec::new();
    let read_all = read.read_to_end(&mut answer);
    let finished = tokio::time::timeout(Duration::from_secs(10), read_all).await;
    trickle.abort();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        finished.is_ok(),
        "the trickled body was not cut within 10 s (body timeout 2 s)"
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS"),
        "{answer}"
    );
    assert!(
        since.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        since.elapsed()
    );
}

fn initialize(addr: SocketAddr) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(
            json!({
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": { "name": "limits-test", "version": "1" }
                }
            })
            .to_string(),
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_beyond_the_cap_get_503_with_retry_after_until_idle_ones_close() {
    let running = start(HttpLimits {
        max_sessions: 3,
        session_idle: Duration::from_secs(2),
        ..limits()
    })
    .await;
    for n in 1..=3 {
        let response = initialize(running.addr).send().await.expect("initialize");
        assert_eq!(response.status(), 200, "session {n}");
        assert!(response.headers().contains_key("mcp-session-id"));
    }
    let refused = initialize(running.addr).send().await.expect("initialize");
    assert_eq!(refused.status(), 503, "the fourth session");
    let retry_after = refused
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    assert!(
        retry_after.is_some_and(|secs| secs > 0),
        "{:?}",
        refused.headers()
    );
    let body: serde_json::Value = refused.json().await.expect("a JSON body");
    assert_eq!(body["error"], "too_many_sessions");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("OPENGIST_MCP_HTTP_MAX_SESSIONS")),
        "{body}"
    );

    // A stateless 2026-07-28 client needs no session: it is served at the cap.
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", running.addr));
    config = config.auth_header(TOKEN);
    let modern = ClientConfig::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("2026-07-28 discover at the session cap");
    let tools = modern
        .list_tools(None)
        .await
        .expect("tools/list at the cap");
    assert_eq!(tools.tools.len(), 14);
    let _ = modern.cancel().await;

    // The three sessions go idle and close; a new one is accepted again.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let response = initialize(running.addr).send().await.expect("initialize");
        if response.status() == 200 {
            break;
        }
        assert_eq!(response.status(), 503);
        assert!(
            Instant::now() < deadline,
            "idle sessions never closed (idle timeout 2 s)"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

// ------------------------------------------------------------ connections before identity

const LOOPBACK: [u8; 4] = [127, 0, 0, 1];
/// Another address of the loopback network: another peer.
const OTHER_PEER: [u8; 4] = [127, 0, 0, 2];

/// A connection to `addr` from the address `from`.
async fn connect_from(addr: SocketAddr, from: [u8; 4]) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("binds a loopback address");
    socket.connect(addr).await.expect("connects")
}

/// Sends `GET /healthz` (with `token`, if any) on `tcp`, keeping the connection open, and
/// returns the answer's status.
async fn exchange(tcp: &mut TcpStream, addr: SocketAddr, token: Option<&str>) -> u16 {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    tcp.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n").as_bytes())
        .await
        .expect("writes");
    let answer = read_answer(tcp).await;
    answer
        .get(9..12)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

/// One whole HTTP answer (head and `Content-Length` body) read from `tcp`.
async fn read_answer(tcp: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return text;
            }
        }
        let read = tokio::time::timeout(Duration::from_secs(30), tcp.read(&mut buf))
            .await
            .expect("an answer within 30 s")
            .expect("reads");
        assert!(read > 0, "closed before a whole answer: {text:?}");
        bytes.extend_from_slice(&buf[..read]);
    }
}

/// Whether the server closes `tcp` (reads to its end; a bound of 30 s, far below the
/// timeouts of [`bounded`], so that a hang fails instead of blocking).
async fn closed(tcp: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    matches!(
        tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut rest)).await,
        Ok(Ok(_) | Err(_))
    )
}

/// Whether `tcp` is still open with nothing to read, now.
fn still_open(tcp: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    matches!(tcp.try_read(&mut buf), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_peer_address_holds_at_most_its_cap_of_connections() {
    let running = start(bounded(
        64,
        ConnectionBounds {
            per_peer: 2,
            ..limits().connections
        },
    ))
    .await;
    let addr = running.addr;
    // The positive control: under the cap, connections are served.
    let mut silent = connect_from(addr, LOOPBACK).await;
    let mut signed = connect_from(addr, LOOPBACK).await;
    assert_eq!(exchange(&mut signed, addr, Some(TOKEN)).await, 200);
    // At the cap, a new connection takes the place of the one that presented nothing.
    let mut newcomer = connect_from(addr, LOOPBACK).await;
    assert_eq!(exchange(&mut newcomer, addr, Some(TOKEN)).await, 200);
    assert!(
        closed(&mut silent).await,
        "the silent connection kept its place"
    );
    assert!(
        still_open(&signed),
        "an authenticated connection was closed"
    );
    // Both places authenticated: a third connection is refused, naming the setting.
    let mut third = connect_from(addr, LOOPBACK).await;
    let mut refusal = String::new();
    tokio::time::timeout(Duration::from_secs(30), third.read_to_string(&mut refusal))
        .await
        .expect("answered within 30 s")
        .expect("reads");
    assert!(refusal.starts_with("HTTP/1.1 503"), "{refusal}");
    assert!(
        refusal.contains("OPENGIST_MCP_HTTP_CONNECTIONS_PER_PEER"),
        "{refusal}"
    );
    // Another address has places of its own.
    let mut other = connect_from(addr, OTHER_PEER).await;
    assert_eq!(exchange(&mut other, addr, Some(TOKEN)).await, 200);
    // A connection closes: the address has a place again (wait on the event).
    drop(signed);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut tcp = connect_from(addr, LOOPBACK).await;
        let request = format!(
            "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        );
        let mut status = [0u8; 12];
        if tcp.write_all(request.as_bytes()).await.is_ok()
            && tcp.read_exact(&mut status).await.is_ok()
            && status.starts_with(b"HTTP/1.1 200")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the closed connection's place never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_connection_that_presents_no_credential_in_time_is_closed() {
    let running = start(bounded(
        64,
        ConnectionBounds {
            credential_deadline: Duration::from_secs(1),
            ..limits().connections
        },
    ))
    .await;
    let addr = running.addr;
    let mut signed = connect_from(addr, LOOPBACK).await;
    assert_eq!(exchange(&mut signed, addr, Some(TOKEN)).await, 200);
    let mut silent = connect_from(addr, LOOPBACK).await;
    let mut refused = connect_from(addr, LOOPBACK).await;
    assert_eq!(
        exchange(&mut refused, addr, Some("not-the-secret-0123456789")).await,
        401
    );
    assert!(
        closed(&mut silent).await,
        "a silent connection was never closed"
    );
    // A refused credential is not one: that connection is closed too.
    assert!(
        closed(&mut refused).await,
        "a refused connection was never closed"
    );
    // The positive control: the connection that presented one is still served.
    assert_eq!(exchange(&mut signed, addr, Some(TOKEN)).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_authenticated_call_gets_through_while_the_unauthenticated_places_are_full() {
    // 8 places, 2 reserved: 3 may be unauthenticated.
    let running = start(bounded(
        8,
        ConnectionBounds {
            max_unauthenticated: 3,
            reserve: Some(2),
            ..limits().connections
        },
    ))
    .await;
    let addr = running.addr;
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(connect_from(addr, OTHER_PEER).await);
    }
    let mut signed = connect_from(addr, LOOPBACK).await;
    assert_eq!(exchange(&mut signed, addr, Some(TOKEN)).await, 200);
    // The places were full: the oldest silent connection gave its place (the positive
    // control of "full"), the newer ones kept theirs.
    assert!(
        closed(&mut silent[0]).await,
        "the oldest silent connection kept its place"
    );
    assert!(silent[1..].iter().all(still_open));
    // Authenticated connections are never given away: they fill the places unauthenticated
    // ones cannot take, and are still served.
    let mut more = Vec::new();
    for _ in 0..4 {
        let mut tcp = connect_from(addr, LOOPBACK).await;
        assert_eq!(exchange(&mut tcp, addr, Some(TOKEN)).await, 200);
        more.push(tcp);
    }
    assert_eq!(exchange(&mut signed, addr, Some(TOKEN)).await, 200);
    for tcp in &mut more {
        assert_eq!(exchange(tcp, addr, Some(TOKEN)).await, 200);
    }
}
