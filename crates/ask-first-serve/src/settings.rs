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

use std::net::SocketAddr;

use ask_first_core::SealKey;

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
    /// The server's own dialog switch (`<PREFIX>_ELICITATION`), read beside the bare
    /// `ELICITATION` every guarded server shares; when both are set, this one wins.
    pub elicitation: String,
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
    /// The caps on dialogs and long-lived streams (`<PREFIX>_HTTP_MAX_DIALOGS`, ...).
    pub bounds: BoundNames,
    /// The bounds on connections before identity (`<PREFIX>_HTTP_CONNECTIONS_PER_PEER`, ...).
    pub connections: ConnectionNames,
    // No anonymous HTTP; durable spent answers.
    /// Serve HTTP without authentication, loopback only (`<PREFIX>_HTTP_NO_AUTH`).
    pub http_no_auth: String,
    /// The state directory holding the spent-answer log (`<PREFIX>_STATE_DIR`).
    pub state_dir: String,
    // Who is calling over HTTP.
    /// How HTTP requests are authenticated (`<PREFIX>_HTTP_AUTH`: [`AuthMode`]).
    pub http_auth: String,
    /// The per-person token file of mode `tokens` (`<PREFIX>_HTTP_TOKENS_FILE`).
    pub http_tokens_file: String,
    // The OAuth settings' names.
    /// The OAuth resource-server settings (`<PREFIX>_OAUTH_*`).
    pub oauth: OAuthNames,
}

impl SettingNames {
    /// `<prefix>_ELICITATION`, `<prefix>_HTTP_ADDR`, `<prefix>_HTTP_TOKEN`, `<prefix>_ALLOWED_HOSTS`,
    /// `<prefix>_ALLOWED_ORIGINS`, `<prefix>_HTTP_HEADER_TIMEOUT_SECS`,
    /// `<prefix>_HTTP_BODY_TIMEOUT_SECS`, `<prefix>_HTTP_MAX_CONNECTIONS`,
    /// `<prefix>_HTTP_MAX_SESSIONS`, `<prefix>_HTTP_SESSION_IDLE_SECS`, `<prefix>_SEAL_KEY`,
    /// `<prefix>_REDIS_URL`, `<prefix>_AUDIT_LOG`, `<prefix>_REPLICA_ID`,
    /// `<prefix>_HTTP_NO_AUTH`, `<prefix>_STATE_DIR`, `<prefix>_HTTP_AUTH` and
    /// `<prefix>_HTTP_TOKENS_FILE`, and the blocks of
    /// [`BoundNames::with_prefix`] and [`ConnectionNames::with_prefix`].
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |suffix: &str| format!("{prefix}_{suffix}");
        Self {
            elicitation: name("ELICITATION"),
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
            bounds: BoundNames::with_prefix(prefix),
            connections: ConnectionNames::with_prefix(prefix),
            http_no_auth: name("HTTP_NO_AUTH"),
            state_dir: name("STATE_DIR"),
            http_auth: name("HTTP_AUTH"),
            http_tokens_file: name("HTTP_TOKENS_FILE"),
            oauth: OAuthNames::with_prefix(prefix),
        }
    }
}

impl SettingNames {
    /// Every name, to change each in place (a server adding its flags to the names it
    /// declares, or checking that it declares them all). A new setting's name is added here
    /// beside its field; `every_name_is_visited` fails until it is.
    pub fn each_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.elicitation,
            &mut self.http_addr,
            &mut self.http_token,
            &mut self.allowed_hosts,
            &mut self.allowed_origins,
            &mut self.header_timeout,
            &mut self.body_timeout,
            &mut self.max_connections,
            &mut self.max_sessions,
            &mut self.session_idle,
            &mut self.seal_key,
            &mut self.redis_url,
            &mut self.audit_log,
            &mut self.replica_id,
            &mut self.http_no_auth,
            &mut self.state_dir,
            &mut self.http_auth,
            &mut self.http_tokens_file,
        ]
        .into_iter()
        .chain(self.bounds.each_mut())
        .chain(self.oauth.each_mut())
        .chain(self.connections.each_mut())
    }
}

impl Default for SettingNames {
    /// [`SettingNames::with_prefix`]`("MCP")`. A server names its own settings instead.
    fn default() -> Self {
        Self::with_prefix("MCP")
    }
}

mod auth;
mod bounds;
mod connections;
mod error;
mod oauth;
mod values;

pub use auth::*;
pub use bounds::*;
pub use connections::*;
pub use error::*;
pub use oauth::*;
pub use values::*;

/// Everything [`ServeSettings::from_env`] read: the serving settings of one process.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// The names the settings were read under (and every message uses).
    pub names: SettingNames,
    /// `<PREFIX>_ELICITATION`, else the bare `ELICITATION` (strict: exactly `true` or `false`;
    /// both unset: `true`).
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
    pub limits: HttpLimits,
    /// `<PREFIX>_SEAL_KEY`; `None`: a random key for this process.
    pub seal_key: Option<SealKey>,
    /// `<PREFIX>_REDIS_URL`; `None`: spent answers in memory, for this process only.
    pub redis_url: Option<Secret>,
    /// `<PREFIX>_AUDIT_LOG`; `None`: no audit log.
    pub audit_log: Option<AuditLog>,
    /// `<PREFIX>_REPLICA_ID`; `None`: `hostname:pid` in the audit log, plain session ids.
    pub replica_id: Option<String>,
    /// `<PREFIX>_HTTP_NO_AUTH` (strict: `true` or `false`; unset: `false`), or
    /// `<PREFIX>_HTTP_AUTH=none`: [`AuthMode::None`].
    pub http_no_auth: bool,
    /// `<PREFIX>_HTTP_AUTH` and its modes' settings.
    pub auth: AuthSettings,
    /// `<PREFIX>_STATE_DIR`; `None`: [`default_state_dir`] when a store needs one.
    pub state_dir: Option<std::path::PathBuf>,
}

