//! A server's own verifier through the hook (`HttpOptions::authenticator`): its `Identity` is the
//! principal that owns sessions and that a tool body reads (`Identity::of`), its `Refusal` is
//! the answer, and its public routes are served without a credential. Real sockets, raw
//! HTTP/1.1.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ask_first_core::{Guard, HasGuard, Identity};
use ask_first_serve::SettingNames;
use ask_first_serve::http::{AuthFuture, Authenticate, HttpOptions, Refusal, bind_http};
use http::HeaderValue;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Who the caller is: the `X-User` header an authenticating gateway would set.
struct GatewayUser;

impl Authenticate for GatewayUser {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let user = parts
            .headers
            .get("x-user")
            .and_then(|value| value.to_str().ok())
            .map(|user| Identity::new(format!("gateway:{user}")));
        Box::pin(async move {
            user.ok_or_else(|| {
                Refusal::unauthorized("send X-User").with_challenge(HeaderValue::from_static(
                    r#"Bearer resource_metadata="http://127.0.0.1/.well-known/test""#,
                ))
            })
        })
    }

    fn public_routes(&self) -> Option<axum::Router> {
        Some(axum::Router::new().route(
            "/.well-known/test",
            axum::routing::get(|| async { "public" }),
        ))
    }
}

#[derive(Clone)]
struct WhoAmI {
    guard: Guard,
}

impl HasGuard for WhoAmI {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[tool_router]
impl WhoAmI {
    /// The tool body reads who is calling.
    #[tool(description = "Says who is calling")]
    async fn whoami(&self, context: RequestContext<RoleServer>) -> String {
        let principal = Identity::of(&context).map(Identity::principal);
        format!("identity={principal:?}")
    }
}

#[tool_handler]
impl ServerHandler for WhoAmI {}

async fn serve() -> (SocketAddr, oneshot::Sender<()>) {
    serve_with(Guard::builder("notes").build(), Arc::new(GatewayUser)).await
}

async fn serve_with(
    guard: Guard,
    authenticator: Arc<dyn Authenticate>,
) -> (SocketAddr, oneshot::Sender<()>) {
    let server = WhoAmI { guard };
    let options = HttpOptions {
        authenticator: Some(authenticator),
        ..HttpOptions::new(SettingNames::with_prefix("NOTES"))
    };
    let bound = bind_http(
        "127.0.0.1:0".parse().expect("address"),
        move || Ok(server.clone()),
        options,
    )
    .await
    .expect("binds");
    let addr = bound.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// One request with `Connection: close`; the answer as text, read until the server closes or
/// (for a stream that stays open) until its head and first event arrived.
async fn exchange(addr: SocketAddr, head: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream
        .write_all(format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
        .await
        .expect("sends");
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await;
        match read {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&chunk[..n]),
            Ok(Err(error)) => panic!("read failed: {error}"),
        }
        let text = String::from_utf8_lossy(&answer);
        if text.contains("\r\n\r\n") && text.contains("\"jsonrpc\"") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn post_head(port: u16, user: Option<&str>, extra: &str) -> String {
    let user = user.map_or(String::new(), |user| format!("X-User: {user}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{user}{extra}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hook-test","version":"0"}}}"#;

fn whoami_2026() -> (String, String) {
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: whoami\r\n";
    (headers.to_owned(), body.to_owned())
}

fn session_of(answer: &str) -> String {
    answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {answer}"))
}

#[tokio::test]
async fn the_hooks_identity_owns_sessions_and_reaches_the_tool_body() {
    let (addr, stop) = serve().await;
    let port = addr.port();

    // No identity: the hook's refusal, with its own challenge.
    let refused = exchange(addr, &post_head(port, None, ""), INITIALIZE).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(
        refused.contains(r#"resource_metadata="http://127.0.0.1/.well-known/test""#),
        "{refused}"
    );
    assert!(refused.contains("send X-User"), "{refused}");

    // Public routes need nothing at all.
    let public = exchange(
        addr,
        &format!(
            "GET /.well-known/test HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        ),
        "",
    )
    .await;
    assert!(public.starts_with("HTTP/1.1 200"), "{public}");
    assert!(public.ends_with("public"), "{public}");

    // The tool body reads the identity the hook established (2026-07-28, stateless).
    let (headers, body) = whoami_2026();
    let alice = exchange(addr, &post_head(port, Some("alice"), &headers), &body).await;
    assert!(alice.starts_with("HTTP/1.1 200"), "{alice}");
    assert!(
        alice.contains(r#"identity=Some(\"gateway:alice\")"#),
        "{alice}"
    );

    // Alice's legacy session is hers: bob (another identity) is refused on it, alice is not.
    let opened = exchange(addr, &post_head(port, Some("alice"), ""), INITIALIZE).await;
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    let session = session_of(&opened);
    let on_session = format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n");
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    let bob = exchange(addr, &post_head(port, Some("bob"), &on_session), list).await;
    assert!(bob.starts_with("HTTP/1.1 403"), "{bob}");
    assert!(bob.contains("session_not_yours"), "{bob}");
    // A client cannot pass an identity of its own: only the hook's verdict counts, so the same
    // request with alice's header is hers.
    let own = exchange(addr, &post_head(port, Some("alice"), &on_session), list).await;
    assert!(!own.starts_with("HTTP/1.1 403"), "{own}");
    let _ = stop.send(());
}

/// Per-person tokens, several per person: `Bearer <person>-<device>` is `token:<person>`,
/// credential `<device>`.
struct Devices;

impl Authenticate for Devices {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let identity = ask_first_serve::http::auth::bearer_token(&parts.headers)
            .and_then(|token| token.split_once('-'))
            .map(|(person, device)| {
                Identity::new(format!("token:{person}")).with_credential(device)
            });
        Box::pin(async move { identity.ok_or_else(|| Refusal::unauthorized("send a token")) })
    }
}

#[tokio::test]
async fn a_header_rule_narrows_the_person_and_another_credential_of_theirs_is_refused() {
    // The server's own rule reads a header anyone can send (the notes example's
    // NOTES_PRINCIPAL_HEADER).
    let guard = Guard::builder("notes")
        .principal(|caller| {
            caller
                .header("x-act-as")
                .and_then(|value| value.to_str().ok())
                .unwrap_or("nobody")
                .to_owned()
        })
        .build();
    let (addr, stop) = serve_with(guard, Arc::new(Devices)).await;
    let port = addr.port();
    let as_ = |token: &str, act_as: &str, extra: &str| {
        post_head(
            port,
            None,
            &format!("Authorization: Bearer {token}\r\nX-Act-As: {act_as}\r\n{extra}"),
        )
    };
    let opened = exchange(addr, &as_("alice-laptop", "alice", ""), INITIALIZE).await;
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    let session = session_of(&opened);
    let on_session = format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n");
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    // Bob's valid token with a header naming alice: still bob, refused on her session.
    let bob = exchange(addr, &as_("bob-laptop", "alice", &on_session), list).await;
    assert!(bob.starts_with("HTTP/1.1 403"), "{bob}");
    assert!(bob.contains("session_not_yours"), "{bob}");
    // Alice's other token: the same person, another credential: refused too.
    let phone = exchange(addr, &as_("alice-phone", "alice", &on_session), list).await;
    assert!(phone.starts_with("HTTP/1.1 403"), "{phone}");
    // The positive control: the token that opened it, with the same header.
    let own = exchange(addr, &as_("alice-laptop", "alice", &on_session), list).await;
    assert!(own.starts_with("HTTP/1.1 200"), "{own}");
    assert!(own.contains("whoami"), "{own}");
    let _ = stop.send(());
}
