//! Serving settings: their values' types, their parsers, and the names a server gives them.
//!
//! The framework never invents a variable name: every message that names a setting takes it
//! from [`SettingNames`], which a server builds from its own prefix
//! ([`SettingNames::with_prefix`]: `NOTES` gives `NOTES_HTTP_TOKEN`, `NOTES_SEAL_KEY`, ...) or
//! spells out field by field (`opengist-mcp` adds its flags: `OPENGIST_MCP_AUDIT_LOG
//! (--audit-log)`). [`ServeSettings::from_env`] reads all of them at once.
//!
//! Secrets (the bearer secret, the seal key, a Redis URL with its password) are never echoed:
//! messages say which setting is wrong and what shape is expected, never its value.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use base64::Engine as _;
use mcp_guard_core::SealKey;

/// Default of the header read timeout, in seconds.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Default of the body read timeout, in seconds.
pub const DEFAULT_BODY_TIMEOUT_SECS: u64 = 30;
/// Default of the connection cap.
pub const DEFAULT_MAX_CONNECTIONS: u64 = 256;
/// Default of the session cap.
pub const DEFAULT_MAX_SESSIONS: u64 = 512;
/// Default of the session idle timeout, in seconds (rmcp's own default).
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 300;
/// Shortest accepted HTTP bearer secret, in characters.
pub const MIN_HTTP_TOKEN_LEN: usize = 16;
/// Shortest accepted seal key, in bytes after decoding.
pub const MIN_SEAL_KEY_BYTES: usize = 32;
/// Longest accepted replica id.
pub const MAX_REPLICA_ID_LEN: usize = 64;

/// The names of the serving settings, as every message shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingNames {
    /// The HTTP bind address (`<PREFIX>_HTTP_ADDR`).
    pub http_addr: String,
    /// The HTTP bearer secret (`<PREFIX>_HTTP_TOKEN`).
    pub http_token: String,
    /// Extra accepted `Host` values (`<PREFIX>_ALLOWED_HOSTS`).
    pub allowed_hosts: String,
    /// Extra accepted `Origin` values (`<PREFIX>_ALLOWED_ORIGINS`).
    pub allowed_origins: String,
    /// The header read timeout (`<PREFIX>_HTTP_HEADER_TIMEOUT_SECS`).
    pub header_timeout: String,
    /// The body read timeout (`<PREFIX>_HTTP_BODY_TIMEOUT_SECS`).
    pub body_timeout: String,
    /// The connection cap (`<PREFIX>_HTTP_MAX_CONNECTIONS`).
    pub max_connections: String,
    /// The session cap (`<PREFIX>_HTTP_MAX_SESSIONS`).
    pub max_sessions: String,
    /// The session idle timeout (`<PREFIX>_HTTP_SESSION_IDLE_SECS`).
    pub session_idle: String,
    /// The seal key replicas share (`<PREFIX>_SEAL_KEY`).
    pub seal_key: String,
    /// The Redis spent-answer store (`<PREFIX>_REDIS_URL`).
    pub redis_url: String,
    /// The audit log (`<PREFIX>_AUDIT_LOG`).
    pub audit_log: String,
    /// The replica id (`<PREFIX>_REPLICA_ID`).
    pub replica_id: String,
}

impl SettingNames {
    /// `<prefix>_HTTP_ADDR`, `<prefix>_HTTP_TOKEN`, `<prefix>_ALLOWED_HOSTS`,
    /// `<prefix>_ALLOWED_ORIGINS`, `<prefix>_HTTP_HEADER_TIMEOUT_SECS`,
    /// `<prefix>_HTTP_BODY_TIMEOUT_SECS`, `<prefix>_HTTP_MAX_CONNECTIONS`,
    /// `<prefix>_HTTP_MAX_SESSIONS`, `<prefix>_HTTP_SESSION_IDLE_SECS`, `<prefix>_SEAL_KEY`,
    /// `<prefix>_REDIS_URL`, `<prefix>_AUDIT_LOG` and `<prefix>_REPLICA_ID`.
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |suffix: &str| format!("{prefix}_{suffix}");
        Self {
            http_addr: name("HTTP_ADDR"),
            http_token: name("HTTP_TOKEN"),
            allowed_hosts: name("ALLOWED_HOSTS"),
            allowed_origins: name("ALLOWED_ORIGINS"),
            header_timeout: name("HTTP_HEADER_TIMEOUT_SECS"),
            body_timeout: name("HTTP_BODY_TIMEOUT_SECS"),
            max_connections: name("HTTP_MAX_CONNECTIONS"),
            max_sessions: name("HTTP_MAX_SESSIONS"),
            session_idle: name("HTTP_SESSION_IDLE_SECS"),
            seal_key: name("SEAL_KEY"),
            redis_url: name("REDIS_URL"),
            audit_log: name("AUDIT_LOG"),
            replica_id: name("REPLICA_ID"),
        }
    }
}

