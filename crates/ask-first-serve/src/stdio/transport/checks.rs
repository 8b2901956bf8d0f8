//! The line checks: what [`StdioTransport`](super::StdioTransport) decides for one line
//! (pass it to rmcp, skip it, or answer it with a JSON-RPC error), and the answers it writes.
//!
//! Its functions are `pub` for the fuzz targets, which reach them through `stdio`'s
//! re-exports with feature `fuzzing`; without it they are the crate's own.
#![cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, JsonRpcMessage, NumberOrString};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::value::RawValue;
use serde_json::{Value, json};

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

/// JSON-RPC: the line is not JSON (rmcp's [`ErrorCode::PARSE_ERROR`], -32700).
pub const PARSE_ERROR: i64 = ErrorCode::PARSE_ERROR.0 as i64;
/// JSON-RPC: the line is JSON but not a request this server can take
/// ([`ErrorCode::INVALID_REQUEST`], -32600).
pub const INVALID_REQUEST: i64 = ErrorCode::INVALID_REQUEST.0 as i64;
/// JSON-RPC: the request's params do not fit its method ([`ErrorCode::INVALID_PARAMS`],
/// -32602).
pub const INVALID_PARAMS: i64 = ErrorCode::INVALID_PARAMS.0 as i64;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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
pub(super) fn oversized_answer(prefix: &[u8]) -> Vec<u8> {
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
