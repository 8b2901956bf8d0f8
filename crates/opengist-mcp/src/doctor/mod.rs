//! `opengist-mcp doctor`: checks the setup and prints one line per check, each failure with
//! its fix. Exits 0 only when no check failed (warnings do not fail; a variable that looks like
//! a setting but is none does: it does nothing, so the server does not run as meant).
//!
//! It changes nothing: each scope is found out with a request Opengist refuses before it
//! writes (see [`crate::opengist::access`]). It first shows what the configuration makes of
//! this server (read-only or not, the enabled tools, dialogs, stdio or HTTP and how callers
//! are told apart), how guarded calls are approved (the passkeys enrolled per principal, the
//! verified tools, the route each kind of client gets), every start-up warning, and each
//! variable that looks like a setting but is none. When Opengist cannot be reached it tries
//! the likely mistakes (a path too many, the other scheme) with requests that carry no token,
//! and names the one that answers.

mod approval;

use std::fmt;
use std::process::ExitCode;

use crate::catalog;
use crate::config::{AuthMode, Config, OpengistUrl};
use crate::opengist::{Grant, OpengistClient, OpengistError, Scope, TokenAccess};
use crate::server::{SERVER_NAME, client_options};

/// The scopes a token needs, as `doctor`, `client-config`, `--help` and the README say it.
pub const TOKEN_SCOPES: &str = "gist read and write; user read and write only for get_user and \
     set_gist_like (without them, deny those two: OPENGIST_DENY_TOOLS=get_user,set_gist_like)";

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Works.
    Ok,
    /// Works, with a caveat worth knowing.
    Warn,
    /// Broken: the line says how to fix it.
    Fail,
    /// Not checked, and why.
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ok => "ok  ",
            Self::Warn => "warn",
            Self::Fail => "FAIL",
            Self::Skip => "skip",
        })
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// How it ended.
    pub status: Status,
    /// What was found, and for a failure, the fix.
    pub detail: String,
}

impl Check {
    fn new(name: &'static str, status: Status, detail: impl Into<String>) -> Self {
        Self {
            name,
            status,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.name, self.detail)
    }
}