impl Default for SettingNames {
    /// [`SettingNames::with_prefix`]`("MCP")`. A server names its own settings instead.
    fn default() -> Self {
        Self::with_prefix("MCP")
    }
}

/// A secret string. `Debug` and `Display` print `<redacted>`; only [`Secret::expose`] gives the
/// value, so every place that uses it is easy to find.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself. Never log or format the result.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// An extra accepted `Host` header value: a host, optionally with a port (none: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    /// Lower-case host name or IP address, IPv6 without brackets.
    pub host: String,
    /// The port, or `None` for any port.
    pub port: Option<u16>,
}

impl AllowedHost {
    /// Parses `host` or `host:port` (IPv6 in brackets). `None` when it is not an authority.
    /// The gate parses `Host` headers with it too.
    pub fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        if entry.is_empty() || entry.contains(['@', '/', '?', '#']) {
            return None;
        }
        let authority = http::uri::Authority::try_from(entry).ok()?;
        let host = authority.host();
        if host.is_empty() {
            return None;
        }
        // Whatever follows the host must be nothing, or `:` and a port that fits in 16 bits.
        let port = match authority.as_str().get(host.len()..) {
            Some("") => None,
            Some(rest) => Some(rest.strip_prefix(':')?.parse::<u16>().ok()?),
            None => return None,
        };
        Some(Self {
            host: normalise_host(host),
            port,
        })
    }
}

impl fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(port) => write!(f, "{host}:{port}"),
            None => f.write_str(&host),
        }
    }
}

/// Lower-cases a host and removes IPv6 brackets.
pub fn normalise_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// The port part of an allowed origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginPort {
    /// `:*`: any port.
    Any,
    /// One port (an entry without a port means the scheme's default, 80 or 443).
    Exact(u16),
}

/// An accepted `Origin`: a configured entry, or a built-in loopback one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigin {
    /// `null`, which browsers send from sandboxed or file pages.
    Null,
    /// `scheme://host[:port]`.
    Tuple {
        /// `http` or `https`.
        scheme: String,
        /// Lower-case host, IPv6 without brackets.
        host: String,
        /// The port.
        port: OriginPort,
    },
}

impl AllowedOrigin {
    /// Parses `null` or `http(s)://host[:port|:*]` (nothing after the authority but an optional
    /// `/`). `None` when it is not of that shape.
    pub fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        if entry.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let (scheme, rest) = entry.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (authority, any_port) = match rest.strip_suffix(":*") {
            Some(authority) => (authority, true),
            None => (rest, false),
        };
        let parsed = AllowedHost::parse(authority)?;
        let port = match (any_port, parsed.port) {
            (true, None) => OriginPort::Any,
            (true, Some(_)) => return None,
            (false, Some(port)) => OriginPort::Exact(port),
            (false, None) => OriginPort::Exact(default_port),
        };
        Some(Self::Tuple {
            scheme,
            host: parsed.host,
            port,
        })
    }

    /// Whether the `Origin` header value `origin` is this entry (scheme, host and port;
    /// `:*` any port). The one matcher behind both the gate and CORS.
    pub fn matches(&self, origin: &Origin) -> bool {
        match (self, &origin.0) {
            (Self::Null, Self::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Self::Tuple {
                    scheme: origin_scheme,
                    host: origin_host,
                    port: OriginPort::Exact(origin_port),
                },
            ) => {
                scheme == origin_scheme
                    && host == origin_host
                    && match port {
                        OriginPort::Any => true,
                        OriginPort::Exact(port) => port == origin_port,
                    }
            }
            _ => false,
        }
    }
}

impl fmt::Display for AllowedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Tuple { scheme, host, port } => {
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                match port {
                    OriginPort::Any => write!(f, "{scheme}://{host}:*"),
                    OriginPort::Exact(port) => write!(f, "{scheme}://{host}:{port}"),
                }
            }
        }
    }
}

/// An `Origin` header value, parsed by the one parser the gate and CORS share: `null`, or
/// `http(s)://host[:port]` with the port made explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(AllowedOrigin);

