//! MCP over stdio where every line gets an answer.
//!
//! rmcp's own stdio transport drops a line it cannot parse without a reply (invalid UTF-8, a
//! lone surrogate, JSON nested deeper than serde_json's 128 levels, a line over its 16 MiB
//! cap), and it hands a `tools/call` whose `params` have a wrong type (a number for
//! `requestState`) to the server as an unknown method, which answers `-32601 tools/call`.
//! A client waiting for those answers waits forever; in the 2026-07-28 era a dropped first
//! request also ends the session (its cancellation reaches the server first).
//!
//! [`StdioTransport`] frames the lines itself and checks each one before rmcp sees it:
//!
//! | line | answer |
//! |---|---|
//! | longer than [`MAX_LINE_BYTES`] | `-32600`, with the id when the line's first 64 KiB show one |
//! | not UTF-8 | `-32600` with the id when the envelope is readable, else `-32700` (id `null`) |
//! | not JSON | `-32700`, id `null` |
//! | a batch (an array), or not an object | `-32600`, id `null`: MCP has no batches |
//! | an id that is not a string or an integer | `-32600`, id `null` |
//! | `jsonrpc` other than `"2.0"` | `-32600` with the id |
//! | nested deeper than [`MAX_DEPTH`] | `tools/call`: `-32602` naming the argument; else `-32600` |
//! | more than [`MAX_VALUES`] JSON values | `-32600` with the id, unparsed |
//! | a known method whose `params` do not fit (a lone surrogate, a wrong type) | `-32602` naming the field |
//!
//! Everything else goes to rmcp unchanged, so rmcp answers it as before (an unknown method is
//! still its `-32601`). Notifications with a method MCP does not define are ignored, as rmcp
//! does, for clients that share the pipe with other protocols.
//!
//! Depth is checked before parsing rather than by parsing with an unbounded depth: the check is
//! a single pass over bytes with a counter (no recursion, so no input can overflow the stack),
//! and the envelope (`jsonrpc`, `id`, `method`, `params.name`, the argument names) is read with
//! serde_json's [`RawValue`], which skips values iteratively, so a deep line still yields the
//! id to answer and the argument to name. Parsing deep values for real would need a stack that
//! grows with the input; nothing in MCP needs more than a few dozen levels.
//!
//! Bounded work per line: the depth and the number of values are counted in that one pass
//! before anything is parsed, so a line of millions of tiny values is refused without building
//! them; the envelope is read as borrowed [`RawValue`]s; and a line longer than 64 KiB is
//! checked on Tokio's blocking pool ([`tokio::task::spawn_blocking`]), never on an async worker.
//!
//! The transport serves any [`rmcp::ServerHandler`], guarded or not: `handler.serve(stdio())`.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, JsonRpcMessage, NumberOrString};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// The longest line read, in bytes (16 MiB, as rmcp's own cap). A longer line is skipped to its
/// end and answered with `-32600`.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting of arrays and objects handed to rmcp: serde_json refuses the 128th
/// level. A deeper message is answered by the transport.
pub const MAX_DEPTH: usize = 127;

/// The most JSON values (arrays, objects, members and elements) in one message handed to rmcp.
/// Parsing builds every value in memory (tens of bytes each, whatever its text's size), so a
/// message of millions of tiny values costs far more memory and time than its length suggests;
/// no MCP request needs this many. A message with more is answered unparsed, `-32600` with the
/// id (`-32602` naming the argument of a tool call).
pub const MAX_VALUES: usize = 20_000;

/// The refusal of a message holding about `values` values, more than [`MAX_VALUES`]: for a
/// `tools/call`, `-32602` naming the argument that holds the most (as for a message nested too
/// deep); else `-32600`. `params` is the message's raw params; nothing in it is parsed but the
/// argument names (each value is skipped). Returns the JSON-RPC code and the message.
pub fn too_many_values(
    values: usize,
    method: Option<&str>,
    params: Option<&RawValue>,
) -> (i64, String) {
    if method == Some("tools/call")
        && let Some(params) = params
        && let Ok(call) = serde_json::from_str::<CallEnvelope>(params.get())
        && let Some((name, most)) = call
            .arguments
            .iter()
            .flatten()
            .map(|(name, raw)| (name, shape(raw.get().as_bytes()).values))
            .max_by_key(|(_, values)| *values)
    {
        return (
            INVALID_PARAMS,
            format!(
                "argument `{name}` holds about {most} JSON values; this server reads messages of \
                 up to {MAX_VALUES} (arrays, objects and their members): send fewer, larger \
                 values (text in one string rather than many small ones), or split the call"
            ),
        );
    }
    (
        INVALID_REQUEST,
        format!(
            "the message holds about {values} JSON values; this server reads messages of up to \
             {MAX_VALUES} (arrays, objects and their members): send fewer, larger values (text \
             in one string rather than many small ones)"
        ),
    )
}

