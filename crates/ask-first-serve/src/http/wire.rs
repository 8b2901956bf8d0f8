//! What the MCP endpoint answers on the wire where rmcp's streamable HTTP service alone would
//! answer in a way clients do not expect. Two layers, wired in [`crate::http`]:
//!
//! - [`JsonRpcLayer`] (inside the gate, so only requests that passed Host, Origin and bearer
//!   checks are read; the body was read once, up to [`MAX_BODY_BYTES`], by the body layer,
//!   [`BodyLimitLayer`](super::limits::BodyLimitLayer)):
//!   - the check does bounded work and never builds a whole [`Value`] of the body: one pass
//!     counts its nesting and values (`stdio::shape`; more than
//!     [`MAX_VALUES`](crate::stdio::transport::MAX_VALUES) values answer `400` unparsed, `-32602`
//!     naming the argument of a tool call, else `-32600`; more than
//!     [`MAX_DEPTH`](crate::stdio::transport::MAX_DEPTH) levels `400` `-32600`),
//!     then the envelope (`jsonrpc`, `id`, `method`, `params._meta`) is read as borrowed slices
//!     with the rest skipped; a body over 64 KiB is checked on the blocking pool;
//!   - a `POST /mcp` body that is not JSON answers `400` with a JSON-RPC `-32700 Parse error`
//!     body; a JSON array (a batch, removed from MCP in 2025-06-18) or JSON that is no JSON-RPC
//!     message answers `400` with `-32600 Invalid Request`, and so does a message whose params
//!     rmcp's typed parse refuses (rmcp says `415` in plain text; this layer rewrites it);
//!   - a request in the 2026-07-28 shape (no session, per-request `_meta`) that names a
//!     protocol version with an `initialize` handshake (2025-11-25 and older) answers `400`
//!     with `-32022` UnsupportedProtocolVersion, listing the version served that way
//!     (rmcp serves it as if it were 2026-07-28);
//!   - `DELETE /mcp` of a session answers `200` instead of rmcp's `202`: the official
//!     Python SDK logs "Session termination failed: 202" for anything but `200`/`204`.
//! - [`cors`] (outermost, so a browser's preflight, which carries no `Authorization`, is
//!   answered): for the origins in the allowed-origins setting only, answers preflights
//!   and adds `Access-Control-Allow-Origin`, exposing `Mcp-Session-Id` and
//!   `Mcp-Protocol-Version` so a browser client can keep its session. Loopback origins the gate
//!   accepts anyway get no CORS headers unless listed: a page on some local port does not
//!   become a browser client of this server by accident.
//!
//! [`JsonRpcLayer`] mounts the first on a router (its page has the example); [`cors`] is
//! tower-http's CORS layer for the allowed origins.

use std::task::{Context, Poll};
use std::time::Duration;

use crate::stdio::transport::checks::{self as stdio, Envelope};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use rmcp::model::{ErrorCode, NumberOrString, ProtocolVersion};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_layer::Layer;
use tower_service::Service;

use super::envelope::RequestMethod;
use crate::http::MCP_PATH;
use crate::settings::{AllowedOrigin, Origin};

/// The largest request body accepted, in bytes: what rmcp's streamable HTTP service accepts by
/// default (4 MiB), configured on it explicitly so the two agree. The body is read once, by the
/// body layer ([`crate::http::limits::BodyLimitLayer`]), which answers `413` for a larger one before anything
/// parses it.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Bodies longer than this are checked on Tokio's blocking pool, off the async workers.
const CHECK_INLINE_BYTES: usize = 64 * 1024;

/// The `_meta` key a 2026-07-28 request names its protocol version under (as
/// [`MetaVersion`] spells it).
#[cfg(test)]
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The session header rmcp issues to legacy clients.
const SESSION_HEADER: &str = "mcp-session-id";

