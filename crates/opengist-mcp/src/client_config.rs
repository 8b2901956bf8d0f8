//! `opengist-mcp client-config CLIENT`: the configuration a named MCP client needs to start
//! this binary, printed with the binary's real path.
//!
//! It never prints a token: `OPENGIST_TOKEN` is always the placeholder `TOKEN_PLACEHOLDER`,
//! whatever the environment holds, so the output can be pasted into a chat or an issue. The
//! instance URL is the configured one when `OPENGIST_URL` is set (it is no secret), else
//! `URL_PLACEHOLDER`. Which clients show the approval dialog and which get the two-call
//! token is in `docs/CLIENTS.md`.

use std::path::Path;

/// What stands for the token in every configuration printed.
pub(crate) const TOKEN_PLACEHOLDER: &str = "og_...";

/// What stands for the instance when `OPENGIST_URL` is not set.
pub(crate) const URL_PLACEHOLDER: &str = "https://gist.example.com";

/// The name the server is registered under in every client's configuration.
const ENTRY: &str = "opengist";

/// A client whose configuration `client-config` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: a `claude mcp add` command.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// VS Code: `.vscode/mcp.json`.
    Vscode,
    /// Cursor: `.cursor/mcp.json` or `~/.cursor/mcp.json`.
    Cursor,
    /// Codex CLI: `~/.codex/config.toml`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`.
    GeminiCli,
    /// Zed: `settings.json`.
    Zed,
}

impl Client {
    /// Where the printed configuration goes, for the line printed before it.
    fn destination(self) -> &'static str {
        match self {
            Self::ClaudeCode => "run this command",
            Self::ClaudeDesktop => "merge into claude_desktop_config.json",
            Self::Vscode => "merge into .vscode/mcp.json",
            Self::Cursor => "merge into .cursor/mcp.json (this project) or ~/.cursor/mcp.json",
            Self::Codex => "add to ~/.codex/config.toml",
            Self::GeminiCli => "merge into ~/.gemini/settings.json",
            Self::Zed => "merge into Zed's settings.json",
        }
    }
}

/// The configuration for `client`, starting `binary`, against `url` (or the placeholder):
/// the command or the file's content, ready to paste. Where it goes is [`note`]'s to say (on
/// stderr, since JSON has no comments).
pub fn render(client: Client, binary: &Path, url: Option<&str>) -> String {
    let binary = binary.to_string_lossy();
    let url = url.unwrap_or(URL_PLACEHOLDER);
    match client {
        Client::ClaudeCode => format!(
            "claude mcp add {ENTRY} --env OPENGIST_URL={} --env OPENGIST_TOKEN={TOKEN_PLACEHOLDER} -- {}\n",
            shell_word(url),
            shell_word(&binary)
        ),
        Client::Codex => format!(
            "[mcp_servers.{ENTRY}]\ncommand = {}\nenv = {{ OPENGIST_URL = {}, OPENGIST_TOKEN = {} }}\n",
            toml_string(&binary),
            toml_string(url),
            toml_string(TOKEN_PLACEHOLDER)
        ),
        Client::ClaudeDesktop | Client::Cursor | Client::GeminiCli => json(
            "mcpServers",
            serde_json::json!({ "command": binary, "env": env(url) }),
        ),
        Client::Vscode => json(
            "servers",
            serde_json::json!({ "type": "stdio", "command": binary, "env": env(url) }),
        ),
        Client::Zed => json(
            "context_servers",
            serde_json::json!({ "command": binary, "args": [], "env": env(url) }),
        ),
    }
}

/// The line printed to stderr before the configuration: where it goes, and what to replace.
pub fn note(client: Client) -> String {
    format!(
        "{}; replace {TOKEN_PLACEHOLDER} with your Opengist access token (Settings -> Access Tokens: {}). Which clients show the approval dialog: docs/CLIENTS.md",
        client.destination(),
        crate::doctor::TOKEN_SCOPES
    )
}

fn env(url: &str) -> serde_json::Value {
    serde_json::json!({ "OPENGIST_URL": url, "OPENGIST_TOKEN": TOKEN_PLACEHOLDER })
}

fn json(section: &str, entry: serde_json::Value) -> String {
    let document = serde_json::json!({ section: { ENTRY: entry } });
    // Serializing a `Value` built here cannot fail.
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// A TOML basic string: quoted, with `"`, `\` and control characters escaped.
fn toml_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A word for a POSIX shell: bare when it is plainly safe, else single-quoted.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-:=+,@".contains(&b));
    if plain {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    const BIN: &str = "/opt/opengist mcp/bin/opengist-mcp";

    fn all() -> &'static [Client] {
        Client::value_variants()
    }

    #[test]
    fn no_configuration_carries_anything_but_the_placeholder_token() {
        for &client in all() {
            let text = render(client, Path::new(BIN), Some("https://gists.example.org"));
            assert!(text.contains(TOKEN_PLACEHOLDER), "{client:?}: {text}");
            assert!(
                text.contains("https://gists.example.org"),
                "{client:?}: {text}"
            );
            assert!(!text.contains("og_0"), "{client:?}: {text}");
        }
    }

    #[test]
    fn json_clients_name_the_binary_and_the_variables() {
        for (client, section) in [
            (Client::ClaudeDesktop, "mcpServers"),
            (Client::Cursor, "mcpServers"),
            (Client::GeminiCli, "mcpServers"),
            (Client::Vscode, "servers"),
            (Client::Zed, "context_servers"),
        ] {
            let text = render(client, Path::new(BIN), None);
            let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            let entry = &value[section][ENTRY];
            assert_eq!(entry["command"], BIN, "{client:?}");
            assert_eq!(entry["env"]["OPENGIST_URL"], URL_PLACEHOLDER, "{client:?}");
            assert_eq!(
                entry["env"]["OPENGIST_TOKEN"], TOKEN_PLACEHOLDER,
                "{client:?}"
            );
        }
    }

    #[test]
    fn codex_gets_escaped_toml_and_claude_code_a_quoted_command() {
        let codex = render(Client::Codex, Path::new(r#"C:\x "y"\opengist-mcp"#), None);
        assert!(
            codex.contains(r#"command = "C:\\x \"y\"\\opengist-mcp""#),
            "{codex}"
        );
        assert!(codex.starts_with("[mcp_servers.opengist]\n"), "{codex}");
        let claude = render(
            Client::ClaudeCode,
            Path::new(BIN),
            Some("https://g.example/it's"),
        );
        assert_eq!(
            claude,
            format!(
                "claude mcp add opengist --env OPENGIST_URL='https://g.example/it'\\''s' --env OPENGIST_TOKEN=og_... -- '{BIN}'\n"
            )
        );
    }

    #[test]
    fn every_client_says_where_its_configuration_goes() {
        for &client in all() {
            assert!(note(client).contains(TOKEN_PLACEHOLDER), "{client:?}");
        }
    }
}
