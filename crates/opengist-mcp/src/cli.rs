//! Command-line arguments.
//!
//! Every server setting that has a command-line flag also has an environment variable; a flag
//! given on the command line wins over the variable. The flags are plain strings here and are
//! validated by [`crate::config`], so a bad value gets the same message whichever way it came in.
//!
//! `OPENGIST_TOKEN` deliberately has no flag: command lines are visible to every user of the
//! machine (`ps`), environment variables are not.

use clap::{Parser, Subcommand};

/// Text shown after the flag list in `--help`: the variables that have no flag.
const AFTER_HELP: &str = "\
Environment variables without a flag:
  OPENGIST_URL    The Opengist instance, e.g. https://gist.example.com (http or https, no
                  user:password@; a trailing / or /api is removed). Unset: the server still
                  starts, lists its tools, and every tool call answers with setup instructions.
  OPENGIST_TOKEN  Personal access token (og_ followed by 64 hex digits), made in Opengist under
                  Settings -> Access Tokens. Read once at start, then removed from the process
                  environment; never logged. There is no flag for it on purpose: a command line
                  is visible to every user of the machine (ps), the environment is not.
  ELICITATION     Exactly `true` (default) or `false`. `false` sends guarded tools down the
                  two-call token path; it never removes the guard.
  RUST_LOG        Log filter for stderr (default: opengist_mcp=info,ask_first_serve=info,warn).
                  The MCP SDK's own events below warn are dropped whatever it says.
  OPENGIST_MCP_PROTOCOL_TRACE
                  1 to log the MCP SDK's protocol messages too (announced at start; they hold
                  questions and gist content; seals, tokens, answers, session ids are redacted).

Every flag above also reads the variable named in its help ([env: ...]); a flag given on the
command line wins over its variable.";

/// `opengist-mcp`: an MCP server for Opengist that asks a person before anything irreversible.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "opengist-mcp",
    version,
    about = "MCP server for Opengist, with a confirmation guard on every destructive tool",
    long_about = "MCP server for Opengist, with a confirmation guard on every destructive tool.\n\n\
                  Serves MCP on stdio by default, or streamable HTTP with --http.",
    after_help = AFTER_HELP
)]
pub struct CliArgs {
    /// What to do instead of serving (nothing: serve).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is `IP:PORT`, `[IPv6]:PORT`,
    /// localhost:PORT or a bare PORT (meaning 127.0.0.1:PORT). A non-loopback address needs
    /// OPENGIST_MCP_HTTP_TOKEN.
    #[arg(long, value_name = "ADDR", global = true)]
    pub http: Option<String>,

    /// Register only the eight reading tools. The variable takes true/1/yes or false/0/no, any
    /// case.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Register only these tools: comma-separated exact names, `prefix*`, or `essential`
    /// (list_gists, search_gists, get_gist, get_gist_file, create_gist, update_gist, delete_gist).
    /// An entry that matches no tool stops the server.
    #[arg(long, value_name = "LIST", global = true)]
    pub allow_tools: Option<String>,

    /// Do not register these tools (same syntax as --allow-tools); deny wins over allow.
    #[arg(long, value_name = "LIST", global = true)]
    pub deny_tools: Option<String>,

    /// Accept a self-signed or otherwise unverifiable TLS certificate from Opengist (that
    /// connection only). The variable takes exactly `true`.
    #[arg(long, global = true)]
    pub insecure_tls: bool,

    /// Key that seals confirmation state, hex or base64, at least 32 bytes once decoded (e.g.
    /// `openssl rand -hex 32`). Replicas behind one gateway must share it. Prefer the variable: a
    /// flag is visible in `ps`.
    #[arg(long, value_name = "KEY", global = true)]
    pub seal_key: Option<String>,

    /// Bearer secret every HTTP request must carry (`Authorization: Bearer <secret>`), at least 16
    /// visible ASCII characters. Required to bind a non-loopback address. Prefer the variable: a
    /// flag is visible in `ps`.
    #[arg(long, value_name = "SECRET", global = true)]
    pub http_token: Option<String>,