/// Runs every check against the configured instance; `warnings` are the configuration's
/// start-up warnings, shown first.
pub async fn checks(config: &Config, warnings: &[String]) -> Vec<Check> {
    let mut out: Vec<Check> = warnings
        .iter()
        .map(|warning| Check::new("setting", Status::Warn, warning.clone()))
        .collect();
    out.extend(config.unknown_settings.iter().map(|unknown| {
        Check::new(
            "setting",
            Status::Fail,
            format!("{unknown}; fix: rename it to the setting you meant, or unset it"),
        )
    }));
    out.extend(mode_checks(config));
    out.extend(approval::approval_checks(config));
    out.push(if config.serve.elicitation {
        Check::new(
            "elicitation",
            Status::Ok,
            "ELICITATION=true: guarded tools ask the person in a dialog when the client can show one, and fall back to the two-call token otherwise",
        )
    } else {
        Check::new(
            "elicitation",
            Status::Warn,
            "ELICITATION=false: guarded tools never show a dialog and use the two-call token, which proves only that the same call was made twice; unset it to ask people",
        )
    });
    let Some(url) = &config.opengist_url else {
        out.push(Check::new(
            "url",
            Status::Fail,
            "OPENGIST_URL is not set; fix: set it to your instance, e.g. https://gist.example.com",
        ));
        return out;
    };
    out.push(if url.is_plain_http() && !url.is_loopback() {
        Check::new(
            "url",
            Status::Warn,
            format!(
                "OPENGIST_URL is {}: plain http to a host that is not this machine, so the access token and every gist travel unencrypted; fix: serve Opengist over https and set OPENGIST_URL=https://{}",
                url.as_str(),
                url.as_str().trim_start_matches("http://")
            ),
        )
    } else {
        Check::new("url", Status::Ok, format!("OPENGIST_URL is {}", url.as_str()))
    });
    if config.serves_team() {
        team_checks(url.url(), config, &mut out).await;
        return out;
    }
    let Some(options) = client_options(config) else {
        out.push(Check::new(
            "token",
            Status::Fail,
            format!(
                "OPENGIST_TOKEN is not set; fix: make a token at {}/-/settings/access-tokens and set OPENGIST_TOKEN",
                url.as_str()
            ),
        ));
        return out;
    };
    let client = match OpengistClient::new(options) {
        Ok(client) => client,
        Err(error) => {
            out.push(Check::new("client", Status::Fail, error.to_string()));
            return out;
        }
    };

    let mut version = None;
    match client.healthcheck().await {
        Ok(health) if health.is_ok() => {
            version = health.version.clone();
            out.push(Check::new("reachable", Status::Ok, "Opengist answered /healthcheck: ok"));
        }
        Ok(health) => out.push(Check::new(
            "reachable",
            Status::Fail,
            format!(
                "Opengist answered /healthcheck with status {} (database: {}); fix: check the instance's logs and database",
                health.status,
                health.database.as_deref().unwrap_or("unknown")
            ),
        )),
        Err(error) => {
            out.push(Check::new(
                "reachable",
                Status::Fail,
                unreachable(url, config, &error).await,
            ));
            return out;
        }
    }

    match client.api_info().await {
        Ok(info) => {
            version = version.or(info.version);
            out.push(Check::new(
                "api",
                Status::Ok,
                "the REST API at /api answers",
            ));
        }
        Err(error @ OpengistError::ApiDisabled { .. }) => {
            out.push(Check::new(
                "api",
                Status::Fail,
                format!("{error}; fix: enable it in Opengist's config (api.enabled: true, or OG_API_ENABLED=true) and restart it"),
            ));
            return out;
        }
        Err(error) => {
            out.push(Check::new("api", Status::Fail, error.to_string()));
            return out;
        }
    }
    out.push(match &version {
        Some(v) => Check::new("version", Status::Ok, format!("Opengist {v}")),
        None => Check::new(
            "version",
            Status::Skip,
            "not shown to API clients (Opengist shows its version only on its admin page); the REST API answered at /api, so it is 1.13 or newer, as this server needs",
        ),
    });

    let access = match client.learn_token_access().await {
        Ok(access) => access,
        Err(error) => {
            out.push(Check::new("token", Status::Fail, error.to_string()));
            return out;
        }
    };
    out.push(Check::new(
        "token",
        Status::Ok,
        match &access.identity {
            Some(me) => format!(
                "Opengist accepts the token; it belongs to {} (user #{})",
                me.username, me.id
            ),
            None => "Opengist accepts the token (whose account it is needs user:read to tell)"
                .to_owned(),
        },
    ));
    let enabled = config.tools.resolve(config.read_only).unwrap_or_default();
    out.extend(scope_checks(&access, &enabled, &settings_url(url.as_str())));
    out
}

/// What the configuration makes of this server: read-only or not, the enabled tools, and how
/// it is served (stdio, or HTTP with its authentication mode).
fn mode_checks(config: &Config) -> Vec<Check> {
    let mut out = vec![Check::new(
        "read-only",
        Status::Ok,
        if config.read_only {
            "on (OPENGIST_READ_ONLY / --read-only): only the reading tools are offered"
        } else {
            "off: the writing tools are offered too, the destructive ones asking first (OPENGIST_READ_ONLY=true offers only the reading tools)"
        },
    )];
    out.push(match config.tools.resolve(config.read_only) {
        Ok(enabled) => Check::new(
            "tools",
            Status::Ok,
            format!(
                "{} of {} enabled: {}",
                enabled.len(),
                catalog::names().count(),
                enabled.join(", ")
            ),
        ),
        Err(error) => Check::new("tools", Status::Fail, error.to_string()),
    });
    let serve = &config.serve;
    out.push(Check::new(
        "serving",
        Status::Ok,
        match serve.http_addr {
            None => "stdio: the client starts this binary and talks to it over a pipe".to_owned(),
            Some(addr) => format!(
                "streamable HTTP at http://{addr}/mcp; callers told apart by OPENGIST_MCP_HTTP_AUTH={}{}",
                serve.auth.mode,
                match &serve.auth.mode {
                    AuthMode::Secret if serve.http_token.is_some() =>
                        " (the bearer secret OPENGIST_MCP_HTTP_TOKEN; everyone holding it is one caller)",
                    AuthMode::Secret =>
                        " (no OPENGIST_MCP_HTTP_TOKEN: a secret is made up at start and printed once on stderr)",
                    AuthMode::Tokens => " (a token per person, from OPENGIST_MCP_HTTP_TOKENS_FILE)",
                    AuthMode::OAuth => " (OAuth 2.1 access tokens, OPENGIST_MCP_OAUTH_*)",
                    AuthMode::None => " (no authentication: loopback only)",
                    AuthMode::Server(_) =>
                        " (a team: each person's own Opengist access token is the bearer)",
                }
            ),
        },
    ));
    out
}

