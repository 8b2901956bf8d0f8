//! The HTTP gate around rmcp's streamable HTTP service: Host and Origin checks, the bearer
//! secret, `/healthz`, graceful shutdown, and real MCP round trips with rmcp's own client in
//! both protocol eras.

use std::net::SocketAddr;
use std::time::Duration;

use ask_first::{Guard, HasGuard};
use opengist_mcp::config::{AllowedHost, AllowedOrigin, Secret};
use opengist_mcp::http::{BoundHttp, HttpError, HttpOptions, bind_http, http_options};
use rmcp::{
    ClientLifecycleMode, ClientServiceExt, RoleServer, ServerHandler, ServiceExt,
    handler::server::router::tool::ToolRouter,
    model::{
        CallToolRequestParams, ClientConfig, ProtocolVersion, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::json;
use tokio::sync::oneshot;

const TOKEN: &str = "test-bearer-secret-0123456789";

/// A one-tool server (with a guard: HTTP serving binds sessions by the guard's principal rule).
#[derive(Debug, Clone)]
struct Ping {
    tool_router: ToolRouter<Self>,
    guard: Guard,
}

impl Ping {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            guard: Guard::builder("ping").build(),
        }
    }
}

impl HasGuard for Ping {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[tool_router]
impl Ping {
    #[tool(description = "Answers pong")]
    async fn ping(&self) -> String {
        "pong".to_owned()
    }

    #[tool(description = "Names the protocol version of this request")]
    async fn era(&self, context: RequestContext<RoleServer>) -> String {
        context
            .protocol_version()
            .map(|version| version.as_str().to_owned())
            .unwrap_or_default()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Ping {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A running server and the handle that stops it.
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), HttpError>>,
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let finished = tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("the server stops after the shutdown signal");
        finished
            .expect("server task")
            .expect("server ran without error");
    }
}

async fn start(options: HttpOptions) -> Running {
    // reqwest is built without a crypto provider of its own (the binary installs ring's).
    opengist_mcp::opengist::install_tls_provider();
    let bound: BoundHttp = bind_http(
        "127.0.0.1:0".parse().expect("address"),
        || Ok(Ping::new()),
        options,
    )
    .await
    .expect("binds");
    let addr = bound.local_addr();
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        stop: Some(stop),
        task,
    }
}

fn with_token() -> HttpOptions {
    HttpOptions {
        bearer_token: Some(Secret::new(TOKEN)),
        ..http_options()
    }
}

/// A client that sends the bearer secret of [`with_token`] on every request: the server
/// requires a credential on loopback too (without one it makes one up at start).
fn authorized_client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        reqwest::header::HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header"),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("a client")
}

fn initialize_body() -> serde_json::Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "http-guard-test", "version": "1.0.0" }
        }
    })
}

fn initialize(client: &reqwest::Client, running: &Running) -> reqwest::RequestBuilder {
    client
        .post(running.url("/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(initialize_body().to_string())
}

async fn error_code(response: reqwest::Response) -> String {
    let body: serde_json::Value = response.json().await.expect("a JSON error body");
    body["error"].as_str().expect("error code").to_owned()
}

#[tokio::test]
async fn legacy_initialize_post_works() {
    let running = start(with_token()).await;
    let client = authorized_client();
    let response = initialize(&client, &running).send().await.expect("sent");
    assert_eq!(response.status(), 200);
    assert!(
        response.headers().contains_key("mcp-session-id"),
        "legacy clients get a stateful session"
    );
    let text = response.text().await.expect("body");
    assert!(text.contains("\"protocolVersion\""), "{text}");
    running.stop().await;
}

#[tokio::test]
async fn host_header_is_checked() {
    let running = start(with_token()).await;
    let port = running.addr.port();
    let client = authorized_client();
    for (host, status) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("LOCALHOST:{port}"), 200),
        (format!("[::1]:{port}"), 200),
        (format!("evil.example:{port}"), 403),
        ("evil.example".to_owned(), 403),
        (format!("localhost:{}", port.wrapping_add(1)), 403),
        ("localhost".to_owned(), 403),
        (format!("127.0.0.1.evil.example:{port}"), 403),
        (format!("user@localhost:{port}"), 400),
        (format!("localhost:{port}0000"), 400),
        ("bad host".to_owned(), 400),
    ] {
        let response = client
            .get(running.url("/healthz"))
            .header("Host", &host)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "Host: {host}");
        if status == 403 {
            assert_eq!(error_code(response).await, "host_not_allowed");
        }
        // The MCP endpoint is behind the same gate.
        let response = initialize(&client, &running)
            .header("Host", &host)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "POST /mcp, Host: {host}");
    }
    running.stop().await;
}

