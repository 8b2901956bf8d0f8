//! `opengist-mcp doctor`: checks the setup and prints one line per check, each failure with
//! its fix. Exits 0 only when no check failed (warnings do not fail).
//!
//! It only reads: the write scopes cannot be checked without writing, and it says so.

use std::fmt;
use std::process::ExitCode;

use crate::config::Config;
use crate::opengist::{ListScope, OpengistClient, OpengistError};
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
    out.push(if config.elicitation {
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
            "Opengist did not say its version; this server needs 1.13 or newer (the REST API answered, so it is)",
        ),
    });

    let me = match client.get_user_me().await {
        Ok(user) => {
            out.push(Check::new(
                "token",
                Status::Ok,
                format!(
                    "the token works and belongs to {} (scope user:read present)",
                    user.name()
                ),
            ));
            Some(user.name().to_owned())
        }
        Err(error @ OpengistError::BadToken { .. }) => {
            out.push(Check::new("token", Status::Fail, error.to_string()));
            return out;
        }
        Err(OpengistError::MissingScope { .. }) => {
            out.push(Check::new(
                "token",
                Status::Warn,
                "the token works but lacks user:read: get_user without arguments will fail; fix: make a token with user read (and write, for likes)",
            ));
            None
        }
        Err(error) => {
            out.push(Check::new("token", Status::Fail, error.to_string()));
            return out;
        }
    };

    match (me, client.list_gists(ListScope::Mine, 1, 100, None).await) {
        (_, Err(error)) => out.push(Check::new("gist:read", Status::Fail, error.to_string())),
        (Some(me), Ok(page)) => {
            let foreign = page.items.iter().filter(|g| g.owner.name() != me).count();
            if foreign > 0 {
                out.push(Check::new(
                    "gist:read",
                    Status::Fail,
                    "the token lacks gist:read: Opengist silently answers with public gists only, so private and unlisted gists are invisible; fix: make a token with gist read+write",
                ));
            } else {
                out.push(Check::new(
                    "gist:read",
                    Status::Ok,
                    format!("listing your gists works ({} on the first page)", page.items.len()),
                ));
            }
        }
        (None, Ok(_)) => out.push(Check::new(
            "gist:read",
            Status::Skip,
            "cannot tell without user:read (Opengist answers public gists silently when gist:read is missing)",
        )),
    }
    out.push(Check::new(
        "write scopes",
        Status::Skip,
        "gist:write and user:write are not checked: checking them would need a write; the first create, update, delete or like will say if they are missing",
    ));
    out
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