/// Why Opengist could not be reached at `url`, and the fix: when the instance answers at the
/// address without `url`'s path, or under the other scheme, that mistake is named. The probes
/// carry no token, so a mistaken address never receives it.
async fn unreachable(url: &OpengistUrl, config: &Config, error: &OpengistError) -> String {
    let base = url.url();
    let origin = base.origin().ascii_serialization();
    let answers = |candidate: String| async move {
        let Ok(candidate) = url::Url::parse(&candidate) else {
            return false;
        };
        let Ok(client) = OpengistClient::new(anonymous_options(&candidate, config)) else {
            return false;
        };
        client
            .healthcheck()
            .await
            .is_ok_and(|health| health.is_ok())
    };
    if base.path() != "/" && answers(origin.clone()).await {
        return format!(
            "Opengist is not under {}: it answers at {origin}, without the path {}; fix: set OPENGIST_URL={origin} (the address its home page is at)",
            url.as_str(),
            base.path().trim_end_matches('/')
        );
    }
    let host_port = origin
        .split_once("://")
        .map_or(origin.as_str(), |(_, rest)| rest);
    let (other, fix) = match base.scheme() {
        "https" => (
            format!("http://{host_port}"),
            "it speaks plain http there, not https",
        ),
        _ => (format!("https://{host_port}"), "it speaks https there"),
    };
    if answers(other.clone()).await {
        let caution = if other.starts_with("http://") && !url.is_loopback() {
            " (better: put TLS in front of it and keep https)"
        } else {
            ""
        };
        return format!(
            "Opengist is not at {}: {fix} (it answers at {other}); fix: set OPENGIST_URL={other}{}{caution}",
            url.as_str(),
            base.path().trim_end_matches('/')
        );
    }
    format!(
        "{error}; fix: set OPENGIST_URL to the address Opengist's home page is at in a browser (scheme, host, port, and a path only if Opengist is served under one)"
    )
}

/// Options for a client without a token, at `url`.
fn anonymous_options(url: &url::Url, config: &Config) -> crate::opengist::ClientOptions {
    crate::opengist::ClientOptions {
        base_url: url.clone(),
        token: None,
        insecure_tls: config.insecure_tls,
        request_timeout: config.request_timeout,
        user_agent: format!("{SERVER_NAME}/{}", env!("CARGO_PKG_VERSION")),
        limits: config.opengist_limits,
    }
}

fn settings_url(base: &str) -> String {
    format!("{}/-/settings/access-tokens", base.trim_end_matches('/'))
}

/// The scopes doctor reports, one line each, and how it found each out; the tools needing
/// each come from the [catalog](crate::catalog) (a tool that works with any valid token has
/// no line).
const SCOPES: [(Scope, &str); 4] = [
    (
        Scope::GistRead,
        "soft: Opengist answers reads without it with public gists only",
    ),
    (
        Scope::GistWrite,
        "POST /api/gists with an empty body: 422 with it, 403 without",
    ),
    (Scope::UserRead, "GET /api/user: 200 with it, 403 without"),
    (
        Scope::UserWrite,
        "PATCH /api/user with an empty body: 422 with it, 403 without",
    ),
];

