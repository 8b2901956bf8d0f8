//! HTTP load: requests per second, p50/p99 latency and the server's resident memory with N
//! concurrent clients, in both eras, and the framework's own cost per request. A bench binary
//! (`harness = false`) that prints figures and asserts nothing:
//! `cargo bench --bench http_load` (or `scripts/bench-http-load`, which builds the release
//! binaries and provisions a real Opengist first).
//!
//! Clients: each is one kept-alive HTTP/1.1 connection (`TCP_NODELAY`) sending one request
//! at a time, written here on tokio's `TcpStream` (no HTTP client library between the clock
//! and the socket). Legacy era (2025-11-25): `initialize`, `notifications/initialized`, then
//! `tools/call` on that session (`Mcp-Session-Id`), `DELETE` at the end. 2026-07-28: every
//! `tools/call` stateless, with its inline `_meta` and the `Mcp-Method`/`Mcp-Name` headers.
//! Every request carries the bearer secret. A run is `GUARD_LOAD_SECONDS` (default 3) of
//! calls after a warm-up of 0.5 s, at 1, 16, 64 and 256 clients (`GUARD_LOAD_CLIENTS`).
//! All clients share the one secret, so they are one principal: the per-principal cap on legacy
//! sessions (`<PREFIX>_HTTP_SESSIONS_PER_PRINCIPAL`, default 64, `429` past it) is raised to
//! the session cap (4,096) for every server measured, so the runs measure throughput, not
//! refusals. A run in which any call is refused or answered without a result fails the
//! benchmark (exit 1, naming the first failure), rather than printing a figure of refusals.
//! The load generator is one thread (a current-thread runtime), as a client machine would be
//! one process; on a 2-core machine it shares the cores with the server.
//!
//! Targets:
//! 1. **Framework overhead**, in process: one trivial tool (`ping`, answers `pong`) served
//!    once through the framework's HTTP stack (`ask_first_serve::http::bind_http`: the gate
//!    with Host/Origin checks and bearer authentication, the body and session limits, the
//!    binding of each legacy session to its opener, the stream bounds, the hardened accept
//!    loop) and once by rmcp's `StreamableHttpService` alone on `axum::serve` (same rmcp
//!    settings, no checks), the two measured interleaved on one runtime (its own thread,
//!    one worker, so both servers get the same core). The difference of the server time per
//!    request (1 / throughput) at the same load is what the framework adds per request (goal:
//!    < 50 µs at 64 clients). A third server, the framework's stack without authentication
//!    (`no_auth`), measured in the same interleaving, splits that into authentication and the
//!    rest (gate, limits, session binding, stream bounds).
//! 2. **`examples/notes`** (`NOTES_LOAD_BINARY`, default `target/release/examples/notes`),
//!    `list_notes`: the framework with a real server's tools, as a separate process.
//! 3. **`opengist-mcp --http`** (`OPENGIST_MCP_LOAD_BINARY`, default
//!    `target/release/opengist-mcp`) against a real Opengist (`OPENGIST_LOAD_URL` and
//!    `OPENGIST_LOAD_TOKEN`, which `scripts/bench-http-load` sets from
//!    `scripts/provision-opengist`), `list_gists {}`: one Opengist request per call. Skipped,
//!    saying so, without them.
//!
//! `cargo test --benches` runs this without `--bench`: one short pass at 1 and 4 clients of the
//! in-process servers only, to show the benchmark still works (figures not judged).

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_first::{Guard, HasGuard};
use ask_first_serve::http::limits::{ConnectionBounds, HttpBounds};
use ask_first_serve::http::{HttpLimits, HttpOptions, bind_http};
use ask_first_serve::settings::Secret;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const TOKEN: &str = "http-load-bench-secret-0123456789";
const LEGACY: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";

// ---------------------------------------------------------------------------------------------
// The trivial server
// ---------------------------------------------------------------------------------------------

#[derive(Clone)]
struct Ping {
    guard: Guard,
}

impl HasGuard for Ping {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[tool_router]
impl Ping {
    #[tool(description = "Answers pong.")]
    async fn ping(&self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("pong")]).into())
    }
}

#[tool_handler(name = "http-load-bench")]
impl ServerHandler for Ping {}

fn rmcp_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_max_request_body_bytes(4 * 1024 * 1024)
}

/// The connection, session and per-principal session caps of every server measured, and the
/// caps on connections from one address and without a credential yet (every client is on
/// loopback): above the most clients a run opens, so that no connection or `initialize` is
/// refused.
const CAP: usize = 4096;

