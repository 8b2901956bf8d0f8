//! Bounded attacks on loopback against the HTTP server's limits: partial request heads, a
//! trickled body, a connection cap, a session cap. Each test starts the real server
//! (`bind_http` + `serve`, as the binary does) with short limits, attacks it with raw TCP, and
//! checks that the attack is cut while an authenticated request still gets through. Figures
//! (memory before and after) are printed by `scripts/http-attack`, not asserted here.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use opengist_mcp::OpengistServer;
use opengist_mcp::config::Secret;
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

fn limits() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_secs(2),
        body_timeout: Duration::from_secs(2),
        max_connections: 1024,
        max_sessions: 1000,
        session_idle: Duration::from_secs(300),
        ..HttpLimits::default()
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
async fn at_the_connection_cap_slow_connections_wait_their_turn_and_a_real_request_is_served() {
    let running = start(HttpLimits {
        max_connections: 16,
        ..limits()
    })
    .await;
    let since = Instant::now();
    let held = partial_heads(running.addr, 48).await;
    // 48 slow connections, 16 at a time, each cut after 2 s: the request waits in the backlog
    // for at most about three rounds.
    assert_eq!(
        healthz(running.addr, Duration::from_secs(12)).await,
        Ok(200),
        "an authenticated request at the connection cap"
    );
    let cuts = cut_times(held, since, Duration::from_secs(20)).await;
    assert!(cuts.iter().all(Option::is_some), "still open: {cuts:?}");
    let latest = cuts.iter().flatten().max().copied().unwrap_or_default();
    // With no cap all 48 would be cut together after 2 s; served 16 at a time, the last
    // round starts after two others.
    assert!(
        latest >= Duration::from_millis(3500),
        "the connections were not served 16 at a time: the last was cut after {latest:?}"
    );
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
