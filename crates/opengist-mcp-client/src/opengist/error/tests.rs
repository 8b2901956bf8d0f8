use serde::Deserialize;
use url::Url;

use super::answer::error_message;
use super::*;

const TOKEN: &str = "og_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn base() -> Url {
    Url::parse("https://gist.example.com/og").expect("url")
}

fn call(scope: Scope) -> CallInfo {
    CallInfo::new(
        "update a gist",
        scope,
        "gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c",
    )
}

fn map(status: u16, body: &str, scope: Scope) -> OpengistError {
    from_status(status, body.as_bytes(), &call(scope), &base())
}

#[test]
fn unauthorized_points_at_the_token_settings() {
    let e = map(
        401,
        r#"{"message":"Bad crendentials","status":401}"#,
        Scope::GistRead,
    );
    assert!(matches!(e, OpengistError::BadToken { .. }));
    let text = e.to_string();
    assert!(
        text.contains("https://gist.example.com/og/-/settings/access-tokens"),
        "{text}"
    );
    assert!(text.contains("Settings → Access Tokens"));
    assert_eq!(e.status(), Some(401));
}

#[test]
fn a_missing_token_is_not_a_rejected_one() {
    let e = map(
        401,
        r#"{"message":"Requires authentication","status":401}"#,
        Scope::AnyToken,
    );
    assert!(matches!(e, OpengistError::TokenRequired { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("none is configured"), "{text}");
    assert!(text.contains("OPENGIST_TOKEN"), "{text}");
    assert!(
        text.contains("https://gist.example.com/og/-/settings/access-tokens"),
        "{text}"
    );
    assert_eq!(e.status(), Some(401));
    // An empty 401 body is still read as a rejected token.
    assert!(matches!(
        map(401, "", Scope::GistRead),
        OpengistError::BadToken { .. }
    ));
}

#[test]
fn forbidden_is_told_apart_by_its_message() {
    let disabled = map(
        403,
        r#"{"message":"API is disabled","status":403}"#,
        Scope::GistRead,
    );
    assert!(
        matches!(disabled, OpengistError::ApiDisabled { .. }),
        "{disabled}"
    );
    assert!(disabled.to_string().contains("api.enabled"));

    let scope = map(
        403,
        r#"{"message":"token lacks required scope/permission","status":403}"#,
        Scope::GistWrite,
    );
    assert!(
        matches!(
            scope,
            OpengistError::MissingScope {
                scope: Scope::GistWrite,
                ..
            }
        ),
        "{scope}"
    );
    assert!(scope.to_string().contains("`gist:write`"), "{scope}");

    let owner = map(
        403,
        r#"{"message":"You are not the owner of this gist","status":403}"#,
        Scope::GistWrite,
    );
    assert!(matches!(owner, OpengistError::NotOwner { .. }), "{owner}");
    assert!(
        owner
            .to_string()
            .starts_with("gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c belongs to another account")
    );

    let archived = map(
        403,
        r#"{"message":"This gist is archived and is read-only","status":403}"#,
        Scope::GistWrite,
    );
    assert!(
        matches!(archived, OpengistError::Archived { .. }),
        "{archived}"
    );

    let other = map(403, r#"{"message":"nope","status":403}"#, Scope::GistWrite);
    assert_eq!(
        other.to_string(),
        "Opengist refused to update a gist (403 Forbidden): \"nope\""
    );
}

#[test]
fn not_found_never_says_deleted() {
    let e = map(
        404,
        r#"{"message":"Gist not found","status":404}"#,
        Scope::GistRead,
    );
    let text = e.to_string();
    assert_eq!(
        text,
        "gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c does not exist or is not visible to this token"
    );
    assert!(!text.contains("deleted"));
    assert!(e.is_not_found());
}

#[test]
fn validation_quotes_only_opengists_message_truncated() {
    let long = "x".repeat(1000);
    let body = format!(r#"{{"message":"{long}","status":422,"secret":"{TOKEN}"}}"#);
    let e = map(422, &body, Scope::GistWrite);
    let text = e.to_string();
    assert!(!text.contains(TOKEN));
    assert!(text.contains(&"x".repeat(MAX_MESSAGE_CHARS)));
    assert!(!text.contains(&"x".repeat(MAX_MESSAGE_CHARS + 1)));
    assert!(text.contains('…'));
    // The `error` spelling is read too.
    let e = map(
        422,
        r#"{"error":"files: filename cannot be empty","code":"x"}"#,
        Scope::GistWrite,
    );
    assert!(
        e.to_string()
            .ends_with(": \"files: filename cannot be empty\""),
        "{e}"
    );
}

#[test]
fn non_json_bodies_are_never_quoted() {
    let e = map(
        502,
        "<html>upstream secret stack trace</html>",
        Scope::GistRead,
    );
    assert!(matches!(
        e,
        OpengistError::Server {
            status: 502,
            message: None,
            ..
        }
    ));
    assert!(!e.to_string().contains("stack trace"));
    let e = map(418, "teapot body", Scope::GistRead);
    assert!(matches!(
        e,
        OpengistError::UnexpectedStatus { status: 418, .. }
    ));
    assert!(!e.to_string().contains("teapot body"));
}

#[test]
fn other_statuses() {
    assert!(matches!(
        map(400, "{}", Scope::GistRead),
        OpengistError::BadRequest { .. }
    ));
    assert!(matches!(
        map(302, "", Scope::GistRead),
        OpengistError::Redirect { status: 302, .. }
    ));
    let server = map(
        500,
        r#"{"message":"failed to read file","status":500}"#,
        Scope::GistRead,
    );
    assert_eq!(
        server.to_string(),
        "the Opengist server failed to update a gist (500): \"failed to read file\"; try again shortly, and if it persists check the instance's logs"
    );
}

#[test]
fn control_characters_are_flattened() {
    assert_eq!(
        error_message(br#"{"message":"a\nb\u001b[31m"}"#).as_deref(),
        Some("a b [31m")
    );
    assert_eq!(error_message(br#"{"message":"   "}"#), None);
    assert_eq!(error_message(b"not json"), None);
}

#[test]
fn base_is_shown_without_credentials() {
    let url = Url::parse("https://user:pw@gist.example.com:8443/og/?q=1#f").expect("url");
    assert_eq!(display_base(&url), "https://gist.example.com:8443/og");
    assert_eq!(display_host(&url), "gist.example.com:8443");
}

#[test]
fn timeouts_name_the_timeout_and_host() {
    let e = OpengistError::Timeout {
        phase: TimeoutPhase::Request,
        after: Duration::from_millis(1500),
        host: "gist.example.com".into(),
        operation: "read a gist",
    };
    assert_eq!(
        e.to_string(),
        "no answer from gist.example.com within the request timeout of 1.5s while trying to read a gist; the instance may be down or overloaded, or OPENGIST_URL may point at the wrong address"
    );
}

#[test]
fn json_errors_do_not_echo_values() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct N {
        n: u64,
    }
    let error = serde_json::from_str::<N>(r#"{"n":"SECRET TITLE"}"#).expect_err("bad type");
    let text = describe_json_error(&error);
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("line 1"));
}
