//! What the guard costs. A bench binary (`harness = false`) that prints its figures:
//! `cargo bench --bench guard`.
//!
//! 1. Sealing and opening one `requestState` (HMAC-SHA256, base64url), per operation.
//! 2. The guard's overhead on a call it exempts (`Guard::clear(call, target, false)`):
//!    - in isolation (2a), against the same body run without the guard, with a `GuardCall`
//!      built from a live server's request context;
//!    - end to end (2b), through an rmcp client and server in process over
//!      `tokio::io::duplex`: an unguarded tool, the same body behind `GuardCall` +
//!      `Guard::clear`, and the same body behind `#[guarded(when = ..)]`, measured
//!      interleaved on one server.
//! 3. For scale: issuing a two-call token (fingerprint, seal, text) for a client without
//!    dialogs.
//! 4. The cost of the shared store: a whole guarded round (a token issued, then quoted and
//!    spent) with the in-memory store against the Redis store (`ask-first-redis`) on a real
//!    `redis-server` on loopback, without persistence and with an fsync'd append-only file;
//!    the median added latency per round is the paired difference. Needs `redis-server` on
//!    PATH (`scripts/replica-env install`), or `GUARD_BENCH_REDIS_URL`; skipped otherwise.
//! 5. The re-check after a yes in a pushed dialog, per guarded call: the re-read itself (for
//!    `examples/notes`' delete, the store's text length) apart from what the guard adds to
//!    it: the binding's and the rendered question's fingerprints of the target shown and of
//!    the target read again, compared (goal < 1 ms beyond the re-read).
//!
//! Figures are medians over samples; comparisons are ratios measured in the same run. Targets
//! (reported, never asserted): seal+open < 20 µs, exempt overhead < 5 µs per call. Set
//! `GUARD_BENCH_QUICK=1` for a fast smoke run with fewer iterations.

#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ask_first::protocol::GuardCall;
use ask_first::{Clearance, Guard, HasGuard, Id, InputError, Resolve, Target, guarded};
use ask_first_core::Fingerprint;
use ask_first_core::seal::{self, SealKey, SealKind, SealScope};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, Implementation, NumberOrString, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

// The example's conditional write: the target every guarded variant clears.
use notes::WriteNote;

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    note_id: String,
    text: String,
    shared: bool,
    #[allow(dead_code, reason = "read by the guard from the raw arguments")]
    confirm_token: Option<String>,
}

impl Resolve<BenchServer, WriteArgs> for WriteNote {
    async fn resolve(_server: &BenchServer, args: &WriteArgs) -> Result<Self, InputError> {
        target(args)
    }
}

/// A write's shown facts all come from its arguments: after a yes there is nothing to re-read.
fn unchanged(shown: WriteNote) -> std::future::Ready<Result<WriteNote, InputError>> {
    std::future::ready(Ok(shown))
}

fn target(args: &WriteArgs) -> Result<WriteNote, InputError> {
    Ok(WriteNote {
        id: Id::new(&args.note_id).map_err(|error| InputError::new(error.to_string()))?,
        text: args.text.clone(),
        shared: args.shared,
    })
}

#[derive(Clone)]
struct BenchServer {
    guard: Guard,
    notes: Arc<Mutex<BTreeMap<String, String>>>,
}

impl HasGuard for BenchServer {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl BenchServer {
    /// The body every variant runs.
    fn store(&self, id: &str, text: String) -> CallToolResult {
        self.notes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(id.to_owned(), text);
        CallToolResult::success(vec![ContentBlock::text(format!("wrote {id}"))])
    }
}

#[tool_router]
impl BenchServer {
    #[tool(description = "The body, unguarded.")]
    async fn plain_write(
        &self,
        Parameters(args): Parameters<WriteArgs>,
    ) -> Result<CallToolResponse, ErrorData> {
        let target = match target(&args) {
            Ok(target) => target,
            Err(rejection) => return Ok(rejection.into_response()),
        };
        Ok(self.store(target.id.as_str(), target.text).into())
    }