/// The JSON-RPC checks of `POST /mcp` bodies and the `DELETE` status (see the [module](self)),
/// as a tower layer. Mount it inside the gate and inside [`BodyLimitLayer`], which reads (and
/// bounds) the body first. Its one read of each body's envelope is recorded as the request's
/// [`RequestMethod`], which the session binding and the stream bounds inside it use instead of
/// parsing the body again.
///
/// ```no_run
/// use ask_first_serve::SettingNames;
/// use ask_first_serve::http::envelope::RequestMethod;
/// use ask_first_serve::http::limits::{BodyLimitLayer, HttpLimits};
/// use ask_first_serve::http::wire::JsonRpcLayer;
/// use axum::{Router, extract::Extension, routing::post};
///
/// let names = SettingNames::with_prefix("NOTES");
/// let app: Router = Router::new()
///     .route("/mcp", post(|Extension(method): Extension<RequestMethod>| async move {
///         method.get().unwrap_or("a response").to_owned()
///     }))
///     .layer(JsonRpcLayer::new())
///     .layer(BodyLimitLayer::new(&HttpLimits::default(), &names));
/// ```
///
/// [`BodyLimitLayer`]: super::limits::BodyLimitLayer
#[derive(Debug, Clone, Default)]
pub struct JsonRpcLayer {
    _private: (),
}

impl JsonRpcLayer {
    /// The checks (they have no settings: the limits are the protocol's).
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S> Layer<S> for JsonRpcLayer {
    type Service = JsonRpc<S>;

    fn layer(&self, inner: S) -> Self::Service {
        JsonRpc { inner }
    }
}

/// The service [`JsonRpcLayer`] makes.
#[derive(Debug, Clone)]
pub struct JsonRpc<S> {
    inner: S,
}

impl<S> Service<Request> for JsonRpc<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = S::Error;
    type Future = super::ResponseFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let inner = super::take_ready(&mut self.inner);
        Box::pin(json_rpc_body(request, inner))
    }
}

async fn json_rpc_body<S>(request: Request, mut inner: S) -> Result<Response, S::Error>
where
    S: Service<Request, Response = Response>,
{
    if request.uri().path() != MCP_PATH {
        return inner.call(request).await;
    }
    if request.method() == Method::DELETE {
        let mut response = inner.call(request).await?;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return Ok(response);
    }
    if request.method() != Method::POST || !is_json(&request) {
        // Other methods, and bodies that do not claim to be JSON, are rmcp's to answer.
        return inner.call(request).await;
    }
    let has_session = request.headers().contains_key(SESSION_HEADER);
    let (mut parts, body) = request.into_parts();
    // Already read (and bounded) by the body layer; this only takes the buffer.
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Ok(json_rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                ErrorCode::INVALID_REQUEST.0,
                &format!(
                    "Invalid Request: the body could not be read or is larger than {MAX_BODY_BYTES} bytes; send one JSON-RPC message per POST"
                ),
                None,
            ));
        }
    };
    let checked = if bytes.len() > CHECK_INLINE_BYTES {
        let body = bytes.clone();
        match tokio::task::spawn_blocking(move || check_message(&body, has_session)).await {
            Ok(checked) => checked,
            Err(_) => Err(Box::new(json_rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Value::Null,
                ErrorCode::INTERNAL_ERROR.0,
                "Internal error: the message could not be checked; send it again",
                None,
            ))),
        }
    } else {
        check_message(&bytes, has_session)
    };
    let (id, method) = match checked {
        Ok(checked) => checked,
        Err(refusal) => return Ok(*refusal),
    };
    // The one read of the envelope, for every layer inside this one.
    parts.extensions.insert(RequestMethod::new(method));
    let response = inner
        .call(Request::from_parts(parts, Body::from(bytes)))
        .await?;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // The body claimed JSON and passed the envelope checks, so rmcp's 415 means its typed
        // parse refused the message (params that do not fit a known method, say).
        return Ok(json_rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST.0,
            NOT_A_MESSAGE,
            None,
        ));
    }
    Ok(response)
}

const NOT_A_MESSAGE: &str = "Invalid Request: not a JSON-RPC 2.0 request, notification or response this server knows (it needs \"jsonrpc\": \"2.0\", a \"method\" and, for a request, an \"id\", with params of the method's shape); send one message per POST";

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// `params._meta[META_PROTOCOL_VERSION]`, borrowed; everything else skipped.
#[derive(Deserialize)]
struct ParamsMeta<'a> {
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<MetaVersion<'a>>,
}