impl Origin {
    /// Parses a header value. `None` when it is no origin (a `:*` is a pattern, not an origin).
    pub fn parse(value: &str) -> Option<Self> {
        match AllowedOrigin::parse(value)? {
            AllowedOrigin::Tuple {
                port: OriginPort::Any,
                ..
            } => None,
            origin => Some(Self(origin)),
        }
    }

    /// Whether one of `allowed` matches this origin.
    pub fn is_in(&self, allowed: &[AllowedOrigin]) -> bool {
        allowed.iter().any(|entry| entry.matches(self))
    }
}

/// Where the audit log goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditLog {
    /// `stderr`: one JSON line each, between the log lines.
    Stderr,
    /// A file, appended to (created if missing).
    File(PathBuf),
}

/// Whether an address only this machine can reach (IPv4-mapped loopback included).
pub fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Why a seal key cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealKeyProblem {
    /// Neither hex nor base64.
    Encoding,
    /// Shorter than [`MIN_SEAL_KEY_BYTES`] once decoded; the decoded length.
    TooShort(usize),
}

/// A seal key in hex first (a hex string is also valid base64), then base64 in its four
/// spellings; at least [`MIN_SEAL_KEY_BYTES`] bytes once decoded.
pub fn parse_seal_key(raw: &str) -> Result<SealKey, SealKeyProblem> {
    let raw = raw.trim();
    let bytes = decode_hex(raw)
        .or_else(|| {
            use base64::engine::general_purpose::{
                STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD,
            };
            [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(raw).ok())
        })
        .ok_or(SealKeyProblem::Encoding)?;
    if bytes.len() < MIN_SEAL_KEY_BYTES {
        return Err(SealKeyProblem::TooShort(bytes.len()));
    }
    SealKey::from_bytes(&bytes).map_err(|too_short| SealKeyProblem::TooShort(too_short.0))
}

fn decode_hex(raw: &str) -> Option<Vec<u8>> {
    if raw.is_empty() || !raw.len().is_multiple_of(2) {
        return None;
    }
    raw.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            u8::try_from(high * 16 + low).ok()
        })
        .collect()
}

/// A bearer secret: at least [`MIN_HTTP_TOKEN_LEN`] visible ASCII characters, no spaces.
pub fn parse_http_token(raw: &str) -> Option<Secret> {
    let token = raw.trim();
    (token.len() >= MIN_HTTP_TOKEN_LEN && token.bytes().all(|b| b.is_ascii_graphic()))
        .then(|| Secret::new(token))
}

/// `redis://` or `rediss://` with a host, kept secret (it may hold a password).
pub fn parse_redis_url(raw: &str) -> Option<Secret> {
    let raw = raw.trim();
    let url = url::Url::parse(raw).ok()?;
    (matches!(url.scheme(), "redis" | "rediss") && url.host_str().is_some_and(|h| !h.is_empty()))
        .then(|| Secret::new(raw))
}

/// `stderr` (any case), or a path that does not end in `/`.
pub fn parse_audit_log(raw: &str) -> Option<AuditLog> {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case("stderr") {
        return Some(AuditLog::Stderr);
    }
    if raw.is_empty() || raw.ends_with('/') || raw == "." || raw == ".." {
        return None;
    }
    Some(AuditLog::File(raw.into()))
}

/// 1 to [`MAX_REPLICA_ID_LEN`] letters, digits or `.`, `_`, `-`, `:`.
pub fn parse_replica_id(raw: &str) -> Option<String> {
    let id = raw.trim();
    let shaped = (1..=MAX_REPLICA_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'));
    shaped.then(|| id.to_owned())
}

/// `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT`, or a bare `PORT` (127.0.0.1).
pub fn parse_http_addr(raw: &str) -> Option<SocketAddr> {
    let raw = raw.trim();
    if let Ok(addr) = raw.parse::<SocketAddr>() {
        return Some(addr);
    }
    let port = raw.strip_prefix("localhost:").unwrap_or(raw);
    port.parse::<u16>()
        .ok()
        .map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
}

/// `hostname:pid`, the replica id when none is configured.
pub fn default_replica_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}:{}", std::process::id())
}

/// A serving setting that cannot be used. The message names the setting as the server calls
/// it and what shape is expected, never a value that may be secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
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
    Elicitation(#[from] mcp_guard_core::InvalidElicitationSetting),
}

