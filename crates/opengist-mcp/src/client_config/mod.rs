//! `opengist-mcp client-config CLIENT [--http URL]`: the configuration a named MCP client
//! needs, in its own format: over stdio, to start this binary (its real path, the variables);
//! with `--http`, to reach a running HTTP server at URL with an `Authorization` header.
//!
//! It never prints a token or a secret: `OPENGIST_TOKEN` is always the placeholder
//! `TOKEN_PLACEHOLDER` and the bearer secret `SECRET_PLACEHOLDER`, whatever the environment
//! holds, so the output can be pasted into a chat or an issue. The instance URL is the
//! configured one when `OPENGIST_URL` is set (it is no secret), else `URL_PLACEHOLDER`. Every
//! other setting given is carried into a stdio configuration's environment ([`GivenSettings`]):
//! with its value, or, a secret, as a placeholder (`<OPENGIST_MCP_SEAL_KEY>`) the note on
//! stderr names; what applies only to an HTTP server is left out, and the note says so. An
//! HTTP client cannot set the settings that change what the server offers (read-only mode, the
//! tool lists, the dialog switch): the running server has its own, so they are refused there,
//! and any other setting given is named as left out. Which clients show the approval dialog
//! and which get the two-call token is in `docs/CLIENTS.md`.
//!
//! Each client's HTTP form, from its documentation: Claude Code `claude mcp add --scope user
//! --transport http NAME URL --header ...` (`--scope user`: for all the user's projects, not
//! only the current directory, Claude Code's default); VS Code `servers.NAME` with `type: http`, `url`, `headers`;
//! Cursor and Zed `url` and `headers`; Gemini CLI `httpUrl` (its `url` means SSE) and
//! `headers`; Codex `url` and `bearer_token_env_var` (it refuses an inline token). Claude
//! Desktop connects to remote servers only through its Connectors settings (no header; OAuth
//! or none), never from `claude_desktop_config.json`.

use std::path::Path;

mod given;

pub use given::{GivenSettings, secret_placeholder};

/// What stands for the token in every configuration printed.
pub(crate) const TOKEN_PLACEHOLDER: &str = "og_...";

/// What stands for the instance when `OPENGIST_URL` is not set.
pub(crate) const URL_PLACEHOLDER: &str = "https://gist.example.com";

/// What stands for the HTTP bearer secret in every HTTP configuration printed.
pub(crate) const SECRET_PLACEHOLDER: &str = "<secret>";

/// The variable Codex reads the bearer secret from (it takes no inline token).
const CODEX_BEARER_VAR: &str = "OPENGIST_MCP_HTTP_TOKEN";

/// The name the server is registered under in every client's configuration.
const ENTRY: &str = "opengist";

/// Where `claude mcp add` registers the server: for all the user's projects (without it,
/// Claude Code's default scope `local` registers it for the current directory only).
const CLAUDE_SCOPE: &str = "--scope user";

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
            Self::ClaudeCode => {
                "run this command (--scope user registers the server for all your projects; drop it for this directory only)"
            }
            Self::ClaudeDesktop => "merge into claude_desktop_config.json",
            Self::Vscode => "merge into .vscode/mcp.json",
            Self::Cursor => "merge into .cursor/mcp.json (this project) or ~/.cursor/mcp.json",
            Self::Codex => "add to ~/.codex/config.toml",
            Self::GeminiCli => "merge into ~/.gemini/settings.json",
            Self::Zed => "merge into Zed's settings.json",
        }
    }
}

/// The variables a stdio configuration sets: the instance, the token placeholder, then the
/// settings of this process that change what the server offers (`extra`), in that order.
fn stdio_env(url: &str, extra: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    let mut vars = vec![
        ("OPENGIST_URL", url.to_owned()),
        ("OPENGIST_TOKEN", TOKEN_PLACEHOLDER.to_owned()),
    ];
    vars.extend(extra.iter().cloned());
    vars
}

