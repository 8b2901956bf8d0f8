//! Configuration: every environment variable and flag, parsed once at start.
//!
//! [`Config::from_env_and_args`] is the testable core: it reads variables through a function it
//! is given and never touches the process. [`Config::from_process`] is the thin wrapper `main`
//! calls: it reads the real environment, then removes `OPENGIST_TOKEN` from it.
//!
//! Each concern parses its own settings, in this order, each in its own file: how to reach
//! Opengist (`connection`), which tools to register (`tool_filter`), how long the guard waits
//! (`guard`), how the server is served and run as replicas (`serving`: the framework's
//! settings, read by the framework with this server's flags), and what results hold
//! (`results`). Every setting is declared once in [`settings`] ([`SETTINGS`]: variable, flag,
//! default, secret), the names this server's own code reads in [`var`], the errors in `error`;
//! every public item is named here, at `opengist_mcp::config::*`.
//!
//! Rules that hold for every message here:
//! - a value that may be a secret (`OPENGIST_URL`, which is often a pasted token, the token
//!   itself, the seal key, the HTTP bearer secret) is never echoed, in errors or warnings;
//! - every error says which variable (and flag) is wrong and what shape is expected;
//! - flags win over variables; an unset or empty variable means "use the default", except the
//!   two strict switches `ELICITATION` and `OPENGIST_INSECURE_TLS`, where only the exact words
//!   `true` and `false` are accepted (an empty value is refused).
//!
//! When several settings are wrong at once, the first one in that order is reported.

use std::net::SocketAddr;
use std::time::Duration;

use ask_first_serve::ServeSettings;

mod connection;
mod error;
mod guard;
mod results;
mod serving;
mod setting_row;
pub mod settings;
mod tool_filter;
mod unknown;
pub mod var;

pub use connection::{
    DEFAULT_REQUEST_TIMEOUT_SECS, MAX_OPENGIST_QUEUE_SECS, MAX_OPENGIST_REQUESTS,
    MAX_REQUEST_TIMEOUT_SECS, OpengistUrl,
};
pub use error::{ConfigError, FilterError, FilterList};
pub use guard::{DEFAULT_DIALOG_TIMEOUT_SECS, MAX_DIALOG_TIMEOUT_SECS};
pub use results::{
    DEFAULT_CACHE_BYTES, DEFAULT_MAX_RESULT_BYTES, MAX_CACHE_BYTES, MAX_MAX_RESULT_BYTES,
    MIN_MAX_RESULT_BYTES,
};
pub use settings::{Flag, FlagValues, SETTINGS, Setting};
pub use tool_filter::ToolFilter;
pub use unknown::unknown_variables;

// The serving settings' types are the guard framework's (`ask_first_serve`); they are named
// here, beside the settings that hold them.
pub use ask_first_serve::settings::{
    AllowedHost, AllowedOrigin, AuditLog, AuthMode, AuthSettings, MAX_REPLICA_ID_LEN,
    MIN_HTTP_TOKEN_LEN, MIN_SEAL_KEY_BYTES, OriginPort, Secret, is_loopback,
};

use connection::Connection;
use results::ResultSettings;
pub use serving::OPENGIST_AUTH_MODE;
use tool_filter::ToolSelection;
use var::Source;

/// Everything the server needs to know, parsed and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// `OPENGIST_URL`; `None`: unconfigured mode (the server starts, every tool call answers
    /// with setup instructions).
    pub opengist_url: Option<OpengistUrl>,
    /// `OPENGIST_TOKEN`; `None` when unset or empty.
    pub token: Option<Secret>,
    /// `OPENGIST_READ_ONLY` / `--read-only`.
    pub read_only: bool,
    /// `OPENGIST_ALLOW_TOOLS` / `OPENGIST_DENY_TOOLS` and their flags.
    pub tools: ToolFilter,
    /// `OPENGIST_INSECURE_TLS` / `--insecure-tls`.
    pub insecure_tls: bool,
    /// `OPENGIST_MCP_MAX_RESULT_BYTES` / `--max-result-bytes`.
    pub max_result_bytes: usize,
    /// `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` / `--dialog-timeout-secs`.
    pub dialog_timeout: Duration,
    /// `OPENGIST_MCP_REQUEST_TIMEOUT_SECS` / `--request-timeout-secs`.
    pub request_timeout: Duration,
    /// `OPENGIST_MCP_VERIFIED_TOOLS`: tools that run only after the person's yes on the
    /// approval page with a passkey (none by default).
    pub verified_tools: Vec<String>,
    /// `OPENGIST_MCP_OPENGIST_MAX_REQUESTS`, `OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL`
    /// and `OPENGIST_MCP_OPENGIST_QUEUE_SECS` (and their flags): how many requests go to
    /// Opengist at once, in all and per MCP principal, and how long one waits for a turn.
    pub opengist_limits: crate::opengist::RequestLimits,
    /// `OPENGIST_MCP_CACHE_BYTES` / `--cache-bytes`: bytes of gist files kept in memory for
    /// reuse; 0 turns the cache off.
    pub cache_bytes: u64,
    /// `OPENGIST_MCP_RESOURCES`: offer gists as MCP resources (with templates, completion,
    /// resource links in tool results and list-changed notifications). Default true; they
    /// also need `get_gist_file` enabled.
    pub resources: bool,
    /// The framework's serving settings, under this server's names (a flag winning over its
    /// variable): `ELICITATION`, the seal key, the HTTP address, authentication and limits,
    /// the allowed hosts and origins, Redis, the audit log, the replica id, the state
    /// directory. [`ask_first_serve::Serving`] serves with them.
    pub serve: ServeSettings,
    /// One sentence per variable of the process that looks like a setting but is none (a
    /// misspelling, a wrong prefix), naming the closest declared setting; names only, never a
    /// value. Filled by [`Config::from_process`]; `doctor` fails on each, and the server's
    /// instructions to clients name each, so the person learns of it.
    pub unknown_settings: Vec<String>,
}

