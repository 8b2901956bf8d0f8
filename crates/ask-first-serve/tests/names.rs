//! Every refusal names the server's own settings: a server that calls its settings `NOTES_*`
//! never sees another server's variable names in its messages. Real sockets, raw HTTP/1.1.

use std::net::SocketAddr;

use ask_first_core::{Guard, HasGuard};
use ask_first_serve::SettingNames;
use ask_first_serve::http::{HttpError, HttpOptions, bind_http};
use ask_first_serve::settings::Secret;
use rmcp::ServerHandler;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

#[derive(Clone)]
struct Empty {
    guard: Guard,
}

impl HasGuard for Empty {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl ServerHandler for Empty {}

fn options() -> HttpOptions {
    HttpOptions::new(SettingNames::with_prefix("NOTES"))
}

async fn serve(options: HttpOptions) -> (SocketAddr, oneshot::Sender<()>) {
    let server = Empty {
        guard: Guard::builder("notes").build(),
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

/// One request with `Connection: close`; the whole answer as text.
async fn exchange(addr: SocketAddr, head: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(head.as_bytes()).await.expect("sends");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("reads");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_public_address_without_a_secret_names_the_servers_token_setting() {
    let server = Empty {
        guard: Guard::builder("notes").build(),
    };
    let error = bind_http(
        "0.0.0.0:0".parse().expect("address"),
        move || Ok(server.clone()),
        options(),
    )
    .await
    .expect_err("refused");
    assert!(matches!(error, HttpError::TokenRequired { .. }), "{error}");
    assert!(
        error.to_string().contains("set NOTES_HTTP_TOKEN"),
        "{error}"
    );
}

#[tokio::test]
async fn gate_refusals_name_the_servers_settings() {
    let (addr, stop) = serve(HttpOptions {
        bearer_token: Some(Secret::new("notes-bearer-secret-0123")),
        ..options()
    })
    .await;
    let port = addr.port();
    let host = exchange(
        addr,
        "GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(host.starts_with("HTTP/1.1 403"), "{host}");
    assert!(host.contains("add it to NOTES_ALLOWED_HOSTS"), "{host}");
    let origin = exchange(
        addr,
        &format!(
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: https://evil.example\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(origin.starts_with("HTTP/1.1 403"), "{origin}");
    assert!(origin.contains("NOTES_ALLOWED_ORIGINS"), "{origin}");
    let bearer = exchange(
        addr,
        &format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(bearer.starts_with("HTTP/1.1 401"), "{bearer}");
    assert!(bearer.contains("the value of NOTES_HTTP_TOKEN"), "{bearer}");
    let fine = exchange(
        addr,
        &format!(
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer notes-bearer-secret-0123\r\nConnection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(fine.starts_with("HTTP/1.1 200"), "{fine}");
    for answer in [&host, &origin, &bearer] {
        assert!(!answer.contains("OPENGIST"), "{answer}");
    }
    let _ = stop.send(());
}