/// One line per scope: present, missing (a failure when an enabled tool needs it), or, for
/// `gist:read` only, not tellable. Pure: `access` was learned without writing anything.
pub fn scope_checks(access: &TokenAccess, enabled: &[String], settings_url: &str) -> Vec<Check> {
    // The enabled tools that need a user scope: the ones to deny when the token has none.
    let user_tools: Vec<&str> = catalog::names()
        .filter(|name| {
            catalog::names_needing(Scope::UserRead)
                .chain(catalog::names_needing(Scope::UserWrite))
                .any(|needing| needing == *name)
                && enabled.iter().any(|e| e == name)
        })
        .collect();
    SCOPES
        .iter()
        .map(|(scope, evidence)| {
            let needing: Vec<&str> = catalog::names_needing(*scope)
                .filter(|t| enabled.iter().any(|e| e == t))
                .collect();
            let tools_text = if needing.is_empty() {
                "no enabled tool".to_owned()
            } else {
                needing.join(", ")
            };
            let name = scope.as_str();
            let evidence = match (scope, access.gist_write) {
                (Scope::GistRead, Grant::Present) => "implied by gist:write",
                (Scope::GistRead, _) => "a private or unlisted gist of yours is listed",
                _ => evidence,
            };
            match access.grant(*scope) {
                Grant::Present => Check::new(
                    name,
                    Status::Ok,
                    format!("present ({evidence}): {tools_text} can use it"),
                ),
                Grant::Missing if needing.is_empty() => Check::new(
                    name,
                    Status::Ok,
                    format!("missing ({evidence}), and no enabled tool needs it"),
                ),
                // The user scopes serve two optional tools: a warning, with both ways out.
                Grant::Missing if matches!(scope, Scope::UserRead | Scope::UserWrite) => {
                    Check::new(
                        name,
                        Status::Warn,
                        format!(
                            "missing ({evidence}): {tools_text} will not work; fix: either make a token with user read and write too at {settings_url} (Settings → Access Tokens) and set OPENGIST_TOKEN to it, or stop offering them: OPENGIST_DENY_TOOLS={}",
                            user_tools.join(",")
                        ),
                    )
                }
                Grant::Missing => Check::new(
                    name,
                    Status::Fail,
                    format!(
                        "missing ({evidence}): {tools_text} will not work{}; fix: either make a token with gist read and write at {settings_url} (Settings → Access Tokens) and set OPENGIST_TOKEN to it, or, to keep this read-only token, set OPENGIST_READ_ONLY=true (only the reading tools are offered)",
                        if *scope == Scope::GistWrite {
                            " (the guarded ones refuse before asking anyone)"
                        } else {
                            ""
                        },
                    ),
                ),
                Grant::Unknown => Check::new(
                    name,
                    Status::Warn,
                    format!(
                        "cannot be told: the token lacks gist:write and none of your gists it lists is private or unlisted, which is also all Opengist shows a token without gist:read; if {tools_text} miss private or unlisted gists of yours, make a token with gist read at {settings_url}"
                    ),
                ),
            }
        })
        .collect()
}

/// A team server (`OPENGIST_MCP_HTTP_AUTH=opengist`) has no token of its own: whether Opengist
/// answers, and that each person's token is checked when they connect.
async fn team_checks(url: &url::Url, config: &Config, out: &mut Vec<Check>) {
    let client = match OpengistClient::new(anonymous_options(url, config)) {
        Ok(client) => client,
        Err(error) => {
            out.push(Check::new("client", Status::Fail, error.to_string()));
            return;
        }
    };
    match client.healthcheck().await {
        Ok(health) if health.is_ok() => {
            out.push(Check::new("reachable", Status::Ok, "Opengist answered /healthcheck: ok"))
        }
        Ok(health) => out.push(Check::new(
            "reachable",
            Status::Fail,
            format!(
                "Opengist answered /healthcheck with status {}; fix: check the instance's logs and database",
                health.status
            ),
        )),
        Err(error) => out.push(Check::new("reachable", Status::Fail, error.to_string())),
    }
    out.push(Check::new(
        "token",
        Status::Ok,
        format!(
            "OPENGIST_MCP_HTTP_AUTH=opengist: no token of the server's own to check; each person connects with their own Opengist access token (made at {}/-/settings/access-tokens) as the bearer, checked with Opengist when they connect",
            url.as_str().trim_end_matches('/')
        ),
    ));
}