/// What `OPENGIST_MCP_HTTP_AUTH=opengist` needs: the instance's URL (each person brings their
/// own token); `OPENGIST_TOKEN` is not used, and on stdio the setting does not apply.
fn team_checks(
    http_addr: Option<SocketAddr>,
    has_url: bool,
    has_token: bool,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    if http_addr.is_none() {
        warnings.push(
            "OPENGIST_MCP_HTTP_AUTH=opengist only applies to HTTP (--http); on stdio the server \
             acts as OPENGIST_TOKEN's account"
                .to_owned(),
        );
        return Ok(());
    }
    if !has_url {
        return Err(ConfigError::TeamNeedsUrl);
    }
    // Each person's own token acts: the start-up line about a missing OPENGIST_TOKEN is wrong
    // here, and a configured one is never used.
    warnings.retain(|line| !line.starts_with("OPENGIST_URL is set but OPENGIST_TOKEN is not"));
    if has_token {
        warnings.push(
            "OPENGIST_TOKEN is set but not used: with OPENGIST_MCP_HTTP_AUTH=opengist each \
             person connects with their own Opengist access token as the bearer; unset \
             OPENGIST_TOKEN"
                .to_owned(),
        );
    }
    Ok(())
}

impl Config {
    /// Whether this server serves a team over HTTP (`OPENGIST_MCP_HTTP_AUTH=opengist` with
    /// `--http`): each request acts as the Opengist account of its own bearer token, and
    /// `OPENGIST_TOKEN` is not used.
    pub fn serves_team(&self) -> bool {
        self.serve.http_addr.is_some()
            && self.serve.auth.mode == AuthMode::Server(OPENGIST_AUTH_MODE.to_owned())
    }
}

/// A parsed configuration and the warnings to log at start-up (none of which contains a
/// secret).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The configuration.
    pub config: Config,
    /// One line each; `main` should log them with `tracing::warn!`.
    pub warnings: Vec<String>,
}

impl Config {
    /// Parses the configuration from the flags given on the command line
    /// ([`crate::cli::CliArgs::flags`]) and a variable lookup (`env(name)` gives the
    /// variable's value, `None` when unset). Flags win over variables. Never reads or changes
    /// the process environment.
    pub fn from_env_and_args(
        flags: &FlagValues,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Loaded, ConfigError> {
        let source = Source::new(flags, env);
        let mut warnings = Vec::new();
        let Connection {
            opengist_url,
            token,
            insecure_tls,
            request_timeout,
            opengist_limits,
        } = Connection::parse(&source, &mut warnings)?;
        let ToolSelection { read_only, tools } = ToolSelection::parse(&source)?;
        let dialog_timeout = guard::dialog_timeout(&source)?;
        let verified_tools = guard::verified_tools(&source)?;
        let serve = serving::parse(&source, &mut warnings)?;
        let ResultSettings {
            max_result_bytes,
            cache_bytes,
            resources,
        } = ResultSettings::parse(&source)?;
        if serve.auth.mode == AuthMode::Server(OPENGIST_AUTH_MODE.to_owned()) {
            team_checks(
                serve.http_addr,
                opengist_url.is_some(),
                token.is_some(),
                &mut warnings,
            )?;
        }

        Ok(Loaded {
            config: Config {
                opengist_url,
                token,
                read_only,
                tools,
                insecure_tls,
                max_result_bytes,
                dialog_timeout,
                request_timeout,
                verified_tools,
                opengist_limits,
                cache_bytes,
                resources,
                serve,
                unknown_settings: Vec::new(),
            },
            warnings,
        })
    }

    /// Reads the real process environment (the variables of [`SETTINGS`]), then REMOVES `OPENGIST_TOKEN` from it (so child
    /// processes and later readers never see it), then parses as
    /// [`Config::from_env_and_args`] does, and names the variables that look like settings but
    /// are none ([`Config::unknown_settings`]).
    ///
    /// # Safety
    ///
    /// Removing an environment variable is only sound while no other thread may read or write
    /// the environment. Call this first thing in `main`, before building the tokio runtime or
    /// starting any other thread (`#[tokio::main]` starts its worker threads before the body
    /// runs, so build the runtime by hand after this call).
    pub unsafe fn from_process(flags: &FlagValues) -> Result<Loaded, ConfigError> {
        let mut values: Vec<(&'static str, String)> = Vec::new();
        let mut not_unicode = None;
        for name in settings::SETTINGS.iter().map(|setting| setting.var) {
            match std::env::var(name) {
                Ok(value) => values.push((name, value)),
                Err(std::env::VarError::NotPresent) => {}
                Err(std::env::VarError::NotUnicode(_)) => {
                    not_unicode.get_or_insert(name);
                }
            }
        }
        if std::env::var_os(var::OPENGIST_TOKEN).is_some() {
            // SAFETY: the caller guarantees (this function's contract) that no other thread
            // exists yet, so nothing can read or write the environment concurrently.
            unsafe { std::env::remove_var(var::OPENGIST_TOKEN) };
        }
        if let Some(var) = not_unicode {
            return Err(ConfigError::NotUnicode { var });
        }
        let lookup = |name: &str| {
            values
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.clone())
        };
        let mut loaded = Self::from_env_and_args(flags, &lookup)?;
        // Names only: a variable that looks like a setting but is none does nothing, silently.
        let names: Vec<String> = std::env::vars_os()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        loaded.config.unknown_settings = unknown_variables(names.iter().map(String::as_str));
        Ok(loaded)
    }
}
