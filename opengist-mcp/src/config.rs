//! Configuration: every environment variable and flag, parsed once at start.
//!
//! [`Config::from_env_and_args`] is the testable core: it reads variables through a function it
//! is given and never touches the process. [`Config::from_process`] is the thin wrapper `main`
//! calls: it reads the real environment, then removes `OPENGIST_TOKEN` from it.
//!
//! Rules that hold for every message here:
//! - a value that may be a secret (`OPENGIST_URL`, which is often a pasted token, the token
//!   itself, the seal key, the HTTP bearer secret) is never echoed, in errors or warnings;
//! - every error says which variable (and flag) is wrong and what shape is expected;
//! - flags win over variables; an unset or empty variable means "use the default", except the
//!   two strict switches `ELICITATION` and `OPENGIST_INSECURE_TLS`, where only the exact words
//!   `true` and `false` are accepted (an empty value is refused).

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use mcp_guard::elicitation::InvalidElicitationSetting;
use mcp_guard::seal::SealKey;
use mcp_guard::serve::settings::{self as serving, SealKeyProblem, split_list};
use url::Url;

use crate::cli::CliArgs;
use crate::http_limits::{self, HttpLimits};

// The serving settings' types and parsers are the guard framework's (`mcp_guard::serve`); this
// module names them after this server's variables and flags.
pub use mcp_guard::serve::settings::{
    AllowedHost, AllowedOrigin, AuditLog, MAX_REPLICA_ID_LEN, MIN_HTTP_TOKEN_LEN,
    MIN_SEAL_KEY_BYTES, OriginPort, Secret, is_loopback,
};

/// Names of the environment variables this module reads.
pub mod var {
    /// The Opengist instance.
    pub const OPENGIST_URL: &str = "OPENGIST_URL";
    /// The Opengist personal access token (no flag on purpose).
    pub const OPENGIST_TOKEN: &str = "OPENGIST_TOKEN";
    /// Register only the reading tools.
    pub const OPENGIST_READ_ONLY: &str = "OPENGIST_READ_ONLY";
    /// Tools to register.
    pub const OPENGIST_ALLOW_TOOLS: &str = "OPENGIST_ALLOW_TOOLS";
    /// Tools not to register.
    pub const OPENGIST_DENY_TOOLS: &str = "OPENGIST_DENY_TOOLS";
    /// Accept unverifiable TLS certificates from Opengist.
    pub const OPENGIST_INSECURE_TLS: &str = "OPENGIST_INSECURE_TLS";
    /// The guard's dialog switch (deliberately unprefixed).
    pub const ELICITATION: &str = mcp_guard::elicitation::ELICITATION_VAR;
    /// HTTP bind address.
    pub const OPENGIST_MCP_HTTP_ADDR: &str = "OPENGIST_MCP_HTTP_ADDR";
    /// Seal key shared by replicas.
    pub const OPENGIST_MCP_SEAL_KEY: &str = "OPENGIST_MCP_SEAL_KEY";
    /// Bearer secret for HTTP.
    pub const OPENGIST_MCP_HTTP_TOKEN: &str = "OPENGIST_MCP_HTTP_TOKEN";
    /// Result-size ceiling.
    pub const OPENGIST_MCP_MAX_RESULT_BYTES: &str = "OPENGIST_MCP_MAX_RESULT_BYTES";
    /// Extra accepted Host header values.
    pub const OPENGIST_MCP_ALLOWED_HOSTS: &str = "OPENGIST_MCP_ALLOWED_HOSTS";
    /// Extra accepted Origin header values.
    pub const OPENGIST_MCP_ALLOWED_ORIGINS: &str = "OPENGIST_MCP_ALLOWED_ORIGINS";
    /// How long a confirmation dialog may wait for a person.
    pub const OPENGIST_MCP_DIALOG_TIMEOUT_SECS: &str = "OPENGIST_MCP_DIALOG_TIMEOUT_SECS";
    /// Timeout of each Opengist request.
    pub const OPENGIST_MCP_REQUEST_TIMEOUT_SECS: &str = "OPENGIST_MCP_REQUEST_TIMEOUT_SECS";
    /// HTTP: how long a connection may take to send a request head.
    pub const OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS: &str = "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS";
    /// HTTP: how long a request body may take to arrive.
    pub const OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS: &str = "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS";
    /// HTTP: connections served at once.
    pub const OPENGIST_MCP_HTTP_MAX_CONNECTIONS: &str = "OPENGIST_MCP_HTTP_MAX_CONNECTIONS";
    /// HTTP: legacy sessions open at once.
    pub const OPENGIST_MCP_HTTP_MAX_SESSIONS: &str = "OPENGIST_MCP_HTTP_MAX_SESSIONS";
    /// HTTP: idle time after which a legacy session is closed.
    pub const OPENGIST_MCP_HTTP_SESSION_IDLE_SECS: &str = "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS";
    /// The Redis that replicas share for spent answers.
    pub const OPENGIST_MCP_REDIS_URL: &str = "OPENGIST_MCP_REDIS_URL";
    /// Where the audit log goes: `stderr` or a file path.
    pub const OPENGIST_MCP_AUDIT_LOG: &str = "OPENGIST_MCP_AUDIT_LOG";
    /// This replica's name in the audit log.
    pub const OPENGIST_MCP_REPLICA_ID: &str = "OPENGIST_MCP_REPLICA_ID";
    /// Bytes of gist files kept in memory for reuse.
    pub const OPENGIST_MCP_CACHE_BYTES: &str = "OPENGIST_MCP_CACHE_BYTES";
    /// Whether gists are offered as MCP resources.
    pub const OPENGIST_MCP_RESOURCES: &str = "OPENGIST_MCP_RESOURCES";

