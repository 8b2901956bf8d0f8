//! `opengist-mcp doctor`: checks the setup and prints one line per check, each failure with
//! its fix. Exits 0 only when no check failed (warnings do not fail).
//!
//! It changes nothing: each scope is found out with a request Opengist refuses before it
//! writes (see [`crate::opengist::access`]).

use std::fmt;
use std::process::ExitCode;

use crate::catalog;
use crate::config::Config;
use crate::opengist::{Grant, OpengistClient, OpengistError, Scope, TokenAccess};
use crate::server::{SERVER_NAME, client_options};

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

/// Runs every check against the configured instance.
pub async fn checks(config: &Config) -> Vec<Check> {
    let mut out = Vec::new();
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
    out.push(Check::new(
        "url",
        Status::Ok,
        format!("OPENGIST_URL is {}", url.as_str()),
    ));
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
            out.push(Check::new("reachable", Status::Fail, error.to_string()));
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
            "Opengist shows its version only on its admin page, not to API clients (not in /healthcheck, not in a header); this server needs 1.13 or newer, and the REST API answered, so it is",
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
                Grant::Missing => Check::new(
                    name,
                    Status::Fail,
                    format!(
                        "missing ({evidence}): {} will not work{}; fix: make a token with {} at {settings_url} (Settings → Access Tokens) and set OPENGIST_TOKEN to it",
                        tools_text,
                        if *scope == Scope::GistWrite {
                            " (the guarded ones refuse before asking anyone)"
                        } else {
                            ""
                        },
                        match scope {
                            Scope::GistWrite | Scope::GistRead => "gist read+write",
                            _ => "user read+write",
                        }
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
    let options = crate::opengist::ClientOptions {
        base_url: url.clone(),
        token: None,
        insecure_tls: config.insecure_tls,
        request_timeout: config.request_timeout,
        user_agent: format!("{SERVER_NAME}/{}", env!("CARGO_PKG_VERSION")),
        limits: config.opengist_limits,
    };
    let client = match OpengistClient::new(options) {
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
pub async fn run(config: &Config) -> ExitCode {
    let results = checks(config).await;
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
        assert_eq!(status, [Status::Ok, Status::Fail, Status::Ok, Status::Fail]);
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
