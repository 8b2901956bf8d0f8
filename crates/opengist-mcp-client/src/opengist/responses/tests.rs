use super::*;
use serde_json::json;

const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

fn owner() -> serde_json::Value {
    json!({
        "id": 1, "login": "alice", "username": "alice",
        "avatar_url": "https://www.gravatar.com/avatar/x", "type": "User",
        "created_at": "2025-01-02T03:04:05Z"
    })
}

fn summary_json(visibility: &str) -> serde_json::Value {
    json!({
        "id": ID,
        "slug_url": "my-notes",
        "owner": owner(),
        "title": "Notes",
        "html_url": "https://gist.example.com/alice/my-notes",
        "description": "things",
        "public": visibility == "public",
        "visibility": visibility,
        "like_count": 3,
        "fork_count": 1,
        "clone_url": "https://gist.example.com/alice/my-notes.git",
        "ssh_url": "ssh://opengist@gist.example.com:2222/alice/my-notes.git",
        "topics": ["rust", "mcp"],
        "archived": false,
        "created_at": "2025-01-02T03:04:05Z",
        "updated_at": "2025-02-03T04:05:06+01:00",
        "expires_at": null,
        "some_future_field": {"nested": true}
    })
}

#[test]
fn summary_parses_the_documented_shape() {
    let s: GistSummary = serde_json::from_value(summary_json("unlisted")).expect("parses");
    assert_eq!(s.id.as_str(), ID);
    assert_eq!(s.visibility, Visibility::Unlisted);
    assert_eq!(s.owner.name(), "alice");
    assert_eq!(s.topics, vec!["rust", "mcp"]);
    assert_eq!(s.like_count, 3);
    assert_eq!(
        s.updated_at.map(|d| d.to_rfc3339()),
        Some("2025-02-03T03:05:06+00:00".to_owned())
    );
    assert_eq!(s.expires_at, None);
    assert_eq!(s.slug_url, "my-notes");
}

#[test]
fn unknown_or_missing_visibility_is_an_error_not_public() {
    for bad in ["secret", "", "PUBLICISH"] {
        let err = serde_json::from_value::<GistSummary>(summary_json(bad))
            .expect_err("unknown visibility must not parse");
        assert!(err.to_string().contains("unknown gist visibility"), "{err}");
    }
    let mut missing = summary_json("public");
    missing
        .as_object_mut()
        .expect("object")
        .remove("visibility");
    assert!(serde_json::from_value::<GistSummary>(missing).is_err());
    // Case is forgiven; the word is not.
    let s: GistSummary = serde_json::from_value(summary_json("Private")).expect("parses");
    assert_eq!(s.visibility, Visibility::Private);
}

#[test]
fn a_bad_id_is_an_error() {
    let mut v = summary_json("public");
    v["id"] = json!("../../etc/passwd");
    assert!(serde_json::from_value::<GistSummary>(v).is_err());
}

#[test]
fn nulls_and_missing_fields_are_tolerated() {
    let s: GistSummary = serde_json::from_value(json!({
        "id": ID.to_uppercase(), "visibility": "private", "topics": null,
        "owner": null, "title": null, "created_at": "", "updated_at": 0
    }))
    .expect("parses");
    assert!(s.topics.is_empty());
    assert_eq!(s.owner, Owner::default());
    assert_eq!(s.id.as_str(), ID);
    assert_eq!(s.created_at, None);
    assert_eq!(s.updated_at, None);
}

#[test]
fn dates_accept_rfc3339_unix_and_go_zero() {
    #[derive(Deserialize)]
    struct D {
        #[serde(default, deserialize_with = "date")]
        at: Option<DateTime<Utc>>,
    }
    let at = |v: serde_json::Value| {
        serde_json::from_value::<D>(json!({ "at": v })).map(|d| d.at.map(|t| t.timestamp()))
    };
    assert_eq!(
        at(json!("2024-05-06T07:08:09Z")).ok(),
        Some(Some(1_714_979_289))
    );
    assert_eq!(
        at(json!("2024-05-06T07:08:09.123456789+02:00")).ok(),
        Some(Some(1_714_972_089))
    );
    assert_eq!(at(json!(1_714_979_289)).ok(), Some(Some(1_714_979_289)));
    assert_eq!(
        at(json!(1_714_979_289_000_i64)).ok(),
        Some(Some(1_714_979_289))
    );
    assert_eq!(at(json!("1714979289")).ok(), Some(Some(1_714_979_289)));
    assert_eq!(at(json!(1_714_979_289.5)).ok(), Some(Some(1_714_979_289)));
    assert_eq!(at(json!("0001-01-01T00:00:00Z")).ok(), Some(None));
    assert_eq!(at(json!(0)).ok(), Some(None));
    assert_eq!(at(json!(null)).ok(), Some(None));
    assert!(at(json!("yesterday")).is_err());
    assert!(at(json!(true)).is_err());
    let missing: D = serde_json::from_value(json!({})).expect("parses");
    assert_eq!(missing.at, None);
}

