//! Any input, every tool: hostile arguments through a real rmcp client, in process, in both
//! protocol eras, against an unconfigured server and against a server whose Opengist answers
//! every request with a 500.
//!
//! The project rule is that bad input gets a clear error and changes nothing, and that no input
//! panics. So for each tool the server lists, from the parameters its listed input schema
//! declares (as the fuzz target reads them; nothing here restates the catalog), a small seeded
//! generator builds a fixed set of hostile argument objects (wrong types for every parameter,
//! missing and unknown fields, control and bidi characters, path traversal, foreign and odd
//! gist links, huge and negative numbers, 1 MiB strings, 10 000-element arrays, 100 levels of
//! nesting, garbage confirmation tokens) and every call must come back as an error the client
//! can read: a tool result with `isError: true`, or a JSON-RPC invalid-params error. Never a
//! dropped connection, a hang or a panic; afterwards the same session still lists its tools;
//! no answer contains the Opengist token; and the Opengist stand-in saw no request other than
//! a GET (or a probe).
//!
//! The stand-in is only a fault (a real Opengist cannot run here): it answers everything with a
//! 500, so every read fails and no call can succeed. A guarded call that does reach the guard
//! (a `create_gist` that would publish) meets a person who declines, in the legacy era, or the
//! two-call token path, in the modern era, where a client without the elicitation capability
//! is used; either way nothing may be sent.
//!
//! The server side runs on [`opengist_mcp::stdio::StdioTransport`], the binary's stdio
//! transport, so nesting beyond serde_json's limit (two tests at the end) is answered too.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use ask_first::testing::{Era, Person, Reply, text_of};
use opengist_mcp::OpengistServer;
use opengist_mcp::catalog;
use opengist_mcp::opengist::GistRef;
use rmcp::model::{CallToolRequestParams, ErrorCode, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Map, Value, json};
use url::Url;

mod support;
// OPENGIST_TOKEN: the token the configured server holds; no answer may contain it.
use support::{Faulty, OPENGIST_TOKEN};

/// A well-formed gist id, the base of most argument objects.
const ID: &str = "0123456789abcdef0123456789abcdef";
/// The generator's seed; each tool mixes in its name.
const SEED: u64 = 0x0a11_1e9a_15ba_d5ee;
/// Generated cases per tool, per server kind, per era (the fixed cases come on top).
const RANDOM_CASES: usize = 28;
/// How long one call may take before it counts as a hang.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// 1 MiB.
const MIB: usize = 1024 * 1024;

// ---- the Opengist stand-in: a 500 for everything (support::Faulty) ------------------------

fn configured_server(url: &str) -> OpengistServer {
    support::server_for(url, true)
}

// ---- the client: a person who always declines (ask_first::testing's scripted person) -------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerKind {
    Unconfigured,
    Faulty,
}

struct Session {
    client: RunningService<RoleClient, Person>,
    person: Person,
}

/// How one call ended.
enum Answer {
    /// A tool result with `isError: true` and some text.
    ToolError,
    /// A JSON-RPC invalid-params error with a message.
    InvalidParams,
    /// Anything else: the evidence.
    Wrong(String),
}

impl Session {
    async fn open(era: Era, server: OpengistServer) -> Self {
        let (server_io, client_io) = tokio::io::duplex(256 * 1024);
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_io);
            let transport = opengist_mcp::stdio::StdioTransport::new(read, write);
            if let Ok(running) = server.serve(transport).await {
                let _ = running.waiting().await;
            }
        });
        // Legacy: a person who is asked and declines. Modern: no dialog, the token path.
        let person = Person::new(Reply::Decline).declaring_elicitation(era == Era::Legacy);
        let client = match era {
            Era::Legacy => person
                .clone()
                .serve(client_io)
                .await
                .expect("legacy handshake"),
            Era::Modern => person
                .clone()
                .serve_with_lifecycle(
                    client_io,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("discover"),
        };
        Self { client, person }
    }

    async fn call(&self, tool: &str, args: Option<Map<String, Value>>) -> Answer {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(map) = args {
            params = params.with_arguments(map);
        }
        let answer = tokio::time::timeout(CALL_TIMEOUT, self.client.call_tool(params)).await;
        match answer {
            Err(_) => Answer::Wrong(format!("no answer within {CALL_TIMEOUT:?}")),
            Ok(Ok(result)) => {
                let text = text_of(&result);
                let whole = serde_json::to_string(&result).unwrap_or_default();
                if whole.contains(OPENGIST_TOKEN) {
                    Answer::Wrong(format!("the result contains the token: {}", cut(&whole)))
                } else if result.is_error != Some(true) {
                    Answer::Wrong(format!("a result without isError: true: {}", cut(&whole)))
                } else if text.trim().is_empty() {
                    Answer::Wrong(format!("an error result with no text: {}", cut(&whole)))
                } else {
                    Answer::ToolError
                }
            }
            Ok(Err(ServiceError::McpError(error))) => {
                let whole = format!("{error:?}");
                if whole.contains(OPENGIST_TOKEN) {
                    Answer::Wrong(format!("the error contains the token: {}", cut(&whole)))
                } else if error.code != ErrorCode::INVALID_PARAMS {
                    Answer::Wrong(format!(
                        "a JSON-RPC error other than invalid params: {whole}"
                    ))
                } else if error.message.trim().is_empty() {
                    Answer::Wrong(format!("an invalid-params error with no message: {whole}"))
                } else {
                    Answer::InvalidParams
                }
            }
            Ok(Err(other)) => Answer::Wrong(format!("the call failed: {other}")),
        }
    }
}