    /// Every variable [`super::Config::from_process`] reads.
    pub const ALL: [&str; 25] = [
        OPENGIST_URL,
        OPENGIST_TOKEN,
        OPENGIST_READ_ONLY,
        OPENGIST_ALLOW_TOOLS,
        OPENGIST_DENY_TOOLS,
        OPENGIST_INSECURE_TLS,
        ELICITATION,
        OPENGIST_MCP_HTTP_ADDR,
        OPENGIST_MCP_SEAL_KEY,
        OPENGIST_MCP_HTTP_TOKEN,
        OPENGIST_MCP_MAX_RESULT_BYTES,
        OPENGIST_MCP_ALLOWED_HOSTS,
        OPENGIST_MCP_ALLOWED_ORIGINS,
        OPENGIST_MCP_DIALOG_TIMEOUT_SECS,
        OPENGIST_MCP_REQUEST_TIMEOUT_SECS,
        OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS,
        OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS,
        OPENGIST_MCP_HTTP_MAX_CONNECTIONS,
        OPENGIST_MCP_HTTP_MAX_SESSIONS,
        OPENGIST_MCP_HTTP_SESSION_IDLE_SECS,
        OPENGIST_MCP_REDIS_URL,
        OPENGIST_MCP_AUDIT_LOG,
        OPENGIST_MCP_REPLICA_ID,
        OPENGIST_MCP_CACHE_BYTES,
        OPENGIST_MCP_RESOURCES,
    ];
}

/// The curated seven that `essential` stands for in the allow and deny lists.
pub const ESSENTIAL_TOOLS: [&str; 7] = [
    "list_gists",
    "search_gists",
    "get_gist",
    "get_gist_file",
    "create_gist",
    "update_gist",
    "delete_gist",
];

/// The eight reading tools: all that exist in read-only mode.
pub const READING_TOOLS: [&str; 8] = [
    "list_gists",
    "search_gists",
    "get_gist",
    "get_gist_file",
    "list_gist_commits",
    "list_gist_forks",
    "get_user",
    "check_gist_like",
];

/// The six tools that write.
pub const WRITE_TOOLS: [&str; 6] = [
    "create_gist",
    "update_gist",
    "delete_gist_files",
    "delete_gist",
    "fork_gist",
    "set_gist_like",
];

/// Default of `OPENGIST_MCP_MAX_RESULT_BYTES`.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 262_144;
/// Smallest accepted `OPENGIST_MCP_MAX_RESULT_BYTES`.
pub const MIN_MAX_RESULT_BYTES: usize = 4096;
/// Largest accepted `OPENGIST_MCP_MAX_RESULT_BYTES` (8 MiB).
pub const MAX_MAX_RESULT_BYTES: usize = 8 * 1024 * 1024;
/// Default of `OPENGIST_MCP_CACHE_BYTES` (64 MiB).
pub const DEFAULT_CACHE_BYTES: u64 = crate::cache::DEFAULT_CACHE_BYTES;
/// Largest accepted `OPENGIST_MCP_CACHE_BYTES` (4 GiB).
pub const MAX_CACHE_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Default of `OPENGIST_MCP_DIALOG_TIMEOUT_SECS`.
pub const DEFAULT_DIALOG_TIMEOUT_SECS: u64 = 600;
/// Largest accepted `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` (a day).
pub const MAX_DIALOG_TIMEOUT_SECS: u64 = 86_400;
/// Default of `OPENGIST_MCP_REQUEST_TIMEOUT_SECS`.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 30;
/// Largest accepted `OPENGIST_MCP_REQUEST_TIMEOUT_SECS` (an hour).
pub const MAX_REQUEST_TIMEOUT_SECS: u64 = 3600;

/// The Opengist instance's base URL, normalised: http or https, no user info, no query or
/// fragment, no trailing `/` and no trailing `/api`. The API lives at `{base}/api/...`.
#[derive(Clone, PartialEq, Eq)]
pub struct OpengistUrl {
    url: Url,
    base: String,
}

impl OpengistUrl {
    /// Parses and normalises a base URL. The error never contains the value.
    pub fn parse(raw: &str) -> Result<Self, ConfigError> {
        let raw = raw.trim();
        let url = Url::parse(raw).map_err(|_| ConfigError::UrlNotAUrl)?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(ConfigError::UrlScheme);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ConfigError::UrlUserinfo);
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ConfigError::UrlQueryOrFragment);
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ConfigError::UrlNotAUrl);
        }
        let mut path = url.path().to_owned();
        loop {
            let before = path.len();
            while path.ends_with('/') {
                path.pop();
            }
            if let Some(stripped) = path.strip_suffix("/api") {
                path = stripped.to_owned();
            }
            if path.len() == before {
                break;
            }
        }
        let mut normalised = url.clone();
        normalised.set_path(&path);
        let base = normalised.as_str().trim_end_matches('/').to_owned();
        Ok(Self {
            url: normalised,
            base,
        })
    }

    /// The base without a trailing slash, e.g. `https://gist.example.com` or
    /// `https://example.com/opengist`.
    pub fn as_str(&self) -> &str {
        &self.base
    }

    /// The parsed base.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// `{base}/api` followed by `path` (which should start with `/`).
    pub fn api(&self, path: &str) -> String {
        format!("{}/api{}", self.base, path)
    }

    /// Whether the host is `localhost` or a loopback IP address.
    pub fn is_loopback(&self) -> bool {
        match self.url.host() {
            Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }

    /// Whether the scheme is plain `http`.
    pub fn is_plain_http(&self) -> bool {
        self.url.scheme() == "http"
    }
}

