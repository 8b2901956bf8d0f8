use super::*;

const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

fn base() -> Url {
    Url::parse("https://gist.example.com").expect("url")
}

fn id() -> GistId {
    GistId::parse(ID).expect("id")
}

fn client(base: &str, token: Option<&str>, timeout: Duration) -> OpengistClient {
    OpengistClient::new(ClientOptions {
        base_url: Url::parse(base).expect("url"),
        token: token.map(str::to_owned),
        insecure_tls: false,
        request_timeout: timeout,
        user_agent: "opengist-mcp-test".into(),
        limits: RequestLimits::default(),
    })
    .expect("client")
}

#[test]
fn raw_file_urls_encode_the_filename_as_one_segment() {
    let c = client("https://gist.example.com", None, Duration::from_secs(5));
    let sha = Sha::parse("0123abcd").expect("sha");
    let url = |name: &str| c.raw_file_url(&id(), &sha, name).expect("url").to_string();
    assert_eq!(
        url("my notes.md"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/my%20notes.md")
    );
    assert_eq!(
        url("a#b?c.txt"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/a%23b%3Fc.txt")
    );
    assert_eq!(
        url("résumé ✓.md"),
        format!(
            "https://gist.example.com/api/gists/{ID}/files/0123abcd/r%C3%A9sum%C3%A9%20%E2%9C%93.md"
        )
    );
    assert_eq!(
        url("notes (1).md"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/notes%20%281%29.md")
    );
    assert_eq!(
        url("k=v;x@y,$&:.md"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/k=v;x@y,$&:.md")
    );
    // `+` and `%` are sent in a deliberately non-canonical form (see raw_filename_segment).
    assert_eq!(
        url("c++.md"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/c%2B%2B.md")
    );
    assert_eq!(
        url("a%20b.md"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/%61%2520b.md")
    );
    assert_eq!(
        url("%"),
        format!("https://gist.example.com/api/gists/{ID}/files/0123abcd/%25")
    );
}

/// Go's `net/url` escaping of a path (`shouldEscape` in `encodePath` mode).
fn go_escape_path(path: &[u8]) -> String {
    let mut out = String::new();
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(text: &str, plus_is_space: bool) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(out)
}

/// The name Opengist looks up for a request path: Go keeps the raw path only when it is
/// not the canonical encoding of the decoded one; the router (echo v4) matches on the raw
/// path if kept, else on the decoded one, without unescaping parameters; the handler's git
/// layer query-unescapes the name (returning it unchanged when that fails).
fn name_opengist_sees(raw_path: &str) -> String {
    let decoded = percent_decode(raw_path, false).expect("valid escapes");
    let routed = if go_escape_path(&decoded) == raw_path {
        String::from_utf8(decoded).expect("utf-8")
    } else {
        raw_path.to_owned()
    };
    let param = routed.rsplit('/').next().expect("segment").to_owned();
    percent_decode(&param, true)
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or(param)
}

#[test]
fn raw_file_names_survive_opengists_two_decodings() {
    let c = client("https://gist.example.com", None, Duration::from_secs(5));
    let sha = Sha::parse("0123abcd").expect("sha");
    for name in [
        "notes.md",
        "my notes.md",
        "notes (1).md",
        "c++.md",
        "a+b c.md",
        "a%20b.md",
        "100%.txt",
        "50% off+tax.md",
        "%",
        "%%",
        "% %",
        "'quoted' *star* !bang [x] {y} ^|`\\",
        "k=v;x@y,$&:.md",
        "résumé ✓.md",
        "#hash?.md",
        "-_.~",
    ] {
        let url = c.raw_file_url(&id(), &sha, name).expect("url");
        assert_eq!(
            name_opengist_sees(url.path()),
            name,
            "{name:?} sent as {url}"
        );
    }
}

#[test]
fn endpoints_keep_the_base_path() {
    let c = client("https://example.com/og/", None, Duration::from_secs(5));
    assert_eq!(
        c.endpoint(&["api", "gists"]).expect("url").as_str(),
        "https://example.com/og/api/gists"
    );
    let c = client("http://127.0.0.1:6157", None, Duration::from_secs(5));
    assert_eq!(
        c.endpoint(&["api", "users", "a b", "gists"])
            .expect("url")
            .as_str(),
        "http://127.0.0.1:6157/api/users/a%20b/gists"
    );
    assert_eq!(
        c.endpoint(&["healthcheck"]).expect("url").as_str(),
        "http://127.0.0.1:6157/healthcheck"
    );
}

#[test]
fn bad_base_urls_and_tokens_are_refused_without_echo() {
    let make = |base: &str, token: &str| {
        OpengistClient::new(ClientOptions {
            base_url: Url::parse(base).expect("url"),
            token: Some(token.to_owned()),
            insecure_tls: false,
            request_timeout: Duration::from_secs(1),
            user_agent: "t".into(),
            limits: RequestLimits::default(),
        })
    };
    assert!(matches!(
        make("ftp://x.example", "og_x"),
        Err(OpengistError::ClientInit { .. })
    ));
    assert!(matches!(
        make("mailto:a@b.example", "og_x"),
        Err(OpengistError::ClientInit { .. })
    ));
    let err = make("https://x.example", "og_sec\nret").expect_err("bad header");
    assert!(!err.to_string().contains("og_sec"));
    let ok = make("https://x.example", "og_secret").expect("client");
    assert!(ok.has_token());
    assert!(!format!("{ok:?}").contains("og_secret"));
    let options = ClientOptions {
        base_url: base(),
        token: Some("og_secret".into()),
        insecure_tls: false,
        request_timeout: Duration::from_secs(1),
        user_agent: "t".into(),
        limits: RequestLimits::default(),
    };
    assert!(!format!("{options:?}").contains("og_secret"));
}

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(*name, HeaderValue::from_str(value).expect("value"));
    }
    map
}

#[test]
fn page_headers_are_read() {
    let h = headers(&[
        ("x-page", "2"),
        ("x-per-page", "30"),
        ("x-total", "75"),
        ("x-total-pages", "3"),
        (
            "link",
            r#"<https://g.example/api/gists?page=3&per_page=30>; rel="next", <https://g.example/api/gists?page=1&per_page=30>; rel="prev""#,
        ),
    ]);
    let parsed = PageHeaders::parse(&h);
    assert_eq!(
        parsed,
        PageHeaders {
            page: Some(2),
            per_page: Some(30),
            total: Some(75),
            total_pages: Some(3),
            link_next: Some(true),
        }
    );
    let page = parsed.into_page(vec![1, 2, 3], 9, 9);
    assert_eq!((page.page, page.per_page, page.has_next), (2, 30, true));
    assert_eq!((page.total, page.total_pages), (Some(75), Some(3)));
}

#[test]
fn last_pages_and_missing_headers() {
    // Last page: a prev link only.
    let last = PageHeaders::parse(&headers(&[
        ("x-page", "3"),
        ("x-per-page", "30"),
        (
            "link",
            r#"<https://g.example/api/gists?page=2>; rel="prev""#,
        ),
    ]));
    assert!(!last.into_page(vec![0; 30], 3, 30).has_next);
    // Commits: X-Page and Link only, no totals.
    let commits = PageHeaders::parse(&headers(&[
        ("x-page", "1"),
        ("x-per-page", "2"),
        ("link", r#"<https://g.example/x?page=2>; rel=next"#),
    ]));
    let page = commits.into_page(vec![1, 2], 1, 2);
    assert!(page.has_next && page.total.is_none() && page.total_pages.is_none());
    // X-Page alone: Opengist writes no Link on a single page.
    let single = PageHeaders::parse(&headers(&[("x-page", "1")]));
    assert!(!single.into_page(vec![1, 2], 1, 2).has_next);
    // Nothing at all: inferred from a full page.
    assert!(PageHeaders::default().into_page(vec![1, 2], 1, 2).has_next);
    assert!(!PageHeaders::default().into_page(vec![1], 1, 2).has_next);
    // Garbage headers are absent headers.
    let junk = PageHeaders::parse(&headers(&[("x-page", "two"), ("x-total", "-1")]));
    assert_eq!(junk, PageHeaders::default());
}

#[test]
fn link_header_variants() {
    assert!(link_has_next(r#"<a>; rel="next""#));
    assert!(link_has_next(r#"<a>;rel=next"#));
    assert!(link_has_next(
        r#"<a,b>; rel="prev", <c>; title="x"; rel="last next""#
    ));
    assert!(link_has_next(r#"<a>; REL="Next""#));
    assert!(!link_has_next(r#"<a>; rel="prev""#));
    assert!(!link_has_next(r#"<a>; rel="nextish""#));
    assert!(!link_has_next("garbage"));
    assert!(!link_has_next("<unterminated; rel=next"));
    assert!(!link_has_next(""));
}

#[test]
fn paging_is_clamped() {
    assert_eq!(page_params(0, 0), (1, 1));
    assert_eq!(page_params(3, 500), (3, 100));
    assert_eq!(page_params(1, 30), (1, 30));
}

#[test]
fn versions_from_headers() {
    assert_eq!(
        version_header(&headers(&[("x-opengist-version", "1.15.1")])).as_deref(),
        Some("1.15.1")
    );
    assert_eq!(
        version_header(&headers(&[("server", "Opengist/1.15.1 (linux)")])).as_deref(),
        Some("1.15.1")
    );
    assert_eq!(version_header(&headers(&[("server", "nginx")])), None);
}

#[test]
fn utf8_windows_forgive_cut_characters_only_at_cut_edges() {
    let text = "héllo ✓".as_bytes();
    assert!(utf8_window(text, false, false));
    // Cut inside "✓" at the end.
    let cut_end = &text[..text.len() - 1];
    assert!(utf8_window(cut_end, false, true));
    assert!(!utf8_window(cut_end, false, false));
    // Starting inside "é".
    assert!(utf8_window(&text[2..], true, false));
    assert!(!utf8_window(&text[2..], false, false));
    assert!(!utf8_window(&[0xff, 0xfe, 0x00], false, true));
}

#[test]
fn slugs_match_slug_url_or_the_html_url() {
    let summary: GistSummary = serde_json::from_value(serde_json::json!({
        "id": ID, "visibility": "public", "slug_url": "my-notes",
        "html_url": "https://g.example/alice/my-notes"
    }))
    .expect("summary");
    assert!(link_matches(&summary, "my-notes"));
    assert!(link_matches(&summary, "My-Notes"));
    assert!(!link_matches(&summary, "my-note"));
    // Opengist's `uuid LIKE 'name%'`: a prefix, in any case, `_` for any one character.
    assert!(link_matches(&summary, ID));
    assert!(link_matches(&summary, &ID[..4].to_uppercase()));
    assert!(link_matches(&summary, "3f_a"));
    assert!(!link_matches(&summary, "3f2b"));
    assert!(!link_matches(&summary, &format!("{ID}0")));
    let no_slug: GistSummary = serde_json::from_value(serde_json::json!({
        "id": ID, "visibility": "public", "html_url": "https://g.example/alice/other/"
    }))
    .expect("summary");
    assert!(link_matches(&no_slug, "other"));
}

/// A response whose body arrives in the given chunks, with no server involved.
fn chunked(chunks: &[&'static [u8]], content_length: Option<u64>) -> Response {
    let items: Vec<Result<&'static [u8], std::io::Error>> = chunks.iter().map(|c| Ok(*c)).collect();
    let mut builder = http::Response::builder().status(200);
    if let Some(length) = content_length {
        builder = builder.header(header::CONTENT_LENGTH, length);
    }
    let body = reqwest::Body::wrap_stream(futures::stream::iter(items));
    Response::from(builder.body(body).expect("response"))
}

async fn window(chunks: &[&'static [u8]], length: Option<u64>, offset: u64, max: u64) -> RawFile {
    let c = client("http://127.0.0.1:9", None, Duration::from_secs(5));
    let call = CallInfo::new("read a raw file", Scope::GistRead, "file");
    read_window(chunked(chunks, length), offset, max, length, &call, &c)
        .await
        .expect("window")
}

#[tokio::test]
async fn windows_across_chunk_boundaries() {
    let chunks: &[&[u8]] = &[b"0123456", b"789abcd", b"efghijk", b"lmn"];
    // Spanning three chunks, more follows.
    let w = window(chunks, None, 5, 12).await;
    assert_eq!(w.bytes, b"56789abcdefg");
    assert!(w.truncated && w.is_utf8 && w.total_bytes.is_none());
    // Ending exactly at a chunk boundary, size unknown: one more chunk is peeked.
    let w = window(chunks, None, 0, 14).await;
    assert_eq!(w.bytes, b"0123456789abcd");
    assert!(w.truncated);
    // Ending exactly at the end of the file.
    let w = window(chunks, None, 10, 14).await;
    assert_eq!(w.bytes, b"abcdefghijklmn");
    assert!(!w.truncated);
    // The whole file, with room to spare.
    let w = window(chunks, Some(24), 0, 1000).await;
    assert_eq!(w.bytes.len(), 24);
    assert!(!w.truncated);
    assert_eq!(w.total_bytes, Some(24));
    // Exactly at the cap with a known size: no peeking needed.
    let w = window(chunks, Some(24), 20, 4).await;
    assert_eq!(w.bytes, b"klmn");
    assert!(!w.truncated);
    // Past the end.
    let w = window(chunks, Some(24), 24, 10).await;
    assert!(w.bytes.is_empty() && !w.truncated);
    let w = window(chunks, None, 100, 10).await;
    assert!(w.bytes.is_empty() && !w.truncated);
}

#[tokio::test]
async fn windows_report_binary_and_cut_text() {
    let text = "añb✓c".as_bytes(); // a, ñ (2 bytes), b, ✓ (3 bytes), c
    let leaked: &'static [u8] = Box::leak(text.to_vec().into_boxed_slice());
    // Cut inside ✓ at the end: still text.
    let w = window(&[leaked], None, 0, 5).await;
    assert!(w.truncated && w.is_utf8);
    // Starting inside ñ: still text.
    let w = window(&[leaked], None, 2, 100).await;
    assert!(w.is_utf8);
    let w = window(&[b"\x89PNG\r\n\x1a\n\x00\xff"], None, 0, 100).await;
    assert!(!w.is_utf8);
}

// -- The private write path against an in-process fake (faults only). --

mod fake {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Router;
    use axum::http::StatusCode;
    use axum::routing::any;

    /// Serves `status` to every request and counts the hits.
    pub(super) async fn always(status: u16) -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        let app = Router::new().fallback(any(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    r#"{"message":"unavailable","status":503}"#,
                )
            }
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (format!("http://{addr}"), hits)
    }
}

#[tokio::test]
async fn a_401_or_403_forgets_what_the_token_may_do() {
    use super::super::access::{Grant, TokenAccess};
    for status in [401, 403] {
        let (base, _) = fake::always(status).await;
        let c = client(&base, Some("og_test"), Duration::from_secs(5));
        c.access_cache().set(Arc::new(TokenAccess {
            identity: None,
            gist_read: Grant::Present,
            gist_write: Grant::Present,
            user_read: Grant::Missing,
            user_write: Grant::Missing,
        }));
        assert!(c.known_token_access().is_some());
        let _ = c.get_gist(&id()).await.expect_err("refused");
        assert!(
            c.known_token_access().is_none(),
            "{status}: still remembered"
        );
    }
}

#[tokio::test]
async fn writes_are_never_retried() {
    use std::sync::atomic::Ordering;
    for method in [Method::POST, Method::PATCH, Method::DELETE, Method::PUT] {
        let (base, hits) = fake::always(503).await;
        let c = client(&base, Some("og_test"), Duration::from_secs(5));
        let url = c.endpoint(&["api", "gists", ID]).expect("url");
        let call = CallInfo::new("update a gist", Scope::GistWrite, format!("gist {ID}"));
        let response = c
            .send_write(
                method.clone(),
                url,
                Some(&serde_json::json!({"title": "x"})),
                &call,
            )
            .await
            .expect("a response");
        let error = c.check(response, &call).await.expect_err("503");
        assert!(
            matches!(error, OpengistError::Server { status: 503, .. }),
            "{error}"
        );
        assert_eq!(hits.load(Ordering::SeqCst), 1, "{method} was retried");
    }
}

/// Accepts connections, reads what arrives, and then hangs up (`hang_up`) or says nothing.
async fn silent_peer(hang_up: bool) -> String {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                if !hang_up {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
            });
        }
    });
    format!("http://{addr}")
}

/// A create request through the one write path, as the write tools send it.
async fn post_a_gist(c: &OpengistClient) -> Result<Response, OpengistError> {
    let url = c.endpoint(&["api", "gists"]).expect("url");
    let call = CallInfo::new("create a gist", Scope::GistWrite, "the new gist");
    c.send_write(Method::POST, url, Some(&serde_json::json!({"x": 1})), &call)
        .await
}

#[tokio::test]
async fn a_write_whose_answer_is_lost_says_so_and_never_try_again() {
    for hang_up in [true, false] {
        let base = silent_peer(hang_up).await;
        let c = client(&base, Some("og_test"), Duration::from_secs(1));
        let error = post_a_gist(&c).await.expect_err("no answer");
        assert!(
            matches!(error, OpengistError::AnswerLost { .. }),
            "hang_up={hang_up}: {error:?}"
        );
        assert!(error.write_may_have_applied());
        let text = error.to_string();
        assert!(text.contains("may or may not have applied"), "{text}");
        assert!(!text.contains("try again"), "{text}");
    }
}

#[tokio::test]
async fn a_check_whose_answer_is_lost_says_nothing_was_changed() {
    for hang_up in [true, false] {
        let base = silent_peer(hang_up).await;
        let c = client(&base, Some("og_test"), Duration::from_secs(1));
        let error = c.check_can_create().await.expect_err("no answer");
        assert!(
            matches!(error, OpengistError::CheckAnswerLost { .. }),
            "hang_up={hang_up}: {error:?}"
        );
        assert!(!error.write_may_have_applied(), "the check writes nothing");
        let text = error.to_string();
        assert!(text.contains("could not be made"), "{text}");
        assert!(text.contains("nothing was changed"), "{text}");
        assert!(!text.contains("may or may not"), "{text}");
        assert!(!text.contains("applied"), "{text}");
    }
}

#[tokio::test]
async fn a_write_that_could_not_connect_was_not_sent() {
    let unused = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", unused.local_addr().expect("addr"));
    drop(unused);
    let c = client(&base, Some("og_test"), Duration::from_secs(1));
    let error = post_a_gist(&c).await.expect_err("refused");
    assert!(
        matches!(error, OpengistError::ConnectionRefused { .. }),
        "{error:?}"
    );
    assert!(!error.write_may_have_applied());
}

#[tokio::test]
async fn reads_retry_on_503_twice_then_give_up() {
    use std::sync::atomic::Ordering;
    let (base, hits) = fake::always(503).await;
    let c = client(&base, None, Duration::from_secs(5));
    let error = c.get_gist(&id()).await.expect_err("503");
    assert!(
        matches!(error, OpengistError::Server { status: 503, .. }),
        "{error}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[test]
fn the_site_a_question_links_carries_no_credentials_query_or_trailing_slash() {
    let c = client(
        "https://ana:hunter2@gist.example.com/og/?next=x#top",
        None,
        Duration::from_secs(5),
    );
    assert_eq!(c.site().as_str(), "https://gist.example.com/og");
    // Every client made for a person's token shows the same site.
    let person = c.with_token("og_person").expect("client");
    assert_eq!(person.site(), c.site());
    assert_eq!(
        client("http://127.0.0.1:6157", None, Duration::from_secs(5))
            .site()
            .as_str(),
        "http://127.0.0.1:6157"
    );
}
