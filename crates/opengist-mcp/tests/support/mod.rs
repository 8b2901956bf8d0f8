//! What several of opengist-mcp's test binaries share: the one "Opengist that answers 500"
//! double, and a server built from a given set of environment variables (no process
//! environment is read or changed). Each test binary includes it with `mod support;` and uses
//! what it needs.
#![allow(dead_code)] // each test binary uses a part

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{Method, StatusCode, Uri};
use opengist_mcp::OpengistServer;
use opengist_mcp::cli::CliArgs;
use opengist_mcp::config::Config;
use serde_json::Value;

/// A token in Opengist's format, for servers that never reach a real Opengist.
pub(crate) const OPENGIST_TOKEN: &str =
    "og_0f1e2d3c4b5a69780f1e2d3c4b5a69780f1e2d3c4b5a69780f1e2d3c4b5a6978";

/// The server exactly these variables (and no other) configure, with no command-line
/// arguments. Panics, naming the problem, when they do not make a valid configuration.
pub(crate) fn server_from_env(vars: &[(&str, String)]) -> OpengistServer {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect();
    let env = move |name: &str| -> Option<String> {
        vars.iter()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.clone())
    };
    let loaded = Config::from_env_and_args(&CliArgs::default().flags, &env)
        .unwrap_or_else(|error| panic!("the test's configuration is invalid: {error}"));
    OpengistServer::from_config(&loaded.config)
        .unwrap_or_else(|error| panic!("the server does not build: {error}"))
}

/// A server that talks to the Opengist at `url` with [`OPENGIST_TOKEN`], the dialog as
/// `elicitation` says, and a 5 s request timeout.
pub(crate) fn server_for(url: &str, elicitation: bool) -> OpengistServer {
    server_from_env(&[
        ("OPENGIST_URL", url.to_owned()),
        ("OPENGIST_TOKEN", OPENGIST_TOKEN.to_owned()),
        ("ELICITATION", elicitation.to_string()),
        ("OPENGIST_MCP_REQUEST_TIMEOUT_SECS", "5".to_owned()),
    ])
}

/// One request the stand-in received (its body as JSON, `null` when it is not).
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: Method,
    pub path: String,
    pub body: Value,
}

/// Whether a request is one of the side-effect-free probes a guarded tool sends before asking
/// (see `opengist/probes.rs`): the body `{}` sent to `POST /api/gists`, `PATCH /api/gists/<id>`
/// or `PATCH /api/user`, which Opengist refuses (422) before changing anything. Exactly those:
/// any other body or route is a write.
pub(crate) fn is_probe(seen: &Seen) -> bool {
    let route = match seen.method {
        Method::POST => seen.path == "/api/gists",
        Method::PATCH => {
            seen.path == "/api/user"
                || seen
                    .path
                    .strip_prefix("/api/gists/")
                    .is_some_and(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        }
        _ => false,
    };
    route && seen.body == Value::Object(serde_json::Map::new())
}

/// An Opengist stand-in on loopback that fails every request with a 500 and records it: the
/// one fault a real Opengist cannot be made to produce on demand for every route.
pub(crate) struct Faulty {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Faulty {
    /// Starts it on a free loopback port, in the current tokio runtime.
    pub(crate) async fn start() -> Self {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let record = seen.clone();
        let app = Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
            let record = record.clone();
            async move {
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                record.lock().expect("seen lock").push(Seen {
                    method,
                    path: uri.path().to_owned(),
                    body,
                });
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [("content-type", "application/json")],
                    r#"{"message":"injected fault","status":500}"#,
                )
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, seen }
    }

    /// Its base URL, `http://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen lock").clone()
    }

    /// How many requests it has answered.
    pub(crate) fn requests(&self) -> usize {
        self.seen.lock().expect("seen lock").len()
    }

    /// Every request but GETs and the probes (see [`is_probe`]).
    pub(crate) fn writes(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method != Method::GET && !is_probe(s))
            .collect()
    }
}