/// `ping` through the framework's HTTP stack; `auth`: with the bearer secret required (else
/// `no_auth`, to tell authentication's cost from the rest).
async fn serve_framework(server: Ping, auth: bool) -> io::Result<SocketAddr> {
    let options = HttpOptions {
        bearer_token: auth.then(|| Secret::new(TOKEN)),
        no_auth: !auth,
        limits: HttpLimits {
            max_connections: CAP,
            max_sessions: CAP,
            bounds: HttpBounds {
                sessions_per_principal: CAP,
                ..HttpBounds::default()
            },
            connections: ConnectionBounds {
                per_peer: CAP,
                max_unauthenticated: CAP,
                ..ConnectionBounds::default()
            },
            ..HttpLimits::default()
        },
        ..HttpOptions::default()
    };
    let bound = bind_http(
        "127.0.0.1:0".parse().expect("address"),
        move || Ok(server.clone()),
        options,
    )
    .await
    .map_err(io::Error::other)?;
    let addr = bound.local_addr();
    tokio::spawn(bound.serve(std::future::pending::<()>()));
    Ok(addr)
}

/// `ping` through rmcp's service alone.
async fn serve_bare(server: Ping) -> io::Result<SocketAddr> {
    let service: StreamableHttpService<Ping, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        rmcp_config(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(addr)
}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/// One kept-alive HTTP/1.1 connection.
struct Connection {
    stream: BufReader<TcpStream>,
    host: String,
}

struct Answer {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

impl Connection {
    async fn open(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream: BufReader::with_capacity(16 * 1024, stream),
            host: addr.to_string(),
        })
    }

    async fn send(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<Answer> {
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if !body.is_empty() {
            head.push_str("Content-Type: application/json\r\n");
        }
        for (name, value) in headers {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        let mut message = head.into_bytes();
        message.extend_from_slice(body);
        self.stream.get_mut().write_all(&message).await?;
        self.read_answer().await
    }

    async fn read_answer(&mut self) -> io::Result<Answer> {
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
        let mut length = None;
        let mut chunked = false;
        let mut session = None;
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let text = line.trim_end();
            if text.is_empty() {
                break;
            }
            let Some((name, value)) = text.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim_end(), 16)
                    .map_err(|_| io::Error::other(format!("bad chunk size {line:?}")))?;
                let start = body.len();
                body.resize(start + size, 0);
                self.stream.read_exact(&mut body[start..]).await?;
                let mut crlf = [0u8; 2];
                self.stream.read_exact(&mut crlf).await?;
                if size == 0 {
                    break;
                }
            }
        } else if let Some(length) = length {
            body.resize(length, 0);
            self.stream.read_exact(&mut body).await?;
        }
        Ok(Answer {
            status,
            session,
            body,
        })
    }
}

/// Whether an answer (JSON or SSE) holds a JSON-RPC result for `id`.
fn has_result(body: &[u8], id: u64) -> bool {
    let text = String::from_utf8_lossy(body);
    let parse = |s: &str| serde_json::from_str::<Value>(s).ok();
    let mut messages: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|l| parse(l.trim()))
        .collect();
    if messages.is_empty()
        && let Some(v) = parse(&text)
    {
        messages.push(v);
    }
    messages.iter().any(|m| {
        m["id"] == json!(id) && m.get("result").is_some_and(|r| r["isError"] != json!(true))
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Era {
    Legacy,
    Stateless,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Legacy => LEGACY,
            Era::Stateless => STATELESS,
        }
    }
}

#[derive(Clone)]
struct Call {
    tool: String,
    arguments: Value,
}

/// One client's session: opened (legacy) on creation.
struct Client {
    connection: Connection,
    era: Era,
    session: Option<String>,
    call: Arc<Call>,
    next_id: u64,
}

