//! Faults a real Opengist cannot produce on demand, against a tiny in-process fake: server
//! errors, retries, timeouts, dropped and refused connections, auth failures, redirects, and
//! bodies too large or too slow. Everything else is tested against a real instance.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use opengist_mcp::opengist::requests::GistId;
use opengist_mcp::opengist::{
    ClientOptions, OpengistClient, OpengistError, RequestLimits, Scope, Sha, TimeoutPhase,
};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use url::Url;

const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";
const TOKEN: &str = "og_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn id() -> GistId {
    GistId::parse(ID).expect("valid id")
}

fn client(base: &str, timeout: Duration) -> OpengistClient {
    OpengistClient::new(ClientOptions {
        base_url: Url::parse(base).expect("url"),
        token: Some(TOKEN.to_owned()),
        insecure_tls: false,
        request_timeout: timeout,
        user_agent: "opengist-mcp-fault-tests".into(),
        limits: RequestLimits::default(),
    })
    .expect("client")
}

async fn serve(app: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

/// A router that answers every request with `respond(hit_number, request)`.
fn counting<F>(hits: Arc<AtomicUsize>, respond: F) -> Router
where
    F: Fn(usize, &Request) -> Response + Clone + Send + Sync + 'static,
{
    Router::new().fallback(any(move |request: Request| {
        let hits = hits.clone();
        let respond = respond.clone();
        async move {
            let n = hits.fetch_add(1, Ordering::SeqCst) + 1;
            respond(n, &request)
        }
    }))
}

fn json(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_owned(),
    )
        .into_response()
}

fn gist_json() -> String {
    serde_json::json!({
        "id": ID, "slug_url": ID, "visibility": "unlisted", "title": "t",
        "owner": {"id": 1, "login": "alice", "username": "alice"},
        "files": {"a.txt": {"filename": "a.txt", "size": 1, "content": "x", "encoding": "utf-8"}},
        // One listed commit, as committed as the gist was last updated: a gist whose API
        // commit list starts at its head (otherwise the client also asks git for the head).
        "commits": [{"version": "0123456789abcdef0123456789abcdef01234567",
                     "author": {"name": "alice", "email": "a@example.com"},
                     "committed_at": "2025-01-02T03:04:05Z"}],
        "forks": [], "truncated": false,
        "created_at": "2025-01-02T03:04:05Z", "updated_at": "2025-01-02T03:04:05Z"
    })
    .to_string()
}

