//! Performance benchmark of the `opengist-mcp` binary: start-up, idle memory, and memory and
//! throughput under 50 concurrent HTTP sessions.
//!
//! Run with `cargo bench -p opengist-mcp --bench server` (release profile). It prints figures
//! beside the targets and asserts nothing: machines are noisy, so read medians, p90s
//! and the ratios measured within one run, not single values.
//!
//! Every child process is held by a [`ChildGuard`], which kills that one PID and reaps it when
//! dropped, also on an early return or a panic.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_opengist-mcp");

const HTTP_SESSIONS: usize = 50;
const CALLS_PER_SESSION: usize = 20;
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
const RSS_SAMPLE_EVERY: Duration = Duration::from_millis(5);

const TARGET_STARTUP_MS: f64 = 20.0;
const TARGET_IDLE_MIB: f64 = 15.0;
const TARGET_LOAD_MIB: f64 = 40.0;

const LEGACY_VERSION: &str = "2025-11-25";
const STATELESS_VERSION: &str = "2026-07-28";

/// How many times each measurement runs.
#[derive(Clone, Copy)]
struct Plan {
    startup_runs: usize,
    warmup_runs: usize,
    http_rounds: usize,
    sequential_calls: usize,
    /// Whether to set the figures beside the targets (not for a smoke pass of a debug build).
    judge: bool,
}

/// `cargo bench` passes `--bench`.
const FULL: Plan = Plan {
    startup_runs: 30,
    warmup_runs: 3,
    http_rounds: 5,
    sequential_calls: 200,
    judge: true,
};

/// `cargo test --benches` / `--all-targets` runs this program without `--bench`: one pass of
/// each, only to show it still works.
const SMOKE: Plan = Plan {
    startup_runs: 1,
    warmup_runs: 0,
    http_rounds: 1,
    sequential_calls: 10,
    judge: false,
};

type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Kills and reaps the child it holds (by its own PID, via [`Child::kill`]) when dropped.
struct ChildGuard {
    child: Child,
}

impl ChildGuard {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The binary, unconfigured: no Opengist URL or token, whatever the caller's environment holds.
fn server_command() -> Command {
    let mut command = Command::new(BIN);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("OPENGIST") {
            command.env_remove(key);
        }
    }
    command.env_remove("RUST_LOG").env_remove("ELICITATION");
    command
}

/// A status field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn fmt_mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".to_owned(), |kib| format!("{:.2} MiB", mib(kib)))
}

/// Nearest-rank percentile of a sample (sorted here).
fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn verdict(plan: Plan, met: bool) -> &'static str {
    match (plan.judge, met) {
        (false, _) => "not judged (smoke pass)",
        (true, true) => "met",
        (true, false) => "NOT met",
    }
}

// ---------------------------------------------------------------------------------------------
// 1 and 2: start-up over stdio, idle memory
// ---------------------------------------------------------------------------------------------

/// The messages a client of each era writes to reach a `tools/list` answer (id 2).
fn stdio_script(stateless: bool) -> String {
    let lines = if stateless {
        vec![json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": { "_meta": {
                "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        })]
    } else {
        vec![
            json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY_VERSION,
                    "capabilities": {},
                    "clientInfo": { "name": "bench", "version": "1" }
                }
            }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        ]
    };
    lines.iter().map(|line| format!("{line}\n")).collect()
}

struct StartupRun {
    millis: f64,
    tools: usize,
    rss_kib: Option<u64>,
    hwm_kib: Option<u64>,
}