/// The first 300 characters of `text`, with its length when cut.
fn cut(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

// ---- panics anywhere in the process -----------------------------------------------------

static PANICS: AtomicUsize = AtomicUsize::new(0);
static PANIC_MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Counts every panic in the process outside this file's own assertions, including those
/// inside the server's tasks, which rmcp might otherwise turn into a silent missing answer.
fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = info
                .location()
                .is_some_and(|at| at.file().ends_with("any_input.rs"));
            if !ours {
                PANICS.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut messages) = PANIC_MESSAGES.lock() {
                    messages.push(cut(&info.to_string()));
                }
            }
            previous(info);
        }));
    });
}

// ---- a small seeded generator ---------------------------------------------------------

/// SplitMix64: deterministic, dependency-free, good enough to pick from tables.
struct Rng(u64);

impl Rng {
    fn for_tool(tool: &str) -> Self {
        // FNV-1a of the tool's name, mixed with the seed.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in tool.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(hash ^ SEED)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---- what each tool takes: read from the server's own tools/list ------------------------

/// The kind of value a parameter expects, read from its input schema (the JSON type, the
/// allowed words of an enumeration, the shape of an array's items) and, for strings, from the
/// parameter's name where the generator knows values that probe it harder (gist ids and links,
/// usernames, dates, commit shas, filenames, confirmation tokens); any other string is `Text`.
#[derive(Debug, Clone, Copy)]
enum Kind {
    GistId,
    Text,
    Username,
    Date,
    Sha,
    Filename,
    Enum(&'static [&'static str]),
    Count,
    Flag,
    /// An array of `{filename, content}` objects.
    Files,
    /// An array of `{op, filename, …}` objects; the allowed ops.
    FileOps(&'static [&'static str]),
    /// An array of plain strings.
    Filenames,
    /// An array of words of an enumeration.
    Fields(&'static [&'static str]),
    ConfirmToken,
}

impl Kind {
    fn is_string(self) -> bool {
        matches!(
            self,
            Self::GistId
                | Self::Text
                | Self::Username
                | Self::Date
                | Self::Sha
                | Self::Filename
                | Self::Enum(_)
                | Self::ConfirmToken
        )
    }

    fn is_array(self) -> bool {
        matches!(
            self,
            Self::Files | Self::FileOps(_) | Self::Filenames | Self::Fields(_)
        )
    }
}

#[derive(Debug, Clone, Copy)]
struct Param {
    name: &'static str,
    kind: Kind,
    required: bool,
}

/// Every listed tool's parameters, learnt from the server's first `tools/list` answer in this
/// process (every server here lists the same tools), as the fuzz target reads them: a new tool
/// or parameter is in the cases without an edit here.
static PARAMS: OnceLock<BTreeMap<String, &'static [Param]>> = OnceLock::new();

/// Learns every tool's parameters from `listed` (the first answer wins; later ones must agree
/// on the names).
fn learn_params(listed: &[rmcp::model::Tool]) {
    let learnt = PARAMS.get_or_init(|| {
        listed
            .iter()
            .map(|tool| {
                let params: &'static [Param] = Vec::leak(params_from_schema(&tool.input_schema));
                (tool.name.to_string(), params)
            })
            .collect()
    });
    let names: BTreeSet<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    let known: BTreeSet<&str> = learnt.keys().map(String::as_str).collect();
    assert_eq!(names, known, "two servers listed different tools");
}

/// `tool`'s parameters, as its listed input schema declares them.
fn params_of(tool: &str) -> &'static [Param] {
    PARAMS
        .get()
        .and_then(|params| params.get(tool))
        .copied()
        .unwrap_or_else(|| panic!("tools/list did not list {tool:?} (or was not read yet)"))
}

/// Every word of every enumeration the tools take (a wrong word for one is a real word of
/// another).
fn all_enum_words() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = PARAMS
        .get()
        .into_iter()
        .flat_map(|params| params.values())
        .flat_map(|params| params.iter())
        .flat_map(|param| match param.kind {
            Kind::Enum(words) | Kind::Fields(words) | Kind::FileOps(words) => words,
            _ => &[],
        })
        .copied()
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// `node` with a `$ref` into the schema's `$defs` followed, and of an `anyOf` the one branch
/// that is not `null`.
fn resolve<'a>(schema: &'a Map<String, Value>, node: &'a Value) -> &'a Value {
    if let Some(name) = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        let target = schema
            .get("$defs")
            .and_then(|defs| defs.get(name))
            .unwrap_or_else(|| panic!("a $ref to a missing definition {name:?}"));
        return resolve(schema, target);
    }
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        let real: Vec<&Value> = branches
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [one] = real[..] {
            return resolve(schema, one);
        }
    }
    node
}

/// The words of an enumeration (`oneOf` of `const`s, or `enum`), if `node` is one.
fn enum_words(node: &Value) -> Option<&'static [&'static str]> {
    let words: Vec<&'static str> =
        if let Some(branches) = node.get("oneOf").and_then(Value::as_array) {
            branches
                .iter()
                .map(|b| b.get("const").and_then(Value::as_str).map(leak))
                .collect::<Option<_>>()?
        } else {
            node.get("enum")?
                .as_array()?
                .iter()
                .map(|w| w.as_str().map(leak))
                .collect::<Option<_>>()?
        };
    (!words.is_empty()).then(|| &*Vec::leak(words))
}

/// Whether `node`'s JSON type is (or, for a nullable one, includes) `ty`.
fn has_type(node: &Value, ty: &str) -> bool {
    match node.get("type") {
        Some(Value::String(one)) => one == ty,
        Some(Value::Array(many)) => many.iter().any(|t| t == ty),
        _ => false,
    }
}