/// The configuration for `client`, starting `binary`, against `url` (or the placeholder),
/// with the variables `extra` too ([`GivenSettings::vars`]): the command or the file's content,
/// ready to paste. Where it goes is [`note`]'s to say (on stderr, since JSON has no
/// comments).
pub fn render(
    client: Client,
    binary: &Path,
    url: Option<&str>,
    extra: &[(&'static str, String)],
) -> String {
    let binary = binary.to_string_lossy();
    let vars = stdio_env(url.unwrap_or(URL_PLACEHOLDER), extra);
    let env: serde_json::Map<String, serde_json::Value> = vars
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone().into()))
        .collect();
    match client {
        Client::ClaudeCode => format!(
            "claude mcp add {CLAUDE_SCOPE} {ENTRY} {} -- {}\n",
            vars.iter()
                .map(|(name, value)| format!("--env {}", shell_word(&format!("{name}={value}"))))
                .collect::<Vec<_>>()
                .join(" "),
            shell_word(&binary)
        ),
        Client::Codex => format!(
            "[mcp_servers.{ENTRY}]\ncommand = {}\nenv = {{ {} }}\n",
            toml_string(&binary),
            vars.iter()
                .map(|(name, value)| format!("{name} = {}", toml_string(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Client::ClaudeDesktop | Client::Cursor | Client::GeminiCli => json(
            "mcpServers",
            serde_json::json!({ "command": binary, "env": env }),
        ),
        Client::Vscode => json(
            "servers",
            serde_json::json!({ "type": "stdio", "command": binary, "env": env }),
        ),
        Client::Zed => json(
            "context_servers",
            serde_json::json!({ "command": binary, "args": [], "env": env }),
        ),
    }
}

/// The settings of this process that change what the server offers (read-only mode, the tool
/// lists, the dialog switch when it is off), which an HTTP client's configuration cannot carry:
/// `client-config --http` refuses them.
pub fn offer_changing_settings(config: &crate::config::Config) -> Vec<(&'static str, String)> {
    let mut vars = Vec::new();
    if config.read_only {
        vars.push(("OPENGIST_READ_ONLY", "true".to_owned()));
    }
    if let Some(allow) = config.tools.allow_list() {
        vars.push(("OPENGIST_ALLOW_TOOLS", allow));
    }
    if let Some(deny) = config.tools.deny_list() {
        vars.push(("OPENGIST_DENY_TOOLS", deny));
    }
    if !config.serve.elicitation {
        vars.push(("ELICITATION", "false".to_owned()));
    }
    vars
}

/// Why a client's HTTP configuration cannot be printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpConfigError {
    /// The client cannot send an `Authorization` header to a server it is configured with.
    #[error(
        "{client} cannot send an Authorization header to an HTTP server: it connects to remote servers only through its Connectors settings, with OAuth or no authentication, never from claude_desktop_config.json. Either run this binary over stdio (`opengist-mcp client-config {client}` without --http), or serve with OPENGIST_MCP_HTTP_AUTH=oauth and add the server's https URL under Settings > Connectors"
    )]
    NoHeader {
        /// The client's name on the command line.
        client: &'static str,
    },
    /// A setting of the server was given, which an HTTP client's configuration cannot carry.
    #[error(
        "{setting} changes what the server offers, and an HTTP client cannot set it: the running server has its own settings. Start the HTTP server with it instead, or leave it out here"
    )]
    ServerSetting {
        /// The setting, as given.
        setting: &'static str,
    },
}

/// `client`'s configuration for the HTTP server whose MCP endpoint is `endpoint`, with the
/// `Authorization` header's secret as the placeholder `<secret>` (Codex: an environment variable).
pub fn render_http(client: Client, endpoint: &str) -> Result<String, HttpConfigError> {
    let bearer = format!("Bearer {SECRET_PLACEHOLDER}");
    let headers = serde_json::json!({ "Authorization": bearer });
    Ok(match client {
        Client::ClaudeDesktop => {
            return Err(HttpConfigError::NoHeader {
                client: "claude-desktop",
            });
        }
        Client::ClaudeCode => format!(
            "claude mcp add {CLAUDE_SCOPE} --transport http {ENTRY} {} --header {}\n",
            shell_word(endpoint),
            shell_word(&format!("Authorization: {bearer}"))
        ),
        Client::Codex => format!(
            "[mcp_servers.{ENTRY}]\nurl = {}\nbearer_token_env_var = {}\n",
            toml_string(endpoint),
            toml_string(CODEX_BEARER_VAR)
        ),
        Client::Vscode => json(
            "servers",
            serde_json::json!({ "type": "http", "url": endpoint, "headers": headers }),
        ),
        Client::Cursor => json(
            "mcpServers",
            serde_json::json!({ "url": endpoint, "headers": headers }),
        ),
        Client::GeminiCli => json(
            "mcpServers",
            serde_json::json!({ "httpUrl": endpoint, "headers": headers }),
        ),
        Client::Zed => json(
            "context_servers",
            serde_json::json!({ "url": endpoint, "headers": headers }),
        ),
    })
}

