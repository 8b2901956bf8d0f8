//! What the approval page costs the server per page-approved call, besides the person's time,
//! and how big the page is: `cargo bench --bench approval_page` (rounds: `-- 200`).
//!
//! A program that prints figures (`harness = false`), asserting nothing. It enrols a passkey
//! the way the operator does (`passkeys add` in a child process, this same program re-run with
//! `--enrol DIR`; its one-time link opened and answered by a software authenticator, Ed25519,
//! user verification set), then, per round, goes through one page-approved call: a guarded
//! `delete` from an in-process client without elicitation (the result carries the link: the
//! guard resolves, fingerprints and creates the approval record), the page's `GET` (the
//! record read, the page rendered), its `begin` POST (a passkey challenge), the authenticator's
//! signature (the person's side: not counted), the `finish` POST (the assertion verified
//! against the enrolled passkeys, the record decided), and the identical retry (the record
//! found, checked and spent; the delete runs). The same tool unguarded, through the same
//! client, is the baseline the two MCP calls are compared with.
//!
//! The page's three requests are timed from this process over loopback HTTP/1.1 on one
//! keep-alive connection: their figures include the loopback round trip (tens of µs), so
//! they are upper bounds on the server's part. The record store is the one a stdio server
//! uses by default (`FileApprovalStore` in the state directory), and the in-memory one.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_first::{Guard, HasGuard, InputError, Resolve, Target, fact::Id, guarded};
use ask_first_core::{ApprovalStore, FileApprovalStore, MemoryApprovalStore};
use ask_first_serve::approve::{ApprovalPage, ApprovalSettings, run_passkeys_command};
use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const STATE_SETTING: &str = "BENCH_STATE_DIR";

#[derive(Target)]
#[target(operation = "bench_delete", question = "This will delete note {id}.")]
struct DeleteNote {
    id: Id,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    note_id: String,
}

#[derive(Clone)]
struct Bench {
    guard: Guard,
    notes: Arc<Mutex<BTreeMap<String, String>>>,
}