#[derive(Deserialize)]
struct MetaVersion<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<&'a RawValue>,
}

fn refusal(status: StatusCode, id: Value, code: i32, message: &str) -> Box<Response> {
    Box::new(json_rpc_error(status, id, code, message, None))
}

/// Checks one body with bounded work: one pass counting depth and values
/// (`stdio::shape`), then the envelope as borrowed slices; never a whole
/// [`Value`] of the body. `Ok` is the id to answer with (`null` when it has none, or one of an
/// illegal shape) and the method, if the message names one; `Err` the answer to send instead
/// of passing the message on.
fn check_message(
    bytes: &[u8],
    has_session: bool,
) -> Result<(Value, Option<String>), Box<Response>> {
    let shape = stdio::shape(bytes);
    let is_json = || serde_json::from_slice::<IgnoredAny>(bytes).is_ok();
    let parse_error = |detail: &str| {
        refusal(
            StatusCode::BAD_REQUEST,
            Value::Null,
            ErrorCode::PARSE_ERROR.0,
            &format!(
                "Parse error: the body is not valid JSON ({detail}); send one JSON-RPC message as a JSON object per POST"
            ),
        )
    };
    if shape.depth > stdio::MAX_DEPTH {
        let id = stdio::leading_id(bytes).map_or(Value::Null, |id| id_value(&id));
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST.0,
            &format!(
                "Invalid Request: the message nests {} levels of arrays and objects; this server reads up to {}",
                shape.depth,
                stdio::MAX_DEPTH
            ),
        ));
    }
    if shape.values > stdio::MAX_VALUES {
        // The envelope, values skipped (no more work than the count), names the argument.
        let envelope = serde_json::from_slice::<Envelope>(bytes).ok();
        let id = stdio::leading_id(bytes).map_or(Value::Null, |id| id_value(&id));
        let method = envelope
            .as_ref()
            .and_then(|envelope| envelope.method)
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        let (code, message) = stdio::too_many_values(
            shape.values,
            method.as_deref(),
            envelope.as_ref().and_then(|envelope| envelope.params),
        );
        let code = i32::try_from(code).unwrap_or(ErrorCode::INVALID_REQUEST.0);
        let kind = if code == ErrorCode::INVALID_PARAMS.0 {
            "Invalid params"
        } else {
            "Invalid Request"
        };
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            id,
            code,
            &format!("{kind}: {message}"),
        ));
    }
    let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace());
    if first != Some(&b'{') {
        if let Err(error) = serde_json::from_slice::<IgnoredAny>(bytes) {
            return Err(parse_error(&error.to_string()));
        }
        let message = if first == Some(&b'[') {
            "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send each message in its own POST"
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object; send one per POST"
        };
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            Value::Null,
            ErrorCode::INVALID_REQUEST.0,
            message,
        ));
    }
    let envelope = match serde_json::from_slice::<Envelope>(bytes) {
        Ok(envelope) => envelope,
        Err(error) if !is_json() => return Err(parse_error(&error.to_string())),
        Err(_) => {
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                stdio::leading_id(bytes).map_or(Value::Null, |id| id_value(&id)),
                ErrorCode::INVALID_REQUEST.0,
                NOT_A_MESSAGE,
            ));
        }
    };
    // A JSON-RPC id, echoed only when it has a legal shape.
    let id = envelope
        .id
        .and_then(|raw| serde_json::from_str::<NumberOrString>(raw.get()).ok())
        .map_or(Value::Null, |id| id_value(&id));
    let method = match envelope.method {
        None => None,
        Some(raw) => match serde_json::from_str::<String>(raw.get()) {
            Ok(method) => Some(method),
            Err(_) => {
                return Err(refusal(
                    StatusCode::BAD_REQUEST,
                    id,
                    ErrorCode::INVALID_REQUEST.0,
                    NOT_A_MESSAGE,
                ));
            }
        },
    };
    let version_ok = envelope
        .jsonrpc
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        .is_some_and(|version| version == "2.0");
    let id_ok = envelope.id.is_none() || !id.is_null();
    let shape_ok = match &method {
        Some(_) => true,
        None => envelope.id.is_some() && (envelope.result.is_some() || envelope.error.is_some()),
    };
    if !(version_ok && id_ok && shape_ok) {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST.0,
            NOT_A_MESSAGE,
        ));
    }
    if !has_session
        && envelope.id.is_some()
        && let Some(method) = &method
        && method != "initialize"
        && let Some(requested) = legacy_version_in_request_meta(envelope.params)
    {
        let supported = [ProtocolVersion::NO_INITIALIZE.as_str()];
        return Err(Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0,
            &format!(
                "Unsupported protocol version {requested} for a request without a session: {requested} starts with an initialize handshake (then send its Mcp-Session-Id); requests that carry the protocol version in _meta are served at {}",
                supported.join(", ")
            ),
            Some(json!({ "requested": requested, "supported": supported })),
        )));
    }
    Ok((id, method))
}