/// Spawn to the `tools/list` answer, then the resident memory of the idle process.
fn startup_once(script: &str) -> BenchResult<StartupRun> {
    let start = Instant::now();
    let child = server_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guard = ChildGuard { child };
    let mut stdin = guard.child.stdin.take().ok_or("no stdin")?;
    stdin.write_all(script.as_bytes())?;
    stdin.flush()?;
    let stdout = guard.child.stdout.take().ok_or("no stdout")?;
    // Read on another thread, so a server that never answers costs a timeout, not a hang; the
    // guard's kill then ends the reader with end-of-file.
    let (answered, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let outcome: Result<(Instant, Value), String> = loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) => break Err("the server closed stdout before answering tools/list".into()),
                Ok(_) => match serde_json::from_str::<Value>(&line) {
                    Ok(message) if message["id"] == 2 => break Ok((Instant::now(), message)),
                    Ok(_) => {}
                    Err(error) => break Err(format!("not JSON on stdout: {error}: {line:?}")),
                },
                Err(error) => break Err(error.to_string()),
            }
        };
        let _ = answered.send(outcome);
    });
    let (at, answer) = answer
        .recv_timeout(STARTUP_TIMEOUT)
        .map_err(|_| format!("no tools/list answer within {STARTUP_TIMEOUT:?}"))??;
    let millis = at.duration_since(start).as_secs_f64() * 1000.0;
    let tools = answer["result"]["tools"]
        .as_array()
        .ok_or_else(|| format!("tools/list did not answer with tools: {answer}"))?
        .len();
    // Keep stdin open so the server stays up, idle, while its memory is read.
    let pid = guard.pid();
    let rss_kib = proc_status_kib(pid, "VmRSS");
    let hwm_kib = proc_status_kib(pid, "VmHWM");
    drop(stdin);
    drop(guard);
    Ok(StartupRun {
        millis,
        tools,
        rss_kib,
        hwm_kib,
    })
}

/// Spawn to exit of `opengist-mcp --version`: the floor (exec, dynamic loading, clap) that
/// start-up is compared with.
fn version_once() -> BenchResult<f64> {
    let start = Instant::now();
    let child = server_command()
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guard = ChildGuard { child };
    let status = guard.child.wait()?;
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    drop(guard);
    if !status.success() {
        return Err(format!("--version exited with {status}").into());
    }
    Ok(millis)
}

fn bench_version_floor(plan: Plan) -> BenchResult<Vec<f64>> {
    for _ in 0..plan.warmup_runs {
        version_once()?;
    }
    (0..plan.startup_runs).map(|_| version_once()).collect()
}

fn bench_startup(plan: Plan, stateless: bool) -> BenchResult<Vec<StartupRun>> {
    let script = stdio_script(stateless);
    for _ in 0..plan.warmup_runs {
        startup_once(&script)?;
    }
    (0..plan.startup_runs)
        .map(|_| startup_once(&script))
        .collect()
}

fn print_startup(plan: Plan, label: &str, runs: &[StartupRun], floor_median: Option<f64>) {
    let millis: Vec<f64> = runs.iter().map(|run| run.millis).collect();
    let median = percentile(&millis, 50.0);
    let p90 = percentile(&millis, 90.0);
    let tools = runs.first().map_or(0, |run| run.tools);
    println!(
        "  {label:<38} median {median:6.2} ms  p90 {p90:6.2} ms  max {:6.2} ms  ({} runs, {tools} tools)  target < {TARGET_STARTUP_MS} ms: {}",
        percentile(&millis, 100.0),
        runs.len(),
        verdict(plan, p90 < TARGET_STARTUP_MS),
    );
    if let Some(floor) = floor_median {
        println!("  {:<38} {:.2}x the --version floor", "", median / floor);
    }
}

fn print_idle_rss(plan: Plan, label: &str, runs: &[StartupRun]) {
    let rss: Vec<f64> = runs.iter().filter_map(|run| run.rss_kib.map(mib)).collect();
    let hwm: Vec<f64> = runs.iter().filter_map(|run| run.hwm_kib.map(mib)).collect();
    if rss.is_empty() {
        println!("  {label:<38} VmRSS unavailable (no /proc/<pid>/status)");
        return;
    }
    let p90 = percentile(&rss, 90.0);
    println!(
        "  {label:<38} VmRSS median {:5.2} MiB  p90 {p90:5.2} MiB  (VmHWM median {:5.2} MiB)  target < {TARGET_IDLE_MIB} MiB: {}",
        percentile(&rss, 50.0),
        percentile(&hwm, 50.0),
        verdict(plan, p90 < TARGET_IDLE_MIB),
    );
}

// ---------------------------------------------------------------------------------------------
// 3: memory and throughput under 50 concurrent HTTP sessions
// ---------------------------------------------------------------------------------------------