impl ServeSettings {
    /// Reads `ELICITATION` and the `<prefix>_*` settings (`<prefix>_ELICITATION` winning over
    /// `ELICITATION`) of [`SettingNames::with_prefix`]
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
        env: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        Self::from_lookup_with_modes(names, &[], env)
    }

    /// As [`ServeSettings::from_lookup`], also accepting the server's own authentication
    /// modes in `<PREFIX>_HTTP_AUTH` (as [`AuthMode::Server`]; the server maps each to its own
    /// authenticator). A server whose flags feed the same settings passes a lookup that
    /// consults its flags first, then the environment: the names asked for are those of
    /// `names` (a name may carry the flag after a space, `OPENGIST_MCP_AUDIT_LOG
    /// (--audit-log)`, as messages show it; [`bare_name`] gives the variable).
    pub fn from_lookup_with_modes(
        names: SettingNames,
        server_modes: &[&str],
        mut env: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        // The server's own switch wins over the shared one, so one server of several can be
        // set apart without changing the others.
        let elicitation = match env(&names.elicitation) {
            Some(own) => ask_first_core::parse_elicitation(Some(&own)).map_err(|_| {
                SettingError::PrefixedElicitation {
                    setting: names.elicitation.clone(),
                }
            })?,
            None => {
                ask_first_core::parse_elicitation(env(ask_first_core::ELICITATION_VAR).as_deref())?
            }
        };
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
            let max_connections =
                number(&names.max_connections, 1, 65_536, DEFAULT_MAX_CONNECTIONS)? as usize;
            HttpLimits {
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
                max_connections,
                max_sessions: number(&names.max_sessions, 1, 1_000_000, DEFAULT_MAX_SESSIONS)?
                    as usize,
                session_idle: std::time::Duration::from_secs(number(
                    &names.session_idle,
                    1,
                    86_400,
                    DEFAULT_SESSION_IDLE_SECS,
                )?),
                bounds: HttpBounds::from_lookup(
                    &names.bounds,
                    max_connections,
                    &names.max_connections,
                    &mut get,
                )?,
                connections: ConnectionBounds::from_lookup(
                    &names.connections,
                    max_connections,
                    &names.max_connections,
                    &mut get,
                )?,
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
        // The gate and who is calling
        let auth = AuthSettings::from_lookup(&names, server_modes, &mut get)?;
        let http_no_auth = auth.mode == AuthMode::None;
        // Checked here, before anything starts (a command such as `doctor` included), as
        // binding checks it again for options built by hand.
        if let Some(addr) = http_addr
            && !is_loopback(addr.ip())
            && http_token.is_none()
            && auth.mode == AuthMode::Secret
        {
            return Err(SettingError::HttpTokenRequired {
                addr,
                setting: names.http_token.clone(),
            });
        }
        let state_dir = get(&names.state_dir).map(std::path::PathBuf::from);
        Ok(Self {
            names,
            http_no_auth,
            auth,
            state_dir,
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

    /// The async runtime this process serves on: one thread for stdio (one client over one
    /// pipe: no worker threads to start, less memory; tokio's blocking pool still takes the
    /// reads of stdin), one worker per core for HTTP (many clients at once).
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = if self.http_addr.is_some() {
            tokio::runtime::Builder::new_multi_thread()
        } else {
            tokio::runtime::Builder::new_current_thread()
        };
        builder.enable_all().build()
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

/// The default state directory of the server `name`: `$XDG_STATE_HOME/<name>`, else
/// `$HOME/.local/state/<name>`; `None` when neither variable is set (absolute).
pub fn default_state_dir(name: &str) -> Option<std::path::PathBuf> {
    let absolute = |variable: &str| {
        std::env::var_os(variable)
            .map(std::path::PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local").join("state")))
        .map(|base| base.join(name))
}

/// The variable of a setting's name as messages show it: `OPENGIST_MCP_AUDIT_LOG
/// (--audit-log)` gives `OPENGIST_MCP_AUDIT_LOG`; a bare name is itself.
pub fn bare_name(name: &str) -> &str {
    name.split(' ').next().unwrap_or(name)
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
    fn every_name_is_visited() {
        let mut names = SettingNames::with_prefix("ZZPREFIX");
        let mut visited = 0;
        for name in names.each_mut() {
            name.clear();
            visited += 1;
        }
        // Positive control: names were visited; none is left out.
        assert!(visited > 20);
        assert!(!format!("{names:?}").contains("ZZPREFIX"), "{names:?}");
    }

    #[test]
    fn the_servers_own_elicitation_switch_wins_over_the_shared_one() {
        let read = |vars: &'static [(&'static str, &'static str)]| {
            ServeSettings::from_lookup(SettingNames::with_prefix("NOTES"), |name| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            })
        };
        let elicitation = |vars| read(vars).expect("valid").elicitation;
        assert!(elicitation(&[]));
        assert!(!elicitation(&[("ELICITATION", "false")]));
        assert!(!elicitation(&[("NOTES_ELICITATION", "false")]));
        assert!(!elicitation(&[
            ("ELICITATION", "true"),
            ("NOTES_ELICITATION", "false")
        ]));
        assert!(elicitation(&[
            ("ELICITATION", "false"),
            ("NOTES_ELICITATION", "true")
        ]));
        let error = read(&[("NOTES_ELICITATION", "off")]).expect_err("strict");
        assert!(
            error
                .to_string()
                .starts_with("NOTES_ELICITATION must be exactly"),
            "{error}"
        );
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
