//! What authentication costs per HTTP request. A bench binary (`harness = false`) that prints
//! its figures: `cargo bench --bench auth`.
//!
//! 1. The check alone, per request head: the shared secret (SHA-256 of the presented token,
//!    compared in constant time), and per-person tokens with 1, 100 and 1,000 people listed (the
//!    file read and cached; the hash looked up by its prefix, then compared in constant time).
//! 2. End to end over loopback HTTP/1.1 keep-alive (`GET /healthz` through the whole gate of
//!    `bind_http`): no credential (the baseline), the shared secret, and 1,000 per-person
//!    tokens; the median added latency per request is the difference to the baseline, samples
//!    interleaved across the modes in one run.
//!
//! Goal (reported, never asserted): a cached check adds under 0.2 ms per request. Set
//! `GUARD_BENCH_QUICK=1` for a fast smoke run with fewer iterations.

use std::hint::black_box;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use ask_first::{Guard, HasGuard};
use ask_first_serve::SettingNames;
use ask_first_serve::http::auth::SharedSecret;
use ask_first_serve::http::tokens::{TokenFile, add_token};
use ask_first_serve::http::{Authenticate, HttpOptions, bind_http};
use ask_first_serve::settings::{AuthMode, AuthSettings, Secret};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Plan {
    samples: usize,
    check_iters: usize,
    requests: usize,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("GUARD_BENCH_QUICK").is_some() {
            Self {
                samples: 5,
                check_iters: 2_000,
                requests: 100,
            }
        } else {
            Self {
                samples: 21,
                check_iters: 20_000,
                requests: 1_000,
            }
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

const SETTING: &str = "BENCH_HTTP_TOKENS_FILE";

/// A token file listing `people` people; the last person's token.
fn token_file(dir: &std::path::Path, people: usize) -> (PathBuf, String) {
    let path = dir.join(format!("tokens-{people}"));
    let mut last = String::new();
    for person in 0..people {
        last = add_token(&path, &format!("person{person}"), SETTING)
            .expect("minted")
            .token
            .expose()
            .to_owned();
    }
    (path, last)
}

fn head(token: &str) -> axum::http::request::Parts {
    axum::http::Request::builder()
        .uri("/mcp")
        .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(())
        .expect("request")
        .into_parts()
        .0
}

/// Median nanoseconds per `authenticate` call.
async fn time_check(plan: &Plan, auth: &dyn Authenticate, token: &str) -> f64 {
    let mut parts = head(token);
    auth.authenticate(&mut parts).await.expect("accepted");
    let mut per_call = Vec::with_capacity(plan.samples);
    for _ in 0..plan.samples {
        let start = Instant::now();
        for _ in 0..plan.check_iters {
            black_box(auth.authenticate(black_box(&mut parts)).await.is_ok());
        }
        per_call.push(start.elapsed().as_nanos() as f64 / plan.check_iters as f64);
    }
    median(&mut per_call)
}

#[derive(Clone)]
struct Empty {
    guard: Guard,
}

impl HasGuard for Empty {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl rmcp::ServerHandler for Empty {}

async fn serve(options: HttpOptions) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Empty {
        guard: Guard::builder("bench").build(),
    };
    let bound = bind_http(
        "127.0.0.1:0".parse().expect("address"),
        move || Ok(server.clone()),
        options,
    )
    .await
    .expect("binds");
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// One keep-alive connection sending `GET /healthz`; median microseconds per request over
/// `requests` requests.
struct Client {
    stream: TcpStream,
    request: Vec<u8>,
}

impl Client {
    async fn new(addr: SocketAddr, token: Option<&str>) -> Self {
        let auth = token.map_or(String::new(), |token| {
            format!("Authorization: Bearer {token}\r\n")
        });
        let request = format!(
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}\r\n",
            addr.port()
        );
        let stream = TcpStream::connect(addr).await.expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            stream,
            request: request.into_bytes(),
        }
    }

    async fn one(&mut self, buffer: &mut Vec<u8>) {
        self.stream.write_all(&self.request).await.expect("sends");
        buffer.clear();
        let mut chunk = [0u8; 1024];
        loop {
            let n = self.stream.read(&mut chunk).await.expect("reads");
            assert!(n > 0, "the server closed the connection");
            buffer.extend_from_slice(&chunk[..n]);
            if buffer.ends_with(b"\r\n\r\nok") {
                return;
            }
            assert!(
                !buffer.starts_with(b"HTTP/1.1 4"),
                "refused: {}",
                String::from_utf8_lossy(buffer)
            );
        }
    }

    async fn sample(&mut self, requests: usize) -> f64 {
        let mut buffer = Vec::with_capacity(512);
        let start = Instant::now();
        for _ in 0..requests {
            self.one(&mut buffer).await;
        }
        start.elapsed().as_nanos() as f64 / requests as f64 / 1_000.0
    }
}

fn main() {
    let plan = Plan::from_env();
    let dir = std::env::temp_dir().join(format!("ask-first-auth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!("authentication benchmark (medians; lower is better)");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        // 1. The check alone.
        let secret = "a-shared-secret-of-64-hex-characters-0123456789abcdef0123456789ab";
        let shared = SharedSecret::new(&Secret::new(secret), String::new());
        println!(
            "  check, shared secret:            {:>8.0} ns",
            time_check(&plan, &shared, secret).await
        );
        for people in [1, 100, 1_000] {
            let (path, token) = token_file(&dir, people);
            let file = TokenFile::load(&path, SETTING).expect("loads");
            println!(
                "  check, per-person tokens, {people:>5}: {:>8.0} ns",
                time_check(&plan, &file, &token).await
            );
        }

        // 2. End to end through the gate.
        let names = SettingNames::with_prefix("BENCH");
        let (none_addr, stop_none) = serve(HttpOptions {
            no_auth: true,
            ..HttpOptions::new(names.clone())
        })
        .await;
        let (secret_addr, stop_secret) = serve(HttpOptions {
            bearer_token: Some(Secret::new(secret)),
            ..HttpOptions::new(names.clone())
        })
        .await;
        let served = dir.join("served");
        std::fs::create_dir_all(&served).expect("temp dir");
        let (path, token) = token_file(&served, 1_000);
        let (tokens_addr, stop_tokens) = serve(HttpOptions {
            auth: AuthSettings {
                mode: AuthMode::Tokens,
                tokens_file: Some(path),
                ..AuthSettings::default()
            },
            ..HttpOptions::new(SettingNames {
                http_tokens_file: SETTING.to_owned(),
                ..names
            })
        })
        .await;
        let mut clients = [
            Client::new(none_addr, None).await,
            Client::new(secret_addr, Some(secret)).await,
            Client::new(tokens_addr, Some(&token)).await,
        ];
        for client in &mut clients {
            client.sample(plan.requests / 10 + 1).await; // warm-up
        }
        let mut figures: [Vec<f64>; 3] = Default::default();
        let mut added: [Vec<f64>; 2] = Default::default();
        for _ in 0..plan.samples {
            let mut round = [0.0; 3];
            for (index, client) in clients.iter_mut().enumerate() {
                round[index] = client.sample(plan.requests).await;
                figures[index].push(round[index]);
            }
            added[0].push(round[1] - round[0]);
            added[1].push(round[2] - round[0]);
        }
        let [none, shared, tokens] = figures.map(|mut values| median(&mut values));
        let [shared_added, tokens_added] = added.map(|mut values| median(&mut values));
        println!("  GET /healthz, no credential:     {none:>8.1} µs per request");
        println!(
            "  GET /healthz, shared secret:     {shared:>8.1} µs per request ({shared_added:+.1} µs)"
        );
        println!(
            "  GET /healthz, 1,000 tokens:      {tokens:>8.1} µs per request ({tokens_added:+.1} µs; goal < 200 µs)"
        );
        let _ = (stop_none.send(()), stop_secret.send(()), stop_tokens.send(()));
    });
    std::fs::remove_dir_all(&dir).ok();
}
