//! The page's own loopback listener, driven over real sockets: the host and port it answers,
//! the family it holds beside it, and the bounds that keep the person's open page.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use ask_first_core::{ApprovalPages as _, ApprovalRecord, ApprovalStore, MemoryApprovalStore};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

/// A page whose listener is at `addr`, over a memory store.
fn page_at(addr: &str) -> (ApprovalPage, Arc<MemoryApprovalStore>) {
    let store = Arc::new(MemoryApprovalStore::new());
    let settings = ApprovalSettings {
        routes: None,
        addr: addr.to_owned(),
        addr_set: true,
        public_url: None,
        aaguids: None,
        wait: None,
        routes_setting: "T_APPROVAL_ROUTES".into(),
        public_url_setting: "T_PUBLIC_URL".into(),
    };
    let dir = std::env::temp_dir().join(format!("ask-first-page-{}", RecordId::random()));
    let page = ApprovalPage::new("notes", &dir, "T_STATE_DIR", store.clone(), &settings);
    (page, store)
}

/// A pending page record of `principal`, stored.
async fn pending(store: &MemoryApprovalStore, principal: &str) -> RecordId {
    let json = serde_json::json!({
        "id": RecordId::random().to_string(), "principal": principal, "holder": principal,
        "tool": "delete_note", "operation": "delete", "target": "00", "shown": "00",
        "question": "Delete note n1?", "route": "page", "expires_at": now() + 600,
        "state": "pending",
    });
    let record = ApprovalRecord::from_json(&json).expect("a record");
    store
        .create(&record, usize::MAX, now())
        .await
        .expect("stored")
        .expect("below the bound");
    record.id
}

/// One HTTP/1.1 request to `127.0.0.1:port`: the status, `Set-Cookie` and body.
async fn request(port: u16, head: &str, body: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .await
        .expect("connected");
    let sent = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(sent.as_bytes()).await.expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("read");
    let (headers, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = headers
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let cookie = headers
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap_or("")
        .to_owned();
    (status, cookie, body.to_owned())
}

fn port_of(url: &str) -> u16 {
    let rest = url
        .strip_prefix("http://localhost:")
        .expect("a localhost URL");
    rest.split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port")
}

/// The page's token, read from its body.
fn token_of(body: &str) -> String {
    let start = body.find("data-token=\"").expect("a token") + "data-token=\"".len();
    body[start..].split('"').next().unwrap_or("").to_owned()
}

#[tokio::test]
async fn the_listener_answers_only_localhost_on_its_own_port() {
    let (page, store) = page_at("localhost:0");
    let id = pending(&store, "local").await;
    let url = page.url(&id).await.expect("a URL");
    let port = port_of(&url);
    let path = format!("/approve/{id}");
    let own = format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}");
    let (status, cookie, body) = request(port, &own, "").await;
    assert_eq!(status, 200, "{body}");
    let other_port = port.wrapping_add(1);
    for host in [
        format!("localhost:{other_port}"),
        format!("127.0.0.1:{port}"),
        format!("evil.example:{port}"),
    ] {
        let (status, _, text) =
            request(port, &format!("GET {path} HTTP/1.1\r\nHost: {host}"), "").await;
        assert_eq!(status, 421, "{host}: {text}");
        assert!(
            text.contains(&format!("http://localhost:{port} only")),
            "{text}"
        );
    }
    // A POST addressed to another localhost port, from that origin, with the page's own token
    // and cookie: refused before any ceremony begins.
    let token = token_of(&body);
    let begin = format!(r#"{{"token":"{token}","decision":"approve"}}"#);
    let foreign = format!(
        "POST {path}/begin HTTP/1.1\r\nHost: localhost:{other_port}\r\nOrigin: http://localhost:{other_port}\r\nCookie: {cookie}\r\nContent-Type: application/json"
    );
    let (status, _, text) = request(port, &foreign, &begin).await;
    assert_eq!(status, 421, "{text}");
    // Positive control: the same POST addressed to the page itself gets its challenge.
    let own_post = format!(
        "POST {path}/begin HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\nCookie: {cookie}\r\nContent-Type: application/json"
    );
    let (status, _, text) = request(port, &own_post, &begin).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("challenge"), "{text}");
}

