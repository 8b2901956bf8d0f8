//! How the server is served and run as replicas: the HTTP address, bearer secret, accepted
//! hosts and origins and limits, the shared Redis, the audit log and the replica's id (the
//! `OPENGIST_MCP_HTTP_*`, `_ALLOWED_*`, `_REDIS_URL`, `_AUDIT_LOG` and `_REPLICA_ID` variables
//! and their flags). The types and parsers are the guard framework's (`ask_first_serve`);
//! this module names them after this server's settings.

use std::net::SocketAddr;
use std::time::Duration;

use ask_first_serve::http::limits::{self, HttpLimits};
use ask_first_serve::settings::{
    self as serving, AllowedHost, AllowedOrigin, AuditLog, AuthMode, AuthSettings, Secret,
    is_loopback, split_list,
};

use super::error::ConfigError;
use super::var::{self, Source};

/// The settings' variables and flags, as messages name them.
const HEADER_TIMEOUT_SETTING: &str =
    "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS (--http-header-timeout-secs)";
const BODY_TIMEOUT_SETTING: &str = "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS (--http-body-timeout-secs)";
const MAX_CONNECTIONS_SETTING: &str = "OPENGIST_MCP_HTTP_MAX_CONNECTIONS (--http-max-connections)";
const MAX_SESSIONS_SETTING: &str = "OPENGIST_MCP_HTTP_MAX_SESSIONS (--http-max-sessions)";
const SESSION_IDLE_SETTING: &str = "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS (--http-session-idle-secs)";

/// The value of `OPENGIST_MCP_HTTP_AUTH` that serves a team: each person with their own
/// Opengist access token as the bearer (see [`crate::team`]).
pub const OPENGIST_AUTH_MODE: &str = "opengist";

/// The serving part of [`super::Config`].
pub(super) struct Serving {
    pub(super) http_addr: Option<SocketAddr>,
    pub(super) http_token: Option<Secret>,
    pub(super) http_no_auth: bool,
    pub(super) http_auth: AuthSettings,
    pub(super) state_dir: Option<std::path::PathBuf>,
    pub(super) allowed_hosts: Vec<AllowedHost>,
    pub(super) allowed_origins: Vec<AllowedOrigin>,
    pub(super) http_limits: HttpLimits,
    pub(super) redis_url: Option<Secret>,
    pub(super) audit_log: Option<AuditLog>,
    pub(super) replica_id: Option<String>,
}