    /// Largest tool result in bytes; longer results are cut and say so. 4096..=8388608.
    #[arg(long, value_name = "N", global = true)]
    pub max_result_bytes: Option<String>,

    /// Extra Host header values accepted over HTTP, comma-separated, `host` (any port) or
    /// `host:port`; needed behind a reverse proxy. Loopback names with the bound port are always
    /// accepted.
    #[arg(long, value_name = "LIST", global = true)]
    pub allowed_hosts: Option<String>,

    /// Extra browser origins accepted over HTTP, comma-separated, `scheme://host[:port]` (`:*` for
    /// any port) or `null`. http(s)://localhost, 127.0.0.1 and `[::1]` on any port are always
    /// accepted.
    #[arg(long, value_name = "LIST", global = true)]
    pub allowed_origins: Option<String>,

    /// How long to wait for a person to answer a confirmation dialog, in seconds, 1..=86400.
    #[arg(long, value_name = "SECS", global = true)]
    pub dialog_timeout_secs: Option<String>,

    /// Timeout of each request to Opengist, in seconds, 1..=3600.
    #[arg(long, value_name = "SECS", global = true)]
    pub request_timeout_secs: Option<String>,

    /// Requests to Opengist in flight at once, all callers together, 1..=1024; more wait for a
    /// turn.
    #[arg(long, value_name = "N", global = true)]
    pub opengist_max_requests: Option<String>,

    /// Requests to Opengist in flight at once for one MCP principal (one `Authorization` header
    /// over HTTP; stdio is one), 1..=1024.
    #[arg(long, value_name = "N", global = true)]
    pub opengist_max_requests_per_principal: Option<String>,

    /// How long a request to Opengist waits for a turn before the call is refused as busy, in
    /// seconds, 1..=3600.
    #[arg(long, value_name = "SECS", global = true)]
    pub opengist_queue_secs: Option<String>,

    /// HTTP: how long a connection may take to send a whole request head (also how long an idle
    /// keep-alive connection stays open), in seconds, 1..=3600.
    #[arg(long, value_name = "SECS", global = true)]
    pub http_header_timeout_secs: Option<String>,

    /// HTTP: how long a request body may take to arrive in full, in seconds, 1..=3600; later: 408
    /// and the connection is closed.
    #[arg(long, value_name = "SECS", global = true)]
    pub http_body_timeout_secs: Option<String>,

    /// HTTP: connections served at once, 1..=65536; more wait in the listen backlog.
    #[arg(long, value_name = "N", global = true)]
    pub http_max_connections: Option<String>,

    /// HTTP: legacy (2025-11-25) sessions open at once, 1..=1000000; one more `initialize` gets 503
    /// with Retry-After.
    #[arg(long, value_name = "N", global = true)]
    pub http_max_sessions: Option<String>,

    /// HTTP: a legacy session idle this long is closed and its memory freed, in seconds, 1..=86400.
    #[arg(long, value_name = "SECS", global = true)]
    pub http_session_idle_secs: Option<String>,

    /// Redis that replicas share, so each approval is used once across all of them and across
    /// restarts: redis://[user:password@]host[:port][/db], or rediss:// for TLS. When it cannot be
    /// reached, guarded calls refuse to run (reading tools keep working). Prefer the variable: a
    /// flag is visible in `ps`.
    #[arg(long, value_name = "URL", global = true)]
    pub redis_url: Option<String>,

    /// Audit log: `stderr` or a file to append to; one JSON line per guard decision and per guarded
    /// call's outcome, never content.
    #[arg(long, value_name = "stderr|PATH", global = true)]
    pub audit_log: Option<String>,

    /// This replica's name in the audit log: 1-64 letters, digits, `.`, `_`, `-`, `:`.
    #[arg(long, value_name = "ID", global = true)]
    pub replica_id: Option<String>,