/// The envelope check's verdict on one `POST /mcp` JSON body, for fuzzing and tests: `Ok` with
/// the id an answer would carry when the body goes on to rmcp, else the status of the refusal.
/// Never panics; does bounded work on any input.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn body_verdict(bytes: &[u8], has_session: bool) -> Result<Value, StatusCode> {
    check_message(bytes, has_session)
        .map(|(id, _)| id)
        .map_err(|refusal| refusal.status())
}

fn id_value(id: &NumberOrString) -> Value {
    match id {
        NumberOrString::Number(number) => json!(number),
        NumberOrString::String(text) => json!(&**text),
    }
}

/// The protocol version a request outside any session names in `_meta`, when that version
/// has an `initialize` handshake (so it cannot be served in the per-request shape).
fn legacy_version_in_request_meta(params: Option<&RawValue>) -> Option<String> {
    let meta = serde_json::from_str::<ParamsMeta>(params?.get())
        .ok()?
        .meta?;
    let requested = serde_json::from_str::<String>(meta.version?.get()).ok()?;
    let version: ProtocolVersion = serde_json::from_value(Value::from(requested.as_str())).ok()?;
    version.has_initialize().then_some(requested)
}

fn json_rpc_error(
    status: StatusCode,
    id: Value,
    code: i32,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": error }).to_string();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Body::from(body),
    )
        .into_response()
}

/// `router` behind the CORS layer for the configured origins; unchanged (no CORS at all) when
/// none is configured.
pub fn with_cors(router: Router, allowed: &[AllowedOrigin]) -> Router {
    match cors(allowed) {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

/// The CORS layer for the configured origins; `None` when none is configured.
pub fn cors(allowed: &[AllowedOrigin]) -> Option<CorsLayer> {
    if allowed.is_empty() {
        return None;
    }
    let allowed = allowed.to_vec();
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |origin, _parts| {
                origin
                    .to_str()
                    .ok()
                    .is_some_and(|origin| origin_is_listed(&allowed, origin))
            }))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers(AllowHeaders::list([
                header::CONTENT_TYPE,
                header::ACCEPT,
                header::AUTHORIZATION,
                HeaderName::from_static(SESSION_HEADER),
                HeaderName::from_static("mcp-protocol-version"),
                HeaderName::from_static("mcp-method"),
                HeaderName::from_static("mcp-name"),
                HeaderName::from_static("last-event-id"),
            ]))
            .expose_headers([
                HeaderName::from_static(SESSION_HEADER),
                HeaderName::from_static("mcp-protocol-version"),
                header::WWW_AUTHENTICATE,
            ])
            .max_age(Duration::from_secs(600)),
    )
}

