//! How long the guard waits for a person: `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (and its flag);
//! which tools take only the approval page's yes: `OPENGIST_MCP_VERIFIED_TOOLS`.
//! `ELICITATION` and the seal key are the framework's serving settings (see `serving`).

use std::time::Duration;

use super::error::ConfigError;
use super::var::{self, Source};

/// Default of `OPENGIST_MCP_DIALOG_TIMEOUT_SECS`.
pub const DEFAULT_DIALOG_TIMEOUT_SECS: u64 = 600;
/// Largest accepted `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (a day).
pub const MAX_DIALOG_TIMEOUT_SECS: u64 = 86_400;

/// Reads how long a confirmation dialog may wait for a person.
pub(super) fn dialog_timeout(source: &Source<'_>) -> Result<Duration, ConfigError> {
    Ok(Duration::from_secs(source.number(
        var::OPENGIST_MCP_DIALOG_TIMEOUT_SECS,
        1,
        MAX_DIALOG_TIMEOUT_SECS,
        DEFAULT_DIALOG_TIMEOUT_SECS,
    )?))
}

/// Reads the tools that run only after the person's yes on the approval page with a passkey
/// or through CIBA (`OPENGIST_MCP_VERIFIED_TOOLS`, comma-separated exact names). A name that is
/// not one of this server's guarded tools refuses the start: left out, it would leave the tool
/// meant to be verified to a dialog a client can answer alone.
pub(super) fn verified_tools(source: &Source<'_>) -> Result<Vec<String>, ConfigError> {
    let Some(list) = source.get(var::OPENGIST_MCP_VERIFIED_TOOLS) else {
        return Ok(Vec::new());
    };
    let mut tools = Vec::new();
    for (index, name) in list
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .enumerate()
    {
        if !crate::catalog::GUARDED.contains(&name) {
            return Err(ConfigError::VerifiedTool {
                entry: shown(name, index + 1),
                hint: hint(name),
                guarded: crate::catalog::GUARDED.join(", "),
            });
        }
        if !tools.iter().any(|tool| tool == name) {
            tools.push(name.to_owned());
        }
    }
    Ok(tools)
}

/// An entry as the error may show it: itself when shaped like a tool name (letters, digits,
/// `_`, `-`, `*`, at most 64), else `<entry #N>` (it might be anything, even a secret).
fn shown(entry: &str, position: usize) -> String {
    let shaped = entry.len() <= 64
        && entry
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'*');
    if shaped {
        format!("`{entry}`")
    } else {
        format!("<entry #{position}>")
    }
}

/// What the entry was likely meant to be: a guarded tool in another case, or a pattern.
fn hint(entry: &str) -> String {
    if let Some(tool) = crate::catalog::GUARDED
        .iter()
        .find(|tool| tool.eq_ignore_ascii_case(entry))
    {
        return format!(" (names are lowercase: did you mean `{tool}`?)");
    }
    if entry.contains('*') {
        return " (patterns are not accepted here: name each tool)".to_owned();
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlagValues;

    fn read(value: &str) -> Result<Vec<String>, ConfigError> {
        let flags = FlagValues::default();
        let env = |name: &str| (name == var::OPENGIST_MCP_VERIFIED_TOOLS).then(|| value.to_owned());
        verified_tools(&Source::new(&flags, &env))
    }

    #[test]
    fn only_guarded_tools_may_be_verified_and_anything_else_refuses_the_start() {
        assert_eq!(
            read(" delete_gist, delete_gist_files ,delete_gist"),
            Ok(vec![
                "delete_gist".to_owned(),
                "delete_gist_files".to_owned()
            ])
        );
        assert_eq!(read(" , "), Ok(Vec::new()));
        for (entry, says) in [
            ("DELETE_GIST", "did you mean `delete_gist`?"),
            ("delete_gists", "`delete_gists` is not a guarded tool"),
            ("delete*", "patterns are not accepted"),
            ("get_gist", "`get_gist` is not a guarded tool"),
            ("og_secret token!", "<entry #2>"),
        ] {
            let error = read(&format!("delete_gist,{entry}")).expect_err(entry);
            let text = error.to_string();
            assert!(text.contains(says), "{entry}: {text}");
            assert!(
                text.contains("create_gist, update_gist, delete_gist_files, delete_gist"),
                "{text}"
            );
            assert!(!text.contains("og_secret"), "{text}");
        }
    }
}