#[tokio::test]
async fn extra_hosts_are_accepted() {
    let running = start(HttpOptions {
        allowed_hosts: vec![
            AllowedHost::parse("mcp.example.com").expect("entry"),
            AllowedHost::parse("pinned.example.com:8443").expect("entry"),
        ],
        ..with_token()
    })
    .await;
    let client = authorized_client();
    for (host, status) in [
        ("mcp.example.com", 200),
        ("mcp.example.com:8443", 200),
        ("MCP.example.com:1", 200),
        ("pinned.example.com:8443", 200),
        ("pinned.example.com", 403),
        ("pinned.example.com:443", 403),
        ("other.example.com", 403),
    ] {
        let response = client
            .get(running.url("/healthz"))
            .header("Host", host)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "Host: {host}");
        let response = initialize(&client, &running)
            .header("Host", host)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "POST /mcp, Host: {host}");
    }
    running.stop().await;
}

#[tokio::test]
async fn origin_header_is_checked() {
    let running = start(HttpOptions {
        allowed_origins: vec![
            AllowedOrigin::parse("https://app.example.com").expect("entry"),
            AllowedOrigin::parse("http://any-port.example:*").expect("entry"),
        ],
        ..with_token()
    })
    .await;
    let client = authorized_client();
    for (origin, status) in [
        ("http://localhost:1234", 200),
        ("http://localhost", 200),
        ("https://127.0.0.1:8443", 200),
        ("http://[::1]:3000", 200),
        ("https://app.example.com", 200),
        ("https://app.example.com:443", 200),
        ("http://any-port.example:9999", 200),
        ("https://app.example.com:8443", 403),
        ("http://app.example.com", 403),
        ("https://evil.example", 403),
        ("http://localhost.evil.example", 403),
        ("null", 403),
        ("not an origin", 403),
        ("ftp://localhost", 403),
    ] {
        let response = client
            .get(running.url("/healthz"))
            .header("Origin", origin)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "Origin: {origin}");
        if status == 403 {
            assert_eq!(error_code(response).await, "origin_not_allowed");
        }
        let response = initialize(&client, &running)
            .header("Origin", origin)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "POST /mcp, Origin: {origin}");
    }
    running.stop().await;
}

#[tokio::test]
async fn bearer_secret_is_required_when_configured() {
    let running = start(with_token()).await;
    let client = reqwest::Client::new();
    let wrong = [
        None,
        Some("Bearer".to_owned()),
        Some("Bearer ".to_owned()),
        Some("Bearer wrong".to_owned()),
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_owned()),
    ];
    for authorization in &wrong {
        for path in ["/healthz", "/mcp", "/elsewhere"] {
            let mut request = if path == "/mcp" {
                initialize(&client, &running)
            } else {
                client.get(running.url(path))
            };
            if let Some(value) = authorization {
                request = request.header("Authorization", value);
            }
            let response = request.send().await.expect("sent");
            assert_eq!(response.status(), 401, "{path} with {authorization:?}");
            assert_eq!(
                response
                    .headers()
                    .get("www-authenticate")
                    .and_then(|v| v.to_str().ok()),
                Some("Bearer")
            );
            let body: serde_json::Value = response.json().await.expect("JSON body");
            assert_eq!(body["error"], "unauthorized");
            assert!(
                !body.to_string().contains(TOKEN),
                "the secret is never echoed"
            );
        }
    }
    for authorization in [format!("Bearer {TOKEN}"), format!("bearer  {TOKEN}")] {
        let response = client
            .get(running.url("/healthz"))
            .header("Authorization", &authorization)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), 200, "{authorization}");
        let response = initialize(&client, &running)
            .header("Authorization", &authorization)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), 200);
    }
    // Host is still checked with the right secret.
    let response = client
        .get(running.url("/healthz"))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Host", "evil.example")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 403);
    running.stop().await;
}

#[tokio::test]
async fn healthz_and_unknown_paths() {
    let running = start(with_token()).await;
    let client = authorized_client();
    let response = client
        .get(running.url("/healthz"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.expect("body"), "ok");
    let response = client
        .get(running.url("/nothing"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 404);
    assert_eq!(error_code(response).await, "not_found");
    running.stop().await;
}

#[tokio::test]
async fn non_loopback_without_a_secret_is_refused() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
        let addr: SocketAddr = addr.parse().expect("address");
        let error = bind_http(addr, || Ok(Ping::new()), http_options())
            .await
            .expect_err("refused");
        assert!(matches!(error, HttpError::TokenRequired { .. }), "{error}");
        assert!(error.to_string().contains("OPENGIST_MCP_HTTP_TOKEN"));
        assert_eq!(error.exit_code(), 1);
    }
}

