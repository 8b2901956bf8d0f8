//! Why a serving setting cannot be used: one message per setting, naming it as the server
//! calls it and the shape expected, never a value that may be secret.

/// A serving setting that cannot be used. The message names the setting as the server calls
/// it and what shape is expected, never a value that may be secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingError {
    /// A non-loopback HTTP address without a bearer secret, in the mode that needs one.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without a bearer \
         secret: set {setting} (e.g. to the output of `openssl rand -hex 32`), or bind \
         127.0.0.1"
    )]
    HttpTokenRequired {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The bearer secret's setting.
        setting: String,
    },
    /// The HTTP address is not an address.
    #[error(
        "{setting} is not an address; expected IP:PORT, [IPv6]:PORT, localhost:PORT or a bare \
         PORT, such as 127.0.0.1:8080"
    )]
    HttpAddr {
        /// The setting.
        setting: String,
    },
    /// The bearer secret is too short or has characters a header cannot carry.
    #[error(
        "{setting} must be at least 16 visible ASCII characters with no spaces (the value is \
         not shown); generate one with `openssl rand -hex 32`"
    )]
    HttpToken {
        /// The setting.
        setting: String,
    },
    /// An allowed-host entry is not `host` or `host:port`.
    #[error(
        "{setting}: entry #{position} is not a host; expected comma-separated `host` or \
         `host:port` entries, such as mcp.example.com or mcp.example.com:8443"
    )]
    AllowedHost {
        /// The setting.
        setting: String,
        /// 1-based position among the non-empty entries.
        position: usize,
    },
    /// An allowed-origin entry is not an origin.
    #[error(
        "{setting}: entry #{position} is not an origin; expected comma-separated \
         `https://host`, `https://host:port`, `https://host:*` (any port) or `null` entries"
    )]
    AllowedOrigin {
        /// The setting.
        setting: String,
        /// 1-based position among the non-empty entries.
        position: usize,
    },
    /// A switch is neither `true` nor `false`.
    #[error("{setting} must be exactly `true` or `false`")]
    Switch {
        /// The setting.
        setting: String,
    },
    /// A number is not a whole number in range.
    #[error("{setting} must be a whole number between {min} and {max}")]
    Number {
        /// The setting.
        setting: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// The seal key is neither hex nor base64.
    #[error(
        "{setting} is neither hex nor base64 (the value is not shown); generate one with \
         `openssl rand -hex 32`"
    )]
    SealKeyEncoding {
        /// The setting.
        setting: String,
    },
    /// The seal key is too short.
    #[error(
        "{setting} decodes to {bytes} bytes; it needs at least 32 random bytes: generate one \
         with `openssl rand -hex 32`"
    )]
    SealKeyTooShort {
        /// The setting.
        setting: String,
        /// Decoded length.
        bytes: usize,
    },
    /// The Redis URL is not a Redis URL.
    #[error(
        "{setting} is not a Redis URL (the value is not shown: it may hold a password); \
         expected redis://[user:password@]host[:port][/db], or rediss://... for TLS, such as \
         redis://127.0.0.1:6379/0"
    )]
    RedisUrl {
        /// The setting.
        setting: String,
    },
    /// The audit log setting names no file.
    #[error(
        "{setting} must be `stderr` or the path of a file to append to, such as \
         /var/log/mcp/audit.jsonl"
    )]
    AuditLog {
        /// The setting.
        setting: String,
    },
    /// The replica id is not a short name.
    #[error(
        "{setting} must be 1 to 64 letters, digits or `.`, `_`, `-`, `:`, such as web-2 or \
         host1:8081"
    )]
    ReplicaId {
        /// The setting.
        setting: String,
    },
    /// A variable holds bytes that are not UTF-8.
    #[error("{setting} is not valid UTF-8 (the value is not shown); set it to plain text")]
    NotUnicode {
        /// The setting.
        setting: String,
    },
    /// `ELICITATION` is not exactly `true` or `false`.
    #[error(transparent)]
    Elicitation(#[from] ask_first_core::InvalidElicitationSetting),
    /// The server's own `<PREFIX>_ELICITATION` is not exactly `true` or `false`.
    #[error(
        "{setting} must be exactly `true` or `false` (unset: ELICITATION decides, and `true` \
         when that is unset too); `false` sends guarded tools down the two-call token path and \
         never removes the guard"
    )]
    PrefixedElicitation {
        /// The setting's name.
        setting: String,
    },
    /// The cap on long-lived streams leaves no connection for short requests.
    #[error(
        "{setting} must be below {connections_setting} ({connections}), so that short \
         requests always find a connection; lower {setting} or raise {connections_setting}"
    )]
    StreamsNotBelowConnections {
        /// The stream cap's setting.
        setting: String,
        /// The connection cap's setting.
        connections_setting: String,
        /// The connection cap in force.
        connections: usize,
    },
    /// The reserve for authenticated connections leaves no place for a new connection.
    #[error(
        "{setting} must be below {connections_setting} ({connections}), so that a new \
         connection always finds a place; lower {setting} or raise {connections_setting}"
    )]
    ReserveNotBelowConnections {
        /// The reserve's setting.
        setting: String,
        /// The connection cap's setting.
        connections_setting: String,
        /// The connection cap in force.
        connections: usize,
    },
    // How HTTP requests are authenticated.
    /// `<PREFIX>_HTTP_AUTH` names no mode.
    #[error("{setting} must be one of {accepted}")]
    AuthMode {
        /// The mode's setting.
        setting: String,
        /// The accepted values, quoted and comma-separated.
        accepted: String,
    },
    /// A setting that another authentication mode than the one chosen uses.
    #[error(
        "{setting} does not apply with {mode_setting}={mode}: unset {setting}, or choose the \
         mode it belongs to in {mode_setting} (`secret` for the bearer secret, `tokens` for the \
         token file, `oauth` for the OAuth settings, `none` for no authentication)"
    )]
    AuthConflict {
        /// The setting that does not apply.
        setting: String,
        /// The mode's setting.
        mode_setting: String,
        /// The mode chosen.
        mode: String,
    },
    /// The no-authentication switch together with the bearer secret.
    #[error(
        "{setting} and {no_auth}=true contradict each other: unset {no_auth} to require the \
         secret, or unset {setting} to serve without authentication"
    )]
    NoAuthWithSecret {
        /// The no-authentication setting.
        no_auth: String,
        /// The bearer secret's setting.
        setting: String,
    },
    /// Mode `tokens` without its file.
    #[error(
        "{mode_setting}=tokens needs {setting}: the path of the file listing each person's \
         token hash (one `name sha256-hex` per line; add a person with the server's `tokens \
         add NAME --file PATH`)"
    )]
    TokensFileMissing {
        /// The token file's setting.
        setting: String,
        /// The mode's setting.
        mode_setting: String,
    },
    // The OAuth resource-server settings.
    /// The OAuth issuer is not an issuer URL.
    #[error(
        "{setting} must be the authorization server's issuer URL, exactly as its tokens' `iss` \
         and its metadata's `issuer` spell it: https://host[:port][/path] (plain http only on \
         a loopback host), no query, no fragment, such as https://login.example.com/realms/team"
    )]
    OAuthIssuer {
        /// The setting.
        setting: String,
    },
    /// The OAuth resource is not an absolute URL.
    #[error(
        "{setting} must be this server's resource identifier, the public URL of its MCP \
         endpoint exactly as its tokens' `aud` carries it (no fragment), such as \
         https://mcp.example.com/mcp"
    )]
    OAuthResource {
        /// The setting.
        setting: String,
    },
    /// The OAuth scopes are not scope names.
    #[error(
        "{setting} must list scope names separated by spaces or commas (visible ASCII, no `\"` or \
         `\\`), such as `mcp:tools` or `notes.read notes.write`"
    )]
    OAuthScopes {
        /// The setting.
        setting: String,
    },
}
