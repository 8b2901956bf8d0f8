//! Benchmark of `opengist-mcp` against a real Opengist: search, get_gist and get_gist_file.
//!
//! Run it with `bash scripts/bench-opengist`, which provisions a throwaway Opengist
//! (scripts/provision-opengist), points this program at it and stops it afterwards. Run
//! directly, it needs `OPENGIST_BENCH_URL` and `OPENGIST_BENCH_TOKEN` (a token with gist
//! read+write on an instance whose gists it may add to); without them it prints why it
//! skipped and exits 0. It prints figures and asserts nothing.
//!
//! For each gist count N (`OPENGIST_BENCH_SIZES`, default 100,300,1000) it seeds the token
//! owner's list up to N private gists (1 to 3 files of about 3 KB), then, against a fresh
//! server (cold cache) per search kind:
//! - `search_gists` over metadata, filenames (the default fields) and content, with a query that
//!   matches nothing (every gist is examined, up to the search's budgets): the first call and
//!   three repeats, each with the number of Opengist requests it made (counted from the
//!   server's own debug log lines, one per request) and the server's RSS during and after;
//! - `get_gist` and `get_gist_file` against the same GET sent directly on a kept-alive
//!   connection, interleaved call by call, as the median of the per-pair differences. For the
//!   slowest tenth of the pairs it also prints how long Opengist took to answer the server's
//!   own request (from the server's log), which tells a slow Opengist from a slow server.
//!
//! - `resources/list` over every page of the list (following `nextCursor`), the first walk on
//!   a fresh server and three repeats, with the Opengist requests each made; and
//!   `resources/read` of a file at head and at a full sha against a direct GET of the same
//!   raw file, interleaved, as the median of the per-pair differences.
//!
//! Before that, once: Opengist's own throughput for gist reads at 1 to 16 in flight, which
//! is what the search's read concurrency is tuned to.
//!
//! `OPENGIST_MCP_BENCH_BEFORE=/path/to/an/older/opengist-mcp` measures that binary too, in the
//! same run, on the same gists, each measurement right after the current one: compare the two
//! as ratios within one run (the machine is shared and noisy).

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const BIN: &str = env!("CARGO_BIN_EXE_opengist-mcp");
const QUERY: &str = "qqzxv-absent-word";
const REPEATS: usize = 3;
const CONCURRENCY_LEVELS: [usize; 7] = [1, 2, 4, 6, 8, 12, 16];
const SEED_CONCURRENCY: usize = 4;

type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn median(values: &[f64]) -> f64 {
    percentile(values, 50.0)
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix("VmRSS:")?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// CPU time of every thread of a process so far, in nanoseconds (`/proc/<pid>/task/*/schedstat`).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "n/a".into())
}

// ---------------------------------------------------------------------------------------------
// Opengist, directly
// ---------------------------------------------------------------------------------------------

struct Opengist {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Opengist {
    fn new(base: String, token: String) -> BenchResult<Self> {
        opengist_mcp::opengist::install_tls_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token,
        })
    }

    /// The raw bytes of a GET (a raw file).
    async fn get_bytes(&self, path: &str) -> BenchResult<Vec<u8>> {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("GET {path}: HTTP {status}").into());
        }
        Ok(response.bytes().await?.to_vec())
    }

    async fn get(&self, path: &str) -> BenchResult<Value> {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("Accept", "application/json")
            .send()
            .await?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("GET {path}: HTTP {status}").into());
        }
        Ok(response.json().await?)
    }

    /// The ids of the token owner's gists, newest first, and how many there are.
    async fn my_gists(&self) -> BenchResult<Vec<String>> {
        let mut ids = Vec::new();
        for page in 1..=100 {
            let list = self
                .get(&format!("/api/gists?per_page=100&page={page}"))
                .await?;
            let items = list.as_array().cloned().unwrap_or_default();
            ids.extend(
                items
                    .iter()
                    .filter_map(|g| g.get("id").and_then(Value::as_str).map(str::to_owned)),
            );
            if items.len() < 100 {
                break;
            }
        }
        Ok(ids)
    }

    async fn create(&self, n: usize) -> BenchResult<()> {
        let files: serde_json::Map<String, Value> = (0..(1 + n % 3))
            .map(|k| {
                (
                    format!("bench-{n}-{k}.md"),
                    json!({ "content": body(n * 7 + k) }),
                )
            })
            .collect();
        let response = self
            .http
            .post(format!("{}/api/gists", self.base))
            .bearer_auth(&self.token)
            .json(&json!({
                "title": format!("bench gist {n}"),
                "description": format!("seeded by the opengist benchmark, number {n}"),
                "visibility": "private",
                "files": files,
            }))
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(format!("creating gist {n}: HTTP {}", response.status()).into());
        }
        Ok(())
    }

    /// Seeds the token owner's list up to `n` gists; returns the ids, newest first.
    async fn seed_to(&self, n: usize) -> BenchResult<Vec<String>> {
        let have = self.my_gists().await?.len();
        if have < n {
            let started = Instant::now();
            let next = Arc::new(AtomicU64::new(have as u64));
            let mut tasks = Vec::new();
            for _ in 0..SEED_CONCURRENCY {
                let next = Arc::clone(&next);
                let me = Opengist {
                    http: self.http.clone(),
                    base: self.base.clone(),
                    token: self.token.clone(),
                };
                tasks.push(tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                        if i >= n {
                            return Ok::<(), Box<dyn std::error::Error + Send + Sync>>(());
                        }
                        me.create(i).await?;
                    }
                }));
            }
            for task in tasks {
                task.await??;
            }
            println!(
                "  seeded {} gists in {:.1} s",
                n - have,
                started.elapsed().as_secs_f64()
            );
        }
        self.my_gists().await
    }
}