fn kind_of(schema: &Map<String, Value>, name: &str, node: &Value) -> Kind {
    let node = resolve(schema, node);
    if let Some(words) = enum_words(node) {
        return Kind::Enum(words);
    }
    if has_type(node, "array") {
        let item = resolve(schema, node.get("items").unwrap_or(&Value::Null));
        if let Some(words) = enum_words(item) {
            return Kind::Fields(words);
        }
        if has_type(item, "object") {
            let properties = item.get("properties");
            return match properties.and_then(|p| p.get("op")) {
                Some(op) => Kind::FileOps(
                    enum_words(resolve(schema, op)).expect("a file op is one of a set of words"),
                ),
                None => Kind::Files,
            };
        }
        return Kind::Filenames;
    }
    if has_type(node, "boolean") {
        return Kind::Flag;
    }
    if has_type(node, "integer") || has_type(node, "number") {
        return Kind::Count;
    }
    match name {
        // `after`: search_gists' cursor, the id of the last gist a search examined.
        "gist_id" | "after" => Kind::GistId,
        "username" => Kind::Username,
        "since" | "expires_at" => Kind::Date,
        "sha" => Kind::Sha,
        "filename" => Kind::Filename,
        "confirm_token" => Kind::ConfirmToken,
        _ => Kind::Text,
    }
}