    /// Bytes of gist files kept in memory (never on disk) so repeated searches and revision reads
    /// do not fetch them again; 0 turns the cache off. 0..=4294967296.
    #[arg(long, value_name = "N", global = true)]
    pub cache_bytes: Option<String>,
}

/// Subcommands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Check the configuration and the connection to Opengist (reachability, token, scopes),
    /// print what was found, and exit without serving.
    Doctor,
    /// Probe the HTTP server configured here (GET /healthz at OPENGIST_MCP_HTTP_ADDR or
    /// --http, with OPENGIST_MCP_HTTP_TOKEN when set) and exit 0 when it is up, 1 otherwise: a
    /// container HEALTHCHECK. Up: a 200; in the modes where each caller brings their own
    /// credential (OPENGIST_MCP_HTTP_AUTH=tokens, oauth, opengist) the probe has none, and the
    /// gate's 401 counts as up (nothing answers without a credential). Without an HTTP address
    /// (stdio) there is nothing to probe: exit 0.
    Healthcheck,
    /// Print what CLIENT needs to start this binary (its real path, the variables; the token
    /// is always a placeholder, never its value), and where that goes. Clients that show the
    /// approval dialog and those that get the two-call token: docs/CLIENTS.md.
    ClientConfig {
        /// The client to configure.
        #[arg(value_enum)]
        client: crate::client_config::Client,
    },
    /// Per-person tokens for OPENGIST_MCP_HTTP_AUTH=tokens.
    Tokens {
        /// What to do.
        #[command(subcommand)]
        action: TokensAction,
    },
}

/// `opengist-mcp tokens ...`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum TokensAction {
    /// Mint a token for NAME: print it once and append NAME's hash line to the token file.
    Add {
        /// The person: 1 to 64 letters, digits or `.`, `_`, `-`, `@` (their principal is
        /// token:NAME).
        name: String,
        /// The token file (created if absent). [default: OPENGIST_MCP_HTTP_TOKENS_FILE]
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
    },
}

impl CliArgs {
    /// The command line as `--help` shows it: clap's, each flag's help ending with what the
    /// declaration of its setting says ([`crate::config::SETTINGS`]): `[env: VARIABLE]` and
    /// `[default: ...]` (for a secret, what happens without one: never a value).
    pub fn command() -> clap::Command {
        let mut command = <Self as clap::CommandFactory>::command();
        for setting in crate::config::SETTINGS {
            let Some(flag) = setting.flag else { continue };
            command = command.mut_arg(flag.replace('-', "_"), |arg| {
                let prose = arg.get_help().map(ToString::to_string).unwrap_or_default();
                let default = setting.shown_default.replace('`', "");
                arg.help(format!(
                    "{prose} [env: {}] [default: {default}]",
                    setting.var
                ))
            });
        }
        command
    }

    /// Parses the process's command line with [`CliArgs::command`]; prints help, the version,
    /// or a usage error and exits as clap does (code 0 for help/version, 2 for usage errors).
    pub fn parse_process() -> Self {
        let matches = Self::command().get_matches();
        <Self as clap::FromArgMatches>::from_arg_matches(&matches)
            .unwrap_or_else(|error| error.exit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    /// A flag's help text, its lines joined as one.
    fn help(id: &str) -> String {
        let command = CliArgs::command();
        let text = command
            .get_arguments()
            .find(|arg| arg.get_id() == id)
            .and_then(|arg| arg.get_help())
            .map(ToString::to_string)
            .expect("the flag has help");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The help is prose a person reads, so it cannot be built from the catalog: it is checked
    /// against it instead.
    #[test]
    fn the_help_agrees_with_the_catalog() {
        let essential = catalog::essential_names().collect::<Vec<_>>().join(", ");
        let allow = help("allow_tools");
        assert!(allow.contains(&format!("({essential})")), "{allow}");
        const COUNTS: [&str; 15] = [
            "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen",
        ];
        let read_only = help("read_only");
        let reading = COUNTS[catalog::reading_names().count()];
        assert!(
            read_only.contains(&format!("the {reading} reading tools")),
            "{read_only}"
        );
    }
}