#[tokio::test]
async fn the_listener_holds_ipv6_loopback_on_its_port() {
    let (page, store) = page_at("localhost:0");
    let id = pending(&store, "local").await;
    let port = port_of(&page.url(&id).await.expect("a URL"));
    if std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).is_err() {
        return; // No IPv6 here: nobody can take `[::1]` either.
    }
    let squat = std::net::TcpListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port)));
    assert!(squat.is_err(), "another process took [::1]:{port}");
}

#[tokio::test]
async fn a_fixed_port_squatted_on_ipv6_is_refused_then_served_once_free() {
    let Ok(squatter) = std::net::TcpListener::bind((Ipv6Addr::LOCALHOST, 0)) else {
        return; // No IPv6 here.
    };
    let port = squatter.local_addr().expect("addr").port();
    let (page, store) = page_at(&format!("localhost:{port}"));
    let id = pending(&store, "local").await;
    let refused = page.url(&id).await.expect_err("served beside a squatter");
    assert!(refused.contains(&format!("[::1]:{port}")), "{refused}");
    // Positive control: the squatter gone, the next need binds the same port.
    drop(squatter);
    let url = page.url(&id).await.expect("served once free");
    assert_eq!(port_of(&url), port);
}

#[tokio::test]
async fn another_records_flood_leaves_the_persons_open_page() {
    let (page, store) = page_at("localhost:0");
    let person = pending(&store, "local").await;
    let model = pending(&store, "local").await;
    let port = port_of(&page.url(&person).await.expect("a URL"));
    let get = |id: RecordId| format!("GET /approve/{id} HTTP/1.1\r\nHost: localhost:{port}");
    let (status, cookie, body) = request(port, &get(person), "").await;
    assert_eq!(status, 200);
    let token = token_of(&body);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..300 {
        let (status, _, _) = request(port, &get(model), "").await;
        *statuses.entry(status).or_default() += 1;
    }
    assert_eq!(statuses.get(&200), Some(&held::PER_RECORD), "{statuses:?}");
    assert_eq!(
        statuses.get(&429),
        Some(&(300 - held::PER_RECORD)),
        "{statuses:?}"
    );
    // The person's page still begins its ceremony.
    let begin = format!(
        "POST /approve/{person}/begin HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\nCookie: {cookie}\r\nContent-Type: application/json"
    );
    let body = format!(r#"{{"token":"{token}","decision":"approve"}}"#);
    let (status, _, text) = request(port, &begin, &body).await;
    assert_eq!(status, 200, "{text}");
    // The same browser reopening its page keeps its token (no new entry), and the refusal of
    // the model's flood names what to do.
    let reopen = format!("{}\r\nCookie: {cookie}", get(person));
    let (status, _, again) = request(port, &reopen, "").await;
    assert_eq!((status, token_of(&again)), (200, token));
    let (status, _, text) = request(port, &get(model), "").await;
    assert_eq!(status, 429);
    assert!(text.contains("already open in 8 browser windows"), "{text}");
}

#[tokio::test]
async fn a_decision_frees_its_records_pages() {
    let (page, store) = page_at("localhost:0");
    let id = pending(&store, "local").await;
    let port = port_of(&page.url(&id).await.expect("a URL"));
    let get = format!("GET /approve/{id} HTTP/1.1\r\nHost: localhost:{port}");
    let (_, _, body) = request(port, &get, "").await;
    let token = token_of(&body);
    assert!(
        page.inner.pages.renew(&id, &token),
        "the open page is not held"
    );
    let answered = page::record_decision(&page.inner, &id, true, "a test", "retry").await;
    assert_eq!(answered.status(), axum::http::StatusCode::OK);
    let text = axum::body::to_bytes(answered.into_body(), 4096)
        .await
        .expect("a body");
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("Return to your chat"), "{text}");
    assert!(text.contains("goes on by itself"), "{text}");
    assert!(
        page.inner.pages.take(&token).is_none(),
        "the decided page is still held"
    );
}