/// Lines longer than this are checked on the blocking thread pool, off the async workers.
const CHECK_INLINE_BYTES: usize = 64 * 1024;

/// How much of an over-long line is kept to look for its id.
const PREFIX_BYTES: usize = 64 * 1024;

/// JSON-RPC: the line is not JSON (rmcp's [`ErrorCode::PARSE_ERROR`], -32700).
pub const PARSE_ERROR: i64 = ErrorCode::PARSE_ERROR.0 as i64;
/// JSON-RPC: the line is JSON but not a request this server can take
/// ([`ErrorCode::INVALID_REQUEST`], -32600).
pub const INVALID_REQUEST: i64 = ErrorCode::INVALID_REQUEST.0 as i64;
/// JSON-RPC: the request's params do not fit its method ([`ErrorCode::INVALID_PARAMS`],
/// -32602).
pub const INVALID_PARAMS: i64 = ErrorCode::INVALID_PARAMS.0 as i64;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The process's stdin and stdout as a [`StdioTransport`].
///
/// When both are pipes (the way MCP clients launch stdio servers) they are read and written on
/// Tokio's IO reactor ([`rmcp::transport::stdio_pipes`]), with no hand-off to the blocking
/// thread pool per line; otherwise (a terminal, a file) through the blocking handles.
///
/// # Panics
///
/// Outside a Tokio runtime with IO enabled, as rmcp's `stdio_pipes` does (`#[tokio::main]`
/// enables it): call it where the server is served.
pub fn stdio() -> StdioTransport<rmcp::transport::StdioReader, rmcp::transport::StdioWriter> {
    let (read, write) = rmcp::transport::stdio_pipes();
    StdioTransport::new(read, write)
}

type SharedWriter<W> = Arc<Mutex<Option<W>>>;

/// A newline-delimited JSON-RPC transport for servers that answers every line (see the module
/// documentation). `R` and `W` are any byte streams: stdin/stdout, a pipe, a duplex in tests.
pub struct StdioTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set while skipping the rest of an over-long line; holds its first bytes.
    oversized: Option<Vec<u8>>,
    write: SharedWriter<W>,
    /// The answer to the last refused line, still being written; awaited before the next one
    /// so a flood of bad lines cannot queue unbounded answers.
    answering: Option<JoinHandle<()>>,
    /// A long line being checked on the blocking pool; awaited (by reference, so a cancelled
    /// `receive` loses nothing) before the next line is read. It gives the line's buffer back.
    checking: Option<JoinHandle<(Verdict, Vec<u8>)>>,
}

impl<R, W> std::fmt::Debug for StdioTransport<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").finish_non_exhaustive()
    }
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads lines from `read` and writes messages, one per line, to `write`.
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            oversized: None,
            write: Arc::new(Mutex::new(Some(write))),
            answering: None,
            checking: None,
        }
    }

    /// Reads one whole line into `self.line` (without its `\n`), never buffering more than
    /// [`MAX_LINE_BYTES`]. Cancel-safe: all state lives in `self`, and bytes are consumed only
    /// after they were copied. `Ok(None)` at the end of input.
    async fn read_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let (consumed, done) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(None);
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                let chunk = &available[..newline.unwrap_or(available.len())];
                if let Some(prefix) = &mut self.oversized {
                    let room = PREFIX_BYTES.saturating_sub(prefix.len());
                    prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                } else if self.line.len() + chunk.len() > MAX_LINE_BYTES {
                    let mut prefix = std::mem::take(&mut self.line);
                    prefix.truncate(PREFIX_BYTES);
                    let room = PREFIX_BYTES - prefix.len();
                    prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    self.line.shrink_to(PREFIX_BYTES);
                    self.oversized = Some(prefix);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if done {
                return Ok(Some(match self.oversized.take() {
                    Some(prefix) => Line::Oversized(prefix),
                    None => Line::Whole,
                }));
            }
        }
    }

    fn answer(&mut self, answer: Vec<u8>) -> JoinHandle<()> {
        let write = self.write.clone();
        tokio::spawn(async move {
            if let Err(error) = write_line(&write, answer).await {
                tracing::debug!(%error, "could not write the answer to a refused line");
            }
        })
    }
}

