//! The values serving settings take, and their parsers: secrets that never print, allowed
//! hosts and origins, the audit log's destination, the seal key, the bearer secret, the Redis
//! URL, the replica id and the HTTP address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use ask_first_core::SealKey;
use base64::Engine as _;

use super::*;

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

pub(crate) fn decode_hex(raw: &str) -> Option<Vec<u8>> {
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

/// Reads an address to serve HTTP at, as `<PREFIX>_HTTP_ADDR` is read: `IP:PORT`
/// (`127.0.0.1:8080`), `[IPv6]:PORT` (`[::1]:8080`), `localhost:PORT` (127.0.0.1), or a bare
/// `PORT` (127.0.0.1); surrounding spaces are ignored. `None` for anything else. For a
/// command-line flag that accepts the same, use [`http_addr_arg`].
///
/// ```
/// use ask_first_serve::settings::parse_http_addr;
/// assert_eq!(parse_http_addr("localhost:8080"), "127.0.0.1:8080".parse().ok());
/// assert_eq!(parse_http_addr("8080"), "127.0.0.1:8080".parse().ok());
/// assert_eq!(parse_http_addr("[::1]:8080"), "[::1]:8080".parse().ok());
/// assert_eq!(parse_http_addr("example.com:80"), None);
/// ```
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

/// Why a `--http` value was refused: it is not an address [`parse_http_addr`] reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not an address to serve HTTP at: use IP:PORT (127.0.0.1:8080), [IPv6]:PORT ([::1]:8080), localhost:PORT, or a bare PORT (127.0.0.1)"
)]
pub struct InvalidHttpAddr(pub String);

/// [`parse_http_addr`] as a clap value parser, so a `--http` flag accepts exactly what
/// `<PREFIX>_HTTP_ADDR` does and refuses the rest with a message naming the accepted forms:
///
/// ```
/// use std::net::SocketAddr;
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct Cli {
///     /// Serve streamable HTTP at ADDR.
///     #[arg(long, value_name = "ADDR", value_parser = ask_first_serve::settings::http_addr_arg)]
///     http: Option<SocketAddr>,
/// }
///
/// let cli = Cli::try_parse_from(["server", "--http", "localhost:8080"]).unwrap();
/// assert_eq!(cli.http, "127.0.0.1:8080".parse().ok());
/// let cli = Cli::try_parse_from(["server", "--http", "9000"]).unwrap();
/// assert_eq!(cli.http, "127.0.0.1:9000".parse().ok());
/// let refused = Cli::try_parse_from(["server", "--http", "nowhere"]).err().unwrap();
/// assert!(refused.to_string().contains("bare PORT"));
/// ```
pub fn http_addr_arg(raw: &str) -> Result<SocketAddr, InvalidHttpAddr> {
    parse_http_addr(raw).ok_or_else(|| InvalidHttpAddr(raw.to_owned()))
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