#[test]
fn detail_with_a_base64_file_commits_and_forks() {
    let mut v = summary_json("public");
    let obj = v.as_object_mut().expect("object");
    obj.insert("fork_of".into(), json!(null));
    obj.insert("forks".into(), json!([summary_json("public")]));
    obj.insert(
        "files".into(),
        json!({
            "notes.md": {
                "filename": "notes.md", "type": "text/markdown", "language": "Markdown",
                "size": 12, "truncated": false, "content": "# Hello\nabc\n", "encoding": "utf-8"
            },
            "logo.png": {
                "filename": "logo.png", "type": "image/png", "language": "",
                "size": 4, "truncated": false, "content": "iVBORw==", "encoding": "base64"
            }
        }),
    );
    obj.insert(
        "commits".into(),
        json!([{
            "version": "0123456789abcdef0123456789abcdef01234567",
            "author": {"name": "Alice", "email": "alice@example.com"},
            "user": owner(),
            "change_status": {"files_changed": 2, "additions": 3, "deletions": 1, "total": 4},
            "committed_at": "2025-02-03T03:05:06Z"
        }, {
            "version": "89abcdef0123456789abcdef0123456789abcdef",
            "author": {"name": "Alice", "email": "other@example.com"},
            "user": null,
            "change_status": {"files_changed": 1, "additions": 1, "deletions": 0, "total": 1},
            "committed_at": "2025-01-02T03:04:05Z"
        }]),
    );
    obj.insert("truncated".into(), json!(false));
    let d: GistDetail = serde_json::from_value(v).expect("parses");
    assert_eq!(d.id().as_str(), ID);
    assert_eq!(d.summary.visibility, Visibility::Public);
    assert_eq!(d.files.len(), 2);
    let png = &d.files["logo.png"];
    assert!(png.is_base64());
    assert_eq!(png.mime_type, "image/png");
    assert!(!d.files["notes.md"].is_base64());
    assert_eq!(
        d.head_sha(),
        Some("0123456789abcdef0123456789abcdef01234567")
    );
    assert_eq!(d.commits[0].change_status.total, 4);
    assert_eq!(d.commits[0].user.as_ref().map(Owner::name), Some("alice"));
    assert!(d.commits[1].user.is_none());
    assert_eq!(d.forks.len(), 1);
    assert!(d.fork_of.is_none());
}

#[test]
fn detail_tolerates_null_collections_and_rejects_a_bad_fork_visibility() {
    let mut v = summary_json("private");
    let obj = v.as_object_mut().expect("object");
    obj.insert("files".into(), json!(null));
    obj.insert("commits".into(), json!(null));
    obj.insert("forks".into(), json!(null));
    let d: GistDetail = serde_json::from_value(v.clone()).expect("parses");
    assert!(d.files.is_empty() && d.commits.is_empty() && d.forks.is_empty());
    assert_eq!(d.head_sha(), None);

    v["fork_of"] = summary_json("everyone");
    assert!(serde_json::from_value::<GistDetail>(v).is_err());
}

#[test]
fn users_parse_with_and_without_email() {
    let mut me = owner();
    me["email"] = json!("alice@example.com");
    let me: User = serde_json::from_value(me).expect("parses");
    assert_eq!(me.email.as_deref(), Some("alice@example.com"));
    assert_eq!(me.is_admin, None);
    let other: User = serde_json::from_value(owner()).expect("parses");
    assert_eq!(other.email, None);
    assert_eq!(other.name(), "alice");
    let empty: User = serde_json::from_value(json!({"id": 2, "email": ""})).expect("parses");
    assert_eq!(empty.email, None);
}

#[test]
fn raw_file_debug_hides_content() {
    let raw = RawFile {
        bytes: b"secret".to_vec(),
        offset: 0,
        total_bytes: Some(6),
        truncated: false,
        is_utf8: true,
    };
    let text = format!("{raw:?}");
    assert!(
        !text.contains("secret") && text.contains("<6 bytes>"),
        "{text}"
    );
}