enum Line {
    /// `self.line` holds a whole line.
    Whole,
    /// The line was too long; its first bytes.
    Oversized(Vec<u8>),
}

async fn write_line<W: AsyncWrite + Unpin>(
    write: &SharedWriter<W>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut guard = write.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&write, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(previous) = &mut self.answering {
                let _ = previous.await;
                self.answering = None;
            }
            let verdict = if let Some(checking) = self.checking.as_mut() {
                let checked = checking.await;
                self.checking = None;
                match checked {
                    Ok((verdict, mut buffer)) => {
                        // Reuse the buffer, without keeping a long line's worth of memory.
                        buffer.clear();
                        buffer.shrink_to(CHECK_INLINE_BYTES);
                        self.line = buffer;
                        verdict
                    }
                    Err(error) => {
                        tracing::error!(%error, "checking a line stopped");
                        Verdict::Refuse(error_response(
                            None,
                            INVALID_REQUEST,
                            "the message could not be checked; send it again",
                        ))
                    }
                }
            } else {
                let line = match self.read_line().await {
                    Ok(Some(line)) => line,
                    Ok(None) => return None,
                    Err(error) => {
                        tracing::error!(%error, "could not read from stdin");
                        return None;
                    }
                };
                match line {
                    Line::Whole if self.line.len() > CHECK_INLINE_BYTES => {
                        let line = std::mem::take(&mut self.line);
                        self.checking = Some(tokio::task::spawn_blocking(move || {
                            let verdict = check_line(&line);
                            (verdict, line)
                        }));
                        continue;
                    }
                    Line::Whole => {
                        let verdict = check_line(&self.line);
                        self.line.clear();
                        verdict
                    }
                    Line::Oversized(prefix) => Verdict::Refuse(oversized_answer(&prefix)),
                }
            };
            match verdict {
                Verdict::Pass(message) => return Some(*message),
                Verdict::Skip => {}
                Verdict::Refuse(answer) => {
                    let handle = self.answer(answer);
                    self.answering = Some(handle);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(previous) = self.answering.take() {
            let _ = previous.await;
        }
        let mut guard = self.write.lock().await;
        if let Some(mut writer) = guard.take() {
            writer.shutdown().await?;
        }
        Ok(())
    }
}

/// What to do with one line.
#[derive(Debug)]
pub enum Verdict {
    /// A message for rmcp.
    Pass(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do (an empty line, a foreign notification).
    Skip,
    /// Not for rmcp: write this answer (one JSON-RPC error response, no newline).
    Refuse(Vec<u8>),
}

/// The top of a JSON-RPC message, borrowed from the input: the raw values are slices of it,
/// and nothing below these members is built (serde_json skips the rest without recursing).
/// One definition for this transport and the HTTP wire check; not part of the API (public to
/// the fuzz targets only).
#[derive(Deserialize)]
// `result` and `error` are read by the HTTP wire check only.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub struct Envelope<'a> {
    /// `jsonrpc`, raw.
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a RawValue>,
    /// `id`, raw.
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    /// `method`, raw.
    #[serde(borrow, default)]
    pub method: Option<&'a RawValue>,
    /// `params`, raw.
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    /// Whether a non-null `result` is there (a response), skipped unread.
    #[serde(default)]
    pub result: Option<IgnoredAny>,
    /// Whether a non-null `error` is there (an error response), skipped unread.
    #[serde(default)]
    pub error: Option<IgnoredAny>,
}

/// `tools/call` params, values unparsed.
#[derive(Deserialize)]
struct CallEnvelope<'a> {
    #[serde(borrow, default)]
    arguments: Option<std::collections::BTreeMap<String, &'a RawValue>>,
}

