//! Test fixtures of the reading tools: gists, summaries, commits and pages as Opengist sends
//! them, written once for every tool's tests.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, GistSummary, Page};

/// A gist id.
pub(crate) const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";
/// Another gist id.
pub(crate) const ID2: &str = "aaaabbbbccccddddeeeeffff00001111";
/// The head commit of [`detail`].
pub(crate) const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

/// [`ID`], parsed.
pub(crate) fn id() -> GistId {
    GistId::parse(ID).expect("id")
}

/// A gist summary as Opengist's lists send it.
pub(crate) fn summary_json(id: &str, visibility: &str) -> Value {
    json!({
        "id": id,
        "slug_url": id,
        "owner": {"id": 1, "login": "alice", "username": "alice", "avatar_url": "", "type": "User", "created_at": "2024-01-01T00:00:00Z"},
        "title": "Notes",
        "html_url": format!("https://gist.example.com/alice/{id}"),
        "description": "some notes",
        "public": visibility == "public",
        "visibility": visibility,
        "like_count": 2,
        "fork_count": 1,
        "clone_url": format!("https://gist.example.com/alice/{id}.git"),
        "ssh_url": format!("ssh://git@gist.example.com:2222/alice/{id}.git"),
        "topics": ["rust"],
        "archived": false,
        "created_at": "2024-05-01T10:00:00Z",
        "updated_at": "2024-05-02T11:00:00Z",
        "expires_at": null
    })
}

/// A public gist summary.
pub(crate) fn summary(id: &str) -> GistSummary {
    serde_json::from_value(summary_json(id, "public")).expect("summary")
}

/// A commit as Opengist sends it, with an e-mail address that must never pass.
pub(crate) fn commit_json(version: &str) -> Value {
    json!({
        "version": version,
        "author": {"name": "Alice", "email": "alice@example.com"},
        "user": null,
        "change_status": {"files_changed": 1, "additions": 3, "deletions": 1, "total": 4},
        "committed_at": "2024-05-02T11:00:00Z"
    })
}

/// A file of a gist in full, as Opengist sends it.
pub(crate) fn file_json(
    name: &str,
    content: &str,
    size: usize,
    truncated: bool,
    encoding: &str,
) -> Value {
    json!({
        "filename": name, "type": "text/plain", "language": "Text",
        "size": size, "truncated": truncated, "content": content, "encoding": encoding
    })
}

/// A gist in full with `files`, one commit ([`HEAD`]) and no forks.
pub(crate) fn detail(files: Vec<Value>) -> GistDetail {
    let mut v = summary_json(ID, "public");
    let map: serde_json::Map<String, Value> = files
        .into_iter()
        .map(|f| (f["filename"].as_str().unwrap_or_default().to_owned(), f))
        .collect();
    v["files"] = Value::Object(map);
    v["commits"] = json!([commit_json(HEAD)]);
    v["forks"] = json!([]);
    v["truncated"] = json!(false);
    serde_json::from_value(v).expect("detail")
}

/// A page of `items` out of 75 in 3 pages.
pub(crate) fn page<T>(items: Vec<T>, page: u32, per_page: u32, has_next: bool) -> Page<T> {
    Page {
        items,
        page,
        per_page,
        total: Some(75),
        total_pages: Some(3),
        has_next,
    }
}

/// The text blocks of a tool result, joined.
pub(crate) fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