impl HasGuard for Bench {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Bench, DeleteArgs> for DeleteNote {
    async fn resolve(server: &Bench, args: &DeleteArgs) -> Result<Self, InputError> {
        if !server.notes().contains_key(&args.note_id) {
            return Err(InputError::new(format!("no note {}", args.note_id)));
        }
        Ok(Self {
            id: Id::new(&args.note_id).map_err(|e| InputError::new(e.to_string()))?,
        })
    }
}

impl Bench {
    fn notes(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.notes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[tool_router]
impl Bench {
    #[guarded(always)]
    #[tool(description = "Deletes a note after the person's yes.")]
    async fn delete(
        &self,
        Parameters(_args): Parameters<DeleteArgs>,
        approved: ask_first::Approved<DeleteNote>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = approved.into_target().id.as_str().to_owned();
        self.notes().remove(&id);
        Ok(CallToolResult::success(vec![ContentBlock::text("deleted")]))
    }

    #[tool(description = "The same body, unguarded: the baseline.")]
    async fn plain_delete(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.notes().remove(&args.note_id);
        Ok(CallToolResult::success(vec![ContentBlock::text("deleted")]))
    }
}

#[tool_handler(name = "approval-page-bench")]
impl ServerHandler for Bench {}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(dir) = args
        .iter()
        .position(|a| a == "--enrol")
        .and_then(|i| args.get(i + 1))
    {
        // The child: the operator's `passkeys add`, its link printed on stdout.
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let add = ["add", "--valid-for-secs", "120"].map(str::to_owned);
        std::process::exit(runtime.block_on(run_passkeys_command(
            "bench",
            "BENCH",
            Some(PathBuf::from(dir)),
            &add,
        )));
    }
    // `cargo bench` passes `--bench`; a bare number is the rounds.
    let rounds: usize = args.iter().skip(1).find_map(|a| a.parse().ok()).unwrap_or(
        if args.iter().any(|a| a == "--bench") {
            200
        } else {
            3
        },
    );
    let dir = std::env::temp_dir().join(format!("approval-page-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("state dir");
    let authenticator = Authenticator::new();
    let enrolled = enrol(&dir, &authenticator);
    println!("approval page, per page-approved call ({rounds} rounds, medians)");
    for (name, store) in [
        (
            "file store (a stdio server's default)",
            Arc::new(FileApprovalStore::open(&dir, STATE_SETTING).expect("store"))
                as Arc<dyn ApprovalStore>,
        ),
        (
            "memory store",
            Arc::new(MemoryApprovalStore::new()) as Arc<dyn ApprovalStore>,
        ),
    ] {
        measure(name, &dir, store, &authenticator, &enrolled, rounds);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the enrolment left: the user handle the authenticator answers with.
struct Enrolled {
    user_handle: String,
}

/// A passkey on an authenticator of our own: one Ed25519 key, user verification set.
struct Authenticator {
    key: Ed25519KeyPair,
    credential_id: [u8; 16],
}

impl Authenticator {
    fn new() -> Self {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("key");
        let key = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("key");
        let mut credential_id = [0u8; 16];
        ring::rand::SecureRandom::fill(&rng, &mut credential_id).expect("random");
        Self { key, credential_id }
    }

    fn rp_hash() -> [u8; 32] {
        Sha256::digest(b"localhost").into()
    }

    fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
        json!({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false})
            .to_string()
            .into_bytes()
    }

    /// The browser's `toJSON()` of a new credential for `options` (`publicKey` inside).
    fn register(&self, options: &Value, origin: &str) -> Value {
        let challenge = options["challenge"].as_str().expect("challenge");
        let client_data = Self::client_data("webauthn.create", challenge, origin);
        let public = self.key.public_key().as_ref();
        let mut auth_data = Self::rp_hash().to_vec();
        auth_data.push(0b0100_0101); // attested data, user verified, user present
        auth_data.extend([0, 0, 0, 0]);
        auth_data.extend([0u8; 16]); // aaguid
        auth_data.extend([0, 16]);
        auth_data.extend(self.credential_id);
        // COSE: kty OKP, alg EdDSA, crv Ed25519, x.
        auth_data.extend([0xa4, 0x01, 0x01, 0x03, 0x27, 0x20, 0x06, 0x21, 0x58, 0x20]);
        auth_data.extend(public);
        let mut attestation = vec![0xa3, 0x63];
        attestation.extend(b"fmt");
        attestation.push(0x64);
        attestation.extend(b"none");
        attestation.push(0x67);
        attestation.extend(b"attStmt");
        attestation.push(0xa0);
        attestation.push(0x68);
        attestation.extend(b"authData");
        attestation.extend([0x58, u8::try_from(auth_data.len()).expect("short")]);
        attestation.extend(&auth_data);
        let mut spki = vec![
            0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
        ];
        spki.extend(public);
        let id = URL_SAFE_NO_PAD.encode(self.credential_id);
        json!({
            "id": id, "rawId": id, "type": "public-key",
            "response": {
                "clientDataJSON": URL_SAFE_NO_PAD.encode(&client_data),
                "attestationObject": URL_SAFE_NO_PAD.encode(&attestation),
                "authenticatorData": URL_SAFE_NO_PAD.encode(&auth_data),
                "transports": ["internal"],
                "publicKey": URL_SAFE_NO_PAD.encode(&spki),
                "publicKeyAlgorithm": -8,
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        })
    }

    /// The browser's `toJSON()` of an assertion for `options`, user verified.
    fn assert(&self, options: &Value, origin: &str, user_handle: &str) -> Value {
        let challenge = options["challenge"].as_str().expect("challenge");
        let client_data = Self::client_data("webauthn.get", challenge, origin);
        let mut auth_data = Self::rp_hash().to_vec();
        auth_data.push(0b0000_0101); // user verified, user present
        auth_data.extend([0, 0, 0, 0]);
        let mut signed = auth_data.clone();
        signed.extend(Sha256::digest(&client_data));
        let signature = self.key.sign(&signed);
        let id = URL_SAFE_NO_PAD.encode(self.credential_id);
        json!({
            "id": id, "rawId": id, "type": "public-key",
            "response": {
                "clientDataJSON": URL_SAFE_NO_PAD.encode(&client_data),
                "authenticatorData": URL_SAFE_NO_PAD.encode(&auth_data),
                "signature": URL_SAFE_NO_PAD.encode(signature.as_ref()),
                "userHandle": user_handle,
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        })
    }
}

/// One keep-alive HTTP/1.1 connection to `localhost:port`, as the person's browser on the
/// page: the page's origin and cookie sent.
struct Browser {
    stream: BufReader<TcpStream>,
    port: u16,
    cookie: Option<String>,
}

impl Browser {
    fn new(port: u16) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            stream: BufReader::new(stream),
            port,
            cookie: None,
        }
    }

    fn origin(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    /// (status, body); a `Set-Cookie` is kept for the next requests.
    fn request(&mut self, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost:{}\r\nOrigin: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            self.port,
            self.origin(),
            body.len()
        );
        if let Some(cookie) = &self.cookie {
            head.push_str(&format!("Cookie: {cookie}\r\n"));
        }
        head.push_str("\r\n");
        let stream = self.stream.get_mut();
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body.as_bytes()).expect("write");
        let mut line = String::new();
        self.stream.read_line(&mut line).expect("status");
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status");
        let mut length = 0;
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("header");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("header");
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().expect("length"),
                "set-cookie" => {
                    self.cookie = value.split(';').next().map(|c| c.trim().to_owned());
                }
                _ => {}
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).expect("body");
        (status, String::from_utf8(body).expect("utf-8"))
    }
}

fn page_token(page: &str) -> String {
    let start = page.find("data-token=\"").expect("a page token") + "data-token=\"".len();
    page[start..][..page[start..].find('"').expect("token end")].to_owned()
}

/// Enrols the authenticator's passkey for `local` through the real `passkeys add`.
fn enrol(dir: &Path, authenticator: &Authenticator) -> Enrolled {
    let mut child = Command::new(std::env::current_exe().expect("self"))
        .arg("--enrol")
        .arg(dir)
        .stdout(Stdio::piped())
        .spawn()
        .expect("passkeys add");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let link = loop {
        line.clear();
        assert!(
            out.read_line(&mut line).expect("read") > 0,
            "passkeys add printed no link"
        );
        if let Some(at) = line.find("http://localhost:") {
            break line[at..].trim().to_owned();
        }
    };
    let rest = link.trim_start_matches("http://localhost:");
    let (port, path) = rest.split_at(rest.find('/').expect("path"));
    let mut browser = Browser::new(port.parse().expect("port"));
    let (status, page) = browser.request("GET", path, None);
    assert_eq!(status, 200, "{page}");
    let token = page_token(&page);
    let (status, options) = browser.request(
        "POST",
        &format!("{path}/begin"),
        Some(&json!({"token": token})),
    );
    assert_eq!(status, 200, "{options}");
    let options: Value = serde_json::from_str(&options).expect("options");
    let options = options.get("publicKey").unwrap_or(&options).clone();
    let credential = authenticator.register(&options, &browser.origin());
    let (status, text) = browser.request(
        "POST",
        &format!("{path}/finish"),
        Some(&json!({"token": token, "credential": credential})),
    );
    assert_eq!(status, 200, "enrolment refused: {text}");
    let _ = std::io::copy(&mut out, &mut std::io::sink());
    assert!(child.wait().expect("wait").success(), "passkeys add failed");
    Enrolled {
        user_handle: options["user"]["id"].as_str().expect("user id").to_owned(),
    }
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn call(name: &str, note: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(
        json!({"note_id": note})
            .as_object()
            .expect("object")
            .clone(),
    )
}

fn measure(
    name: &str,
    dir: &Path,
    store: Arc<dyn ApprovalStore>,
    authenticator: &Authenticator,
    enrolled: &Enrolled,
    rounds: usize,
) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    // Nothing named with this prefix is set: the defaults (a loopback listener on a free port).
    let settings = ApprovalSettings::from_env("ASK_FIRST_BENCH").expect("default settings");
    let page = ApprovalPage::new("bench", dir, STATE_SETTING, store.clone(), &settings);
    let guard = Guard::builder("bench")
        .approval_pages(Arc::new(page))
        .approval_store(store)
        .build();
    let notes = Arc::new(Mutex::new(BTreeMap::new()));
    let server = Bench {
        guard,
        notes: notes.clone(),
    };
    let client = runtime
        .block_on(ask_first::testing::connect(
            ask_first::testing::Era::Legacy,
            server,
            ask_first::testing::Person::without_elicitation(),
        ))
        .expect("connect");
    let names = ["link", "page GET", "begin", "finish", "retry", "plain call"];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    let mut browser: Option<Browser> = None;
    let mut page_bytes = 0;
    for round in 0..rounds + 1 {
        let note = format!("n{round}");
        let plain = format!("p{round}");
        for id in [&note, &plain] {
            notes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.clone(), "text".into());
        }
        let mut timed = Vec::new();
        let started = Instant::now();
        let first = runtime
            .block_on(client.call_tool(call("delete", &note)))
            .expect("call");
        timed.push(started.elapsed());
        let url = first
            .structured_content
            .as_ref()
            .and_then(|s| s["approval_url"].as_str())
            .unwrap_or_else(|| panic!("no link: {first:?}"))
            .to_owned();
        let rest = url.trim_start_matches("http://localhost:");
        let (port, path) = rest.split_at(rest.find('/').expect("path"));
        let browser = browser.get_or_insert_with(|| Browser::new(port.parse().expect("port")));
        let started = Instant::now();
        let (status, html) = browser.request("GET", path, None);
        timed.push(started.elapsed());
        assert_eq!(status, 200, "{html}");
        page_bytes = html.len();
        let token = page_token(&html);
        let started = Instant::now();
        let (status, options) = browser.request(
            "POST",
            &format!("{path}/begin"),
            Some(&json!({"token": token, "decision": "approve"})),
        );
        timed.push(started.elapsed());
        assert_eq!(status, 200, "{options}");
        let options: Value = serde_json::from_str(&options).expect("options");
        let options = options.get("publicKey").unwrap_or(&options);
        // The person's side: the authenticator signs (not counted).
        let assertion = authenticator.assert(options, &browser.origin(), &enrolled.user_handle);
        let body = json!({"token": token, "credential": assertion});
        let started = Instant::now();
        let (status, text) = browser.request("POST", &format!("{path}/finish"), Some(&body));
        timed.push(started.elapsed());
        assert_eq!(status, 200, "not approved: {text}");
        let started = Instant::now();
        let ran = runtime
            .block_on(client.call_tool(call("delete", &note)))
            .expect("retry");
        timed.push(started.elapsed());
        assert_ne!(ran.is_error, Some(true), "the retry did not run: {ran:?}");
        let started = Instant::now();
        runtime
            .block_on(client.call_tool(call("plain_delete", &plain)))
            .expect("plain");
        timed.push(started.elapsed());
        if round > 0 {
            // The first round warms up (listener bound, connection opened).
            for (all, t) in times.iter_mut().zip(timed) {
                all.push(t);
            }
        }
    }
    let medians: Vec<Duration> = times.iter_mut().map(|t| median(t)).collect();
    let plain = medians[5];
    let link_added = medians[0].saturating_sub(plain);
    let retry_added = medians[4].saturating_sub(plain);
    let page_side = medians[1] + medians[2] + medians[3];
    println!("\n{name}:");
    println!(
        "  page size: {page_bytes} bytes ({:.1} KiB)",
        page_bytes as f64 / 1024.0
    );
    println!(
        "  unguarded call (baseline, in-process MCP round trip): {}",
        micros(plain)
    );
    println!(
        "  first call, link returned: {} ({} beyond the baseline: resolve, record created)",
        micros(medians[0]),
        micros(link_added)
    );
    for (i, label) in [
        (1, "page GET (record read, page rendered)"),
        (2, "begin POST (passkey challenge)"),
        (3, "finish POST (assertion verified, record decided)"),
    ] {
        println!(
            "  {label}: {} (loopback round trip included)",
            micros(medians[i])
        );
    }
    println!(
        "  retry, runs: {} ({} beyond the baseline: record found, checked, spent)",
        micros(medians[4]),
        micros(retry_added)
    );
    println!(
        "  server's added cost per page-approved call: {} (goal: <= 1 ms besides the person's time)",
        micros(link_added + page_side + retry_added)
    );
    drop(client);
}