/// About 3 KB of text that never contains [`QUERY`].
fn body(seed: usize) -> String {
    const WORDS: [&str; 16] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
    ];
    let mut out = String::with_capacity(3200);
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let mut line = 0;
    while out.len() < 3000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        out.push_str(WORDS[(x >> 60) as usize]);
        line += 1;
        out.push(if line % 12 == 0 { '\n' } else { ' ' });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The server, over stdio
// ---------------------------------------------------------------------------------------------

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    requests: Arc<AtomicU64>,
    /// `elapsed_ms` of the last Opengist request the server logged (sent to headers).
    last_elapsed_ms: Arc<AtomicU64>,
    next_id: u64,
}

impl Server {
    async fn start(bin: &str, base: &str, token: &str) -> BenchResult<Self> {
        let mut command = Command::new(bin);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("OPENGIST") {
                command.env_remove(key);
            }
        }
        command
            .env("OPENGIST_URL", base)
            .env("OPENGIST_TOKEN", token)
            // One debug line per Opengist request: how requests are counted.
            .env("RUST_LOG", "warn,opengist_mcp::opengist=debug")
            .env_remove("ELICITATION")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?).lines();
        let requests = Arc::new(AtomicU64::new(0));
        let last_elapsed_ms = Arc::new(AtomicU64::new(0));
        let (counted, elapsed) = (Arc::clone(&requests), Arc::clone(&last_elapsed_ms));
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                // Both REST ("opengist request") and git ("opengist git request") requests.
                if line.contains("opengist request") || line.contains("opengist git request") {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let ms = line
                        .split("elapsed_ms=")
                        .nth(1)
                        .and_then(|rest| rest.split(' ').next())
                        .and_then(|n| n.parse().ok());
                    if let Some(ms) = ms {
                        elapsed.store(ms, Ordering::SeqCst);
                    }
                }
            }
        });
        let mut server = Self {
            child,
            stdin,
            stdout,
            requests,
            last_elapsed_ms,
            next_id: 1,
        };
        server
            .call_raw(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                }),
            )
            .await?;
        server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(server)
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    async fn send(&mut self, message: &Value) -> BenchResult<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.stdin.write_all(&line).await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn call_raw(&mut self, method: &str, params: Value) -> BenchResult<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let line = self
                .stdout
                .next_line()
                .await?
                .ok_or("the server closed its stdout")?;
            let message: Value = serde_json::from_str(&line)?;
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}").into());
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    }

    /// A tool call's structured result; a tool error is an error.
    async fn tool(&mut self, name: &str, arguments: Value) -> BenchResult<Value> {
        let result = self
            .call_raw("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(format!("{name}: {result}").into());
        }
        Ok(result
            .get("structuredContent")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Opengist requests made so far (after the log lines of the last call are in).
    async fn requests(&self) -> u64 {
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.requests.load(Ordering::SeqCst)
    }
}

/// Samples a process's RSS every 5 ms until stopped; returns the peak.
struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&peak));
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                if let Some(kib) = rss_kib(pid) {
                    p.fetch_max(kib, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Self {
            stop,
            peak,
            handle: Some(handle),
        }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.peak.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------------------------

/// Opengist's own throughput for `GET /api/gists/:id` at each concurrency.
async fn opengist_concurrency(og: &Arc<Opengist>, ids: &[String]) -> BenchResult<()> {
    println!(
        "\nOpengist alone: {} gist reads (GET /api/gists/:id) at each concurrency (load {})",
        ids.len(),
        load_average()
    );
    println!("  in flight | wall ms | reads/s | median read ms");
    for &level in &CONCURRENCY_LEVELS {
        let started = Instant::now();
        let latencies = futures::stream::iter(ids.iter().cloned())
            .map(|id| {
                let og = Arc::clone(og);
                async move {
                    let t = Instant::now();
                    og.get(&format!("/api/gists/{id}"))
                        .await
                        .map(|_| t.elapsed())
                }
            })
            .buffer_unordered(level)
            .collect::<Vec<_>>()
            .await;
        let wall = started.elapsed().as_secs_f64();
        let ms: Vec<f64> = latencies
            .into_iter()
            .filter_map(Result::ok)
            .map(|d| d.as_secs_f64() * 1000.0)
            .collect();
        println!(
            "  {level:>9} | {:>7.0} | {:>7.0} | {:>6.1}",
            wall * 1000.0,
            ids.len() as f64 / wall,
            median(&ms)
        );
    }
    Ok(())
}

const KIND_LABELS: [&str; 3] = ["metadata", "filenames (default)", "content"];

fn search_args(kind: usize) -> Value {
    let fields = match kind {
        0 => Some(json!(["title", "description", "topics", "owner"])),
        2 => Some(json!(["content"])),
        _ => None,
    };
    let mut args = json!({"query": QUERY, "max_pages": 20});
    if let Some(f) = fields {
        args["fields"] = f;
    }
    args
}

/// First and repeated searches of one kind on a fresh server.
async fn bench_search(
    label: &str,
    bin: &str,
    og: &Opengist,
    kind: usize,
) -> BenchResult<(f64, f64)> {
    let mut server = Server::start(bin, &og.base, &og.token).await?;
    let pid = server.pid();
    let idle = rss_kib(pid).unwrap_or(0);
    let sampler = RssSampler::start(pid);
    let mut runs = Vec::new();
    let mut scanned = Value::Null;
    for _ in 0..=REPEATS {
        let before = server.requests().await;
        let started = Instant::now();
        let out = server.tool("search_gists", search_args(kind)).await?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let made = server.requests().await - before;
        scanned = out.get("scanned").cloned().unwrap_or(Value::Null);
        if let Some(reason) = out.get("stop_reason").and_then(Value::as_str)
            && runs.is_empty()
        {
            println!("      ({label}: stopped early: {reason})");
        }
        runs.push((ms, made));
    }
    let peak = sampler.finish();
    let after = rss_kib(pid).unwrap_or(0);
    let (first, first_requests) = runs[0];
    let repeats: Vec<f64> = runs[1..].iter().map(|r| r.0).collect();
    let repeat_requests: Vec<u64> = runs[1..].iter().map(|r| r.1).collect();
    let repeat = median(&repeats);
    println!(
        "    {label:<8} {:<20} first {:>8.1} ms ({:>4} req) | repeat median {:>7.1} ms ({:?} req) = {:>5.1}% of first | RSS idle {:.1}, peak {:.1}, after {:.1} MiB | scanned {}",
        KIND_LABELS[kind],
        first,
        first_requests,
        repeat,
        repeat_requests,
        repeat / first * 100.0,
        mib(idle),
        mib(peak),
        mib(after),
        scanned
    );
    Ok((first, repeat))
}

/// Added latency of a tool over the direct GET, interleaved call by call.
async fn bench_added(
    label: &str,
    bin: &str,
    og: &Opengist,
    ids: &[String],
    pairs: usize,
) -> BenchResult<()> {
    let mut server = Server::start(bin, &og.base, &og.token).await?;
    // The head sha and first file of each gist used, for get_gist_file.
    let mut targets = Vec::new();
    for id in ids.iter().take(20) {
        let detail = og.get(&format!("/api/gists/{id}")).await?;
        let sha = detail
            .pointer("/commits/0/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let file = detail
            .get("files")
            .and_then(Value::as_object)
            .and_then(|f| f.keys().next().cloned())
            .unwrap_or_default();
        targets.push((id.clone(), sha, file));
    }
    // Warm both paths (connections, allocator), and read each revision once: a revision read
    // by full sha is kept for good, so the timed `get_gist_file sha` calls are cache hits.
    for (id, sha, file) in &targets {
        og.get(&format!("/api/gists/{id}")).await?;
        server.tool("get_gist", json!({"gist_id": id})).await?;
        server
            .tool(
                "get_gist_file",
                json!({"gist_id": id, "filename": file, "sha": sha}),
            )
            .await?;
    }
    // The floor: a tools/call answered without any Opengist request (an argument error).
    let mut floor = Vec::new();
    for _ in 0..pairs {
        let t = Instant::now();
        server
            .call_raw(
                "tools/call",
                json!({"name": "get_gist", "arguments": {"gist_id": "not-a-gist"}}),
            )
            .await?;
        floor.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "    {label:<8} floor: a tools/call answered with no Opengist request, median {:.3} ms, p90 {:.3} ms",
        median(&floor),
        percentile(&floor, 90.0)
    );
    let cases: [(&str, &str); 3] = [
        ("get_gist", "GET /api/gists/:id"),
        ("get_gist_file", "GET /api/gists/:id"),
        ("get_gist_file sha", "GET /api/gists/:id/:sha"),
    ];
    for (case, direct_path) in cases {
        let mut direct = Vec::new();
        let mut tool = Vec::new();
        let mut diffs = Vec::new();
        let mut opengist_ms = Vec::new();
        let requests_before = server.requests().await;
        let pid = server.pid();
        let cpu_before = cpu_ns(pid);
        for i in 0..pairs {
            let (id, sha, file) = &targets[i % targets.len()];
            let path = if case.ends_with("sha") {
                format!("/api/gists/{id}/{sha}")
            } else {
                format!("/api/gists/{id}")
            };
            let args = match case {
                "get_gist" => json!({"gist_id": id}),
                "get_gist_file" => json!({"gist_id": id, "filename": file}),
                _ => json!({"gist_id": id, "filename": file, "sha": sha}),
            };
            // Alternate which goes first, so neither always meets a warmer Opengist.
            let (d, t) = if i % 2 == 0 {
                let t0 = Instant::now();
                og.get(&path).await?;
                let d = t0.elapsed();
                let t1 = Instant::now();
                server
                    .tool(case.split(' ').next().unwrap_or(case), args)
                    .await?;
                (d, t1.elapsed())
            } else {
                let t1 = Instant::now();
                server
                    .tool(case.split(' ').next().unwrap_or(case), args)
                    .await?;
                let t = t1.elapsed();
                let t0 = Instant::now();
                og.get(&path).await?;
                (t0.elapsed(), t)
            };
            let (d, t) = (d.as_secs_f64() * 1000.0, t.as_secs_f64() * 1000.0);
            direct.push(d);
            tool.push(t);
            diffs.push(t - d);
            // The server logs its request before it answers; let that line arrive.
            tokio::time::sleep(Duration::from_millis(2)).await;
            opengist_ms.push(server.last_elapsed_ms.swap(u64::MAX, Ordering::SeqCst));
        }
        // Where the slowest tenth of the pairs lost their time: in Opengist's answer to the
        // server (its own log: request sent to headers, of the last request the call made) or
        // in the server and stdio.
        let mut order: Vec<usize> = (0..diffs.len()).collect();
        order.sort_by(|a, b| diffs[*b].total_cmp(&diffs[*a]));
        let slow: Vec<usize> = order.iter().take(pairs.div_ceil(10)).copied().collect();
        let logged = |set: &[usize]| -> Vec<f64> {
            set.iter()
                .filter(|i| opengist_ms[**i] != u64::MAX)
                .map(|i| opengist_ms[*i] as f64)
                .collect()
        };
        let all: Vec<usize> = (0..diffs.len()).collect();
        let requests_per_call =
            server.requests().await.saturating_sub(requests_before) as f64 / pairs.max(1) as f64;
        let slow_direct: Vec<f64> = slow.iter().map(|i| direct[*i]).collect();
        let slow_tool: Vec<f64> = slow.iter().map(|i| tool[*i]).collect();
        println!(
            "    {label:<8} {case:<18} direct ({direct_path}) median {:>6.2} ms | tool median {:>6.2} ms | added: median of pair differences {:>+6.2} ms, p25 {:>+6.2}, p90 {:>+6.2}; p10 tool - p10 direct {:>+6.2} ms; server CPU per call {:.3} ms; Opengist requests per call {:.2} ({pairs} pairs)",
            median(&direct),
            median(&tool),
            median(&diffs),
            percentile(&diffs, 25.0),
            percentile(&diffs, 90.0),
            percentile(&tool, 10.0) - percentile(&direct, 10.0),
            cpu_ns(pid).saturating_sub(cpu_before) as f64 / 1e6 / pairs.max(1) as f64,
            requests_per_call
        );
        let (slow_logged, all_logged) = (logged(&slow), logged(&all));
        if !all_logged.is_empty() {
            println!(
                "    {label:<8} {case:<18}   slowest tenth of pairs: direct median {:.2} ms, tool median {:.2} ms, Opengist's answer to the server (its log, request to headers) median {:.0} ms against {:.0} ms over all pairs",
                median(&slow_direct),
                median(&slow_tool),
                median(&slow_logged),
                median(&all_logged)
            );
        }
    }
    Ok(())
}

/// `resources/list` over the whole list (every page, following `nextCursor`), first on a
/// fresh server and then repeated; and `resources/read` of a file (at head, and at a full sha)
/// against a direct GET of the same raw file, interleaved call by call.
async fn bench_resources(
    label: &str,
    bin: &str,
    og: &Opengist,
    ids: &[String],
    pairs: usize,
) -> BenchResult<()> {
    let mut server = Server::start(bin, &og.base, &og.token).await?;
    let pid = server.pid();
    let mut walks = Vec::new();
    for _ in 0..=REPEATS {
        let before = server.requests().await;
        let started = Instant::now();
        let (mut cursor, mut pages, mut resources) = (None::<String>, 0usize, 0usize);
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = server.call_raw("resources/list", params).await?;
            pages += 1;
            resources += page
                .get("resources")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if cursor.is_none() || pages > 1000 {
                break;
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        walks.push((ms, server.requests().await - before, pages, resources));
    }
    let (first, first_req, pages, resources) = walks[0];
    let repeats: Vec<f64> = walks[1..].iter().map(|w| w.0).collect();
    let repeat_req: Vec<u64> = walks[1..].iter().map(|w| w.1).collect();
    println!(
        "    {label:<8} resources/list, all {pages} pages ({resources} resources of {} gists): first {first:>8.1} ms ({first_req} req) | repeat median {:>7.1} ms ({repeat_req:?} req) = {:>5.1}% of first | RSS after {:.1} MiB",
        ids.len(),
        median(&repeats),
        median(&repeats) / first * 100.0,
        mib(rss_kib(pid).unwrap_or(0))
    );
    let mut targets = Vec::new();
    for id in ids.iter().take(20) {
        let detail = og.get(&format!("/api/gists/{id}")).await?;
        let sha = detail
            .pointer("/commits/0/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let file = detail
            .get("files")
            .and_then(Value::as_object)
            .and_then(|f| f.keys().next().cloned())
            .unwrap_or_default();
        targets.push((id.clone(), sha, file));
    }
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    for (id, sha, file) in &targets {
        og.get_bytes(&format!("/api/gists/{id}/files/{sha}/{}", encode(file)))
            .await?;
        let uri = format!("opengist://gists/{id}/{sha}/{}", encode(file));
        server
            .call_raw("resources/read", json!({"uri": uri}))
            .await?;
    }
    for case in ["head", "full sha"] {
        let (mut direct, mut read, mut diffs) = (Vec::new(), Vec::new(), Vec::new());
        let requests_before = server.requests().await;
        for i in 0..pairs {
            let (id, sha, file) = &targets[i % targets.len()];
            let path = format!("/api/gists/{id}/files/{sha}/{}", encode(file));
            let uri = if case == "head" {
                format!("opengist://gists/{id}/{}", encode(file))
            } else {
                format!("opengist://gists/{id}/{sha}/{}", encode(file))
            };
            let (d, t) = if i % 2 == 0 {
                let t0 = Instant::now();
                og.get_bytes(&path).await?;
                let d = t0.elapsed();
                let t1 = Instant::now();
                server
                    .call_raw("resources/read", json!({"uri": uri}))
                    .await?;
                (d, t1.elapsed())
            } else {
                let t1 = Instant::now();
                server
                    .call_raw("resources/read", json!({"uri": uri}))
                    .await?;
                let t = t1.elapsed();
                let t0 = Instant::now();
                og.get_bytes(&path).await?;
                (t0.elapsed(), t)
            };
            let (d, t) = (d.as_secs_f64() * 1000.0, t.as_secs_f64() * 1000.0);
            direct.push(d);
            read.push(t);
            diffs.push(t - d);
        }
        let per_call =
            server.requests().await.saturating_sub(requests_before) as f64 / pairs.max(1) as f64;
        println!(
            "    {label:<8} resources/read {case:<9} direct (GET /api/gists/:id/files/:sha/:name) median {:>6.2} ms | read median {:>6.2} ms | added: median of pair differences {:>+6.2} ms, p25 {:>+6.2}, p90 {:>+6.2}; Opengist requests per read {per_call:.2} ({pairs} pairs)",
            median(&direct),
            median(&read),
            median(&diffs),
            percentile(&diffs, 25.0),
            percentile(&diffs, 90.0),
        );
    }
    Ok(())
}

/// Which parts to measure (`OPENGIST_BENCH_PARTS`, default all: search,added,resources).
fn part(name: &str) -> bool {
    std::env::var("OPENGIST_BENCH_PARTS")
        .map(|parts| parts.split(',').any(|p| p.trim() == name))
        .unwrap_or(true)
}

fn binaries() -> Vec<(String, String)> {
    let mut out = vec![("current".to_owned(), BIN.to_owned())];
    if let Ok(before) = std::env::var("OPENGIST_MCP_BENCH_BEFORE")
        && !before.trim().is_empty()
    {
        out.push(("before".to_owned(), before));
    }
    out
}

async fn run(og: Opengist) -> BenchResult<()> {
    let sizes: Vec<usize> = std::env::var("OPENGIST_BENCH_SIZES")
        .unwrap_or_else(|_| "100,300,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let pairs: usize = std::env::var("OPENGIST_BENCH_PAIRS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let og = Arc::new(og);
    let bins = binaries();
    println!(
        "opengist-mcp against Opengist at {} ({} cores, load {}); binaries: {}",
        og.base,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average(),
        bins.iter()
            .map(|(l, p)| format!("{l}={p}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut probed = false;
    for &n in &sizes {
        println!("\n== {n} gists (load {}) ==", load_average());
        let ids = og.seed_to(n).await?;
        println!("  the token owner's list holds {} gists", ids.len());
        if !probed && n >= 300 {
            opengist_concurrency(&og, &ids[..300.min(ids.len())]).await?;
            probed = true;
        }
        if part("search") {
            println!(
                "  search_gists, query matching nothing, max_pages=20, fresh server per kind:"
            );
            for kind in 0..KIND_LABELS.len() {
                for (label, bin) in &bins {
                    bench_search(label, bin, &og, kind).await?;
                }
            }
        }
        if part("added") {
            println!("  added latency over a direct GET (kept-alive), interleaved:");
            for (label, bin) in &bins {
                bench_added(label, bin, &og, &ids, pairs).await?;
            }
        }
        if part("resources") {
            println!(
                "  resources (fresh server), and resources/read over a direct GET of the raw file:"
            );
            for (label, bin) in &bins {
                if let Err(e) = bench_resources(label, bin, &og, &ids, pairs).await {
                    println!("    {label:<8} resources not measured: {e}");
                }
            }
        }
    }
    println!("\nload at the end: {}", load_average());
    Ok(())
}

fn main() {
    let (Ok(url), Ok(token)) = (
        std::env::var("OPENGIST_BENCH_URL"),
        std::env::var("OPENGIST_BENCH_TOKEN"),
    ) else {
        println!(
            "opengist benchmark SKIPPED: no Opengist to measure against (OPENGIST_BENCH_URL and OPENGIST_BENCH_TOKEN are unset). `bash scripts/bench-opengist` provisions one and runs this."
        );
        return;
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("opengist benchmark: no runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(async move { run(Opengist::new(url, token)?).await });
    if let Err(e) = result {
        eprintln!("opengist benchmark failed: {e}");
        std::process::exit(1);
    }
}