impl Client {
    async fn open(addr: SocketAddr, era: Era, call: Arc<Call>) -> io::Result<Self> {
        let mut connection = Connection::open(addr).await?;
        let mut session = None;
        if era == Era::Legacy {
            let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "http-load", "version": "0"}}});
            let answer = connection
                .send("POST", &[], initialize.to_string().as_bytes())
                .await?;
            if answer.status != 200 || answer.session.is_none() {
                return Err(io::Error::other(format!(
                    "initialize answered {}",
                    answer.status
                )));
            }
            session = answer.session;
            let id = session.clone().unwrap_or_default();
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let answer = connection
                .send(
                    "POST",
                    &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", LEGACY)],
                    initialized.to_string().as_bytes(),
                )
                .await?;
            if !(200..300).contains(&answer.status) {
                return Err(io::Error::other(format!(
                    "notifications/initialized answered {}",
                    answer.status
                )));
            }
        }
        Ok(Self {
            connection,
            era,
            session,
            call,
            next_id: 1,
        })
    }

    /// One `tools/call`: `None` when it was answered with a result, else what came instead.
    async fn call(&mut self) -> io::Result<Option<String>> {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = json!({"name": self.call.tool, "arguments": self.call.arguments});
        if self.era == Era::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {}});
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
            .to_string();
        let session = self.session.clone().unwrap_or_default();
        let mut headers = vec![("MCP-Protocol-Version", self.era.name())];
        if self.era == Era::Legacy {
            headers.push(("Mcp-Session-Id", &session));
        } else {
            headers.push(("Mcp-Method", "tools/call"));
            headers.push(("Mcp-Name", &self.call.tool));
        }
        let answer = self
            .connection
            .send("POST", &headers, body.as_bytes())
            .await?;
        Ok(if answer.status == 200 && has_result(&answer.body, id) {
            None
        } else {
            let body = String::from_utf8_lossy(&answer.body);
            Some(format!(
                "HTTP {}: {}",
                answer.status,
                body.chars().take(200).collect::<String>()
            ))
        })
    }

    async fn close(mut self) {
        if let Some(session) = self.session.take() {
            let _ = self
                .connection
                .send(
                    "DELETE",
                    &[
                        ("Mcp-Session-Id", &session),
                        ("MCP-Protocol-Version", LEGACY),
                    ],
                    b"",
                )
                .await;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

struct Plan {
    clients: Vec<usize>,
    seconds: f64,
    warmup: f64,
    full: bool,
}

impl Plan {
    fn from_env() -> Self {
        let full = std::env::args().any(|a| a == "--bench");
        let clients = std::env::var("GUARD_LOAD_CLIENTS")
            .ok()
            .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_else(|| {
                if full {
                    vec![1, 16, 64, 256]
                } else {
                    vec![1, 4]
                }
            });
        let seconds = std::env::var("GUARD_LOAD_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if full { 3.0 } else { 0.3 });
        Self {
            clients,
            seconds,
            warmup: if full { 0.5 } else { 0.1 },
            full,
        }
    }
}

struct Figures {
    calls: usize,
    seconds: f64,
    latencies_us: Vec<f64>,
    peak_rss_kib: Option<u64>,
}

impl Figures {
    fn empty() -> Self {
        Self {
            calls: 0,
            seconds: 0.0,
            latencies_us: Vec::new(),
            peak_rss_kib: None,
        }
    }

    fn add(&mut self, mut other: Figures) {
        self.calls += other.calls;
        self.seconds += other.seconds;
        self.latencies_us.append(&mut other.latencies_us);
        self.latencies_us.sort_by(f64::total_cmp);
        self.peak_rss_kib = self.peak_rss_kib.max(other.peak_rss_kib);
    }

    fn per_second(&self) -> f64 {
        self.calls as f64 / self.seconds
    }

    fn pct(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((p * self.latencies_us.len() as f64) as usize).min(self.latencies_us.len() - 1);
        self.latencies_us[i]
    }

    fn mean(&self) -> f64 {
        self.latencies_us.iter().sum::<f64>() / self.latencies_us.len().max(1) as f64
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// `n` clients calling as fast as answered for `plan.seconds` after a warm-up; `pid`: the
/// server process whose RSS is sampled.
async fn run(
    addr: SocketAddr,
    era: Era,
    call: Arc<Call>,
    n: usize,
    plan: &Plan,
    pid: Option<u32>,
) -> io::Result<Figures> {
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(Client::open(addr, era, call.clone()).await?);
    }
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(plan.warmup);
    let end = measure_from + Duration::from_secs_f64(plan.seconds);
    let sampler = pid.map(|pid| {
        tokio::spawn(async move {
            let mut peak = 0;
            while Instant::now() < end {
                if let Some(now) = rss_kib(pid) {
                    peak = peak.max(now);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            peak
        })
    });
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut failed = 0usize;
                let mut first_failure = None;
                loop {
                    let sent = Instant::now();
                    if sent >= end {
                        break;
                    }
                    let failure = client.call().await?;
                    let done = Instant::now();
                    match failure {
                        None if sent >= measure_from => {
                            latencies.push((done - sent).as_secs_f64() * 1e6);
                        }
                        None => {}
                        Some(failure) => {
                            failed += 1;
                            first_failure.get_or_insert(failure);
                        }
                    }
                }
                client.close().await;
                Ok::<_, io::Error>((latencies, failed, first_failure))
            })
        })
        .collect();
    let mut latencies_us = Vec::new();
    let mut failed = 0;
    let mut first_failure = None;
    for task in tasks {
        let (mut l, f, first) = task.await.map_err(io::Error::other)??;
        latencies_us.append(&mut l);
        failed += f;
        first_failure = first_failure.or(first);
    }
    let peak_rss_kib = match sampler {
        Some(s) => s.await.ok(),
        None => None,
    };
    latencies_us.sort_by(f64::total_cmp);
    if let Some(first) = first_failure {
        return Err(io::Error::other(format!(
            "{failed} of {} calls at {n} clients ({}) failed; the first: {first}",
            failed + latencies_us.len(),
            era.name()
        )));
    }
    Ok(Figures {
        calls: latencies_us.len(),
        seconds: plan.seconds,
        latencies_us,
        peak_rss_kib,
    })
}

fn print_row(label: &str, era: Era, n: usize, f: &Figures) {
    let rss = f
        .peak_rss_kib
        .map(|k| format!("{:.1} MiB", k as f64 / 1024.0))
        .unwrap_or_else(|| "(in process)".into());
    println!(
        "  {label:<22} {:<10} {n:>4} clients: {:>8.0} req/s  p50 {:>8.1} µs  p99 {:>8.1} µs  mean {:>8.1} µs  peak RSS {rss}",
        era.name(),
        f.per_second(),
        f.pct(0.5),
        f.pct(0.99),
        f.mean(),
    );
}

/// A server process, killed (by its own PID) and reaped when dropped.
struct Process {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_addr() -> io::Result<SocketAddr> {
    std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()
}

async fn start_process(binary: &Path, prefix: &str, env: &[(&str, String)]) -> io::Result<Process> {
    let addr = free_addr()?;
    let mut command = Command::new(binary);
    command
        .args(["--http", &addr.to_string()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env(format!("{prefix}_HTTP_TOKEN"), TOKEN)
        .env(format!("{prefix}_HTTP_MAX_CONNECTIONS"), CAP.to_string())
        .env(format!("{prefix}_HTTP_MAX_SESSIONS"), CAP.to_string())
        .env(
            format!("{prefix}_HTTP_SESSIONS_PER_PRINCIPAL"),
            CAP.to_string(),
        )
        .env(
            format!("{prefix}_HTTP_CONNECTIONS_PER_PEER"),
            CAP.to_string(),
        )
        .env(
            format!("{prefix}_HTTP_MAX_UNAUTHENTICATED"),
            CAP.to_string(),
        )
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let process = Process {
        child: command.spawn()?,
        addr,
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if TcpStream::connect(addr).await.is_ok() {
            return Ok(process);
        }
        if Instant::now() > deadline {
            return Err(io::Error::other(format!(
                "{} did not listen",
                binary.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `var`, or `relative` under the target directory (`CARGO_TARGET_DIR`, else `target/`).
fn release_binary(var: &str, relative: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
            .join(relative)
    })
}

/// The in-process servers: rmcp alone, the framework without and with authentication.
struct InProcess {
    bare: SocketAddr,
    no_auth: SocketAddr,
    framework: SocketAddr,
}

async fn bench_framework(plan: &Plan, servers: &InProcess) -> io::Result<()> {
    println!(
        "1. framework overhead, in process (`ping`; framework = the ask-first HTTP stack with the bearer secret, no auth = the same without authentication, bare = rmcp alone):"
    );
    let call = Arc::new(Call {
        tool: "ping".into(),
        arguments: json!({}),
    });
    for era in [Era::Legacy, Era::Stateless] {
        for &n in &plan.clients {
            // Interleaved in three parts each, so a change in the machine's load falls on both.
            let third = Plan {
                clients: Vec::new(),
                seconds: plan.seconds / 3.0,
                warmup: plan.warmup,
                full: plan.full,
            };
            let mut bare_figures = Figures::empty();
            let mut no_auth_figures = Figures::empty();
            let mut framework_figures = Figures::empty();
            for _ in 0..3 {
                bare_figures.add(run(servers.bare, era, call.clone(), n, &third, None).await?);
                no_auth_figures
                    .add(run(servers.no_auth, era, call.clone(), n, &third, None).await?);
                framework_figures
                    .add(run(servers.framework, era, call.clone(), n, &third, None).await?);
            }
            print_row("bare rmcp", era, n, &bare_figures);
            print_row("framework, no auth", era, n, &no_auth_figures);
            print_row("framework", era, n, &framework_figures);
            let per_request = |f: &Figures| 1e6 / f.per_second();
            // Per request: the server's time per request at this load (1 / throughput: the
            // server is saturated from a few clients on), framework minus bare; and the mean
            // latency's difference, which from a few clients on is mostly queueing (a client
            // waits for each answer, so mean latency x throughput = n).
            println!(
                "  {:<22} {:<10} {n:>4} clients: framework adds {:+.1} µs of server time per request ({:.1}% of bare throughput); mean latency {:+.1} µs",
                "=> overhead",
                era.name(),
                per_request(&framework_figures) - per_request(&bare_figures),
                100.0 * framework_figures.per_second() / bare_figures.per_second(),
                framework_figures.mean() - bare_figures.mean(),
            );
            println!(
                "  {:<22} {:<10} {n:>4} clients: of which authentication (bearer secret) {:+.1} µs, the rest (gate, limits, session binding, stream bounds) {:+.1} µs",
                "   apart",
                era.name(),
                per_request(&framework_figures) - per_request(&no_auth_figures),
                per_request(&no_auth_figures) - per_request(&bare_figures),
            );
        }
    }
    Ok(())
}

async fn bench_process(
    plan: &Plan,
    label: &str,
    binary: &Path,
    prefix: &str,
    env: &[(&str, String)],
    call: Call,
) -> io::Result<()> {
    let process = start_process(binary, prefix, env).await?;
    let pid = process.child.id();
    let idle = rss_kib(pid).unwrap_or(0);
    println!(
        "{label} ({}), `{}`; idle RSS {:.1} MiB:",
        binary.display(),
        call.tool,
        idle as f64 / 1024.0
    );
    let call = Arc::new(call);
    for era in [Era::Legacy, Era::Stateless] {
        for &n in &plan.clients {
            let figures = run(process.addr, era, call.clone(), n, plan, Some(pid)).await?;
            print_row(label, era, n, &figures);
        }
    }
    Ok(())
}

fn main() {
    let plan = Plan::from_env();
    println!(
        "HTTP load benchmark: {:.1} s per run after {:.1} s warm-up; {} cores; load {}",
        plan.seconds,
        plan.warmup,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split(' ').next().map(str::to_owned))
            .unwrap_or_default()
    );
    // The in-process servers: one worker thread of their own.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("server runtime");
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    // The in-process servers listen and run on `servers`; the clients run on `client`.
    let addrs = servers.block_on(async {
        let server = Ping {
            guard: Guard::builder("http-load-bench").build(),
        };
        Ok::<_, io::Error>(InProcess {
            bare: serve_bare(server.clone()).await?,
            no_auth: serve_framework(server.clone(), false).await?,
            framework: serve_framework(server, true).await?,
        })
    });
    let in_process = match addrs {
        Ok(addrs) => addrs,
        Err(error) => {
            eprintln!("http_load: the in-process servers did not start: {error}");
            std::process::exit(1);
        }
    };
    let result = client.block_on(async {
        bench_framework(&plan, &in_process).await?;
        if !plan.full {
            println!("(a smoke pass without --bench: the processes are measured by `cargo bench --bench http_load`)");
            return Ok(());
        }
        let notes = release_binary("NOTES_LOAD_BINARY", "release/examples/notes");
        if notes.exists() {
            bench_process(&plan, "notes", &notes, "NOTES", &[], Call {
                tool: "list_notes".into(),
                arguments: json!({}),
            })
            .await?;
        } else {
            println!("notes: NOT MEASURED: {} is not built (cargo build --release --example notes)", notes.display());
        }
        let opengist = release_binary("OPENGIST_MCP_LOAD_BINARY", "release/opengist-mcp");
        match (std::env::var("OPENGIST_LOAD_URL"), std::env::var("OPENGIST_LOAD_TOKEN")) {
            (Ok(url), Ok(token)) if opengist.exists() => {
                bench_process(
                    &plan,
                    "opengist-mcp",
                    &opengist,
                    "OPENGIST_MCP",
                    &[("OPENGIST_URL", url), ("OPENGIST_TOKEN", token)],
                    Call {
                        tool: "list_gists".into(),
                        arguments: json!({}),
                    },
                )
                .await?;
            }
            _ => println!(
                "opengist-mcp: NOT MEASURED: needs {} built and OPENGIST_LOAD_URL/OPENGIST_LOAD_TOKEN (scripts/bench-http-load provisions an Opengist)",
                opengist.display()
            ),
        }
        Ok::<_, io::Error>(())
    });
    if let Err(error) = result {
        eprintln!("http_load: {error}");
        std::process::exit(1);
    }
}