#[tokio::test]
async fn a_500_is_reported_and_not_retried() {
    let hits = Arc::new(AtomicUsize::new(0));
    let base = serve(counting(hits.clone(), |_, _| {
        json(
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"message":"failed to read file","status":500}"#,
        )
    }))
    .await;
    let error = client(&base, Duration::from_secs(5))
        .get_gist(&id())
        .await
        .expect_err("500");
    assert!(
        matches!(error, OpengistError::Server { status: 500, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("\"failed to read file\""),
        "{error}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_502_then_200_is_retried_for_a_read() {
    let hits = Arc::new(AtomicUsize::new(0));
    let base = serve(counting(hits.clone(), |n, _| {
        if n == 1 {
            json(StatusCode::BAD_GATEWAY, "<html>bad gateway</html>")
        } else {
            json(StatusCode::OK, &gist_json())
        }
    }))
    .await;
    let gist = client(&base, Duration::from_secs(5))
        .get_gist(&id())
        .await
        .expect("retried read succeeds");
    assert_eq!(gist.id().as_str(), ID);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_503_on_a_write_is_not_retried() {
    // Fork: a POST.
    let hits = Arc::new(AtomicUsize::new(0));
    let base = serve(counting(hits.clone(), |_, _| {
        json(
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"message":"busy","status":503}"#,
        )
    }))
    .await;
    let error = client(&base, Duration::from_secs(5))
        .fork_gist(&id())
        .await
        .expect_err("503");
    assert!(
        matches!(error, OpengistError::Server { status: 503, .. }),
        "{error}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the POST was retried");

    // Like toggle: the PUT behind set_like, after its reads.
    let puts = Arc::new(AtomicUsize::new(0));
    let put_counter = puts.clone();
    let base = serve(counting(
        Arc::new(AtomicUsize::new(0)),
        move |_, request| {
            let path = request.uri().path();
            match *request.method() {
                Method::GET if path.ends_with("/commits") => json(StatusCode::OK, "[]"),
                Method::GET if path.ends_with("/like") => json(
                    StatusCode::NOT_FOUND,
                    r#"{"message":"not found","status":404}"#,
                ),
                Method::PUT => {
                    put_counter.fetch_add(1, Ordering::SeqCst);
                    json(StatusCode::SERVICE_UNAVAILABLE, "{}")
                }
                _ => json(StatusCode::IM_A_TEAPOT, "{}"),
            }
        },
    ))
    .await;
    let error = client(&base, Duration::from_secs(5))
        .set_like(&id(), true)
        .await
        .expect_err("503");
    assert!(
        matches!(error, OpengistError::Server { status: 503, .. }),
        "{error}"
    );
    assert_eq!(puts.load(Ordering::SeqCst), 1, "the toggle was retried");
}

#[tokio::test]
async fn a_hang_times_out_naming_the_timeout_and_host() {
    let app = Router::new().fallback(any(|| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "never"
    }));
    let base = serve(app).await;
    let host = base.trim_start_matches("http://").to_owned();
    let error = client(&base, Duration::from_millis(300))
        .get_gist(&id())
        .await
        .expect_err("timeout");
    assert!(
        matches!(
            error,
            OpengistError::Timeout {
                phase: TimeoutPhase::Request,
                ..
            }
        ),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("request timeout") && text.contains(&host),
        "{text}"
    );
}

#[tokio::test]
async fn a_slow_body_times_out() {
    // Headers at once, one chunk, then nothing.
    let app = Router::new().fallback(any(|| async {
        let stream = futures::stream::unfold(0u8, |state| async move {
            if state == 0 {
                Some((Ok::<_, Infallible>(Bytes::from_static(b"abc")), 1))
            } else {
                tokio::time::sleep(Duration::from_secs(60)).await;
                None
            }
        });
        Response::builder()
            .header(header::CONTENT_LENGTH, "1000")
            .body(Body::from_stream(stream))
            .unwrap_or_default()
    }));
    let base = serve(app).await;
    let sha = Sha::parse("abcd").expect("sha");
    let error = client(&base, Duration::from_millis(400))
        .raw_file(&id(), &sha, "a.txt", 0, 500)
        .await
        .expect_err("timeout");
    assert!(
        matches!(
            error,
            OpengistError::Timeout {
                phase: TimeoutPhase::Request,
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_dropped_connection_is_retried_then_reported() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let accepts = Arc::new(AtomicUsize::new(0));
    let counter = accepts.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            drop(socket);
        }
    });
    let base = format!("http://{addr}");
    let error = client(&base, Duration::from_secs(5))
        .get_gist(&id())
        .await
        .expect_err("dropped");
    assert!(matches!(error, OpengistError::Connection { .. }), "{error}");
    assert!(error.to_string().contains(&base), "{error}");
    assert_eq!(accepts.load(Ordering::SeqCst), 3, "two retries expected");
}

#[tokio::test]
async fn a_refused_connection_names_the_configured_url() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let base = format!("http://{addr}");
    let error = client(&base, Duration::from_secs(5))
        .get_gist(&id())
        .await
        .expect_err("refused");
    assert!(
        matches!(error, OpengistError::ConnectionRefused { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains(&base) && !text.contains(TOKEN), "{text}");
}

#[tokio::test]
async fn unauthorized_and_missing_scope() {
    let seen: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let record = seen.clone();
    let base = serve(counting(Arc::default(), move |_, request| {
        let get = |name| {
            request
                .headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        if let Ok(mut seen) = record.lock() {
            seen.push((
                get(header::AUTHORIZATION),
                get(header::ACCEPT),
                get(header::CONTENT_TYPE),
            ));
        }
        if request.uri().path() == "/api/user" {
            json(
                StatusCode::FORBIDDEN,
                r#"{"message":"token lacks required scope/permission","status":403}"#,
            )
        } else {
            json(
                StatusCode::UNAUTHORIZED,
                r#"{"message":"Bad crendentials","status":401}"#,
            )
        }
    }))
    .await;
    let c = client(&base, Duration::from_secs(5));

    let error = c.get_gist(&id()).await.expect_err("401");
    assert!(matches!(error, OpengistError::BadToken { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains(&format!("{base}/-/settings/access-tokens")),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");

    let error = c.get_user_me().await.expect_err("403");
    assert!(
        matches!(
            error,
            OpengistError::MissingScope {
                scope: Scope::UserRead,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("`user:read`"), "{error}");

    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(seen.len(), 2);
    for (authorization, accept, content_type) in seen {
        assert_eq!(authorization, format!("Bearer {TOKEN}"));
        assert_eq!(accept, "application/json");
        assert_eq!(content_type, "application/json");
    }
}

#[tokio::test]
async fn a_redirect_is_not_followed_with_the_token() {
    let elsewhere_hits = Arc::new(AtomicUsize::new(0));
    let elsewhere = serve(counting(elsewhere_hits.clone(), |_, _| {
        json(StatusCode::OK, &gist_json())
    }))
    .await;
    let target = format!("{elsewhere}/api/gists/{ID}");
    let base = serve(counting(Arc::default(), move |_, _| {
        (StatusCode::FOUND, [(header::LOCATION, target.clone())]).into_response()
    }))
    .await;
    let error = client(&base, Duration::from_secs(5))
        .get_gist(&id())
        .await
        .expect_err("redirect");
    assert!(
        matches!(error, OpengistError::Redirect { status: 302, .. }),
        "{error}"
    );
    assert_eq!(elsewhere_hits.load(Ordering::SeqCst), 0);
}

/// Sets a flag when dropped: the server's body stream is dropped when the client hangs up.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn an_oversized_raw_file_is_cut_without_reading_it_all() {
    const TOTAL: u64 = 256 * 1024 * 1024;
    const CHUNK: usize = 64 * 1024;
    let produced = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let (p, d) = (produced.clone(), dropped.clone());
    let app = Router::new().fallback(any(move || {
        let (produced, dropped) = (p.clone(), d.clone());
        async move {
            let flag = DropFlag(dropped);
            let stream = futures::stream::unfold((0u64, flag), move |(sent, flag)| {
                let produced = produced.clone();
                async move {
                    if sent >= TOTAL {
                        return None;
                    }
                    let n = CHUNK.min((TOTAL - sent) as usize);
                    produced.fetch_add(n as u64, Ordering::SeqCst);
                    let chunk = Bytes::from(vec![b'a'; n]);
                    Some((Ok::<_, Infallible>(chunk), (sent + n as u64, flag)))
                }
            });
            Response::builder()
                .header(header::CONTENT_LENGTH, TOTAL.to_string())
                .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .body(Body::from_stream(stream))
                .unwrap_or_default()
        }
    }));
    let base = serve(app).await;
    let sha = Sha::parse("abcd1234").expect("sha");
    let raw = client(&base, Duration::from_secs(30))
        .raw_file(&id(), &sha, "big file #1?.txt", 10, 1000)
        .await
        .expect("raw file");
    assert_eq!(raw.bytes.len(), 1000);
    assert!(raw.bytes.iter().all(|b| *b == b'a'));
    assert!(raw.truncated);
    assert!(raw.is_utf8);
    assert_eq!(raw.total_bytes, Some(TOTAL));
    assert_eq!(raw.offset, 10);

    // The client hung up: the server's stream is dropped long before it is exhausted.
    for _ in 0..200 {
        if dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body stream is still being read"
    );
    assert!(
        produced.load(Ordering::SeqCst) < TOTAL,
        "the whole body was produced"
    );
}