impl fmt::Debug for OpengistUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The normalised URL has no credentials; showing it helps diagnose a wrong instance.
        f.debug_tuple("OpengistUrl").field(&self.base).finish()
    }
}

impl fmt::Display for OpengistUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    /// An exact tool name.
    Exact(String),
    /// `prefix*`.
    Prefix(String),
    /// `essential`: [`ESSENTIAL_TOOLS`].
    Essential,
}

impl Selector {
    fn parse(entry: &str) -> Self {
        if entry == "essential" {
            Self::Essential
        } else if let Some(prefix) = entry.strip_suffix('*') {
            Self::Prefix(prefix.to_owned())
        } else {
            Self::Exact(entry.to_owned())
        }
    }

    fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Exact(name) => name == tool,
            Self::Prefix(prefix) => tool.starts_with(prefix.as_str()),
            Self::Essential => ESSENTIAL_TOOLS.contains(&tool),
        }
    }
}

/// A list entry with its position, kept for error messages.
#[derive(Clone, PartialEq, Eq)]
struct FilterEntry {
    /// 1-based position in its list, counting non-empty entries.
    position: usize,
    raw: String,
    selector: Selector,
}

impl FilterEntry {
    /// The entry as an error message may show it: itself when it is shaped like a tool name
    /// (`[a-z_*]{1,64}`), `<entry #N>` otherwise (it might be anything, even a secret).
    fn shown(&self) -> String {
        if is_name_shaped(&self.raw) {
            format!("`{}`", self.raw)
        } else {
            format!("<entry #{}>", self.position)
        }
    }
}

impl fmt::Debug for FilterEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

fn is_name_shaped(entry: &str) -> bool {
    (1..=64).contains(&entry.len())
        && entry
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'*')
}

/// Which tools to register: `OPENGIST_ALLOW_TOOLS` and `OPENGIST_DENY_TOOLS` (or their flags).
/// Parsing never fails; whether each entry names something is checked by
/// [`ToolFilter::resolve`], which knows the real tool names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Option<Vec<FilterEntry>>,
    deny: Vec<FilterEntry>,
}

/// Which list an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterList {
    /// `OPENGIST_ALLOW_TOOLS` / `--allow-tools`.
    Allow,
    /// `OPENGIST_DENY_TOOLS` / `--deny-tools`.
    Deny,
}

impl fmt::Display for FilterList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "OPENGIST_ALLOW_TOOLS (--allow-tools)",
            Self::Deny => "OPENGIST_DENY_TOOLS (--deny-tools)",
        })
    }
}

/// Why the tool lists could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// An entry matched no tool.
    #[error(
        "{list}: entry {entry} matches no tool. Entries are exact tool names, `prefix*`, or \
         `essential`; the tools are: {tools}"
    )]
    NoMatch {
        /// The list holding the entry.
        list: FilterList,
        /// The entry as shown: itself if name-shaped, else `<entry #N>`.
        entry: String,
        /// Every real tool name, comma-separated.
        tools: String,
    },
    /// The lists (and read-only mode) left no tool at all.
    #[error(
        "no tool is left to register{read_only}: check OPENGIST_ALLOW_TOOLS and \
         OPENGIST_DENY_TOOLS (deny wins over allow); the tools are: {tools}"
    )]
    NothingLeft {
        /// ` in read-only mode (only the reading tools exist)` or empty.
        read_only: &'static str,
        /// Every real tool name, comma-separated.
        tools: String,
    },
}

impl FilterError {
    /// The process exit code for this error: 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}

impl ToolFilter {
    /// Parses the two comma-separated lists. `None` or an empty allow list means "all"; an
    /// empty deny list means "none". Blank entries are skipped; entries are trimmed.
    pub fn parse(allow: Option<&str>, deny: Option<&str>) -> Self {
        fn entries(list: &str) -> Vec<FilterEntry> {
            list.split(',')
                .map(str::trim)
                .filter(|entry| !entry.is_empty())
                .enumerate()
                .map(|(index, raw)| FilterEntry {
                    position: index + 1,
                    raw: raw.to_owned(),
                    selector: Selector::parse(raw),
                })
                .collect()
        }
        let allow = allow.map(entries).filter(|list| !list.is_empty());
        let deny = deny.map(entries).unwrap_or_default();
        Self { allow, deny }
    }