/// Whether an `Origin` header value is one of `allowed` (scheme, host and port; `:*` any
/// port): the same parser and matcher as the gate's ([`Origin`]).
pub fn origin_is_listed(allowed: &[AllowedOrigin], origin: &str) -> bool {
    Origin::parse(origin).is_some_and(|origin| origin.is_in(allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins(list: &[&str]) -> Vec<AllowedOrigin> {
        list.iter()
            .map(|entry| AllowedOrigin::parse(entry).expect("an origin"))
            .collect()
    }

    #[test]
    fn listed_origins_match_by_scheme_host_and_port() {
        let allowed = origins(&["http://127.0.0.1:5173", "https://app.example.com:*"]);
        assert!(origin_is_listed(&allowed, "http://127.0.0.1:5173"));
        assert!(!origin_is_listed(&allowed, "http://127.0.0.1:5174"));
        assert!(!origin_is_listed(&allowed, "https://127.0.0.1:5173"));
        assert!(origin_is_listed(&allowed, "https://APP.example.com:8443"));
        assert!(origin_is_listed(&allowed, "https://app.example.com"));
        assert!(!origin_is_listed(&allowed, "https://evil.example.com"));
        assert!(!origin_is_listed(&allowed, "null"));
        assert!(!origin_is_listed(&allowed, "not an origin"));
    }

    fn error_of(bytes: &[u8], has_session: bool) -> Option<StatusCode> {
        check_message(bytes, has_session)
            .err()
            .map(|response| response.status())
    }

    #[test]
    fn only_legacy_versions_in_request_meta_outside_a_session_are_refused() {
        let request = |version: &str, method: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": {
                META_PROTOCOL_VERSION: version,
                "io.modelcontextprotocol/clientCapabilities": {}
            }}})
            .to_string()
        };
        let bad = Some(StatusCode::BAD_REQUEST);
        assert_eq!(
            error_of(request("2025-11-25", "tools/list").as_bytes(), false),
            bad
        );
        assert_eq!(
            error_of(request("2024-11-05", "ping").as_bytes(), false),
            bad
        );
        assert_eq!(
            error_of(request("2026-07-28", "tools/list").as_bytes(), false),
            None
        );
        // Inside a session the legacy era is served as before.
        assert_eq!(
            error_of(request("2025-11-25", "tools/list").as_bytes(), true),
            None
        );
        // Unknown future versions are rmcp's to judge.
        assert_eq!(
            error_of(request("2099-01-01", "tools/list").as_bytes(), false),
            None
        );
    }

    #[test]
    fn too_many_values_or_levels_are_refused_unparsed_with_the_id() {
        let values = format!("[{}0]", "0,".repeat(crate::stdio::transport::MAX_VALUES));
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{values}}}}}}}"#
        );
        let refused = check_message(body.as_bytes(), true).expect_err("too many values");
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let body = format!(r#"{{"jsonrpc":"2.0","id":"d","method":"ping","params":{deep}}}"#);
        assert_eq!(
            error_of(body.as_bytes(), true),
            Some(StatusCode::BAD_REQUEST)
        );
        // Positive control: half as many values pass.
        let values = format!(
            "[{}0]",
            "0,".repeat(crate::stdio::transport::MAX_VALUES / 2)
        );
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{values}}}}}}}"#
        );
        assert_eq!(
            check_message(body.as_bytes(), true).ok(),
            Some((json!(8), Some("tools/call".to_owned())))
        );
    }

    #[test]
    fn responses_and_notifications_pass_and_bad_ids_or_versions_do_not() {
        let bad = Some(StatusCode::BAD_REQUEST);
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, true),
            None
        );
        assert_eq!(
            error_of(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                true
            ),
            None
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, true),
            bad
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, true),
            bad
        );
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":1,"method":5}"#, true),
            bad
        );
        assert_eq!(error_of(br#"{"jsonrpc":"2.0","id":1}"#, true), bad);
    }

    #[test]
    fn parse_errors_batches_and_non_messages_are_400() {
        let bad = Some(StatusCode::BAD_REQUEST);
        assert_eq!(error_of(b"{bad", false), bad);
        assert_eq!(error_of(b"", false), bad);
        assert_eq!(
            error_of(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, false),
            bad
        );
        assert_eq!(error_of(b"42", false), bad);
        assert_eq!(error_of(br#"{"hello":"world"}"#, false), bad);
        assert_eq!(
            error_of(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, true),
            None
        );
    }
}