impl Serving {
    /// Reads the serving settings, adding the warnings they call for. `seal_key_configured`:
    /// whether the seal key came from configuration (replicas sharing Redis need one).
    pub(super) fn parse(
        source: &Source<'_>,
        seal_key_configured: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Self, ConfigError> {
        let args = source.args;
        if args.http_token.is_some() {
            warnings.push(
                "--http-token is visible to every user of this machine (ps); prefer \
                 OPENGIST_MCP_HTTP_TOKEN"
                    .to_owned(),
            );
        }
        let http_token = match source.flag_or_env(&args.http_token, var::OPENGIST_MCP_HTTP_TOKEN) {
            Some(raw) => Some(serving::parse_http_token(&raw).ok_or(ConfigError::HttpToken)?),
            None => None,
        };
        let http_no_auth = match source.exact(var::OPENGIST_MCP_HTTP_NO_AUTH).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(ConfigError::HttpNoAuth),
        };
        let state_dir = source
            .get(var::OPENGIST_MCP_STATE_DIR)
            .map(std::path::PathBuf::from);
        let http_addr = match source.flag_or_env(&args.http, var::OPENGIST_MCP_HTTP_ADDR) {
            // `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT`, or a bare `PORT` (127.0.0.1).
            Some(raw) => Some(serving::parse_http_addr(&raw).ok_or(ConfigError::HttpAddr)?),
            None => None,
        };
        // The framework's parser: `secret` (the default), `tokens`, `oauth`, `none` (of which
        // OPENGIST_MCP_HTTP_NO_AUTH=true is the alias), and this server's own `opengist`. The
        // shared secret is read as this server reads it (its flag too), so a secret given with
        // another mode is refused by name.
        let names = crate::http::setting_names();
        let http_auth = AuthSettings::from_lookup(&names, &[OPENGIST_AUTH_MODE], |name| {
            if name == var::OPENGIST_MCP_HTTP_TOKEN {
                source.flag_or_env(&args.http_token, name)
            } else {
                source.get(name)
            }
        })?;
        if let Some(addr) = http_addr
            && !is_loopback(addr.ip())
            && http_token.is_none()
            && http_auth.mode == AuthMode::Secret
        {
            return Err(ConfigError::HttpTokenRequired { addr });
        }

        let allowed_hosts =
            split_list(source.flag_or_env(&args.allowed_hosts, var::OPENGIST_MCP_ALLOWED_HOSTS))
                .into_iter()
                .enumerate()
                .map(|(index, entry)| {
                    AllowedHost::parse(&entry).ok_or(ConfigError::AllowedHost {
                        position: index + 1,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
        let allowed_origins = split_list(
            source.flag_or_env(&args.allowed_origins, var::OPENGIST_MCP_ALLOWED_ORIGINS),
        )
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

        let http_limits = HttpLimits {
            header_timeout: Duration::from_secs(source.number(
                &args.http_header_timeout_secs,
                var::OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS,
                HEADER_TIMEOUT_SETTING,
                1,
                3600,
                limits::DEFAULT_HEADER_TIMEOUT_SECS,
            )?),
            body_timeout: Duration::from_secs(source.number(
                &args.http_body_timeout_secs,
                var::OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS,
                BODY_TIMEOUT_SETTING,
                1,
                3600,
                limits::DEFAULT_BODY_TIMEOUT_SECS,
            )?),
            max_connections: source.number(
                &args.http_max_connections,
                var::OPENGIST_MCP_HTTP_MAX_CONNECTIONS,
                MAX_CONNECTIONS_SETTING,
                1,
                65_536,
                limits::DEFAULT_MAX_CONNECTIONS,
            )? as usize,
            max_sessions: source.number(
                &args.http_max_sessions,
                var::OPENGIST_MCP_HTTP_MAX_SESSIONS,
                MAX_SESSIONS_SETTING,
                1,
                1_000_000,
                limits::DEFAULT_MAX_SESSIONS,
            )? as usize,
            session_idle: Duration::from_secs(source.number(
                &args.http_session_idle_secs,
                var::OPENGIST_MCP_HTTP_SESSION_IDLE_SECS,
                SESSION_IDLE_SETTING,
                1,
                86_400,
                limits::DEFAULT_SESSION_IDLE_SECS,
            )?),
            bounds: limits::HttpBounds::default(),
        };
        // The framework's caps on dialogs and long-lived streams, under this server's names.
        let http_limits = HttpLimits {
            bounds: limits::HttpBounds::from_lookup(
                &crate::http::setting_names().bounds,
                http_limits.max_connections,
                MAX_CONNECTIONS_SETTING,
                |name| source.get(name),
            )?,
            ..http_limits
        };

        if args.redis_url.is_some() {
            warnings.push(
                "--redis-url is visible to every user of this machine (ps), with any password \
                 in it; prefer OPENGIST_MCP_REDIS_URL"
                    .to_owned(),
            );
        }
        let redis_url = match source.flag_or_env(&args.redis_url, var::OPENGIST_MCP_REDIS_URL) {
            // `redis://` or `rediss://` with a host. The value is never echoed.
            Some(raw) => Some(serving::parse_redis_url(&raw).ok_or(ConfigError::RedisUrl)?),
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
        let audit_log = match source.flag_or_env(&args.audit_log, var::OPENGIST_MCP_AUDIT_LOG) {
            // `stderr` (any case), or a path that does not end in `/`.
            Some(raw) => Some(serving::parse_audit_log(&raw).ok_or(ConfigError::AuditLog)?),
            None => None,
        };
        let replica_id = match source.flag_or_env(&args.replica_id, var::OPENGIST_MCP_REPLICA_ID) {
            Some(raw) => Some(serving::parse_replica_id(&raw).ok_or(ConfigError::ReplicaId)?),
            None => None,
        };

        Ok(Self {
            http_addr,
            http_token,
            http_no_auth,
            http_auth,
            state_dir,
            allowed_hosts,
            allowed_origins,
            http_limits,
            redis_url,
            audit_log,
            replica_id,
        })
    }
}