    /// Whether both lists are empty (every tool is registered, read-only aside).
    pub fn is_unrestricted(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// The names to register, in the order of `all_tool_names`. Read-only keeps only
    /// [`READING_TOOLS`]; then the allow list (if any) keeps what it matches; then the deny list
    /// removes what it matches, so deny wins over allow. Every entry must match at least one of
    /// `all_tool_names` (read-only or not), else the error names it and lists the real names.
    pub fn resolve(
        &self,
        all_tool_names: &[&str],
        read_only: bool,
    ) -> Result<Vec<String>, FilterError> {
        let tools = all_tool_names.join(", ");
        let lists = self
            .allow
            .iter()
            .flatten()
            .map(|entry| (FilterList::Allow, entry))
            .chain(self.deny.iter().map(|entry| (FilterList::Deny, entry)));
        for (list, entry) in lists {
            if !all_tool_names
                .iter()
                .any(|name| entry.selector.matches(name))
            {
                return Err(FilterError::NoMatch {
                    list,
                    entry: entry.shown(),
                    tools,
                });
            }
        }
        let kept: Vec<String> = all_tool_names
            .iter()
            .filter(|name| !read_only || READING_TOOLS.contains(name))
            .filter(|name| match &self.allow {
                Some(allow) => allow.iter().any(|entry| entry.selector.matches(name)),
                None => true,
            })
            .filter(|name| !self.deny.iter().any(|entry| entry.selector.matches(name)))
            .map(|name| (*name).to_owned())
            .collect();
        if kept.is_empty() {
            return Err(FilterError::NothingLeft {
                read_only: if read_only {
                    " in read-only mode (only the reading tools exist)"
                } else {
                    ""
                },
                tools,
            });
        }
        Ok(kept)
    }
}

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
    /// `ELICITATION`: `false` sends guarded calls down the two-call token path.
    pub elicitation: bool,
    /// `OPENGIST_MCP_SEAL_KEY` / `--seal-key`, or a random key for this process.
    pub seal_key: SealKey,
    /// Whether [`Config::seal_key`] came from configuration (replicas can share it) rather
    /// than being random for this process.
    pub seal_key_configured: bool,
    /// `OPENGIST_MCP_HTTP_ADDR` / `--http`; `None`: serve stdio.
    pub http_addr: Option<SocketAddr>,
    /// `OPENGIST_MCP_HTTP_TOKEN` / `--http-token`.
    pub http_token: Option<Secret>,
    /// `OPENGIST_MCP_MAX_RESULT_BYTES` / `--max-result-bytes`.
    pub max_result_bytes: usize,
    /// `OPENGIST_MCP_ALLOWED_HOSTS` / `--allowed-hosts`.
    pub allowed_hosts: Vec<AllowedHost>,
    /// `OPENGIST_MCP_ALLOWED_ORIGINS` / `--allowed-origins`.
    pub allowed_origins: Vec<AllowedOrigin>,
    /// `OPENGIST_MCP_DIALOG_TIMEOUT_SECS` / `--dialog-timeout-secs`.
    pub dialog_timeout: Duration,
    /// `OPENGIST_MCP_REQUEST_TIMEOUT_SECS` / `--request-timeout-secs`.
    pub request_timeout: Duration,
    /// `OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS`, `_BODY_TIMEOUT_SECS`, `_MAX_CONNECTIONS`,
    /// `_MAX_SESSIONS`, `_SESSION_IDLE_SECS` (and their flags).
    pub http_limits: HttpLimits,
    /// `OPENGIST_MCP_REDIS_URL` / `--redis-url`: the shared spent-answer store; `None`: in
    /// memory, for this process only. Secret: the URL may hold a password.
    pub redis_url: Option<Secret>,
    /// `OPENGIST_MCP_AUDIT_LOG` / `--audit-log`; `None`: no audit log.
    pub audit_log: Option<AuditLog>,
    /// `OPENGIST_MCP_REPLICA_ID` / `--replica-id`; `None`: `hostname:pid`, worked out at start.
    pub replica_id: Option<String>,
    /// `OPENGIST_MCP_CACHE_BYTES` / `--cache-bytes`: bytes of gist files kept in memory for
    /// reuse; 0 turns the cache off.
    pub cache_bytes: u64,
    /// `OPENGIST_MCP_RESOURCES`: offer gists as MCP resources (with templates, completion,
    /// resource links in tool results and list-changed notifications). Default true; they
    /// also need `get_gist_file` enabled.
    pub resources: bool,
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

/// A configuration value that cannot be used. Every message says what is expected and never
/// contains a value that might be secret. Exit code: 1 ([`ConfigError::exit_code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `OPENGIST_URL` is not an absolute URL with a host.
    #[error(
        "OPENGIST_URL is not a URL (the value is not shown: it is often a pasted token); expected \
         the address of your Opengist instance, such as https://gist.example.com"
    )]
    UrlNotAUrl,
    /// `OPENGIST_URL` is not http or https.
    #[error(
        "OPENGIST_URL must start with https:// or http:// (the value is not shown: it is often a \
         pasted token); expected something like https://gist.example.com"
    )]
    UrlScheme,
    /// `OPENGIST_URL` carries `user:password@`.
    #[error(
        "OPENGIST_URL must not contain user:password@ (the value is not shown); put the access \
         token in OPENGIST_TOKEN and use the bare address, such as https://gist.example.com"
    )]
    UrlUserinfo,
    /// `OPENGIST_URL` has a query string or fragment.
    #[error(
        "OPENGIST_URL must not contain ? or # (the value is not shown); expected the bare \
         address of the instance, such as https://gist.example.com"
    )]
    UrlQueryOrFragment,
    /// `OPENGIST_TOKEN` cannot be sent in an HTTP header.
    #[error(
        "OPENGIST_TOKEN contains spaces or characters that cannot be sent in an HTTP header (the \
         value is not shown); copy the token again from Opengist, Settings -> Access Tokens"
    )]
    TokenNotHeaderSafe,
    /// `OPENGIST_READ_ONLY` is not a recognised boolean.
    #[error(
        "OPENGIST_READ_ONLY must be one of true, 1, yes or false, 0, no (any case); empty or \
         unset means false"
    )]
    ReadOnly,
    /// `OPENGIST_INSECURE_TLS` is not exactly `true` or `false`.
    #[error(
        "OPENGIST_INSECURE_TLS must be exactly `true` (accept unverifiable certificates from \
         Opengist) or `false`; unset means false"
    )]
    InsecureTls,
    /// `OPENGIST_MCP_RESOURCES` is not exactly `true` or `false`.
    #[error(
        "OPENGIST_MCP_RESOURCES must be exactly `true` (offer gists as MCP resources) or `false` \
         (no resources, templates, completion or resource links); unset means true"
    )]
    Resources,
    /// `ELICITATION` is not exactly `true` or `false`.
    #[error(transparent)]
    Elicitation(#[from] InvalidElicitationSetting),
    /// The seal key is neither hex nor base64.
    #[error(
        "OPENGIST_MCP_SEAL_KEY (--seal-key) is neither hex nor base64 (the value is not shown); \
         generate one with `openssl rand -hex 32`"
    )]
    SealKeyEncoding,
    /// The seal key is too short.
    #[error(
        "OPENGIST_MCP_SEAL_KEY (--seal-key) decodes to {bytes} bytes; it needs at least 32 \
         random bytes: generate one with `openssl rand -hex 32`"
    )]
    SealKeyTooShort {
        /// Decoded length.
        bytes: usize,
    },
    /// The HTTP address is not an address.
    #[error(
        "OPENGIST_MCP_HTTP_ADDR (--http) is not an address; expected IP:PORT, [IPv6]:PORT, \
         localhost:PORT or a bare PORT, such as 127.0.0.1:8080"
    )]
    HttpAddr,
    /// A non-loopback bind address without a bearer secret.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without a bearer \
         secret: set OPENGIST_MCP_HTTP_TOKEN (e.g. to the output of `openssl rand -hex 32`), or \
         bind 127.0.0.1"
    )]
    HttpTokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The HTTP bearer secret is too short or has characters a header cannot carry.
    #[error(
        "OPENGIST_MCP_HTTP_TOKEN (--http-token) must be at least 16 visible ASCII characters \
         with no spaces (the value is not shown); generate one with `openssl rand -hex 32`"
    )]
    HttpToken,
    /// A number is not a whole number.
    #[error("{setting} must be a whole number between {min} and {max}")]
    NotANumber {
        /// Variable and flag.
        setting: &'static str,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A number is out of range.
    #[error("{setting} is {value}; it must be between {min} and {max}")]
    OutOfRange {
        /// Variable and flag.
        setting: &'static str,
        /// The value given.
        value: u64,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// An allowed-host entry is not `host` or `host:port`.
    #[error(
        "OPENGIST_MCP_ALLOWED_HOSTS (--allowed-hosts): entry #{position} is not a host; \
         expected comma-separated `host` or `host:port` entries, such as mcp.example.com or \
         mcp.example.com:8443"
    )]
    AllowedHost {
        /// 1-based position among the non-empty entries.
        position: usize,
    },
    /// An allowed-origin entry is not an origin.
    #[error(
        "OPENGIST_MCP_ALLOWED_ORIGINS (--allowed-origins): entry #{position} is not an origin; \
         expected comma-separated `https://host`, `https://host:port`, `https://host:*` (any \
         port) or `null` entries"
    )]
    AllowedOrigin {
        /// 1-based position among the non-empty entries.
        position: usize,
    },
    /// The Redis URL is not a Redis URL.
    #[error(
        "OPENGIST_MCP_REDIS_URL (--redis-url) is not a Redis URL (the value is not shown: it may \
         hold a password); expected redis://[user:password@]host[:port][/db], or rediss://... \
         for TLS, such as redis://127.0.0.1:6379/0"
    )]
    RedisUrl,
    /// The audit log setting is empty after trimming, or names a directory.
    #[error(
        "OPENGIST_MCP_AUDIT_LOG (--audit-log) must be `stderr` or the path of a file to append \
         to, such as /var/log/opengist-mcp/audit.jsonl"
    )]
    AuditLog,
    /// The replica id is not a short name.
    #[error(
        "OPENGIST_MCP_REPLICA_ID (--replica-id) must be 1 to 64 letters, digits or `.`, `_`, \
         `-`, `:`, such as web-2 or host1:8081"
    )]
    ReplicaId,
    /// A variable holds bytes that are not UTF-8.
    #[error("{var} is not valid UTF-8 (the value is not shown); set it to plain text")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
}