/// A tool's parameters, from its listed input schema, in the schema's order.
fn params_from_schema(schema: &Map<String, Value>) -> Vec<Param> {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, node)| Param {
                    name: leak(name),
                    kind: kind_of(schema, name, node),
                    required: required.contains(name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A well-formed call that hostile values are then put into. Never one that would write
/// without a person's approval: `create_gist` publishes (so the guard stops it), and every other
/// writing tool reads the gist first (and gets the 500).
fn base_args(tool: &str) -> Value {
    match tool {
        "list_gists" | "get_user" => json!({}),
        "search_gists" => json!({"query": "notes"}),
        "get_gist_file" => json!({"gist_id": ID, "filename": "a.md"}),
        "create_gist" => {
            json!({"visibility": "public", "files": [{"filename": "a.md", "content": "x"}]})
        }
        "update_gist" => json!({"gist_id": ID, "title": "t"}),
        "delete_gist_files" => json!({"gist_id": ID, "filenames": ["a.md"]}),
        "set_gist_like" => json!({"gist_id": ID, "liked": true}),
        _ => json!({"gist_id": ID}),
    }
}

// ---- hostile values ---------------------------------------------------------------------

/// Pieces hostile strings are made of.
const PIECES: &[&str] = &[
    "\0",
    "\u{1}",
    "\u{7}",
    "\u{7f}",
    "\u{1b}[2J",
    "\r\n",
    "\t",
    "\u{85}",
    "\u{2028}",
    "\u{FFFD}",
    "\u{202E}",
    "\u{202D}",
    "\u{2066}",
    "\u{200B}",
    "\u{200D}",
    "\u{200F}",
    "\u{FEFF}",
    "\u{0301}",
    "/",
    "..",
    "\\",
    "%00",
    "%2e%2e%2f",
    "?",
    "#",
    "&",
    "'",
    "\"",
    "<",
    ">",
    "{",
    "}",
    "$",
    " ",
    "a",
    "Z",
    "0",
    "f",
    "é",
    "𝔘",
    "🦀",
    "ｆ",
];

/// Strings that are wrong wherever a string is expected.
const NASTY: &[&str] = &[
    "",
    " ",
    "\0",
    "a\0b",
    "\u{1}\u{7}\u{1b}[31m\r\n\t",
    "\u{FFFD}",
    "\u{FFFD}\u{FFFD}\u{FFFD}",
    "\u{202E}dm.exe",
    "\u{200B}\u{200D}\u{FEFF}",
    "\u{2066}x\u{2069}",
    "../../etc/passwd",
    "..\\..\\windows\\system32\\config",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/etc/passwd",
    "1e309",
    "18446744073709551616",
    "-1",
    "HEAD",
    "null",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "${jndi:ldap://127.0.0.1/x}",
    "{{7*7}}",
    "Z\u{0335}\u{0336}\u{0337}a\u{0338}\u{0334}l\u{0321}g\u{0322}o\u{0327}",
];

/// A string of 1 to 64 hostile pieces.
fn noise(rng: &mut Rng) -> String {
    let count = 1 + rng.below(64);
    (0..count).map(|_| *rng.pick(PIECES)).collect()
}

fn hostile_string(rng: &mut Rng) -> (Value, String) {
    match rng.below(10) {
        0..=5 => {
            let text = *rng.pick(NASTY);
            (json!(text), format!("{text:?}"))
        }
        6..=8 => {
            let text = noise(rng);
            (json!(text), format!("noise {text:?}"))
        }
        _ => {
            let size = 1024 * (1 + rng.below(64));
            let text = noise(rng).repeat(size / 16 + 1);
            (json!(text), format!("{} bytes of noise", text.len()))
        }
    }
}

/// Gist references that must not resolve to a gist (or, for a few, must be read first).
fn hostile_gist_id(rng: &mut Rng, base: &str) -> (Value, String) {
    let upper = ID.to_ascii_uppercase();
    let choices: Vec<String> = vec![
        upper.clone(),
        format!(" {upper}\n"),
        ID[..31].to_owned(),
        format!("{ID}0"),
        format!("{}\u{200B}{}", &ID[..16], &ID[16..]),
        format!("{ID}\0"),
        "０１２３４５６７８９ａｂｃｄｅｆ０１２３４５６７８９ａｂｃｄｅｆ".to_owned(),
        format!("{}g", &ID[..31]),
        format!("https://gist.github.com/alice/{ID}"),
        format!("http://127.0.0.2:1/alice/{ID}"),
        format!(
            "http://evil.example@{}/alice/{ID}",
            base.trim_start_matches("http://")
        ),
        format!("https://{}/alice/{ID}", base.trim_start_matches("http://")),
        format!("ftp://{}/alice/{ID}", base.trim_start_matches("http://")),
        "file:///etc/passwd".to_owned(),
        "javascript:alert(1)".to_owned(),
        "data:text/plain,hi".to_owned(),
        "http://[::1]:0/".to_owned(),
        format!("{base}/../../etc/passwd"),
        format!("{base}/%2e%2e/%2e%2e/etc/passwd"),
        format!("{base}/api/gists/{ID}"),
        format!("{base}/admin-panel/{ID}"),
        format!("{base}/alice/{upper}.git"),
        format!("{base}/alice/{ID}/raw/HEAD/../../../etc/passwd"),
        format!("{base}//{ID}"),
        format!("{base}/alice/"),
        format!("{base}/"),
        format!("{base}/alice/my-notes?x=1#y"),
        format!("{base}/{}/{ID}", "a".repeat(300)),
        format!("{base}/alice/\u{202E}{ID}"),
        format!("{base}/al ice/{ID}"),
        format!("{base}/alice/{ID}\u{0}"),
    ];
    let text = rng.pick(&choices).clone();
    if rng.below(3) == 0 {
        hostile_string(rng)
    } else {
        let label = format!("{:?}", cut(&text));
        (json!(text), label)
    }
}

fn hostile_enum(rng: &mut Rng, valid: &[&str]) -> (Value, String) {
    let word = *rng.pick(valid);
    let mut capital = word.to_owned();
    capital[..1].make_ascii_uppercase();
    let mut others: Vec<&str> = all_enum_words()
        .into_iter()
        .filter(|w| !valid.contains(w))
        .collect();
    if others.is_empty() {
        others.push("unknown");
    }
    let choices = [
        capital,
        word.to_ascii_uppercase(),
        format!("{word} "),
        format!(" {word}"),
        format!("{word}\0"),
        format!("\u{200B}{word}"),
        format!("{word}\u{FFFD}"),
        format!("\u{202E}{}", word.chars().rev().collect::<String>()),
        (*rng.pick(&others)).to_owned(),
        "all".to_owned(),
        "*".to_owned(),
        String::new(),
    ];
    let text = rng.pick(&choices).clone();
    // Never an exact valid word: `create_gist` with `private` would write without a question.
    assert!(!valid.contains(&text.as_str()));
    let label = format!("{text:?}");
    (json!(text), label)
}

fn hostile_count(rng: &mut Rng) -> (Value, String) {
    let choices: [(Value, &str); 14] = [
        (json!(0), "0"),
        (json!(101), "101"),
        (json!(-1), "-1"),
        (json!(u64::MAX), "u64::MAX"),
        (json!(u64::from(u32::MAX) + 1), "u32::MAX + 1"),
        (json!(i64::MIN), "i64::MIN"),
        (json!(1.5), "1.5"),
        (json!(1e300), "1e300"),
        (json!(18_446_744_073_709_551_616.0_f64), "2^64 (beyond u64)"),
        (json!(-0.0_f64), "-0.0"),
        (json!("1e309"), "\"1e309\""),
        (json!("18446744073709551616"), "\"18446744073709551616\""),
        (json!("-1"), "\"-1\""),
        (json!("0x10"), "\"0x10\""),
    ];
    let (value, label) = rng.pick(&choices).clone();
    (value, label.to_owned())
}

fn hostile_sha(rng: &mut Rng) -> (Value, String) {
    let choices = [
        "HEAD",
        "head",
        "HEAD~1",
        "HEAD^",
        "main",
        "abc",
        "0123456789abcdef0123456789abcdef012345678",
        "0123456789abcdef0123456789abcdef01234567890",
        "g123",
        "../HEAD",
        "ABCD\0",
        "０１２３",
    ];
    if rng.below(4) == 0 {
        return hostile_string(rng);
    }
    let text = *rng.pick(&choices);
    (json!(text), format!("{text:?}"))
}

fn hostile_date(rng: &mut Rng) -> (Value, String) {
    let choices = [
        "2025-13-45T99:99:99Z",
        "9999999999-01-01T00:00:00Z",
        "-292277022657-01-27T08:29:52Z",
        "+262143-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z",
        "0000-00-00",
        "2025-01-31T00:00:00+25:00",
        "2025-01-31",
        "now",
        "yesterday",
        "1e309",
        "2025-01-31T00:00:00.9999999999999999999Z",
    ];
    if rng.below(4) == 0 {
        return hostile_string(rng);
    }
    let text = *rng.pick(&choices);
    (json!(text), format!("{text:?}"))
}

fn hostile_username(rng: &mut Rng) -> (Value, String) {
    let long = "a".repeat(256);
    let choices = [
        "../admin",
        "a/b",
        long.as_str(),
        "admin?x=1",
        "user#frag",
        "%00",
        "alice/../../api",
        ".",
        "..",
        "-",
        "@alice",
    ];
    if rng.below(3) == 0 {
        return hostile_string(rng);
    }
    let text = *rng.pick(&choices);
    (json!(text), format!("{:?}", cut(text)))
}

fn hostile_filename(rng: &mut Rng) -> (Value, String) {
    let long = "a".repeat(300);
    let choices = [
        "a/b",
        "/etc/passwd",
        ".",
        "..",
        long.as_str(),
        "CON",
        "a\\b",
        "a.md\0.txt",
        "\u{202E}dm.exe",
        ".git/config",
    ];
    if rng.below(3) == 0 {
        return hostile_string(rng);
    }
    let text = *rng.pick(&choices);
    (json!(text), format!("{:?}", cut(text)))
}

fn hostile_token(rng: &mut Rng) -> (Value, String) {
    let choices = [
        "x".to_owned(),
        "v1.AAAA.BBBB".to_owned(),
        "eyJhbGciOiJub25lIn0.eyJhcHByb3ZlIjp0cnVlfQ.".to_owned(),
        "A".repeat(100 * 1024),
        format!("{}\0", "Zm9v".repeat(16)),
        OPENGIST_TOKEN[..3].to_owned(),
        "approve=true".to_owned(),
    ];
    if rng.below(3) == 0 {
        return hostile_string(rng);
    }
    let text = rng.pick(&choices).clone();
    let label = format!("{:?}", cut(&text));
    (json!(text), label)
}

fn hostile_file(rng: &mut Rng) -> (Value, String) {
    let (name, name_label) = if rng.below(2) == 0 {
        hostile_filename(rng)
    } else {
        (json!("a.md"), "\"a.md\"".to_owned())
    };
    let (content, content_label) = hostile_string(rng);
    match rng.below(6) {
        0 => (
            json!({"filename": name}),
            format!("{{filename: {name_label}}}"),
        ),
        1 => (
            json!({"content": content}),
            format!("{{content: {content_label}}}"),
        ),
        2 => (
            json!({"filename": name, "content": content, "mode": "0755"}),
            "a file with an extra field".to_owned(),
        ),
        3 => (json!("a.md"), "a bare string".to_owned()),
        _ => (
            json!({"filename": name, "content": content}),
            format!("{{filename: {name_label}, content: {content_label}}}"),
        ),
    }
}

fn hostile_file_op(rng: &mut Rng, ops: &[&str]) -> (Value, String) {
    let (op, op_label) = if rng.below(3) == 0 {
        hostile_enum(rng, ops)
    } else {
        // A listed op, or one that is not offered (deleting a file is another tool's work).
        let mut words = ops.to_vec();
        words.push("delete");
        let op = *rng.pick(&words);
        (json!(op), format!("{op:?}"))
    };
    let (name, _) = hostile_filename(rng);
    let (content, _) = hostile_string(rng);
    let value = match rng.below(5) {
        0 => json!({"op": op, "filename": name}),
        1 => json!({"op": op, "filename": name, "new_filename": name, "content": content}),
        2 => json!({"op": op, "filename": "a.md", "content": content}),
        3 => json!({"op": op, "filename": "a.md", "content": "", "extra": true}),
        _ => json!({"op": op, "new_filename": name}),
    };
    (value, format!("file op {op_label}"))
}

fn hostile_array(rng: &mut Rng, kind: Kind) -> (Value, String) {
    let element = |rng: &mut Rng| -> (Value, String) {
        match kind {
            Kind::Files => hostile_file(rng),
            Kind::FileOps(ops) => hostile_file_op(rng, ops),
            Kind::Fields(words) => hostile_enum(rng, words),
            _ => hostile_filename(rng),
        }
    };
    match rng.below(7) {
        0 => (json!([]), "[]".to_owned()),
        1 => {
            let items: Vec<Value> = (0..51).map(|_| element(rng).0).collect();
            (Value::Array(items), "51 hostile elements".to_owned())
        }
        2 => {
            let (wrong, label) = wrong_type(rng, Kind::Text);
            (json!([wrong]), format!("[{label}]"))
        }
        3 => {
            let (one, label) = element(rng);
            (json!([one.clone(), one]), format!("[{label}] twice"))
        }
        _ => {
            let count = 1 + rng.below(4);
            let (items, labels): (Vec<Value>, Vec<String>) =
                (0..count).map(|_| element(rng)).unzip();
            (Value::Array(items), format!("[{}]", labels.join(", ")))
        }
    }
}

/// A value of the wrong JSON type for `kind`.
fn wrong_type(rng: &mut Rng, kind: Kind) -> (Value, String) {
    let numbers = [
        (json!(0), "0"),
        (json!(-1), "-1"),
        (json!(1.5), "1.5"),
        (json!(u64::MAX), "u64::MAX"),
        (json!(i64::MIN), "i64::MIN"),
    ];
    let strings = [
        (json!("1"), "\"1\""),
        (json!("true"), "\"true\""),
        (json!("1e309"), "\"1e309\""),
        (json!(""), "\"\""),
        (json!("[]"), "\"[]\""),
    ];
    let others = [
        (json!(true), "true"),
        (json!(false), "false"),
        (Value::Null, "null"),
        (json!([]), "[]"),
        (json!(["a.md", 1, null]), "[\"a.md\", 1, null]"),
        (json!({}), "{}"),
        (json!({"gist_id": ID, "$ref": "#"}), "an object"),
    ];
    let (value, label) = match rng.below(3) {
        0 if !kind.is_string() => rng.pick(&strings).clone(),
        0 | 1 if !matches!(kind, Kind::Count) => rng.pick(&numbers).clone(),
        _ => {
            // Of the others, not the one type this kind accepts.
            loop {
                let candidate = rng.pick(&others).clone();
                let fits = match candidate.0 {
                    Value::Bool(_) => matches!(kind, Kind::Flag),
                    Value::Array(_) => kind.is_array(),
                    _ => false,
                };
                if !fits {
                    break candidate;
                }
            }
        }
    };
    (value, format!("wrong type {label}"))
}

/// A hostile value of the right JSON type (for flags, there is none: a wrong type).
fn hostile_value(rng: &mut Rng, kind: Kind, base: &str) -> (Value, String) {
    match kind {
        Kind::GistId => hostile_gist_id(rng, base),
        Kind::Text => hostile_string(rng),
        Kind::Username => hostile_username(rng),
        Kind::Date => hostile_date(rng),
        Kind::Sha => hostile_sha(rng),
        Kind::Filename => hostile_filename(rng),
        Kind::Enum(valid) => hostile_enum(rng, valid),
        Kind::Count => hostile_count(rng),
        Kind::Flag => wrong_type(rng, kind),
        Kind::ConfirmToken => hostile_token(rng),
        Kind::Files | Kind::FileOps(_) | Kind::Filenames | Kind::Fields(_) => {
            hostile_array(rng, kind)
        }
    }
}

/// `{"a": {"a": ... "x" ...}}`, `depth` objects deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!("x"), |inner, _| json!({ "a": inner }))
}

// ---- the cases --------------------------------------------------------------------------

struct Case {
    label: String,
    args: Option<Map<String, Value>>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The fixed cases and `RANDOM_CASES` generated ones for `tool`, with gist links made against
/// `base` (the configured instance, or a made-up one for the unconfigured server).
fn cases_for(tool: &str, base: &str) -> Vec<Case> {
    let params = params_of(tool);
    let mut rng = Rng::for_tool(tool);
    let mut cases = Vec::new();
    let mut with = |label: String, args: Map<String, Value>| {
        cases.push(Case {
            label,
            args: Some(args),
        });
    };
    let base_map = object(base_args(tool));

    with("{}".to_owned(), Map::new());

    for param in params {
        // A wrong type for every known parameter.
        let (value, label) = wrong_type(&mut rng, param.kind);
        let mut args = base_map.clone();
        args.insert(param.name.to_owned(), value);
        with(format!("{} = {label}", param.name), args);
        // Every required field missing, one at a time.
        if param.required {
            let mut args = base_map.clone();
            args.remove(param.name);
            with(format!("without {}", param.name), args);
        }
        // The named edge values.
        let edges: Vec<(Value, &str)> = match (param.name, param.kind) {
            ("per_page", _) => vec![(json!(0), "0"), (json!(101), "101"), (json!(-1), "-1")],
            ("offset", _) => vec![
                (json!(18_446_744_073_709_551_616.0_f64), "2^64"),
                (json!("18446744073709551616"), "\"2^64\""),
                (json!(-1), "-1"),
            ],
            ("sha", _) => vec![(json!("HEAD"), "\"HEAD\"")],
            ("user_id", _) => vec![(json!(u64::MAX), "u64::MAX"), (json!(-1), "-1")],
            (_, Kind::GistId) => vec![
                (json!("../../etc/passwd"), "path traversal"),
                (json!(ID.to_ascii_uppercase()), "uppercase hex"),
                (
                    json!(format!("{base}/alice/{ID}/raw/HEAD/a.md")),
                    "odd link",
                ),
            ],
            (_, Kind::ConfirmToken) => vec![(json!("A".repeat(100 * 1024)), "100 KiB")],
            _ => Vec::new(),
        };
        for (value, label) in edges {
            let mut args = base_map.clone();
            args.insert(param.name.to_owned(), value);
            with(format!("{} = {label}", param.name), args);
        }
    }

    // Once per tool: a 1 MiB string, a 10 000-element array, and 100 levels of nesting.
    let string_param = params
        .iter()
        .find(|p| p.kind.is_string() && !matches!(p.kind, Kind::Enum(_)))
        .expect("every tool takes a free-form string");
    let mut args = base_map.clone();
    args.insert(
        string_param.name.to_owned(),
        json!(format!("{}\u{202E}\0", "\u{FFFD}a".repeat(MIB / 4))),
    );
    with(format!("{} = 1 MiB", string_param.name), args);

    let (array_name, big) = match params.iter().find(|p| p.kind.is_array()) {
        Some(p) if matches!(p.kind, Kind::Files) => (
            p.name,
            Value::Array(
                (0..10_000)
                    .map(|i| json!({"filename": format!("f{i}"), "content": "x"}))
                    .collect(),
            ),
        ),
        Some(p) if matches!(p.kind, Kind::FileOps(_)) => (
            p.name,
            Value::Array(
                (0..10_000)
                    .map(|i| json!({"op": "write", "filename": format!("f{i}"), "content": "x"}))
                    .collect(),
            ),
        ),
        Some(&Param {
            name,
            kind: Kind::Fields(words),
            ..
        }) => (
            name,
            Value::Array((0..10_000).map(|i| json!(words[i % words.len()])).collect()),
        ),
        Some(p) => (
            p.name,
            Value::Array((0..10_000).map(|i| json!(format!("f{i}"))).collect()),
        ),
        None => (
            params[0].name,
            Value::Array((0..10_000).map(|i| json!(i)).collect()),
        ),
    };
    let mut args = base_map.clone();
    args.insert(array_name.to_owned(), big);
    with(format!("{array_name} = 10 000 elements"), args);

    let mut args = base_map.clone();
    args.insert(params[0].name.to_owned(), nested(100));
    with(format!("{} = 100 nested objects", params[0].name), args);

    // The generated ones: one to three changes to the well-formed call.
    for _ in 0..RANDOM_CASES {
        let mut args = base_map.clone();
        let mut labels = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let param = *rng.pick(params);
            match rng.below(20) {
                0..=8 => {
                    let (value, label) = hostile_value(&mut rng, param.kind, base);
                    args.insert(param.name.to_owned(), value);
                    labels.push(format!("{} = {label}", param.name));
                }
                9..=13 => {
                    let (value, label) = wrong_type(&mut rng, param.kind);
                    args.insert(param.name.to_owned(), value);
                    labels.push(format!("{} = {label}", param.name));
                }
                14..=15 => {
                    let required: Vec<&str> = params
                        .iter()
                        .filter(|p| p.required)
                        .map(|p| p.name)
                        .collect();
                    let missing = if required.is_empty() {
                        param.name
                    } else {
                        *rng.pick(&required)
                    };
                    args.remove(missing);
                    labels.push(format!("without {missing}"));
                }
                _ => {
                    let names = [
                        "gist_ids",
                        "GIST_ID",
                        "",
                        " ",
                        "__proto__",
                        "constructor",
                        "confirm_token_",
                        "a\0b",
                        "\u{202E}di_tsig",
                        "approve",
                        "_meta",
                    ];
                    let name = *rng.pick(&names);
                    let (value, label) = hostile_string(&mut rng);
                    args.insert(name.to_owned(), value);
                    labels.push(format!("unknown field {name:?} = {label}"));
                }
            }
        }
        with(labels.join("; "), args);
    }
    cases
}

/// Every case for `tool`, the one without an `arguments` member first.
fn all_cases(tool: &str, base: &str) -> Vec<Case> {
    let mut cases = vec![Case {
        label: "no arguments".to_owned(),
        args: None,
    }];
    cases.extend(cases_for(tool, base));
    cases
}

/// Whether `args` make a well-formed `fork_gist` call. Forking is not guarded by design (it
/// only adds a copy to the token owner's gists, and is idempotent), so a valid gist id, in any
/// spelling the server accepts (uppercase, or a link to it on this instance), rightly sends the
/// POST at once. Those are legitimate calls, not hostile ones, so they are left out; every
/// other case must send nothing but GETs.
fn is_valid_fork(tool: &str, args: Option<&Map<String, Value>>, base: &Url) -> bool {
    let Some(args) = args else { return false };
    tool == "fork_gist"
        && args.len() == 1
        && args
            .get("gist_id")
            .and_then(Value::as_str)
            .is_some_and(|id| matches!(GistRef::parse(id, base), Ok(GistRef::Id(_))))
}

// ---- the run ----------------------------------------------------------------------------

#[derive(Default)]
struct Tally {
    calls: usize,
    tool_errors: usize,
    invalid_params: usize,
    skipped_valid_forks: usize,
    failures: Vec<String>,
}

/// The tools `session`'s server lists, their parameters learnt (see [`learn_params`]); every
/// tool of the catalog, or the test fails here.
async fn listed_tools(session: &Session) -> Vec<String> {
    let listed = tokio::time::timeout(CALL_TIMEOUT, session.client.list_all_tools())
        .await
        .expect("tools/list answers in time")
        .expect("tools/list answers");
    learn_params(&listed);
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    let catalog: BTreeSet<&str> = catalog::names().collect();
    assert_eq!(
        names.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        catalog,
        "tools/list lists the catalog's tools"
    );
    names
}

async fn run(kind: ServerKind, era: Era, tally: &mut Tally) {
    let faulty = match kind {
        ServerKind::Faulty => Some(Faulty::start().await),
        ServerKind::Unconfigured => None,
    };
    let (server, base) = match &faulty {
        Some(faulty) => (configured_server(&faulty.url()), faulty.url()),
        None => (
            OpengistServer::unconfigured(),
            "http://gist.invalid".to_owned(),
        ),
    };
    let base_url = Url::parse(&base).expect("base url");
    let session = Session::open(era, server).await;
    // The cases are made from what the server lists: its tools and their input schemas.
    let tools = listed_tools(&session).await;
    for tool in &tools {
        for case in all_cases(tool, &base) {
            if faulty.is_some() && is_valid_fork(tool, case.args.as_ref(), &base_url) {
                tally.skipped_valid_forks += 1;
                continue;
            }
            let shown = case.args.as_ref().map_or_else(
                || "(none)".to_owned(),
                |a| cut(&Value::Object(a.clone()).to_string()),
            );
            let writes_before = faulty.as_ref().map_or(0, |f| f.writes().len());
            tally.calls += 1;
            match session.call(tool, case.args).await {
                Answer::ToolError => tally.tool_errors += 1,
                Answer::InvalidParams => tally.invalid_params += 1,
                Answer::Wrong(evidence) => tally.failures.push(format!(
                    "{kind:?}/{era:?} {tool} [{}] {shown}: {evidence}",
                    case.label
                )),
            }
            if let Some(faulty) = &faulty {
                let writes = faulty.writes();
                if writes.len() > writes_before {
                    tally.failures.push(format!(
                        "{kind:?}/{era:?} {tool} [{}] {shown}: reached Opengist with {:?}",
                        case.label,
                        &writes[writes_before..]
                    ));
                }
            }
        }
    }

    // The same session still answers, and lists the same tools as before the run.
    match tokio::time::timeout(CALL_TIMEOUT, session.client.list_all_tools()).await {
        Ok(Ok(listed)) => {
            let names: BTreeSet<String> = listed.iter().map(|t| t.name.to_string()).collect();
            let expected: BTreeSet<String> = tools.iter().cloned().collect();
            if names != expected {
                tally.failures.push(format!(
                    "{kind:?}/{era:?}: tools/list after the run names {names:?}"
                ));
            }
        }
        Ok(Err(error)) => tally.failures.push(format!(
            "{kind:?}/{era:?}: tools/list after the run failed: {error}"
        )),
        Err(_) => tally.failures.push(format!(
            "{kind:?}/{era:?}: tools/list after the run did not answer"
        )),
    }
    if let Some(faulty) = &faulty {
        let writes = faulty.writes();
        if !writes.is_empty() {
            tally.failures.push(format!(
                "{kind:?}/{era:?}: the stand-in saw writes: {writes:?}"
            ));
        }
        eprintln!(
            "{kind:?}/{era:?}: the stand-in answered {} GETs with a 500; {} dialog(s) declined",
            faulty.requests(),
            session.person.asked()
        );
    }
    let _ = session.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_tool_answers_any_input_with_an_error_and_writes_nothing() {
    count_panics();
    let started = Instant::now();
    let mut tally = Tally::default();
    for kind in [ServerKind::Unconfigured, ServerKind::Faulty] {
        for era in [Era::Legacy, Era::Modern] {
            run(kind, era, &mut tally).await;
        }
    }
    let panics = PANICS.load(Ordering::SeqCst);
    let mut report = String::new();
    for failure in &tally.failures {
        let _ = writeln!(report, "- {failure}");
    }
    for message in PANIC_MESSAGES.lock().expect("panic messages").iter() {
        let _ = writeln!(report, "- panic: {message}");
    }
    eprintln!(
        "{} calls in {:.1?}: {} tool errors, {} invalid-params errors, {} valid fork_gist ids left out",
        tally.calls,
        started.elapsed(),
        tally.tool_errors,
        tally.invalid_params,
        tally.skipped_valid_forks
    );
    assert!(
        tally.failures.is_empty() && panics == 0,
        "{} of {} calls went wrong, {panics} panic(s):\n{report}",
        tally.failures.len(),
        tally.calls
    );
}

// ---- nesting beyond serde_json's limit ----------------------------------------------------
//
// serde_json stops at 128 levels, so a request whose arguments nest about 125 objects or more
// cannot be parsed at all. rmcp 3.11's stdio transport (`AsyncRwTransport::receive`) treats that
// like any unparsable line and drops it without a reply, so the call never got an answer.
// Worse, in the modern era the server completes its setup only on the first request after
// `server/discover`: if that request is the one dropped, the client's `notifications/cancelled`
// (which rmcp sends when the caller stops waiting) arrives first, `serve` fails with
// `ExpectedInitializeRequest` and the connection closes. `opengist_mcp::stdio` answers such a
// line itself (-32602 naming the argument) before rmcp sees it.

/// Every tool, both eras, both servers: after one ordinary call, arguments nested 200 objects
/// deep must be answered like any other bad input, and the session must go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn arguments_nested_200_deep_get_an_answer() {
    count_panics();
    let mut runs = Vec::new();
    for kind in [ServerKind::Unconfigured, ServerKind::Faulty] {
        for era in [Era::Legacy, Era::Modern] {
            runs.push(async move {
                let faulty = match kind {
                    ServerKind::Faulty => Some(Faulty::start().await),
                    ServerKind::Unconfigured => None,
                };
                let server = faulty
                    .as_ref()
                    .map_or_else(OpengistServer::unconfigured, |f| {
                        configured_server(&f.url())
                    });
                let session = Session::open(era, server).await;
                let mut failures = Vec::new();
                if let Answer::Wrong(evidence) = session.call("get_gist", None).await {
                    failures.push(format!("{kind:?}/{era:?}: the first call: {evidence}"));
                }
                let tools = listed_tools(&session).await;
                let calls = tools.iter().map(|tool| {
                    let mut args = object(base_args(tool));
                    let name = params_of(tool)[0].name;
                    args.insert(name.to_owned(), nested(200));
                    let session = &session;
                    async move {
                        match session.call(tool, Some(args)).await {
                            Answer::Wrong(evidence) => Some(format!(
                                "{kind:?}/{era:?} {tool} [{name} = 200 nested objects]: {evidence}"
                            )),
                            Answer::ToolError | Answer::InvalidParams => None,
                        }
                    }
                });
                failures.extend(futures::future::join_all(calls).await.into_iter().flatten());
                if !matches!(
                    tokio::time::timeout(CALL_TIMEOUT, session.client.list_all_tools()).await,
                    Ok(Ok(_))
                ) {
                    failures.push(format!("{kind:?}/{era:?}: tools/list no longer answers"));
                }
                if let Some(writes) = faulty.as_ref().map(Faulty::writes)
                    && !writes.is_empty()
                {
                    failures.push(format!("{kind:?}/{era:?}: writes {writes:?}"));
                }
                failures
            });
        }
    }
    let failures: Vec<String> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert!(
        failures.is_empty() && PANICS.load(Ordering::SeqCst) == 0,
        "{} call(s) went wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Modern era: when the first call of a session is nested 200 objects deep and the client gives
/// up on it, the session must still answer.
#[tokio::test]
async fn a_deep_first_call_does_not_end_a_modern_session() {
    let session = Session::open(Era::Modern, OpengistServer::unconfigured()).await;
    let mut args = Map::new();
    args.insert("gist_id".to_owned(), nested(200));
    let first = match session.call("get_gist", Some(args)).await {
        Answer::Wrong(evidence) => evidence,
        Answer::ToolError | Answer::InvalidParams => "answered".to_owned(),
    };
    let listed = tokio::time::timeout(CALL_TIMEOUT, session.client.list_all_tools()).await;
    assert!(
        matches!(listed, Ok(Ok(_))),
        "get_gist {{gist_id: 200 nested objects}} as the first call: {first}; then tools/list: {:?}",
        listed.map(|r| r.map(|tools| tools.len()))
    );
}