/// Everything [`ServeSettings::from_env`] read: the serving settings of one process.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// The names the settings were read under (and every message uses).
    pub names: SettingNames,
    /// `ELICITATION` (strict: exactly `true` or `false`; unset: `true`).
    pub elicitation: bool,
    /// `<PREFIX>_HTTP_ADDR`; `None`: serve stdio.
    pub http_addr: Option<SocketAddr>,
    /// `<PREFIX>_HTTP_TOKEN`.
    pub http_token: Option<Secret>,
    /// `<PREFIX>_ALLOWED_HOSTS`.
    pub allowed_hosts: Vec<AllowedHost>,
    /// `<PREFIX>_ALLOWED_ORIGINS`.
    pub allowed_origins: Vec<AllowedOrigin>,
    /// The `<PREFIX>_HTTP_*` timeouts and caps.
    #[cfg(feature = "http")]
    pub limits: crate::http::HttpLimits,
    /// `<PREFIX>_SEAL_KEY`; `None`: a random key for this process.
    pub seal_key: Option<SealKey>,
    /// `<PREFIX>_REDIS_URL`; `None`: spent answers in memory, for this process only.
    pub redis_url: Option<Secret>,
    /// `<PREFIX>_AUDIT_LOG`; `None`: no audit log.
    pub audit_log: Option<AuditLog>,
    /// `<PREFIX>_REPLICA_ID`; `None`: `hostname:pid` in the audit log, plain session ids.
    pub replica_id: Option<String>,
}

impl ServeSettings {
    /// Reads `ELICITATION` and the `<prefix>_*` settings of [`SettingNames::with_prefix`]
    /// from the process environment. An unset or empty variable means its default.
    pub fn from_env(prefix: &str) -> Result<Self, SettingError> {
        let names = SettingNames::with_prefix(prefix);
        let mut not_unicode = None;
        let lookup = |name: &str| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                not_unicode.get_or_insert(name.to_owned());
                None
            }
        };
        let loaded = Self::from_lookup(names, lookup);
        if let Some(setting) = not_unicode {
            return Err(SettingError::NotUnicode { setting });
        }
        loaded
    }

    /// As [`ServeSettings::from_env`], through a variable lookup (`env(name)`: the value,
    /// `None` when unset) and with names of the caller's choosing. Never reads the process.
    pub fn from_lookup(
        names: SettingNames,
        mut env: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let elicitation =
            mcp_guard_core::parse_elicitation(env(mcp_guard_core::ELICITATION_VAR).as_deref())?;
        let mut get = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let http_addr = match get(&names.http_addr) {
            Some(raw) => Some(parse_http_addr(&raw).ok_or_else(|| SettingError::HttpAddr {
                setting: names.http_addr.clone(),
            })?),
            None => None,
        };
        let http_token = match get(&names.http_token) {
            Some(raw) => Some(
                parse_http_token(&raw).ok_or_else(|| SettingError::HttpToken {
                    setting: names.http_token.clone(),
                })?,
            ),
            None => None,
        };
        let allowed_hosts = split_list(get(&names.allowed_hosts))
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                AllowedHost::parse(entry).ok_or_else(|| SettingError::AllowedHost {
                    setting: names.allowed_hosts.clone(),
                    position: index + 1,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let allowed_origins = split_list(get(&names.allowed_origins))
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                AllowedOrigin::parse(entry).ok_or_else(|| SettingError::AllowedOrigin {
                    setting: names.allowed_origins.clone(),
                    position: index + 1,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        #[cfg(feature = "http")]
        let limits = {
            let mut number = |setting: &String, min: u64, max: u64, default: u64| match get(setting)
            {
                Some(raw) => raw
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|value| (min..=max).contains(value))
                    .ok_or_else(|| SettingError::Number {
                        setting: setting.clone(),
                        min,
                        max,
                    }),
                None => Ok(default),
            };
            crate::http::HttpLimits {
                header_timeout: std::time::Duration::from_secs(number(
                    &names.header_timeout,
                    1,
                    3600,
                    DEFAULT_HEADER_TIMEOUT_SECS,
                )?),
                body_timeout: std::time::Duration::from_secs(number(
                    &names.body_timeout,
                    1,
                    3600,
                    DEFAULT_BODY_TIMEOUT_SECS,
                )?),
                max_connections: number(&names.max_connections, 1, 65_536, DEFAULT_MAX_CONNECTIONS)?
                    as usize,
                max_sessions: number(&names.max_sessions, 1, 1_000_000, DEFAULT_MAX_SESSIONS)?
                    as usize,
                session_idle: std::time::Duration::from_secs(number(
                    &names.session_idle,
                    1,
                    86_400,
                    DEFAULT_SESSION_IDLE_SECS,
                )?),
            }
        };
        let seal_key = match get(&names.seal_key) {
            Some(raw) => Some(parse_seal_key(&raw).map_err(|problem| match problem {
                SealKeyProblem::Encoding => SettingError::SealKeyEncoding {
                    setting: names.seal_key.clone(),
                },
                SealKeyProblem::TooShort(bytes) => SettingError::SealKeyTooShort {
                    setting: names.seal_key.clone(),
                    bytes,
                },
            })?),
            None => None,
        };
        let redis_url = match get(&names.redis_url) {
            Some(raw) => Some(parse_redis_url(&raw).ok_or_else(|| SettingError::RedisUrl {
                setting: names.redis_url.clone(),
            })?),
            None => None,
        };
        let audit_log = match get(&names.audit_log) {
            Some(raw) => Some(parse_audit_log(&raw).ok_or_else(|| SettingError::AuditLog {
                setting: names.audit_log.clone(),
            })?),
            None => None,
        };
        let replica_id = match get(&names.replica_id) {
            Some(raw) => Some(
                parse_replica_id(&raw).ok_or_else(|| SettingError::ReplicaId {
                    setting: names.replica_id.clone(),
                })?,
            ),
            None => None,
        };
        Ok(Self {
            names,
            elicitation,
            http_addr,
            http_token,
            allowed_hosts,
            allowed_origins,
            #[cfg(feature = "http")]
            limits,
            seal_key,
            redis_url,
            audit_log,
            replica_id,
        })
    }

    /// Warnings worth logging at start-up (none holds a secret): a shared spent-answer store
    /// without a shared seal key.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.redis_url.is_some() && self.seal_key.is_none() {
            warnings.push(format!(
                "{} is set but {} is not: this process seals with a random key, so other \
                 replicas cannot open its questions; give every replica the same {}",
                self.names.redis_url, self.names.seal_key, self.names.seal_key
            ));
        }
        warnings
    }
}