    #[tool(description = "The body behind GuardCall + Guard::clear.")]
    async fn engine_write(
        &self,
        call: GuardCall,
        Parameters(args): Parameters<WriteArgs>,
    ) -> Result<CallToolResponse, ErrorData> {
        let target = match target(&args) {
            Ok(target) => target,
            Err(rejection) => return Ok(rejection.into_response()),
        };
        let needs_approval = target.is_shared();
        Ok(
            match self
                .guard
                .clear(call, target, needs_approval, unchanged)
                .await
            {
                Ok(clearance) => {
                    let target = clearance.into_target();
                    self.store(target.id.as_str(), target.text).into()
                }
                Err(interruption) => interruption.into_response(),
            },
        )
    }

    #[guarded(when = "is_shared")]
    #[tool(description = "The body behind #[guarded].")]
    async fn macro_write(
        &self,
        Parameters(_args): Parameters<WriteArgs>,
        clearance: Clearance<WriteNote>,
    ) -> Result<CallToolResult, ErrorData> {
        let target = clearance.into_target();
        Ok(self.store(target.id.as_str(), target.text))
    }
}

#[tool_handler(name = "guard-bench")]
impl ServerHandler for BenchServer {}

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

struct Plan {
    samples: usize,
    seal_iters: usize,
    clear_iters: usize,
    call_iters: usize,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("GUARD_BENCH_QUICK").is_some() {
            Self {
                samples: 5,
                seal_iters: 2_000,
                clear_iters: 20_000,
                call_iters: 100,
            }
        } else {
            Self {
                samples: 21,
                seal_iters: 100_000 / 21 + 1,
                clear_iters: 200_000,
                call_iters: 1_000,
            }
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn per_op(elapsed: Duration, iters: usize) -> f64 {
    elapsed.as_nanos() as f64 / iters as f64
}

fn show(ns: f64) -> String {
    let size = ns.abs();
    if size >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if size >= 1_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

fn report(name: &str, samples: &mut [f64]) -> f64 {
    let med = median(samples);
    let (lo, hi) = (samples[0], samples[samples.len() - 1]);
    println!(
        "  {name:<50} median {:>10}   (min {}, max {})",
        show(med),
        show(lo),
        show(hi)
    );
    med
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn bench_seal(plan: &Plan) {
    println!(
        "1. requestState seal + open ({} samples x {} ops)",
        plan.samples, plan.seal_iters
    );
    let key = SealKey::random();
    let note = WriteNote {
        id: Id::new("n1").expect("id"),
        text: "first note".to_owned(),
        shared: true,
    };
    let fingerprint = note.fingerprint();
    let shown = Fingerprint::of_question(&note.question());
    let scope = SealScope {
        operation: WriteNote::OPERATION,
        fingerprint: &fingerprint,
        shown: &shown,
        principal: "local",
    };
    let now = now_unix();
    let expires = now + 900;
    let (mut seals, mut opens, mut both, mut prints) = (vec![], vec![], vec![], vec![]);
    for _ in 0..plan.samples {
        let start = Instant::now();
        let mut sealed = Vec::with_capacity(plan.seal_iters);
        for _ in 0..plan.seal_iters {
            sealed.push(seal::seal(
                &key,
                SealKind::RequestState,
                black_box(&scope),
                0,
                expires,
            ));
        }
        let sealing = start.elapsed();
        let start = Instant::now();
        for state in &sealed {
            let opened = seal::open(&key, SealKind::RequestState, &scope, black_box(state), now);
            assert!(opened.is_ok(), "a fresh seal opens");
        }
        let opening = start.elapsed();
        seals.push(per_op(sealing, plan.seal_iters));
        opens.push(per_op(opening, plan.seal_iters));
        both.push(per_op(sealing + opening, plan.seal_iters));

        let start = Instant::now();
        for _ in 0..plan.seal_iters {
            black_box(black_box(&note).fingerprint());
        }
        prints.push(per_op(start.elapsed(), plan.seal_iters));
    }
    report("seal", &mut seals);
    report("open", &mut opens);
    let med = report("seal + open", &mut both);
    report("target fingerprint (for scale)", &mut prints);
    println!(
        "  -> seal+open {} per op; target < 20 µs: {}",
        show(med),
        if med < 20_000.0 { "met" } else { "NOT met" }
    );
}

/// A server and a client connected over a duplex pipe, plus the server side's peer.
struct Pair {
    server: BenchServer,
    server_peer: rmcp::Peer<RoleServer>,
    client: RunningService<RoleClient, ClientConfig>,
}

async fn connect(guard: Guard) -> Pair {
    let server = BenchServer {
        guard,
        notes: Arc::default(),
    };
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let serving = server.clone();
    let (peer_tx, peer_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let running = serving.serve(server_io).await.expect("server handshake");
        let _ = peer_tx.send(running.peer().clone());
        let _ = running.waiting().await;
    });
    // A legacy client that declares no elicitation: an exempt call never asks anyway, and a
    // guarded one takes the token path (measured in part 3).
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("guard-bench", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
    .serve(client_io)
    .await
    .expect("client handshake");
    let server_peer = peer_rx.await.expect("server peer");
    Pair {
        server,
        server_peer,
        client,
    }
}

fn args(shared: bool) -> WriteArgs {
    WriteArgs {
        note_id: "n1".to_owned(),
        text: "first note".to_owned(),
        shared,
        confirm_token: None,
    }
}

async fn bench_clear_in_isolation(plan: &Plan, pair: &Pair) {
    println!(
        "2a. exempt call in isolation ({} samples x {} calls)",
        plan.samples, plan.clear_iters
    );
    let context = RequestContext::new(NumberOrString::Number(1), pair.server_peer.clone());
    let server = &pair.server;
    let guard = &server.guard;
    let (mut plain, mut guarded, mut deltas) = (vec![], vec![], vec![]);
    for _ in 0..plan.samples {
        let start = Instant::now();
        for _ in 0..plan.clear_iters {
            let target = target(black_box(&args(false))).expect("valid");
            black_box(server.store(target.id.as_str(), target.text));
        }
        let p = per_op(start.elapsed(), plan.clear_iters);

        let start = Instant::now();
        for _ in 0..plan.clear_iters {
            let target = target(black_box(&args(false))).expect("valid");
            let call = GuardCall::new(context.clone(), "engine_write", None, None, None);
            let needs_approval = target.is_shared();
            let Ok(clearance) = guard.clear(call, target, needs_approval, unchanged).await else {
                unreachable!("an exempt call is always cleared");
            };
            let target = clearance.into_target();
            black_box(server.store(target.id.as_str(), target.text));
        }
        let g = per_op(start.elapsed(), plan.clear_iters);
        plain.push(p);
        guarded.push(g);
        deltas.push(g - p);
    }
    let p = report("body alone", &mut plain);
    let g = report(
        "GuardCall::new + Guard::clear(.., false) + body",
        &mut guarded,
    );
    let d = report("overhead per call (paired delta)", &mut deltas);
    println!(
        "  -> overhead {} per call (ratio {:.2}x); target < 5 µs: {}",
        show(d),
        g / p,
        if d < 5_000.0 { "met" } else { "NOT met" }
    );
}

async fn call(client: &RunningService<RoleClient, ClientConfig>, tool: &'static str, shared: bool) {
    let arguments = json!({ "note_id": "n1", "text": "first note", "shared": shared });
    let serde_json::Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("call");
    if !shared {
        assert_ne!(result.is_error, Some(true), "{tool} ran: {result:?}");
    }
    black_box(result);
}

async fn bench_over_duplex(plan: &Plan, pair: &Pair) {
    println!(
        "2b. exempt call end to end over duplex ({} samples x {} calls per tool, interleaved)",
        plan.samples, plan.call_iters
    );
    let client = &pair.client;
    for tool in ["plain_write", "engine_write", "macro_write"] {
        for _ in 0..plan.call_iters / 10 + 1 {
            call(client, tool, false).await;
        }
    }
    let (mut plain, mut engine, mut generated) = (vec![], vec![], vec![]);
    let (mut engine_delta, mut macro_delta) = (vec![], vec![]);
    for _ in 0..plan.samples {
        let time = async |tool| {
            let start = Instant::now();
            for _ in 0..plan.call_iters {
                call(client, tool, false).await;
            }
            per_op(start.elapsed(), plan.call_iters)
        };
        let p = time("plain_write").await;
        let e = time("engine_write").await;
        let m = time("macro_write").await;
        plain.push(p);
        engine.push(e);
        generated.push(m);
        engine_delta.push(e - p);
        macro_delta.push(m - p);
    }
    let p = report("unguarded tool", &mut plain);
    let e = report("GuardCall + Guard::clear, exempt", &mut engine);
    let m = report("#[guarded(when = ..)], exempt", &mut generated);
    let ed = report("engine overhead per call (paired delta)", &mut engine_delta);
    let md = report("macro overhead per call (paired delta)", &mut macro_delta);
    println!(
        "  -> ratio engine/unguarded {:.3}x, macro/unguarded {:.3}x; overhead {} / {}; target < 5 µs: {}",
        e / p,
        m / p,
        show(ed),
        show(md),
        if ed.max(md) < 5_000.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}

async fn bench_token(plan: &Plan, pair: &Pair) {
    println!(
        "3. token issued to a client without dialogs, in isolation ({} samples x {} calls)",
        plan.samples, plan.seal_iters
    );
    let context = RequestContext::new(NumberOrString::Number(2), pair.server_peer.clone());
    let guard = &pair.server.guard;
    let mut issued = vec![];
    for _ in 0..plan.samples {
        let start = Instant::now();
        for _ in 0..plan.seal_iters {
            let target = target(&args(true)).expect("valid");
            let call = GuardCall::new(context.clone(), "engine_write", None, None, None);
            let refused = guard.clear(call, target, true, unchanged).await;
            assert!(
                refused.is_err(),
                "no dialog and no token: a token is issued"
            );
            black_box(refused.err());
        }
        issued.push(per_op(start.elapsed(), plan.seal_iters));
    }
    report("Guard::clear(.., true) -> token text", &mut issued);
}

/// A `redis-server` this bench started, killed by its PID when dropped.
struct BenchRedis {
    child: Option<std::process::Child>,
    url: String,
    dir: Option<std::path::PathBuf>,
}

impl Drop for BenchRedis {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn start_redis(fsync: bool) -> Option<BenchRedis> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .ok()?
        .port();
    let dir = std::env::temp_dir().join(format!("guard-bench-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let persistence: &[&str] = if fsync {
        &["--appendonly", "yes", "--appendfsync", "always"]
    } else {
        &["--appendonly", "no"]
    };
    let child = std::process::Command::new("redis-server")
        .args([
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--save",
            "",
        ])
        .args(persistence)
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let redis = BenchRedis {
        child: Some(child),
        url: format!("redis://127.0.0.1:{port}/0"),
        dir: Some(dir),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(redis)
}

fn token_of(interruption: ask_first::protocol::Interruption) -> String {
    let CallToolResponse::Complete(result) = interruption.into_response() else {
        unreachable!("a token is a complete result")
    };
    let text: String = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect();
    text.lines()
        .find_map(|line| line.strip_prefix("confirm_token: "))
        .map(|token| token.trim().to_owned())
        .unwrap_or_else(|| unreachable!("the token text carries the token"))
}

/// One guarded round on `guard`: a token issued, quoted, spent, approved.
async fn round(guard: &Guard, context: &RequestContext<RoleServer>) {
    let call = GuardCall::new(context.clone(), "engine_write", None, None, None);
    let Err(issued) = guard
        .clear(call, target(&args(true)).expect("valid"), true, unchanged)
        .await
    else {
        unreachable!("no dialog: a token is issued")
    };
    let token = token_of(issued);
    let call = GuardCall::new(context.clone(), "engine_write", None, None, Some(token));
    let cleared = guard
        .clear(call, target(&args(true)).expect("valid"), true, unchanged)
        .await;
    assert!(cleared.is_ok(), "a fresh token clears the call");
    black_box(cleared.ok());
}

async fn bench_store(plan: &Plan, pair: &Pair) {
    let context = RequestContext::new(NumberOrString::Number(3), pair.server_peer.clone());
    let mut servers = Vec::new();
    if let Ok(url) = std::env::var("GUARD_BENCH_REDIS_URL") {
        servers.push((
            "Redis at GUARD_BENCH_REDIS_URL".to_owned(),
            BenchRedis {
                child: None,
                url,
                dir: None,
            },
        ));
    } else {
        for (label, fsync) in [
            ("Redis on loopback, no persistence", false),
            ("Redis on loopback, appendfsync always", true),
        ] {
            match start_redis(fsync) {
                Some(redis) => servers.push((label.to_owned(), redis)),
                None => {
                    println!(
                        "4. store cost: SKIPPED, no redis-server could be started (install it with scripts/replica-env install, or set GUARD_BENCH_REDIS_URL)"
                    );
                    return;
                }
            }
        }
    }
    let rounds = plan.call_iters;
    println!(
        "4. a guarded round (token issued, quoted, spent), in-memory vs Redis store ({} samples x {} rounds)",
        plan.samples, rounds
    );
    let memory = Guard::builder("guard-bench").build();
    for (label, redis) in &servers {
        let store = match ask_first_redis::RedisNonceStore::open(&redis.url) {
            Ok(store) => store,
            Err(error) => {
                println!("  {label}: SKIPPED ({error})");
                continue;
            }
        };
        let shared = Guard::builder("guard-bench")
            .nonce_store(Arc::new(store))
            .build();
        for _ in 0..rounds / 10 + 1 {
            round(&memory, &context).await;
            round(&shared, &context).await;
        }
        let (mut in_memory, mut on_redis, mut added) = (vec![], vec![], vec![]);
        for _ in 0..plan.samples {
            let start = Instant::now();
            for _ in 0..rounds {
                round(&memory, &context).await;
            }
            let m = per_op(start.elapsed(), rounds);
            let start = Instant::now();
            for _ in 0..rounds {
                round(&shared, &context).await;
            }
            let r = per_op(start.elapsed(), rounds);
            in_memory.push(m);
            on_redis.push(r);
            added.push(r - m);
        }
        println!("  {label}:");
        let m = report("round, in-memory store", &mut in_memory);
        let r = report("round, Redis store", &mut on_redis);
        let a = report("added by Redis per round (paired delta)", &mut added);
        println!(
            "  -> Redis adds {} per guarded round ({:.1}x the in-memory round)",
            show(a),
            r / m
        );
    }
}

/// What the guard computes per fingerprint pair: the binding's and the rendered question's, as
/// `Approval::of` does (the binding through `Target::fingerprint`'s default, which is the same
/// function the guard calls).
fn approval_of<T: Target>(target: &T) -> (Fingerprint, Fingerprint) {
    (
        target.fingerprint(),
        Fingerprint::of_question(&target.question()),
    )
}

fn bench_recheck(plan: &Plan) {
    println!(
        "5. the re-check after a yes, per guarded call ({} samples x {} calls)",
        plan.samples, plan.seal_iters
    );
    let store = notes::Store::seeded();
    let id = Id::new("n1").expect("id");
    let reread = |store: &notes::Store| notes::DeleteNote {
        id: id.clone(),
        bytes: store.text_len(&id).unwrap_or(0) as u64,
    };
    let (mut rereads, mut checks) = (vec![], vec![]);
    for _ in 0..plan.samples {
        let start = Instant::now();
        for _ in 0..plan.seal_iters {
            black_box(reread(black_box(&store)));
        }
        rereads.push(per_op(start.elapsed(), plan.seal_iters));
        let shown = reread(&store);
        let current = reread(&store);
        let start = Instant::now();
        for _ in 0..plan.seal_iters {
            let same = approval_of(black_box(&shown)) == approval_of(black_box(&current));
            assert!(black_box(same), "an unchanged note reads the same");
        }
        checks.push(per_op(start.elapsed(), plan.seal_iters));
    }
    report("re-read (notes: the store's text length)", &mut rereads);
    let med = report(
        "re-check beyond the re-read (2 x binding + question fingerprints, compared)",
        &mut checks,
    );
    println!(
        "  -> the re-check adds {} per guarded call beyond the re-read; goal < 1 ms: {}",
        show(med),
        if med < 1_000_000.0 { "met" } else { "NOT met" }
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let plan = Plan::from_env();
    println!("guard benchmark (medians; lower is better)");
    bench_seal(&plan);
    bench_recheck(&plan);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let pair = connect(Guard::builder("guard-bench").build()).await;
        bench_clear_in_isolation(&plan, &pair).await;
        bench_over_duplex(&plan, &pair).await;
        bench_token(&plan, &pair).await;
        bench_store(&plan, &pair).await;
        let _ = pair.client.cancel().await;
    });
}
