//! What can be wrong with the configuration: [`ConfigError`] for a value that cannot be used,
//! [`FilterError`] for tool lists that cannot be applied. Every message says which variable (and
//! flag) is wrong and what is expected, and never contains a value that might be secret.

use std::fmt;

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
    /// One of the framework's serving settings cannot be used (`ELICITATION`, the seal key, the
    /// HTTP address, secret, authentication, hosts, origins and limits, Redis, the audit log,
    /// the replica id): its message names the variable and its flag.
    #[error(transparent)]
    Serving(#[from] ask_first_serve::SettingError),
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
    /// `OPENGIST_MCP_HTTP_AUTH=opengist` without `OPENGIST_URL`.
    #[error(
        "OPENGIST_MCP_HTTP_AUTH=opengist needs OPENGIST_URL: set it to your Opengist instance \
         (for example https://gist.example.com); each person then connects with their own \
         Opengist access token as the bearer, and OPENGIST_TOKEN is not needed"
    )]
    TeamNeedsUrl,
    /// A number is not a whole number.
    #[error("{setting} must be a whole number between {min} and {max}")]
    NotANumber {
        /// Variable and flag.
        setting: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A number is out of range.
    #[error("{setting} is {value}; it must be between {min} and {max}")]
    OutOfRange {
        /// Variable and flag.
        setting: String,
        /// The value given.
        value: u64,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// An `OPENGIST_MCP_VERIFIED_TOOLS` entry names no guarded tool.
    #[error(
        "OPENGIST_MCP_VERIFIED_TOOLS: {entry} is not a guarded tool of opengist-mcp{hint}; the \
         guarded tools are: {guarded} (exact names, comma-separated). Nothing was started: an \
         entry that names no tool would leave the tool it was meant for to a dialog a client \
         can answer alone"
    )]
    VerifiedTool {
        /// The entry as shown: itself if name-shaped, else `<entry #N>`.
        entry: String,
        /// What it was likely meant to be, or empty.
        hint: String,
        /// The guarded tools, comma-separated.
        guarded: String,
    },
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