/// Decides what to do with one line (without its `\n`): the whole check, exposed for tests and
/// fuzzing. Never panics.
pub fn check_line(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(error) => {
            let at = error.valid_up_to();
            let lossy = String::from_utf8_lossy(line);
            let id = serde_json::from_str::<Envelope>(&lossy)
                .ok()
                .and_then(|envelope| envelope.id.and_then(read_id));
            let message = format!(
                "the message is not valid UTF-8 (byte {at}); send JSON text encoded as UTF-8"
            );
            return Verdict::Refuse(match id {
                Some(id) => error_response(Some(&id), INVALID_REQUEST, &message),
                None => error_response(None, PARSE_ERROR, &message),
            });
        }
    };
    // serde reads a struct from an array too: only an object is an envelope.
    if !text.trim_start().starts_with('{') {
        return Verdict::Refuse(not_an_envelope(text, None));
    }
    let envelope = match serde_json::from_str::<Envelope>(text) {
        Ok(envelope) => envelope,
        Err(error) => return Verdict::Refuse(not_an_envelope(text, Some(&error))),
    };
    // The id first: every later answer carries it.
    let id = match envelope.id {
        None => None,
        Some(raw) => match read_id(raw) {
            Some(id) => Some(id),
            None => {
                return refuse(
                    None,
                    INVALID_REQUEST,
                    "the id must be a string or an integer (JSON-RPC 2.0)",
                );
            }
        },
    };
    let id = id.as_ref();
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return refuse(
            id,
            INVALID_REQUEST,
            "`jsonrpc` must be exactly \"2.0\": MCP speaks JSON-RPC 2.0",
        );
    }
    let method = match envelope.method {
        None => None,
        Some(raw) => match serde_json::from_str::<String>(raw.get()) {
            Ok(method) => Some(method),
            Err(_) => return refuse(id, INVALID_REQUEST, "`method` must be a string"),
        },
    };
    let shape = shape(text.as_bytes());
    if shape.depth > MAX_DEPTH {
        return too_deep(id, method.as_deref(), envelope.params, shape.depth);
    }
    if shape.values > MAX_VALUES {
        let (code, message) = too_many_values(shape.values, method.as_deref(), envelope.params);
        return refuse(id, code, &message);
    }
    match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(JsonRpcMessage::Request(request)) => {
            if let ClientRequest::CustomRequest(custom) = &request.request
                && let Some(problem) = typed_request_problem(&custom.method, envelope.params)
            {
                return refuse(
                    id,
                    INVALID_PARAMS,
                    &format!("invalid params for `{}`: {problem}", custom.method),
                );
            }
            Verdict::Pass(Box::new(JsonRpcMessage::Request(request)))
        }
        Ok(message) => Verdict::Pass(Box::new(message)),
        Err(error) => match (&method, id) {
            // A notification gets no answer (JSON-RPC); one MCP does not define is not ours.
            (Some(_), None) => {
                tracing::debug!("ignored a notification that does not parse");
                Verdict::Skip
            }
            (Some(method), Some(id)) => {
                let problem = argument_problem(envelope.params)
                    .or_else(|| typed_request_problem(method, envelope.params))
                    .unwrap_or_else(|| safe_serde_message(&error));
                let code = if known_method(method) {
                    INVALID_PARAMS
                } else {
                    INVALID_REQUEST
                };
                refuse(
                    Some(id),
                    code,
                    &format!("invalid params for `{method}`: {problem}"),
                )
            }
            // A response or error the server cannot read: nothing to answer it with but null.
            (None, _) => refuse(
                None,
                INVALID_REQUEST,
                &format!(
                    "not a JSON-RPC request, notification or response MCP knows: {}",
                    safe_serde_message(&error)
                ),
            ),
        },
    }
}

fn refuse(id: Option<&NumberOrString>, code: i64, message: &str) -> Verdict {
    Verdict::Refuse(error_response(id, code, message))
}

/// A line serde_json could not read as an object.
fn not_an_envelope(text: &str, error: Option<&serde_json::Error>) -> Vec<u8> {
    match serde_json::from_str::<&RawValue>(text) {
        Err(parse) => error_response(
            None,
            PARSE_ERROR,
            &format!(
                "the message is not JSON ({}); send one JSON-RPC object per line",
                safe_serde_message(error.unwrap_or(&parse))
            ),
        ),
        Ok(raw) if raw.get().trim_start().starts_with('[') => error_response(
            None,
            INVALID_REQUEST,
            "batches are not supported: MCP removed JSON-RPC batching; send one message per line",
        ),
        Ok(_) => error_response(
            None,
            INVALID_REQUEST,
            "a JSON-RPC message must be an object with `jsonrpc`, `method` and (for a request) \
             `id`",
        ),
    }
}