#[tokio::test]
async fn without_any_setting_a_made_up_secret_is_required_on_loopback() {
    // No secret configured and no opt-out: the server makes one up (printed on its stderr),
    // so a client without it gets 401 on every route, the MCP endpoint included.
    let running = start(http_options()).await;
    let client = reqwest::Client::new();
    let response = client
        .get(running.url("/healthz"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 401);
    assert_eq!(error_code(response).await, "unauthorized");
    let response = initialize(&client, &running).send().await.expect("sent");
    assert_eq!(response.status(), 401);
    let body = error_code(response).await;
    assert_eq!(body, "unauthorized");
    // A guessed secret does not pass either.
    let response = initialize(&client, &running)
        .header("Authorization", format!("Bearer {TOKEN}"))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 401);
    running.stop().await;
}

#[tokio::test]
async fn the_explicit_opt_out_serves_loopback_without_authentication() {
    let running = start(HttpOptions {
        no_auth: true,
        ..http_options()
    })
    .await;
    let response = initialize(&reqwest::Client::new(), &running)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    running.stop().await;
}

#[tokio::test]
async fn the_opt_out_is_refused_off_loopback_and_with_a_secret() {
    let addr: SocketAddr = "0.0.0.0:0".parse().expect("address");
    let options = HttpOptions {
        no_auth: true,
        ..http_options()
    };
    let error = bind_http(addr, || Ok(Ping::new()), options)
        .await
        .expect_err("refused");
    assert!(
        matches!(error, HttpError::NoAuthNotLoopback { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("OPENGIST_MCP_HTTP_NO_AUTH"),
        "{error}"
    );
    let local: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let options = HttpOptions {
        no_auth: true,
        ..with_token()
    };
    let error = bind_http(local, || Ok(Ping::new()), options)
        .await
        .expect_err("refused");
    assert!(matches!(error, HttpError::AuthConflict { .. }), "{error}");
    assert!(
        error.to_string().contains("OPENGIST_MCP_HTTP_TOKEN"),
        "{error}"
    );
}

#[tokio::test]
async fn a_taken_port_is_a_bind_error() {
    let running = start(with_token()).await;
    let error = bind_http(running.addr, || Ok(Ping::new()), http_options())
        .await
        .expect_err("port in use");
    assert!(matches!(error, HttpError::Bind { .. }), "{error}");
    running.stop().await;
}

fn transport(
    running: &Running,
    token: Option<&str>,
) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(running.url("/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    StreamableHttpClientTransport::from_config(config)
}

async fn ping_text(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
) -> String {
    call_text(client, "ping").await
}

async fn call_text(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
    tool: &'static str,
) -> String {
    let result = client
        .call_tool(CallToolRequestParams::new(tool))
        .await
        .expect("ping is called");
    let value = serde_json::to_value(&result).expect("serialisable");
    value["content"][0]["text"]
        .as_str()
        .expect("a text block")
        .to_owned()
}

#[tokio::test]
async fn rmcp_client_legacy_round_trip_with_bearer() {
    let running = start(with_token()).await;
    let client = ClientConfig::default()
        .serve(transport(&running, Some(TOKEN)))
        .await
        .expect("legacy handshake over HTTP");
    let tools = client.list_tools(None).await.expect("tools/list");
    let names: Vec<&str> = tools.tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["era", "ping"]);
    assert_eq!(ping_text(&client).await, "pong");
    assert_eq!(call_text(&client, "era").await, "2025-11-25");
    client.cancel().await.expect("client closes");
    running.stop().await;
}

#[tokio::test]
async fn rmcp_client_without_the_secret_cannot_start() {
    let running = start(with_token()).await;
    let started = ClientConfig::default()
        .serve(transport(&running, None))
        .await;
    assert!(
        started.is_err(),
        "the handshake must fail without the secret"
    );
    let started = ClientConfig::default()
        .serve(transport(&running, Some("not-the-secret-at-all")))
        .await;
    assert!(
        started.is_err(),
        "the handshake must fail with a wrong secret"
    );
    running.stop().await;
}

#[tokio::test]
async fn rmcp_client_discover_round_trip() {
    let running = start(with_token()).await;
    let client = ClientConfig::default()
        .serve_with_lifecycle(
            transport(&running, Some(TOKEN)),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("2026-07-28 discover over HTTP");
    let tools = client.list_tools(None).await.expect("tools/list");
    assert_eq!(tools.tools.len(), 2);
    assert_eq!(ping_text(&client).await, "pong");
    assert_eq!(call_text(&client, "era").await, "2026-07-28");
    client.cancel().await.expect("client closes");
    running.stop().await;
}

#[tokio::test]
async fn shutdown_ends_open_sessions() {
    let running = start(with_token()).await;
    // A legacy client holds a session (and its server-sent event stream) open.
    let client = ClientConfig::default()
        .serve(transport(&running, Some(TOKEN)))
        .await
        .expect("legacy handshake over HTTP");
    assert_eq!(ping_text(&client).await, "pong");
    // `stop` fails the test if serving does not end after the signal.
    running.stop().await;
    drop(client);
}
