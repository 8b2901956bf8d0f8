//! What authentication costs per HTTP request, on divan: `cargo bench --bench auth`.
//!
//! - `check`: the check alone, per request head: the shared secret (SHA-256 of the presented
//!   token, compared in constant time), and per-person tokens with 1, 100 and 1,000 people
//!   listed (the file read and cached; the hash looked up by its prefix, then compared in
//!   constant time).
//! - `healthz`: end to end over loopback HTTP/1.1 keep-alive (`GET /healthz` through the whole
//!   gate of `bind_http`): no credential (the baseline), the shared secret, and 1,000
//!   per-person tokens; what a credential adds per request is the difference of the medians,
//!   measured in one run.
//!
//! Goal: a cached check adds under 0.2 ms per request. Figures are divan's; nothing is asserted
//! about them. `cargo test --benches` runs each once.

#[path = "support/finish.rs"]
mod support;

use std::hint::black_box;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::LazyLock;

use ask_first::{Guard, HasGuard};
use ask_first_serve::SettingNames;
use ask_first_serve::http::auth::SharedSecret;
use ask_first_serve::http::tokens::{TokenFile, add_token};
use ask_first_serve::http::{Authenticate, HttpOptions, bind_http};
use ask_first_serve::settings::{AuthMode, AuthSettings, Secret};
use divan::Bencher;
use support::finish;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

fn main() {
    divan::main();
    let _ = std::fs::remove_dir_all(&*DIR);
}

const SETTING: &str = "BENCH_HTTP_TOKENS_FILE";
const SECRET: &str = "a-shared-secret-of-64-hex-characters-0123456789abcdef0123456789ab";

/// Where the token files are written (removed when the benchmarks are done).
static DIR: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("ask-first-auth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
});

/// A token file listing `people` people (in a directory of its own); the last person's token.
fn token_file(name: &str, people: usize) -> (PathBuf, String) {
    let dir = DIR.join(name);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("tokens");
    let _ = std::fs::remove_file(&path);
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

/// The runtime the server and the client both run on, on divan's thread: no wake-up of
/// another thread in each request (with the server on a worker thread of its own, the figures
/// jumped between about 18 and 45 µs from run to run with the CPUs' idle states).
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The check alone.
mod check {
    use super::*;

    fn head(token: &str) -> axum::http::request::Parts {
        axum::http::Request::builder()
            .uri("/mcp")
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"))
            .body(())
            .expect("request")
            .into_parts()
            .0
    }

    fn time(bencher: Bencher, auth: &dyn Authenticate, token: &str) {
        let runtime = runtime();
        let _entered = runtime.enter();
        let mut parts = head(token);
        finish(&runtime, auth.authenticate(&mut parts)).expect("accepted");
        bencher.bench_local(|| finish(&runtime, auth.authenticate(black_box(&mut parts))).is_ok());
    }

    /// The shared secret.
    #[divan::bench]
    fn shared_secret(bencher: Bencher) {
        let shared = SharedSecret::new(&Secret::new(SECRET), String::new());
        time(bencher, &shared, SECRET);
    }

    /// Per-person tokens, this many people listed.
    #[divan::bench(args = [1, 100, 1_000])]
    fn per_person_tokens(bencher: Bencher, people: usize) {
        let (path, token) = token_file(&format!("check-{people}"), people);
        let file = TokenFile::load(&path, SETTING).expect("loads");
        time(bencher, &file, &token);
    }
}

/// `GET /healthz` end to end through the gate.
mod healthz {
    use super::*;

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

    /// One keep-alive connection sending `GET /healthz`.
    struct Client {
        stream: TcpStream,
        request: Vec<u8>,
        buffer: Vec<u8>,
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
                buffer: Vec::with_capacity(512),
            }
        }

        async fn one(&mut self) {
            self.stream.write_all(&self.request).await.expect("sends");
            self.buffer.clear();
            let mut chunk = [0u8; 1024];
            loop {
                let n = self.stream.read(&mut chunk).await.expect("reads");
                assert!(n > 0, "the server closed the connection");
                self.buffer.extend_from_slice(&chunk[..n]);
                if self.buffer.ends_with(b"\r\n\r\nok") {
                    return;
                }
                assert!(
                    !self.buffer.starts_with(b"HTTP/1.1 4"),
                    "refused: {}",
                    String::from_utf8_lossy(&self.buffer)
                );
            }
        }
    }

    fn time(bencher: Bencher, options: HttpOptions, token: Option<&str>) {
        let runtime = runtime();
        let (addr, stop) = runtime.block_on(serve(options));
        let mut client = runtime.block_on(Client::new(addr, token));
        bencher.bench_local(|| runtime.block_on(client.one()));
        let _ = stop.send(());
    }

    /// No credential: the baseline.
    #[divan::bench]
    fn no_credential(bencher: Bencher) {
        let options = HttpOptions {
            no_auth: true,
            ..HttpOptions::new(SettingNames::with_prefix("BENCH"))
        };
        time(bencher, options, None);
    }

    /// The shared secret.
    #[divan::bench]
    fn shared_secret(bencher: Bencher) {
        let options = HttpOptions {
            bearer_token: Some(Secret::new(SECRET)),
            ..HttpOptions::new(SettingNames::with_prefix("BENCH"))
        };
        time(bencher, options, Some(SECRET));
    }

    /// Per-person tokens, 1,000 people listed.
    #[divan::bench]
    fn tokens_1000(bencher: Bencher) {
        let (path, token) = token_file("served", 1_000);
        let options = HttpOptions {
            auth: AuthSettings {
                mode: AuthMode::Tokens,
                tokens_file: Some(path),
                ..AuthSettings::default()
            },
            ..HttpOptions::new(SettingNames {
                http_tokens_file: SETTING.to_owned(),
                ..SettingNames::with_prefix("BENCH")
            })
        };
        time(bencher, options, Some(&token));
    }
}