impl ConfigError {
    /// The process exit code for this error: always 1.
    pub fn exit_code(&self) -> i32 {
        1
    }
}

/// A setting with both a variable and a flag; used to name both in messages.
const MAX_RESULT_BYTES_SETTING: &str = "OPENGIST_MCP_MAX_RESULT_BYTES (--max-result-bytes)";
const DIALOG_TIMEOUT_SETTING: &str = "OPENGIST_MCP_DIALOG_TIMEOUT_SECS (--dialog-timeout-secs)";
const REQUEST_TIMEOUT_SETTING: &str = "OPENGIST_MCP_REQUEST_TIMEOUT_SECS (--request-timeout-secs)";
const HEADER_TIMEOUT_SETTING: &str =
    "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS (--http-header-timeout-secs)";
const BODY_TIMEOUT_SETTING: &str = "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS (--http-body-timeout-secs)";
const MAX_CONNECTIONS_SETTING: &str = "OPENGIST_MCP_HTTP_MAX_CONNECTIONS (--http-max-connections)";
const MAX_SESSIONS_SETTING: &str = "OPENGIST_MCP_HTTP_MAX_SESSIONS (--http-max-sessions)";
const SESSION_IDLE_SETTING: &str = "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS (--http-session-idle-secs)";
const CACHE_BYTES_SETTING: &str = "OPENGIST_MCP_CACHE_BYTES (--cache-bytes)";

