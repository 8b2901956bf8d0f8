//! What the guard costs, per operation, on divan: `cargo bench --bench guard` (one group:
//! `cargo bench --bench guard -- seal`; fewer samples: `-- --sample-count 10`).
//!
//! - `seal`: sealing and opening one `requestState` (HMAC-SHA256, base64url), and a target's
//!   fingerprint for scale. Goal: seal + open < 20 µs.
//! - `recheck`: the re-check after a yes in a pushed dialog, per guarded call: the re-read
//!   itself (for `examples/notes`' delete, the store's text length) apart from what the guard
//!   adds to it (the binding's and the rendered question's fingerprints of the target shown and
//!   of the target read again, compared). Goal: < 1 ms beyond the re-read.
//! - `exempt`: the guard on a call it exempts (`Guard::clear(call, target, false)`), in
//!   isolation (`body_alone` against `clear_then_body`, with a `GuardCall` built from a live
//!   server's request context) and end to end (`over_duplex`: an rmcp client and server in
//!   process over `tokio::io::duplex`; an unguarded tool, the same body behind `GuardCall` +
//!   `Guard::clear`, and behind `#[guarded(when = ..)]`). Goal: < 5 µs added per call; the
//!   overhead is the difference of the medians, measured in one run.
//! - `token`: issuing a two-call token (fingerprint, seal, text) to a client without dialogs.
//! - `store`: a whole guarded round (a token issued, then quoted and spent) with the in-memory
//!   store, and with the Redis store (`ask-first-redis`) on a `redis-server` this bench starts
//!   on loopback, without persistence and with an fsync'd append-only file; what Redis adds per
//!   round is the difference of the medians. Needs `redis-server` on PATH
//!   (`scripts/replica-env install`) or `GUARD_BENCH_REDIS_URL`; divan lists the Redis rounds
//!   as ignored otherwise.
//!
//! Figures are divan's (fastest, slowest, median, mean per operation); nothing is asserted
//! about them (the machines are shared and noisy). `cargo test --benches` runs each once.

#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;

#[path = "support/finish.rs"]
mod support;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ask_first::protocol::GuardCall;
use ask_first::{Clearance, Guard, HasGuard, InputError, Resolve, Target, fact::Id, guarded};
use ask_first_core::Fingerprint;
use ask_first_core::seal::{self, SealKey, SealKind, SealScope};
use divan::Bencher;
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
use support::finish;
use tokio::runtime::Runtime;

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

