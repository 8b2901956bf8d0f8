//! What can be wrong with the configuration: [`ConfigError`] for a value that cannot be used,
//! [`FilterError`] for tool lists that cannot be applied. Every message says which variable (and
//! flag) is wrong and what is expected, and never contains a value that might be secret.

use std::fmt;
use std::net::SocketAddr;

use ask_first_core::InvalidElicitationSetting;

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

/// A configuration value that cannot be used. Every message says what is expected and never
/// contains a value that might be secret. Exit code: 1 ([`ConfigError::exit_code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// One of the framework's HTTP caps on dialogs and streams cannot be used.
    #[error(transparent)]
    HttpBounds(#[from] ask_first_serve::SettingError),
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
    /// `OPENGIST_MCP_HTTP_NO_AUTH` is not exactly `true` or `false`.
    #[error(
        "OPENGIST_MCP_HTTP_NO_AUTH must be exactly `true` (serve HTTP on loopback without \
         authentication) or `false`; unset means false"
    )]
    HttpNoAuth,
    /// `OPENGIST_MCP_HTTP_AUTH=opengist` without `OPENGIST_URL`.
    #[error(
        "OPENGIST_MCP_HTTP_AUTH=opengist needs OPENGIST_URL: set it to your Opengist instance \
         (for example https://gist.example.com); each person then connects with their own \
         Opengist access token as the bearer, and OPENGIST_TOKEN is not needed"
    )]
    TeamNeedsUrl,
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