fn free_port() -> BenchResult<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The JSON-RPC message in a response body: plain JSON, or the first SSE `data:` line that
/// holds one (rmcp may open the stream with an empty priming event).
fn parse_body(content_type: &str, body: &str) -> BenchResult<Value> {
    if content_type.starts_with("text/event-stream") {
        for line in body.lines() {
            if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim();
                if data.is_empty() {
                    continue;
                }
                if let Ok(value) = serde_json::from_str::<Value>(data) {
                    return Ok(value);
                }
            }
        }
        Err(format!("no JSON-RPC message in the event stream: {body:?}").into())
    } else {
        Ok(serde_json::from_str(body)?)
    }
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> BenchResult<(reqwest::StatusCode, Option<String>, Option<Value>)> {
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", LEGACY_VERSION);
    }
    let response = request.send().await?;
    let status = response.status();
    let headers = response.headers();
    let session_id = headers
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let content_type = headers
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(format!("POST {url}: {status}: {text}").into());
    }
    let message = if text.trim().is_empty() {
        None
    } else {
        Some(parse_body(&content_type, &text)?)
    };
    Ok((status, session_id, message))
}

/// Opens a legacy session: `initialize`, then `notifications/initialized`. Returns its id.
async fn open_session(client: &reqwest::Client, url: &str) -> BenchResult<String> {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "bench", "version": "1" }
        }
    });
    match post(client, url, None, &initialize).await? {
        (_, Some(session_id), Some(answer)) if answer.get("result").is_some() => {
            let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
            post(client, url, Some(&session_id), &initialized).await?;
            Ok(session_id)
        }
        (_, session_id, answer) => {
            Err(format!("initialize: session id {session_id:?}, answer {answer:?}").into())
        }
    }
}

/// `count` sequential `tools/call list_gists {}` in one session; each call's latency in ms.
async fn call_list_gists(
    client: &reqwest::Client,
    url: &str,
    session_id: &str,
    count: usize,
) -> BenchResult<Vec<f64>> {
    let mut latencies = Vec::with_capacity(count);
    for call in 0..count {
        let body = json!({
            "jsonrpc": "2.0", "id": 2 + call, "method": "tools/call",
            "params": { "name": "list_gists", "arguments": {} }
        });
        let start = Instant::now();
        let (_, _, answer) = post(client, url, Some(session_id), &body).await?;
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        let answer = answer.ok_or("tools/call answered with an empty body")?;
        if answer.get("result").is_none() {
            return Err(format!("tools/call did not answer with a result: {answer}").into());
        }
    }
    Ok(latencies)
}

/// Ends a session with `DELETE /mcp`, as a well-behaved client does (an abandoned legacy
/// session is kept by the server until its idle timeout).
async fn close_session(client: &reqwest::Client, url: &str, session_id: &str) -> BenchResult<()> {
    let response = client
        .delete(url)
        .header("Mcp-Session-Id", session_id)
        .header("MCP-Protocol-Version", LEGACY_VERSION)
        .send()
        .await?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("DELETE {url}: {status}").into());
    }
    Ok(())
}

/// One session of the concurrent load: open, wait until every session is open, call, close.
/// Returns the calls' latencies and when the last call was answered.
async fn session(
    client: reqwest::Client,
    url: Arc<str>,
    ready: Arc<tokio::sync::Barrier>,
) -> BenchResult<(Vec<f64>, Instant)> {
    let opened = open_session(&client, &url).await;
    // Wait at the barrier whatever happened, so one failed session cannot stall the others.
    ready.wait().await;
    let session_id = opened?;
    let latencies = call_list_gists(&client, &url, &session_id, CALLS_PER_SESSION).await?;
    let calls_done = Instant::now();
    close_session(&client, &url, &session_id).await?;
    Ok((latencies, calls_done))
}

/// CPU time (user + system, all threads) a process has used, in ms, from `/proc/<pid>/stat`
/// (`self` for this process). Assumes the usual USER_HZ of 100.
fn cpu_millis(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 * 10.0)
}

struct LoadRound {
    calls: usize,
    failed_sessions: usize,
    first_error: Option<String>,
    calls_per_second: f64,
    latencies: Vec<f64>,
    rss_before_kib: Option<u64>,
    peak_rss_kib: Option<u64>,
    rss_after_kib: Option<u64>,
    samples: usize,
    server_cpu_ms: Option<f64>,
    client_cpu_ms: Option<f64>,
}