/// The answer to a message nested deeper than [`MAX_DEPTH`].
fn too_deep(
    id: Option<&NumberOrString>,
    method: Option<&str>,
    params: Option<&RawValue>,
    depth: usize,
) -> Verdict {
    if method == Some("tools/call")
        && let Some(params) = params
        && let Ok(call) = serde_json::from_str::<CallEnvelope>(params.get())
        && let Some((name, deepest)) = call
            .arguments
            .iter()
            .flatten()
            .map(|(name, raw)| (name, nesting_depth(raw.get().as_bytes())))
            .max_by_key(|(_, depth)| *depth)
    {
        return refuse(
            id,
            INVALID_PARAMS,
            &format!(
                "argument `{name}` nests {deepest} levels of arrays and objects; this server \
                 reads messages up to {MAX_DEPTH} levels: send a flatter value"
            ),
        );
    }
    refuse(
        id,
        INVALID_REQUEST,
        &format!(
            "the message nests {depth} levels of arrays and objects; this server reads up to \
             {MAX_DEPTH}"
        ),
    )
}

/// The answer to a line longer than [`MAX_LINE_BYTES`], with the id if its start shows one.
fn oversized_answer(prefix: &[u8]) -> Vec<u8> {
    let id = leading_id(prefix);
    error_response(
        id.as_ref(),
        INVALID_REQUEST,
        &format!(
            "the message is longer than {MAX_LINE_BYTES} bytes and was not read; send smaller \
             content (split a large file into several calls)"
        ),
    )
}

/// The id of a truncated object, when the `id` member comes before the cut: walks the top-level
/// members, letting serde_json skip each value.
pub fn leading_id(prefix: &[u8]) -> Option<NumberOrString> {
    let text = match std::str::from_utf8(prefix) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&prefix[..error.valid_up_to()]).ok()?,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        rest = rest.trim_start();
        let mut keys = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let key = keys.next()?.ok()?;
        rest = rest[keys.byte_offset()..].trim_start().strip_prefix(':')?;
        if key == "id" {
            let mut ids = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
            return read_id(ids.next()?.ok()?);
        }
        let mut values =
            serde_json::Deserializer::from_str(rest).into_iter::<serde::de::IgnoredAny>();
        values.next()?.ok()?;
        rest = rest[values.byte_offset()..]
            .trim_start()
            .strip_prefix(',')?;
    }
}

fn read_id(raw: &RawValue) -> Option<NumberOrString> {
    serde_json::from_str::<NumberOrString>(raw.get()).ok()
}

/// The deepest nesting of arrays and objects in JSON text, in one pass without recursion.
pub fn nesting_depth(json: &[u8]) -> usize {
    shape(json).depth
}

/// What one pass over JSON text learns without parsing it: how deep it nests and how many
/// values it holds at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The deepest nesting of arrays and objects.
    pub depth: usize,
    /// An upper bound on the values in it (every array, object and member or element, an empty
    /// array or object counting one more): the work a parser would do, in units of values.
    pub values: usize,
}

/// The [`Shape`] of JSON text (valid or not), in one pass over its bytes: no allocation, no
/// recursion, so it bounds the work on any input before anything is parsed.
pub fn shape(json: &[u8]) -> Shape {
    let (mut depth, mut deepest, mut values) = (0usize, 0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                values = values.saturating_add(1);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values = values.saturating_add(1),
            _ => {}
        }
    }
    Shape {
        depth: deepest,
        values,
    }
}

/// A client-to-server request rmcp knows, by method.
fn known_method(method: &str) -> bool {
    matches!(
        method,
        "ping"
            | "initialize"
            | "server/discover"
            | "completion/complete"
            | "logging/setLevel"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "subscriptions/listen"
            | "tools/call"
            | "tools/list"
            | "tasks/get"
            | "tasks/update"
            | "tasks/cancel"
            | "skills/list"
            | "skills/get"
            | "resources/directory/read"
    )
}