/// A comma-separated setting (`<PREFIX>_ALLOWED_HOSTS`, a tool list) as its entries: each
/// trimmed, empty ones dropped; an unset setting is no entries.
pub fn split_list(list: Option<String>) -> Vec<String> {
    list.map(|list| {
        list.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(str::to_owned)
            .collect()
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decoding() {
        assert_eq!(decode_hex("00ff10"), Some(vec![0, 255, 16]));
        assert_eq!(decode_hex("0"), None);
        assert_eq!(decode_hex("zz"), None);
        assert_eq!(decode_hex(""), None);
        // Multi-byte UTF-8 must not panic.
        assert_eq!(decode_hex("éé"), None);
    }

    fn origins(list: &[&str]) -> Vec<AllowedOrigin> {
        list.iter()
            .map(|entry| AllowedOrigin::parse(entry).expect("an origin"))
            .collect()
    }

    fn listed(allowed: &[AllowedOrigin], origin: &str) -> bool {
        Origin::parse(origin).is_some_and(|origin| origin.is_in(allowed))
    }

    #[test]
    fn listed_origins_match_by_scheme_host_and_port() {
        let allowed = origins(&["http://127.0.0.1:5173", "https://app.example.com:*"]);
        assert!(listed(&allowed, "http://127.0.0.1:5173"));
        assert!(!listed(&allowed, "http://127.0.0.1:5174"));
        assert!(!listed(&allowed, "https://127.0.0.1:5173"));
        assert!(listed(&allowed, "https://APP.example.com:8443"));
        assert!(listed(&allowed, "https://app.example.com"));
        assert!(!listed(&allowed, "https://evil.example.com"));
        assert!(!listed(&allowed, "null"));
        assert!(!listed(&allowed, "not an origin"));
        // A pattern is not an origin.
        assert!(!listed(&allowed, "https://app.example.com:*"));
    }

    #[test]
    fn settings_are_named_with_the_callers_prefix() {
        let env = |name: &str| (name == "NOTES_HTTP_TOKEN").then(|| "short".to_owned());
        let error = ServeSettings::from_lookup(SettingNames::with_prefix("NOTES"), env)
            .expect_err("too short");
        assert!(
            error.to_string().starts_with("NOTES_HTTP_TOKEN "),
            "{error}"
        );
        let env = |name: &str| (name == "NOTES_SEAL_KEY").then(|| "00".repeat(8));
        let error = ServeSettings::from_lookup(SettingNames::with_prefix("NOTES"), env)
            .expect_err("too short");
        assert!(
            error
                .to_string()
                .contains("NOTES_SEAL_KEY decodes to 8 bytes"),
            "{error}"
        );
    }
}