/// Samples `VmRSS` every [`RSS_SAMPLE_EVERY`] on its own thread until stopped.
struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<(Option<u64>, usize)>>,
}

impl RssSampler {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut peak: Option<u64> = None;
            let mut samples = 0;
            loop {
                if let Some(rss) = proc_status_kib(pid, "VmRSS") {
                    peak = Some(peak.map_or(rss, |peak| peak.max(rss)));
                    samples += 1;
                }
                if flag.load(Ordering::Relaxed) {
                    break (peak, samples);
                }
                std::thread::sleep(RSS_SAMPLE_EVERY);
            }
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    /// The peak sampled and the number of samples.
    fn finish(mut self) -> (Option<u64>, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or((None, 0))
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn load_round(client: &reqwest::Client, url: &Arc<str>, pid: u32) -> LoadRound {
    let rss_before_kib = proc_status_kib(pid, "VmRSS");
    let sampler = RssSampler::start(pid);
    // Every session plus this task meet at the barrier once the sessions are open; the clock
    // for calls/second starts there.
    let ready = Arc::new(tokio::sync::Barrier::new(HTTP_SESSIONS + 1));
    let tasks: Vec<_> = (0..HTTP_SESSIONS)
        .map(|_| tokio::spawn(session(client.clone(), Arc::clone(url), Arc::clone(&ready))))
        .collect();
    ready.wait().await;
    let start = Instant::now();
    let server_cpu_before = cpu_millis(&pid.to_string());
    let client_cpu_before = cpu_millis("self");
    let mut latencies = Vec::with_capacity(HTTP_SESSIONS * CALLS_PER_SESSION);
    let mut last_answer = start;
    let mut failed_sessions = 0;
    let mut first_error = None;
    for task in tasks {
        match task.await {
            Ok(Ok((session_latencies, calls_done))) => {
                latencies.extend(session_latencies);
                last_answer = last_answer.max(calls_done);
            }
            Ok(Err(error)) => {
                failed_sessions += 1;
                first_error.get_or_insert_with(|| error.to_string());
            }
            Err(error) => {
                failed_sessions += 1;
                first_error.get_or_insert_with(|| error.to_string());
            }
        }
    }
    let server_cpu_ms = cpu_millis(&pid.to_string())
        .zip(server_cpu_before)
        .map(|(after, before)| after - before);
    let client_cpu_ms = cpu_millis("self")
        .zip(client_cpu_before)
        .map(|(after, before)| after - before);
    let elapsed = last_answer.duration_since(start).as_secs_f64();
    let (peak_rss_kib, samples) = sampler.finish();
    LoadRound {
        calls: latencies.len(),
        failed_sessions,
        first_error,
        calls_per_second: latencies.len() as f64 / elapsed,
        latencies,
        rss_before_kib,
        peak_rss_kib,
        rss_after_kib: proc_status_kib(pid, "VmRSS"),
        samples,
        server_cpu_ms,
        client_cpu_ms,
    }
}

async fn wait_healthy(
    client: &reqwest::Client,
    addr: SocketAddr,
    guard: &mut ChildGuard,
) -> BenchResult<Duration> {
    let url = format!("http://{addr}/healthz");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Some(status) = guard.child.try_wait()? {
            return Err(format!("the HTTP server exited early with {status}").into());
        }
        if let Ok(response) = client.get(&url).send().await
            && response.status() == reqwest::StatusCode::OK
        {
            return Ok(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err("/healthz did not answer 200 within 10 s".into())
}

/// The bearer secret the HTTP benchmark's server is started with and its clients send (an
/// HTTP server always requires one; loopback only).
const BENCH_HTTP_SECRET: &str = "opengist-mcp-bench-secret-on-loopback-only";

/// Headers every benchmark HTTP request carries: the bearer secret.
fn bench_headers() -> BenchResult<reqwest::header::HeaderMap> {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {BENCH_HTTP_SECRET}").parse()?,
    );
    Ok(headers)
}

fn bench_http(plan: Plan) -> BenchResult<()> {
    let port = free_port()?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let child = server_command()
        .env("OPENGIST_MCP_HTTP_TOKEN", BENCH_HTTP_SECRET)
        .arg("--http")
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guard = ChildGuard { child };
    let pid = guard.pid();
    // One client thread: the server gets the other core of a 2-core machine.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        opengist_mcp::opengist::install_tls_provider();
        let client = reqwest::Client::builder()
            .default_headers(bench_headers()?)
            .pool_max_idle_per_host(HTTP_SESSIONS)
            .timeout(Duration::from_secs(30))
            .build()?;
        let healthy_after = wait_healthy(&client, addr, &mut guard).await?;
        println!(
            "  HTTP server on {addr}: /healthz 200 after {:.1} ms from spawn, idle VmRSS {}",
            healthy_after.as_secs_f64() * 1000.0,
            fmt_mib(proc_status_kib(pid, "VmRSS")),
        );
        let url: Arc<str> = Arc::from(format!("http://{addr}/mcp"));

        // Baseline in the same run: one session, one call at a time.
        let session_id = open_session(&client, &url).await?;
        call_list_gists(&client, &url, &session_id, 10).await?;
        let sequential_start = Instant::now();
        let sequential = call_list_gists(&client, &url, &session_id, plan.sequential_calls).await?;
        let sequential_rate = sequential.len() as f64 / sequential_start.elapsed().as_secs_f64();
        println!(
            "  {:<38} median {:5.2} ms  p90 {:5.2} ms  {sequential_rate:7.0} calls/s  ({} calls)",
            "baseline: 1 session, sequential",
            percentile(&sequential, 50.0),
            percentile(&sequential, 90.0),
            sequential.len(),
        );
        // The same session, but a fresh TCP connection for every call: tells a stall of a
        // reused keep-alive connection (Nagle + delayed ACK) apart from time spent serving.
        let fresh_client = reqwest::Client::builder()
            .default_headers(bench_headers()?)
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(30))
            .build()?;
        let fresh_start = Instant::now();
        let fresh = call_list_gists(&fresh_client, &url, &session_id, plan.sequential_calls).await?;
        let fresh_rate = fresh.len() as f64 / fresh_start.elapsed().as_secs_f64();
        close_session(&client, &url, &session_id).await?;
        println!(
            "  {:<38} median {:5.2} ms  p90 {:5.2} ms  {fresh_rate:7.0} calls/s  ({} calls); keep-alive/fresh median latency {:.1}x",
            "  same, new TCP connection per call",
            percentile(&fresh, 50.0),
            percentile(&fresh, 90.0),
            fresh.len(),
            percentile(&sequential, 50.0) / percentile(&fresh, 50.0),
        );

        let mut rounds = Vec::with_capacity(plan.http_rounds);
        for round in 1..=plan.http_rounds {
            let result = load_round(&client, &url, pid).await;
            let per_call = |cpu: Option<f64>| {
                cpu.map_or("n/a".to_owned(), |ms| {
                    format!("{:.3} ms", ms / result.calls.max(1) as f64)
                })
            };
            println!(
                "  round {round}: {} calls {:6.0} calls/s, latency median {:5.2} p90 {:5.2} ms, VmRSS before {} peak {} after {} ({} samples), CPU/call server {} bench {}{}",
                result.calls,
                result.calls_per_second,
                percentile(&result.latencies, 50.0),
                percentile(&result.latencies, 90.0),
                fmt_mib(result.rss_before_kib),
                fmt_mib(result.peak_rss_kib),
                fmt_mib(result.rss_after_kib),
                result.samples,
                per_call(result.server_cpu_ms),
                per_call(result.client_cpu_ms),
                if result.failed_sessions > 0 {
                    format!(
                        ", {} sessions FAILED (first: {})",
                        result.failed_sessions,
                        result.first_error.as_deref().unwrap_or("?")
                    )
                } else {
                    String::new()
                },
            );
            rounds.push(result);
        }
        let throughput: Vec<f64> = rounds.iter().map(|r| r.calls_per_second).collect();
        let latencies: Vec<f64> = rounds.iter().flat_map(|r| r.latencies.clone()).collect();
        let peaks: Vec<f64> = rounds
            .iter()
            .filter_map(|r| r.peak_rss_kib.map(mib))
            .collect();
        let server_cpu: Vec<f64> = rounds
            .iter()
            .filter_map(|r| r.server_cpu_ms.map(|ms| ms / r.calls.max(1) as f64))
            .collect();
        let hwm = proc_status_kib(pid, "VmHWM");
        println!();
        let median_rate = percentile(&throughput, 50.0);
        println!(
            "  {:<38} median {median_rate:6.0} calls/s  slowest round {:6.0} calls/s  ({} rounds of {HTTP_SESSIONS}x{CALLS_PER_SESSION}); {:.2}x the sequential baseline",
            "throughput, 50 sessions at once",
            percentile(&throughput, 0.0),
            plan.http_rounds,
            median_rate / sequential_rate,
        );
        println!(
            "  {:<38} median {:5.2} ms  p90 {:5.2} ms  max {:5.2} ms; server CPU median {:.3} ms/call",
            "per-call latency, 50 in flight",
            percentile(&latencies, 50.0),
            percentile(&latencies, 90.0),
            percentile(&latencies, 100.0),
            percentile(&server_cpu, 50.0),
        );
        if peaks.is_empty() {
            println!("  peak VmRSS under load: unavailable (no /proc/<pid>/status)");
        } else {
            let worst = percentile(&peaks, 100.0);
            println!(
                "  {:<38} median {:5.2} MiB  max {worst:5.2} MiB  (VmHWM {})  target < {TARGET_LOAD_MIB} MiB: {}",
                "peak VmRSS under load (sampled 5 ms)",
                percentile(&peaks, 50.0),
                fmt_mib(hwm),
                verdict(plan, worst < TARGET_LOAD_MIB),
            );
        }
        BenchResult::Ok(())
    })?;
    drop(guard);
    Ok(())
}