/// Runs the checks, prints them, and returns the exit code.
pub async fn run(config: &Config, warnings: &[String]) -> ExitCode {
    let results = checks(config, warnings).await;
    for check in &results {
        println!("{check}");
    }
    if results.iter().any(|c| c.status == Status::Fail) {
        println!("{SERVER_NAME} doctor: some checks failed");
        ExitCode::from(1)
    } else {
        println!("{SERVER_NAME} doctor: all checks passed");
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opengist::Identity;

    fn access(
        gist_read: Grant,
        gist_write: Grant,
        user_read: Grant,
        user_write: Grant,
    ) -> TokenAccess {
        TokenAccess {
            identity: Some(Identity {
                id: 1,
                username: "admin".into(),
            }),
            gist_read,
            gist_write,
            user_read,
            user_write,
        }
    }

    fn all() -> Vec<String> {
        catalog::names().map(str::to_owned).collect()
    }

    #[test]
    fn one_line_per_scope_and_missing_needed_scopes_fail() {
        let checks = scope_checks(
            &access(
                Grant::Present,
                Grant::Missing,
                Grant::Present,
                Grant::Missing,
            ),
            &all(),
            "https://g/-/settings/access-tokens",
        );
        let names: Vec<&str> = checks.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["gist:read", "gist:write", "user:read", "user:write"]
        );
        let status: Vec<Status> = checks.iter().map(|c| c.status).collect();
        // A read-only token fails the write tools; missing user scopes only warn.
        assert_eq!(status, [Status::Ok, Status::Fail, Status::Ok, Status::Warn]);
        assert!(
            checks[1].detail.contains("set OPENGIST_READ_ONLY=true"),
            "{}",
            checks[1]
        );
        let user_tools = catalog::names_needing(Scope::UserRead)
            .chain(catalog::names_needing(Scope::UserWrite))
            .collect::<Vec<_>>();
        assert!(
            checks[3]
                .detail
                .contains(&format!("OPENGIST_DENY_TOOLS={}", user_tools.join(","))),
            "{}",
            checks[3]
        );
        assert!(
            checks[3].detail.contains("user read and write"),
            "{}",
            checks[3]
        );
        for tool in catalog::names_needing(Scope::GistWrite) {
            assert!(checks[1].detail.contains(tool), "{tool}: {}", checks[1]);
        }
        assert!(
            checks[1]
                .detail
                .contains("https://g/-/settings/access-tokens")
        );
        for tool in catalog::names_needing(Scope::UserWrite) {
            assert!(checks[3].detail.contains(tool), "{tool}: {}", checks[3]);
        }
    }

    /// `doctor`, `client-config` and `--help` tell one story about the token's scopes.
    #[test]
    fn the_scope_story_is_told_the_same_everywhere() {
        let token = crate::config::var::setting("OPENGIST_TOKEN").expect("declared");
        assert!(token.about.contains(TOKEN_SCOPES), "{}", token.about);
        let note = crate::client_config::note(crate::client_config::Client::Codex);
        assert!(note.contains(TOKEN_SCOPES), "{note}");
        // What an unconfigured server answers every call with.
        assert!(
            crate::state::SETUP_INSTRUCTIONS.contains(TOKEN_SCOPES),
            "{}",
            crate::state::SETUP_INSTRUCTIONS
        );
        for tool in ["get_user", "set_gist_like"] {
            assert!(
                catalog::names_needing(Scope::UserRead)
                    .chain(catalog::names_needing(Scope::UserWrite))
                    .any(|name| name == tool),
                "{tool} needs a user scope"
            );
        }
    }

    #[test]
    fn a_missing_scope_no_enabled_tool_needs_is_not_a_failure() {
        let reading: Vec<String> = catalog::reading_names().map(str::to_owned).collect();
        let checks = scope_checks(
            &access(
                Grant::Unknown,
                Grant::Missing,
                Grant::Present,
                Grant::Missing,
            ),
            &reading,
            "u",
        );
        assert_eq!(checks[0].status, Status::Warn, "{}", checks[0]);
        assert_eq!(checks[1].status, Status::Ok, "{}", checks[1]);
        assert!(checks[1].detail.contains("no enabled tool needs it"));
        assert_eq!(checks[3].status, Status::Ok);
    }
}
