//! `<PREFIX>_VERIFIED_TOOLS`: the guarded tools that take only a route a model cannot complete
//! (the approval page, CIBA), and the check that refuses to serve when the guard names a tool
//! that is not one of the server's guarded tools. A misspelt name left out would leave the tool
//! it was meant for to a dialog a client can answer alone, so it stops the start instead,
//! naming the tools that are guarded.

use rmcp::ServerHandler;
use rmcp::model::{NumberOrString, PaginatedRequestParams, Tool};
use rmcp::service::RequestContext;

use crate::ServeError;

/// The names `<PREFIX>_VERIFIED_TOOLS` lists (comma-separated, trimmed, each once), and its
/// name.
#[derive(Debug, Clone, Default)]
pub(crate) struct VerifiedSetting {
    pub(crate) setting: String,
    pub(crate) tools: Vec<String>,
}

impl VerifiedSetting {
    /// Reads `<prefix>_VERIFIED_TOOLS` from the environment.
    pub(crate) fn from_env(prefix: &str) -> Self {
        let setting = format!("{prefix}_VERIFIED_TOOLS");
        let list = std::env::var(&setting).unwrap_or_default();
        Self::parse(setting, &list)
    }

    fn parse(setting: String, list: &str) -> Self {
        let mut tools: Vec<String> = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !tools.iter().any(|tool| tool == name) {
                tools.push(name.to_owned());
            }
        }
        Self { setting, tools }
    }
}

/// Whether `tool` is guarded, as its `tools/list` entry says: it offers a `confirm_token`, or
/// its `_meta` says only a person's yes will do (a `person_required` or verified tool).
fn is_guarded(tool: &Tool) -> bool {
    let token = tool
        .input_schema
        .get("properties")
        .and_then(|p| p.get(ask_first_core::CONFIRM_TOKEN_ARG))
        .is_some();
    let person = tool.meta.as_ref().is_some_and(|meta| {
        meta.0.get(ask_first_core::PERSON_REQUIRED_META_KEY) == Some(&serde_json::Value::Bool(true))
    });
    token || person
}

/// The tools `server` lists, asked as a client that declared nothing would ask, on a pipe of
/// its own (nothing is served).
async fn listed_tools<S>(server: &S) -> Vec<Tool>
where
    S: ServerHandler + Clone,
{
    let (ours, _theirs) = tokio::io::duplex(4096);
    let running = rmcp::service::serve_directly(server.clone(), ours, None);
    let mut tools = Vec::new();
    let mut cursor = None;
    // A bounded walk through the pages, in case a server's cursor never ends.
    for page in 0..1000 {
        let context = RequestContext::new(NumberOrString::Number(page), running.peer().clone());
        let request =
            cursor.map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
        let Ok(listed) = server.list_tools(request, context).await else {
            break;
        };
        tools.extend(listed.tools);
        match listed.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let _ = running.cancel().await;
    tools
}

impl crate::Serving {
    /// Refuses a guard whose verified tools are not all guarded tools `server` lists.
    pub(crate) async fn check_verified<S>(&self, server: &S) -> Result<(), ServeError>
    where
        S: ServerHandler + ask_first_core::HasGuard + Clone,
    {
        let verified = server.guard().verified_tools().to_vec();
        check(server, &verified, &self.verified.setting).await
    }
}

/// Refuses to serve `server` when its guard lists a verified tool that is not one of the
/// server's guarded tools; `setting` names where the list comes from.
async fn check<S>(server: &S, verified: &[String], setting: &str) -> Result<(), ServeError>
where
    S: ServerHandler + Clone,
{
    if verified.is_empty() {
        return Ok(());
    }
    let guarded: Vec<String> = listed_tools(server)
        .await
        .iter()
        .filter(|tool| is_guarded(tool))
        .map(|tool| tool.name.to_string())
        .collect();
    match verified.iter().find(|name| !guarded.contains(name)) {
        None => Ok(()),
        Some(name) => Err(ServeError::VerifiedTool {
            setting: setting.to_owned(),
            entry: shown(name),
            hint: hint(name, &guarded),
            guarded: if guarded.is_empty() {
                "none".to_owned()
            } else {
                guarded.join(", ")
            },
        }),
    }
}

/// An entry as the error may show it: itself when shaped like a tool name (letters, digits,
/// `_`, `-`, `.`, `*`, at most 64), else `<an entry that is no tool name>` (it might be
/// anything, even a secret).
fn shown(entry: &str) -> String {
    let shaped = entry.len() <= 64
        && entry
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.*".contains(&b));
    if shaped {
        format!("`{entry}`")
    } else {
        "an entry that is no tool name (not shown)".to_owned()
    }
}

/// What the entry was likely meant to be: a guarded tool in another case, or a pattern.
fn hint(entry: &str, guarded: &[String]) -> String {
    if let Some(tool) = guarded.iter().find(|t| t.eq_ignore_ascii_case(entry)) {
        return format!(" (names are exact: did you mean `{tool}`?)");
    }
    if entry.contains('*') {
        return " (patterns are not accepted here: name each tool)".to_owned();
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_lists_each_name_once() {
        let read = VerifiedSetting::parse("X_VERIFIED_TOOLS".into(), " a, b ,,a");
        assert_eq!(read.tools, ["a", "b"]);
        assert!(VerifiedSetting::parse("X".into(), " , ").tools.is_empty());
    }

    #[test]
    fn entries_are_shown_only_when_shaped_like_names_with_a_hint() {
        let guarded = ["delete_note".to_owned()];
        assert_eq!(shown("delete_notes"), "`delete_notes`");
        assert!(!shown("secret value!").contains("secret"));
        assert!(hint("DELETE_NOTE", &guarded).contains("did you mean `delete_note`?"));
        assert!(hint("delete*", &guarded).contains("patterns are not accepted"));
        assert_eq!(hint("delete_notes", &guarded), "");
    }
}