/// Why the params of a `method` rmcp knows do not fit its params type (rmcp's untagged request
/// enum otherwise takes the request for an unknown method), with the path of the field at
/// fault. `None`: a method without typed params here, or params that fit.
fn typed_request_problem(method: &str, params: Option<&RawValue>) -> Option<String> {
    use rmcp::model as m;
    fn problem<T: DeserializeOwned>(params: Option<&RawValue>) -> Option<String> {
        let text = params.map_or("null", RawValue::get);
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize::<_, T>(&mut deserializer)
            .err()
            .map(|error| {
                let path = error.path().to_string();
                let inner = error.into_inner();
                format!("`{path}`: {}", safe_serde_message(&inner))
            })
    }
    match method {
        "tools/call" => problem::<m::CallToolRequestParams>(params),
        "initialize" => problem::<m::InitializeRequestParams>(params),
        "completion/complete" => problem::<m::CompleteRequestParams>(params),
        "prompts/get" => problem::<m::GetPromptRequestParams>(params),
        "resources/read" => problem::<m::ReadResourceRequestParams>(params),
        "resources/subscribe" => problem::<m::SubscribeRequestParams>(params),
        "resources/unsubscribe" => problem::<m::UnsubscribeRequestParams>(params),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            problem::<Option<m::PaginatedRequestParams>>(params)
        }
        _ => None,
    }
}

/// For a `tools/call` whose text serde_json refused (a lone surrogate in an argument): the
/// argument at fault.
fn argument_problem(params: Option<&RawValue>) -> Option<String> {
    let call = serde_json::from_str::<CallEnvelope>(params?.get()).ok()?;
    call.arguments.iter().flatten().find_map(|(name, raw)| {
        serde_json::from_str::<Value>(raw.get())
            .err()
            .map(|error| format!("argument `{name}`: {}", safe_serde_message(&error)))
    })
}

/// serde's message without the input it quotes (which could be a secret or content): serde_json
/// quotes at most a short token (`invalid type: string "..."`); drop it to be safe.
fn safe_serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match (text.find('"'), text.rfind('"')) {
        (Some(start), Some(end)) if end > start => {
            format!("{}…{}", &text[..start], &text[end + 1..])
        }
        _ => text,
    }
}