/// The MCP endpoint `--http` names: a URL as given, or an address (`IP:PORT`, a bare port)
/// as the local server's `http://ADDR/mcp`.
pub fn endpoint(given: &str) -> String {
    if given.starts_with("http://") || given.starts_with("https://") {
        return given.to_owned();
    }
    let address = if given.bytes().all(|b| b.is_ascii_digit()) {
        format!("127.0.0.1:{given}")
    } else {
        given.to_owned()
    };
    format!("http://{address}/mcp")
}

/// The line printed to stderr before an HTTP configuration: where it goes, and what the
/// secret is.
pub fn http_note(client: Client) -> String {
    let secret = match client {
        Client::Codex => format!(
            "export {CODEX_BEARER_VAR} in the environment Codex starts from, set to the bearer secret"
        ),
        _ => format!("replace {SECRET_PLACEHOLDER} with the bearer secret"),
    };
    format!(
        "{}; {secret}: the server's OPENGIST_MCP_HTTP_TOKEN (or the one it printed at start), your own token from `opengist-mcp tokens add` with OPENGIST_MCP_HTTP_AUTH=tokens, or your own Opengist access token with OPENGIST_MCP_HTTP_AUTH=opengist",
        client.destination()
    )
}

/// The line printed to stderr before the configuration: where it goes, and what to replace.
pub fn note(client: Client) -> String {
    format!(
        "{}; replace {TOKEN_PLACEHOLDER} with your Opengist access token (Settings -> Access Tokens: {}). Which clients show the approval dialog: docs/CLIENTS.md",
        client.destination(),
        crate::doctor::TOKEN_SCOPES
    )
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
            let text = render(
                client,
                Path::new(BIN),
                Some("https://gists.example.org"),
                &[],
            );
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
            let text = render(client, Path::new(BIN), None, &[]);
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
        let codex = render(
            Client::Codex,
            Path::new(r#"C:\x "y"\opengist-mcp"#),
            None,
            &[],
        );
        assert!(
            codex.contains(r#"command = "C:\\x \"y\"\\opengist-mcp""#),
            "{codex}"
        );
        assert!(codex.starts_with("[mcp_servers.opengist]\n"), "{codex}");
        let claude = render(
            Client::ClaudeCode,
            Path::new(BIN),
            Some("https://g.example/it's"),
            &[],
        );
        assert_eq!(
            claude,
            format!(
                "claude mcp add --scope user opengist --env 'OPENGIST_URL=https://g.example/it'\\''s' --env OPENGIST_TOKEN=og_... -- '{BIN}'\n"
            )
        );
    }

    #[test]
    fn settings_that_change_the_server_are_carried_into_every_stdio_configuration() {
        let extra = [
            ("OPENGIST_READ_ONLY", "true".to_owned()),
            ("ELICITATION", "false".to_owned()),
        ];
        for &client in all() {
            let text = render(client, Path::new(BIN), None, &extra);
            for (name, value) in &extra {
                assert!(
                    text.contains(name) && text.contains(value.as_str()),
                    "{client:?}: {text}"
                );
            }
            // Positive control: without them, neither is there.
            let plain = render(client, Path::new(BIN), None, &[]);
            assert!(!plain.contains("OPENGIST_READ_ONLY"), "{client:?}: {plain}");
        }
    }

    #[test]
    fn every_client_but_claude_desktop_has_an_http_form_with_the_header() {
        for &client in all() {
            match render_http(client, "https://mcp.example.com/mcp") {
                Ok(text) => {
                    assert!(text.contains("https://mcp.example.com/mcp"), "{client:?}");
                    if client == Client::Codex {
                        assert!(text.contains("bearer_token_env_var"), "{text}");
                    } else {
                        assert!(text.contains("Bearer <secret>"), "{client:?}: {text}");
                    }
                    assert!(!text.contains("og_"), "{client:?}: {text}");
                }
                Err(error) => {
                    assert_eq!(client, Client::ClaudeDesktop);
                    assert!(error.to_string().contains("Connectors"), "{error}");
                }
            }
        }
        assert_eq!(endpoint("8765"), "http://127.0.0.1:8765/mcp");
        assert_eq!(endpoint("[::1]:8765"), "http://[::1]:8765/mcp");
        assert_eq!(endpoint("https://h.example/mcp"), "https://h.example/mcp");
    }

    #[test]
    fn every_client_says_where_its_configuration_goes() {
        for &client in all() {
            assert!(note(client).contains(TOKEN_PLACEHOLDER), "{client:?}");
        }
    }
}