fn main() {
    divan::main();
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// The runtime the in-process client and server run on (the benchmarks run on divan's one
/// thread; the runtime's tasks run while it waits on an answer).
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn note() -> WriteNote {
    WriteNote {
        id: Id::new("n1").expect("id"),
        text: "first note".to_owned(),
        shared: true,
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

/// A server and a client connected over a duplex pipe, plus the server side's peer.
struct Pair {
    server: BenchServer,
    server_peer: rmcp::Peer<RoleServer>,
    client: RunningService<RoleClient, ClientConfig>,
}

impl Pair {
    /// A request context of a live server, as a tool's `GuardCall` carries it.
    fn context(&self) -> RequestContext<RoleServer> {
        RequestContext::new(NumberOrString::Number(1), self.server_peer.clone())
    }
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
    // guarded one takes the token path.
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

// ---------------------------------------------------------------------------------------------
// The benchmarks
// ---------------------------------------------------------------------------------------------

/// Sealing and opening a `requestState`.
mod sealing {
    use super::*;

    struct Fixture {
        key: SealKey,
        fingerprint: Fingerprint,
        shown: Fingerprint,
        now: u64,
    }

    impl Fixture {
        fn new() -> Self {
            let note = note();
            Self {
                key: SealKey::random(),
                fingerprint: note.fingerprint(),
                shown: Fingerprint::of_shown(&note.question(), &note.evidence()),
                now: now_unix(),
            }
        }

        fn scope(&self) -> SealScope<'_> {
            SealScope {
                operation: WriteNote::OPERATION,
                fingerprint: &self.fingerprint,
                shown: &self.shown,
                principal: "local",
            }
        }

        fn seal(&self) -> String {
            seal::seal(
                &self.key,
                SealKind::RequestState,
                black_box(&self.scope()),
                0,
                self.now + 900,
            )
        }

        /// Opens `sealed` as the guard does a returned `requestState`.
        fn open(
            &self,
            scope: &SealScope<'_>,
            sealed: &str,
        ) -> Result<seal::Opened, seal::SealError> {
            seal::open(
                &self.key,
                SealKind::RequestState,
                scope,
                black_box(sealed),
                self.now,
            )
        }
    }

    #[divan::bench]
    fn seal(bencher: Bencher) {
        let fixture = Fixture::new();
        bencher.bench_local(|| fixture.seal());
    }

    #[divan::bench]
    fn open(bencher: Bencher) {
        let fixture = Fixture::new();
        let scope = fixture.scope();
        let sealed = fixture.seal();
        bencher.bench_local(|| {
            let opened = fixture.open(&scope, &sealed);
            assert!(opened.is_ok(), "a fresh seal opens");
            opened
        });
    }

    #[divan::bench]
    fn seal_then_open(bencher: Bencher) {
        let fixture = Fixture::new();
        let scope = fixture.scope();
        bencher.bench_local(|| {
            let sealed = fixture.seal();
            let opened = fixture.open(&scope, &sealed);
            assert!(opened.is_ok(), "a fresh seal opens");
            opened
        });
    }

    /// For scale: what the guard hashes of a target.
    #[divan::bench]
    fn target_fingerprint(bencher: Bencher) {
        let note = note();
        bencher.bench_local(|| black_box(&note).fingerprint());
    }
}

/// The re-check after a yes, per guarded call.
mod recheck {
    use super::*;

    fn reread(store: &notes::Store, id: &Id) -> notes::DeleteNote {
        notes::DeleteNote {
            id: id.clone(),
            bytes: store.text_len(id).unwrap_or(0) as u64,
        }
    }

    /// What the guard computes per fingerprint pair: the binding's and that of what is shown
    /// (the rendered question and the evidence), as `Approval::of` does (the binding through
    /// `Target::fingerprint`'s default, which is the same function the guard calls).
    fn approval_of<T: Target>(target: &T) -> (Fingerprint, Fingerprint) {
        (
            target.fingerprint(),
            Fingerprint::of_shown(&target.question(), &target.evidence()),
        )
    }

    /// The re-read itself (notes: the store's text length).
    #[divan::bench]
    fn reread_alone(bencher: Bencher) {
        let store = notes::Store::seeded();
        let id = Id::new("n1").expect("id");
        bencher.bench_local(|| reread(black_box(&store), &id));
    }

    /// Beyond the re-read: two binding and question fingerprints, compared.
    #[divan::bench]
    fn beyond_the_reread(bencher: Bencher) {
        let store = notes::Store::seeded();
        let id = Id::new("n1").expect("id");
        let shown = reread(&store, &id);
        let current = reread(&store, &id);
        bencher.bench_local(|| {
            let same = approval_of(black_box(&shown)) == approval_of(black_box(&current));
            assert!(same, "an unchanged note reads the same");
        });
    }
}

/// The guard on a call it exempts.
mod exempt {
    use super::*;

    /// The body alone, without the guard.
    #[divan::bench]
    fn body_alone(bencher: Bencher) {
        let runtime = runtime();
        let pair = runtime.block_on(connect(Guard::builder("guard-bench").build()));
        let server = &pair.server;
        bencher.bench_local(|| {
            let target = target(black_box(&args(false))).expect("valid");
            server.store(target.id.as_str(), target.text)
        });
    }

    /// `GuardCall::new` + `Guard::clear(.., false)` + the body.
    #[divan::bench]
    fn clear_then_body(bencher: Bencher) {
        let runtime = runtime();
        let pair = runtime.block_on(connect(Guard::builder("guard-bench").build()));
        let context = pair.context();
        let server = &pair.server;
        let _entered = runtime.enter();
        bencher.bench_local(|| {
            let target = target(black_box(&args(false))).expect("valid");
            let call = GuardCall::new(context.clone(), "engine_write", None, None, None);
            let needs_approval = target.is_shared();
            let cleared = finish(
                &runtime,
                server.guard.clear(call, target, needs_approval, unchanged),
            );
            let Ok(clearance) = cleared else {
                unreachable!("an exempt call is always cleared");
            };
            let target = clearance.into_target();
            server.store(target.id.as_str(), target.text)
        });
    }

    async fn call(
        client: &RunningService<RoleClient, ClientConfig>,
        tool: &'static str,
    ) -> CallToolResult {
        let arguments = json!({ "note_id": "n1", "text": "first note", "shared": false });
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .expect("call");
        assert_ne!(result.is_error, Some(true), "{tool} ran: {result:?}");
        result
    }

    /// End to end over duplex: `plain_write` (unguarded), `engine_write` (`GuardCall` +
    /// `Guard::clear`), `macro_write` (`#[guarded(when = ..)]`), the same body behind each.
    #[divan::bench(args = ["plain_write", "engine_write", "macro_write"])]
    fn over_duplex(bencher: Bencher, tool: &'static str) {
        let runtime = runtime();
        let pair = runtime.block_on(connect(Guard::builder("guard-bench").build()));
        bencher.bench_local(|| runtime.block_on(call(&pair.client, tool)));
        let _ = runtime.block_on(pair.client.cancel());
    }
}

/// A two-call token issued to a client without dialogs.
mod token {
    use super::*;

    /// `Guard::clear(.., true)` → the token's text.
    #[divan::bench]
    fn issue(bencher: Bencher) {
        let runtime = runtime();
        let pair = runtime.block_on(connect(Guard::builder("guard-bench").build()));
        let context = pair.context();
        let guard = &pair.server.guard;
        let _entered = runtime.enter();
        bencher.bench_local(|| {
            let target = target(&args(true)).expect("valid");
            let call = GuardCall::new(context.clone(), "engine_write", None, None, None);
            let refused = finish(&runtime, guard.clear(call, target, true, unchanged));
            assert!(
                refused.is_err(),
                "no dialog and no token: a token is issued"
            );
            refused.err()
        });
    }
}

/// A whole guarded round (token issued, quoted, spent) on each store.
mod store {
    use super::*;

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

    /// Whether no Redis can be had: no `GUARD_BENCH_REDIS_URL` and no `redis-server` on PATH.
    fn no_redis() -> bool {
        std::env::var_os("GUARD_BENCH_REDIS_URL").is_none()
            && std::process::Command::new("redis-server")
                .arg("--version")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_err()
    }

    /// `GUARD_BENCH_REDIS_URL`, or a `redis-server` started on loopback (`fsync`: with an
    /// append-only file synced on every write).
    fn redis(fsync: bool) -> BenchRedis {
        if let Ok(url) = std::env::var("GUARD_BENCH_REDIS_URL") {
            return BenchRedis {
                child: None,
                url,
                dir: None,
            };
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir =
            std::env::temp_dir().join(format!("guard-bench-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for redis-server");
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
            .expect("redis-server starts");
        let redis = BenchRedis {
            child: Some(child),
            url: format!("redis://127.0.0.1:{port}/0"),
            dir: Some(dir),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on port {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
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

    fn rounds(bencher: Bencher, guard: impl FnOnce() -> Guard) {
        let runtime = runtime();
        let pair = runtime.block_on(connect(Guard::builder("guard-bench").build()));
        let context = pair.context();
        let guard = {
            let _entered = runtime.enter();
            guard()
        };
        bencher.bench_local(|| runtime.block_on(round(&guard, &context)));
    }

    #[divan::bench]
    fn in_memory(bencher: Bencher) {
        rounds(bencher, || Guard::builder("guard-bench").build());
    }

    fn on_redis(bencher: Bencher, fsync: bool) {
        let redis = redis(fsync);
        rounds(bencher, || {
            let store = ask_first_redis::RedisNonceStore::open(&redis.url)
                .unwrap_or_else(|error| panic!("the Redis store at {}: {error}", redis.url));
            Guard::builder("guard-bench")
                .nonce_store(Arc::new(store))
                .build()
        });
    }

    /// Redis on loopback without persistence (or at `GUARD_BENCH_REDIS_URL`).
    #[divan::bench(ignore = no_redis())]
    fn redis_no_persistence(bencher: Bencher) {
        on_redis(bencher, false);
    }

    /// Redis on loopback with `appendfsync always` (skipped with `GUARD_BENCH_REDIS_URL`:
    /// the same server as above).
    #[divan::bench(ignore = no_redis() || std::env::var_os("GUARD_BENCH_REDIS_URL").is_some())]
    fn redis_appendfsync_always(bencher: Bencher) {
        on_redis(bencher, true);
    }
}