// ---------------------------------------------------------------------------------------------

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let plan = if full { FULL } else { SMOKE };
    println!(
        "opengist-mcp server benchmark ({BIN}){}",
        if full {
            ""
        } else {
            " -- smoke pass, one run of each; use `cargo bench` for figures"
        }
    );
    println!(
        "machine: {} CPUs available; targets from the issue are judged on p90 / the worst round",
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!();

    let mut failed = 0;
    println!("1. start-up: spawn to the tools/list answer over stdio, unconfigured");
    let floor = match bench_version_floor(plan) {
        Ok(millis) => {
            println!(
                "  {:<38} median {:6.2} ms  p90 {:6.2} ms  (floor: exec + clap, no runtime)",
                "spawn to exit of --version",
                percentile(&millis, 50.0),
                percentile(&millis, 90.0),
            );
            Some(percentile(&millis, 50.0))
        }
        Err(error) => {
            println!("  --version floor failed: {error}");
            failed += 1;
            None
        }
    };
    let legacy = bench_startup(plan, false);
    match &legacy {
        Ok(runs) => print_startup(plan, "legacy (initialize, initialized, list)", runs, floor),
        Err(error) => {
            println!("  legacy start-up failed: {error}");
            failed += 1;
        }
    }
    let stateless = bench_startup(plan, true);
    match &stateless {
        Ok(runs) => print_startup(plan, "2026-07-28 (one tools/list with _meta)", runs, floor),
        Err(error) => {
            println!("  2026-07-28 start-up failed: {error}");
            failed += 1;
        }
    }
    println!();

    println!("2. resident memory, idle after the tools/list answer");
    if let Ok(runs) = &legacy {
        print_idle_rss(plan, "legacy session", runs);
    }
    if let Ok(runs) = &stateless {
        print_idle_rss(plan, "2026-07-28 request", runs);
    }
    println!();

    println!(
        "3. streamable HTTP: {HTTP_SESSIONS} concurrent legacy sessions x {CALLS_PER_SESSION} tools/call list_gists (unconfigured: setup instructions, no network)"
    );
    if let Err(error) = bench_http(plan) {
        println!("  HTTP benchmark failed: {error}");
        failed += 1;
    }
    println!();

    println!(
        "4. not measured here: the server's added latency on get_gist over a direct Opengist request (needs a running Opengist; see BENCHMARKS.md)"
    );
    // A part that could not measure fails the run, so `cargo test --benches` shows a
    // benchmark that no longer works (its figures are printed, never judged).
    if failed > 0 {
        eprintln!("{failed} part(s) of the benchmark failed: see above");
        std::process::exit(1);
    }
}