/// One JSON-RPC error response, without the newline.
pub fn error_response(id: Option<&NumberOrString>, code: i64, message: &str) -> Vec<u8> {
    let id = match id {
        None => Value::Null,
        Some(NumberOrString::Number(n)) => json!(n),
        Some(NumberOrString::String(s)) => json!(&**s),
    };
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    answer.to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> Value {
        match check_line(line.as_bytes()) {
            Verdict::Refuse(answer) => serde_json::from_slice(&answer).expect("json"),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn deep(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn depth_counts_outside_strings_only() {
        assert_eq!(nesting_depth(b"{\"a\":[1,{\"b\":\"[[[\\\"{\"}]}"), 3);
        assert_eq!(nesting_depth(deep(500).as_bytes()), 500);
    }

    #[test]
    fn shape_bounds_the_values_before_any_parse() {
        assert_eq!(shape(b"[1,2,3]").values, 4);
        assert_eq!(shape(br#"{"a":1,"b":"x,y,[z"}"#).values, 3);
        let many = format!("[{}0]", "0,".repeat(MAX_VALUES));
        assert!(shape(many.as_bytes()).values > MAX_VALUES);
    }

    #[test]
    fn a_line_of_too_many_values_is_refused_unparsed_with_its_id() {
        let values = format!("[{}0]", "0,".repeat(MAX_VALUES));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add","arguments":{{"text":{values}}}}}}}"#
        );
        let answer = refused(&line);
        assert_eq!(answer["id"], 5);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&MAX_VALUES.to_string()) && message.contains("`text`"),
            "{answer}"
        );
        // Another method: -32600.
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"x":{values}}}}}"#);
        let answer = refused(&line);
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        // Positive control: the same call with fewer values passes.
        let values = format!("[{}0]", "0,".repeat(MAX_VALUES / 2));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add","arguments":{{"text":{values}}}}}}}"#
        );
        assert!(matches!(check_line(line.as_bytes()), Verdict::Pass(_)));
    }

    #[tokio::test]
    async fn long_lines_are_checked_off_the_async_workers_and_answered_in_order() {
        use tokio::io::AsyncReadExt;
        let (mut client, server) = tokio::io::duplex(1024 * 1024);
        let (read, write) = tokio::io::split(server);
        let mut transport = StdioTransport::new(read, write);
        let padding = "x".repeat(200 * 1024);
        let good = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"pad":"{padding}"}}}}}}"#
        );
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"_meta":{{"pad":[{}0]}}}}}}"#,
            "0,".repeat(MAX_VALUES)
        );
        let third = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        let input = format!("{many}\n{good}\n{third}\n");
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            client.write_all(input.as_bytes()).await.expect("written");
            let mut answer = vec![0u8; 4096];
            let read = client.read(&mut answer).await.expect("an answer");
            answer.truncate(read);
            answer
        });
        let first = transport.receive().await.expect("the long good line");
        assert!(format!("{first:?}").contains("Number(1)"), "{first:?}");
        let next = transport.receive().await.expect("the short line");
        assert!(format!("{next:?}").contains("Number(3)"), "{next:?}");
        let answer = writer.await.expect("the client");
        let answer: Value = serde_json::from_slice(answer.trim_ascii()).expect("one JSON answer");
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn the_limit_is_serde_jsons() {
        let ok = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}}"#,
            deep(MAX_DEPTH - 2)
        );
        assert!(serde_json::from_str::<Value>(&ok).is_ok());
        let over = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(serde_json::from_str::<Value>(&over).is_err());
    }

    #[test]
    fn a_deep_argument_is_named_with_the_id() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_gist","arguments":{{"gist_id":{}}}}}}}"#,
            deep(200)
        );
        let answer = refused(&line);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`gist_id`")
        );
    }

    #[test]
    fn a_wrongly_typed_request_state_is_invalid_params() {
        let answer = refused(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"delete_gist","requestState":5}}"#,
        );
        assert_eq!(answer["id"], "a");
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState"),
            "{answer}"
        );
    }

    #[test]
    fn a_lone_surrogate_names_its_argument() {
        let answer = refused(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_gist","arguments":{"gist_id":"\ud800"}}}"#,
        );
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("gist_id"),
            "{answer}"
        );
    }

    #[test]
    fn envelopes_that_are_not_requests() {
        assert_eq!(refused("{nope")["error"]["code"], PARSE_ERROR);
        assert_eq!(refused("{nope")["id"], Value::Null);
        let batch = refused(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(batch["error"]["code"], INVALID_REQUEST);
        assert!(
            batch["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batch"),
            "{batch}"
        );
        let pair = refused(r#"["2.0", 1, "ping"]"#);
        assert!(
            pair["error"]["message"].as_str().unwrap().contains("batch"),
            "{pair}"
        );
        let old = refused(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
        assert_eq!(
            (old["id"].clone(), old["error"]["code"].clone()),
            (json!(9), json!(INVALID_REQUEST))
        );
        let object_id = refused(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(object_id["id"], Value::Null);
        assert_eq!(object_id["error"]["code"], INVALID_REQUEST);
        assert_eq!(refused("42")["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn invalid_utf8_keeps_a_readable_id() {
        let mut line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_gist","arguments":{"gist_id":""#.to_vec();
        line.extend_from_slice(b"\xff\xfe\"}}}");
        let Verdict::Refuse(answer) = check_line(&line) else {
            panic!()
        };
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["id"], 4);
        let Verdict::Refuse(answer) = check_line(b"\xff\xff") else {
            panic!()
        };
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(PARSE_ERROR))
        );
    }

    #[test]
    fn the_id_of_a_cut_line() {
        let prefix = br#"{"jsonrpc":"2.0","method":"tools/call","id":12,"params":{"arguments":{"content":"xxxx"#;
        assert_eq!(leading_id(prefix), Some(NumberOrString::Number(12)));
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","params":{"a":"xx"#), None);
        assert_eq!(leading_id(b"garbage"), None);
    }

    #[test]
    fn good_lines_pass_and_blank_lines_are_skipped() {
        assert!(matches!(
            check_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Pass(_)
        ));
        assert!(matches!(
            check_line(br#"{"jsonrpc":"2.0","id":1,"method":"x/unknown"}"#),
            Verdict::Pass(_)
        ));
        assert!(matches!(check_line(b"  \r"), Verdict::Skip));
        assert!(matches!(
            check_line(br#"{"jsonrpc":"2.0","method":"$/lsp"}"#),
            Verdict::Skip | Verdict::Pass(_)
        ));
    }
}