impl Config {
    /// Parses the configuration from command-line arguments and a variable lookup (`env(name)`
    /// gives the variable's value, `None` when unset). Flags win over variables. Never reads or
    /// changes the process environment.
    pub fn from_env_and_args(
        args: &CliArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Loaded, ConfigError> {
        let mut warnings = Vec::new();
        // A variable set to the empty string counts as unset everywhere.
        let get = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let flag_or_env = |flag: &Option<String>, name: &str| flag.clone().or_else(|| get(name));

        let opengist_url = match get(var::OPENGIST_URL) {
            Some(raw) => Some(OpengistUrl::parse(&raw)?),
            None => None,
        };
        if let Some(url) = &opengist_url
            && url.is_plain_http()
            && !url.is_loopback()
        {
            warnings.push(
                "OPENGIST_URL uses plain http to a host that is not this machine: the access \
                 token and every gist travel unencrypted; use https"
                    .to_owned(),
            );
        }

        let token = match get(var::OPENGIST_TOKEN) {
            Some(raw) => Some(parse_token(&raw, &mut warnings)?),
            None => None,
        };
        match (&opengist_url, &token) {
            (None, Some(_)) => warnings.push(
                "OPENGIST_TOKEN is set but OPENGIST_URL is not: the server starts unconfigured \
                 and every tool call answers with setup instructions"
                    .to_owned(),
            ),
            (Some(_), None) => warnings.push(
                "OPENGIST_URL is set but OPENGIST_TOKEN is not: the server starts unconfigured \
                 and every tool call answers with setup instructions (make a token in Opengist \
                 under Settings -> Access Tokens and set OPENGIST_TOKEN)"
                    .to_owned(),
            ),
            _ => {}
        }

        let read_only = args.read_only || parse_generous_bool(get(var::OPENGIST_READ_ONLY))?;
        let tools = ToolFilter::parse(
            flag_or_env(&args.allow_tools, var::OPENGIST_ALLOW_TOOLS).as_deref(),
            flag_or_env(&args.deny_tools, var::OPENGIST_DENY_TOOLS).as_deref(),
        );

        let insecure_tls = args.insecure_tls
            || match env(var::OPENGIST_INSECURE_TLS).as_deref() {
                None | Some("false") => false,
                Some("true") => true,
                Some(_) => return Err(ConfigError::InsecureTls),
            };
        if insecure_tls {
            warnings.push(
                "OPENGIST_INSECURE_TLS is on: the Opengist certificate is not verified, so \
                 anyone on the network path could read the token"
                    .to_owned(),
            );
        }

        // Strict on purpose: an empty value is refused too, exactly as the guard crate says.
        let elicitation =
            mcp_guard::elicitation::parse_elicitation(env(var::ELICITATION).as_deref())?;

        if args.seal_key.is_some() {
            warnings.push(
                "--seal-key is visible to every user of this machine (ps); prefer \
                 OPENGIST_MCP_SEAL_KEY"
                    .to_owned(),
            );
        }
        let (seal_key, seal_key_configured) =
            match flag_or_env(&args.seal_key, var::OPENGIST_MCP_SEAL_KEY) {
                Some(raw) => (parse_seal_key(&raw)?, true),
                None => (SealKey::random(), false),
            };

        if args.http_token.is_some() {
            warnings.push(
                "--http-token is visible to every user of this machine (ps); prefer \
                 OPENGIST_MCP_HTTP_TOKEN"
                    .to_owned(),
            );
        }
        let http_token = match flag_or_env(&args.http_token, var::OPENGIST_MCP_HTTP_TOKEN) {
            Some(raw) => Some(parse_http_token(&raw)?),
            None => None,
        };
        let http_addr = match flag_or_env(&args.http, var::OPENGIST_MCP_HTTP_ADDR) {
            Some(raw) => Some(parse_http_addr(&raw)?),
            None => None,
        };
        if let Some(addr) = http_addr
            && !is_loopback(addr.ip())
            && http_token.is_none()
        {
            return Err(ConfigError::HttpTokenRequired { addr });
        }

        let max_result_bytes =
            match flag_or_env(&args.max_result_bytes, var::OPENGIST_MCP_MAX_RESULT_BYTES) {
                Some(raw) => parse_number(
                    &raw,
                    MAX_RESULT_BYTES_SETTING,
                    MIN_MAX_RESULT_BYTES as u64,
                    MAX_MAX_RESULT_BYTES as u64,
                )? as usize,
                None => DEFAULT_MAX_RESULT_BYTES,
            };

        let allowed_hosts = split_list(flag_or_env(
            &args.allowed_hosts,
            var::OPENGIST_MCP_ALLOWED_HOSTS,
        ))
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            AllowedHost::parse(&entry).ok_or(ConfigError::AllowedHost {
                position: index + 1,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
        let allowed_origins = split_list(flag_or_env(
            &args.allowed_origins,
            var::OPENGIST_MCP_ALLOWED_ORIGINS,
        ))
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            AllowedOrigin::parse(&entry).ok_or(ConfigError::AllowedOrigin {
                position: index + 1,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
        if http_addr.is_none() && (!allowed_hosts.is_empty() || !allowed_origins.is_empty()) {
            warnings.push(
                "OPENGIST_MCP_ALLOWED_HOSTS / OPENGIST_MCP_ALLOWED_ORIGINS only apply to HTTP \
                 (--http); they are ignored on stdio"
                    .to_owned(),
            );
        }

        let dialog_timeout = Duration::from_secs(
            match flag_or_env(
                &args.dialog_timeout_secs,
                var::OPENGIST_MCP_DIALOG_TIMEOUT_SECS,
            ) {
                Some(raw) => {
                    parse_number(&raw, DIALOG_TIMEOUT_SETTING, 1, MAX_DIALOG_TIMEOUT_SECS)?
                }
                None => DEFAULT_DIALOG_TIMEOUT_SECS,
            },
        );
        let request_timeout = Duration::from_secs(
            match flag_or_env(
                &args.request_timeout_secs,
                var::OPENGIST_MCP_REQUEST_TIMEOUT_SECS,
            ) {
                Some(raw) => {
                    parse_number(&raw, REQUEST_TIMEOUT_SETTING, 1, MAX_REQUEST_TIMEOUT_SECS)?
                }
                None => DEFAULT_REQUEST_TIMEOUT_SECS,
            },
        );

        let number =
            |flag: &Option<String>, name: &str, setting, min, max, default| match flag_or_env(
                flag, name,
            ) {
                Some(raw) => parse_number(&raw, setting, min, max),
                None => Ok(default),
            };
        let http_limits = HttpLimits {
            header_timeout: Duration::from_secs(number(
                &args.http_header_timeout_secs,
                var::OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS,
                HEADER_TIMEOUT_SETTING,
                1,
                3600,
                http_limits::DEFAULT_HEADER_TIMEOUT_SECS,
            )?),
            body_timeout: Duration::from_secs(number(
                &args.http_body_timeout_secs,
                var::OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS,
                BODY_TIMEOUT_SETTING,
                1,
                3600,
                http_limits::DEFAULT_BODY_TIMEOUT_SECS,
            )?),
            max_connections: number(
                &args.http_max_connections,
                var::OPENGIST_MCP_HTTP_MAX_CONNECTIONS,
                MAX_CONNECTIONS_SETTING,
                1,
                65_536,
                http_limits::DEFAULT_MAX_CONNECTIONS,
            )? as usize,
            max_sessions: number(
                &args.http_max_sessions,
                var::OPENGIST_MCP_HTTP_MAX_SESSIONS,
                MAX_SESSIONS_SETTING,
                1,
                1_000_000,
                http_limits::DEFAULT_MAX_SESSIONS,
            )? as usize,
            session_idle: Duration::from_secs(number(
                &args.http_session_idle_secs,
                var::OPENGIST_MCP_HTTP_SESSION_IDLE_SECS,
                SESSION_IDLE_SETTING,
                1,
                86_400,
                http_limits::DEFAULT_SESSION_IDLE_SECS,
            )?),
        };
        if args.redis_url.is_some() {
            warnings.push(
                "--redis-url is visible to every user of this machine (ps), with any password \
                 in it; prefer OPENGIST_MCP_REDIS_URL"
                    .to_owned(),
            );
        }
        let redis_url = match flag_or_env(&args.redis_url, var::OPENGIST_MCP_REDIS_URL) {
            Some(raw) => Some(parse_redis_url(&raw)?),
            None => None,
        };
        if redis_url.is_some() && !seal_key_configured {
            warnings.push(
                "OPENGIST_MCP_REDIS_URL is set but OPENGIST_MCP_SEAL_KEY is not: this process \
                 seals with a random key, so other replicas cannot open its questions; give \
                 every replica the same OPENGIST_MCP_SEAL_KEY"
                    .to_owned(),
            );
        }
        let audit_log = match flag_or_env(&args.audit_log, var::OPENGIST_MCP_AUDIT_LOG) {
            Some(raw) => Some(parse_audit_log(&raw)?),
            None => None,
        };
        let replica_id = match flag_or_env(&args.replica_id, var::OPENGIST_MCP_REPLICA_ID) {
            Some(raw) => Some(parse_replica_id(&raw)?),
            None => None,
        };
        let cache_bytes = match flag_or_env(&args.cache_bytes, var::OPENGIST_MCP_CACHE_BYTES) {
            Some(raw) => parse_number(&raw, CACHE_BYTES_SETTING, 0, MAX_CACHE_BYTES)?,
            None => DEFAULT_CACHE_BYTES,
        };

        let resources = parse_resources(env(var::OPENGIST_MCP_RESOURCES))?;

        Ok(Loaded {
            config: Config {
                opengist_url,
                token,
                read_only,
                tools,
                insecure_tls,
                elicitation,
                seal_key,
                seal_key_configured,
                http_addr,
                http_token,
                max_result_bytes,
                allowed_hosts,
                allowed_origins,
                dialog_timeout,
                request_timeout,
                http_limits,
                redis_url,
                audit_log,
                replica_id,
                cache_bytes,
                resources,
            },
            warnings,
        })
    }

    /// Reads the real process environment, then REMOVES `OPENGIST_TOKEN` from it (so child
    /// processes and later readers never see it), then parses as
    /// [`Config::from_env_and_args`] does.
    ///
    /// # Safety
    ///
    /// Removing an environment variable is only sound while no other thread may read or write
    /// the environment. Call this first thing in `main`, before building the tokio runtime or
    /// starting any other thread (`#[tokio::main]` starts its worker threads before the body
    /// runs, so build the runtime by hand after this call).
    pub unsafe fn from_process(args: &CliArgs) -> Result<Loaded, ConfigError> {
        let mut values: Vec<(&'static str, String)> = Vec::new();
        let mut not_unicode = None;
        for name in var::ALL {
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
        Self::from_env_and_args(args, &lookup)
    }
}

/// `OPENGIST_MCP_RESOURCES`: unset means on; otherwise exactly `true` or `false`.
fn parse_resources(value: Option<String>) -> Result<bool, ConfigError> {
    match value.as_deref() {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(ConfigError::Resources),
    }
}

/// `true`, `1`, `yes` (any case) or `false`, `0`, `no`, empty, unset.
fn parse_generous_bool(value: Option<String>) -> Result<bool, ConfigError> {
    let Some(value) = value else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" | "" => Ok(false),
        _ => Err(ConfigError::ReadOnly),
    }
}

/// Trims the token; refuses one a header cannot carry; warns (without the value) about an
/// unexpected shape.
fn parse_token(raw: &str, warnings: &mut Vec<String>) -> Result<Secret, ConfigError> {
    let token = raw.trim();
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError::TokenNotHeaderSafe);
    }
    let well_shaped = token
        .strip_prefix("og_")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !well_shaped {
        warnings.push(
            "OPENGIST_TOKEN does not look like an Opengist access token (og_ followed by 64 hex \
             digits); the value is not shown. If calls fail with 401, copy the token again from \
             Opengist, Settings -> Access Tokens"
                .to_owned(),
        );
    }
    Ok(Secret::new(token))
}

/// Hex or base64, at least 32 bytes: the framework's parser, with this server's messages.
fn parse_seal_key(raw: &str) -> Result<SealKey, ConfigError> {
    serving::parse_seal_key(raw).map_err(|problem| match problem {
        SealKeyProblem::Encoding => ConfigError::SealKeyEncoding,
        SealKeyProblem::TooShort(bytes) => ConfigError::SealKeyTooShort { bytes },
    })
}

fn parse_http_token(raw: &str) -> Result<Secret, ConfigError> {
    serving::parse_http_token(raw).ok_or(ConfigError::HttpToken)
}

/// `redis://` or `rediss://` with a host. The value is never echoed.
fn parse_redis_url(raw: &str) -> Result<Secret, ConfigError> {
    serving::parse_redis_url(raw).ok_or(ConfigError::RedisUrl)
}

/// `stderr` (any case), or a path that does not end in `/`.
fn parse_audit_log(raw: &str) -> Result<AuditLog, ConfigError> {
    serving::parse_audit_log(raw).ok_or(ConfigError::AuditLog)
}

fn parse_replica_id(raw: &str) -> Result<String, ConfigError> {
    serving::parse_replica_id(raw).ok_or(ConfigError::ReplicaId)
}

/// `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT`, or a bare `PORT` (127.0.0.1).
fn parse_http_addr(raw: &str) -> Result<SocketAddr, ConfigError> {
    serving::parse_http_addr(raw).ok_or(ConfigError::HttpAddr)
}

fn parse_number(raw: &str, setting: &'static str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let value = raw
        .trim()
        .parse::<u64>()
        .map_err(|_| ConfigError::NotANumber { setting, min, max })?;
    if !(min..=max).contains(&value) {
        return Err(ConfigError::OutOfRange {
            setting,
            value,
            min,
            max,
        });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_switch_is_strict_and_on_by_default() {
        assert_eq!(parse_resources(None), Ok(true));
        assert_eq!(parse_resources(Some("true".into())), Ok(true));
        assert_eq!(parse_resources(Some("false".into())), Ok(false));
        for bad in ["1", "no", "False", "off", ""] {
            let error = parse_resources(Some(bad.into())).expect_err(bad);
            assert_eq!(error, ConfigError::Resources);
            let text = error.to_string();
            assert!(text.contains("OPENGIST_MCP_RESOURCES") && text.contains("`false`"));
        }
    }

    #[test]
    fn name_shape() {
        assert!(is_name_shaped("get_gist"));
        assert!(is_name_shaped("get_*"));
        assert!(!is_name_shaped("Get_gist"));
        assert!(!is_name_shaped("og_0123"));
        assert!(!is_name_shaped(""));
        assert!(!is_name_shaped(&"a".repeat(65)));
    }
}
