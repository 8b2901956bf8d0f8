//! What the MCP endpoint answers on the wire where rmcp's streamable HTTP service alone would
//! answer in a way clients do not expect. Two layers, wired in [`crate::http`]:
//!
//! - [`json_rpc_body`] (inside the gate, so only requests that passed Host, Origin and bearer
//!   checks are read):
//!   - a `POST /mcp` body that is not JSON answers `400` with a JSON-RPC `-32700 Parse error`
//!     body; a JSON array (a batch, removed from MCP in 2025-06-18) or JSON that is no JSON-RPC
//!     message answers `400` with `-32600 Invalid Request` (rmcp says `415` in plain text);
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

use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ProtocolVersion};
use serde_json::{Value, json};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};

use crate::http::MCP_PATH;
use crate::settings::{AllowedOrigin, Origin};

/// The most body bytes read to check a message. Far above any MCP request this server takes;
/// a larger body is refused here rather than buffered.
pub const MAX_CHECKED_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The `_meta` key a 2026-07-28 request names its protocol version under.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The session header rmcp issues to legacy clients.
const SESSION_HEADER: &str = "mcp-session-id";

/// The JSON-RPC body checks and the DELETE status; an `axum::middleware::from_fn` function.
pub async fn json_rpc_body(request: Request, next: Next) -> Response {
    if request.uri().path() != MCP_PATH {
        return next.run(request).await;
    }
    if request.method() == Method::DELETE {
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    if request.method() != Method::POST || !is_json(&request) {
        // Other methods, and bodies that do not claim to be JSON, are rmcp's to answer.
        return next.run(request).await;
    }
    let has_session = request.headers().contains_key(SESSION_HEADER);
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_CHECKED_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return json_rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                ErrorCode::INVALID_REQUEST.0,
                &format!(
                    "Invalid Request: the body could not be read or is larger than {MAX_CHECKED_BODY_BYTES} bytes; send one JSON-RPC message per POST"
                ),
                None,
            );
        }
    };
    if let Err(refusal) = check_message(&bytes, has_session) {
        return *refusal;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// `Err` is the answer to send instead of passing the message on.
fn check_message(bytes: &Bytes, has_session: bool) -> Result<(), Box<Response>> {
    let value: Value = serde_json::from_slice(bytes).map_err(|error| {
        Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            ErrorCode::PARSE_ERROR.0,
            &format!(
                "Parse error: the body is not valid JSON ({error}); send one JSON-RPC message as a JSON object per POST"
            ),
            None,
        ))
    })?;
    let Value::Object(object) = &value else {
        let message = if value.is_array() {
            "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send each message in its own POST"
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object; send one per POST"
        };
        return Err(Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            ErrorCode::INVALID_REQUEST.0,
            message,
            None,
        )));
    };
    // A JSON-RPC id, echoed only when it has a legal shape.
    let id = object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    if serde_json::from_value::<ClientJsonRpcMessage>(value.clone()).is_err() {
        return Err(Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST.0,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response this server knows (it needs \"jsonrpc\": \"2.0\", a \"method\" and, for a request, an \"id\"); send one message per POST",
            None,
        )));
    }
    if !has_session && let Some(requested) = legacy_version_in_request_meta(object) {
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
    Ok(())
}

/// The protocol version a request outside any session names in `_meta`, when that version
/// has an `initialize` handshake (so it cannot be served in the per-request shape).
fn legacy_version_in_request_meta(object: &serde_json::Map<String, Value>) -> Option<String> {
    if object.get("id").is_none() || object.get("method")?.as_str()? == "initialize" {
        return None;
    }
    let requested = object
        .get("params")?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)?
        .as_str()?;
    let version: ProtocolVersion = serde_json::from_value(Value::from(requested)).ok()?;
    version.has_initialize().then(|| requested.to_owned())
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
        check_message(&Bytes::copy_from_slice(bytes), has_session)
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
