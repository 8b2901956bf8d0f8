//! The one error type of the Opengist client, with messages a person can act on.
//!
//! Rules every message follows: it never contains the access token, never contains a response
//! body other than Opengist's own `message` field (cut to [`MAX_MESSAGE_CHARS`] characters),
//! names the configured base URL rather than anything the user pasted, and says what to do next.
//! A 404 says "does not exist or is not visible to this token", never "deleted": Opengist
//! answers 404 for private gists of other users too.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

/// Longest excerpt of Opengist's `message` field quoted in an error, in characters.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// An access-token scope an operation needs (Opengist: Settings → Access Tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `gist:read`: the caller's own private and unlisted gists. Soft: without it Opengist
    /// silently answers with the public subset.
    GistRead,
    /// `gist:write`: create, update, delete and fork gists.
    GistWrite,
    /// `user:read`: the token owner's own account.
    UserRead,
    /// `user:write`: likes (and account changes).
    UserWrite,
    /// Any valid token, no particular scope.
    AnyToken,
}

impl Scope {
    /// The scope as Opengist names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GistRead => "gist:read",
            Self::GistWrite => "gist:write",
            Self::UserRead => "user:read",
            Self::UserWrite => "user:write",
            Self::AnyToken => "any valid token",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which limit on requests to Opengist a refused request waited on (see `client/limit.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyCap {
    /// The caller's own requests filled its share.
    Principal,
    /// All callers' requests filled the server's.
    Server,
}

/// Which timeout expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection.
    Connect,
    /// The whole request: sending it, and receiving the complete answer.
    Request,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect timeout",
            Self::Request => "request timeout",
        })
    }
}

/// Where the access token a client acts with comes from: what a message about a rejected or
/// too narrow token tells the person to do with a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenUse {
    /// `OPENGIST_TOKEN`, the server's own.
    #[default]
    Configured,
    /// The person's own, sent as the HTTP bearer to a team server
    /// (`OPENGIST_MCP_HTTP_AUTH=opengist`).
    PersonBearer,
}

impl fmt::Display for TokenUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Configured => "set OPENGIST_TOKEN to it",
            Self::PersonBearer => {
                "connect to this MCP server with it as your bearer token (Authorization: Bearer <token>; the server serves a team, OPENGIST_MCP_HTTP_AUTH=opengist)"
            }
        })
    }
}

impl OpengistError {
    /// Says how to replace the token as `token_use` asks (a rejected or too narrow token's
    /// message); other errors are unchanged.
    pub(crate) fn with_token_use(mut self, token_use: TokenUse) -> Self {
        if let Self::BadToken {
            token_use: held, ..
        }
        | Self::MissingScope {
            token_use: held, ..
        } = &mut self
        {
            *held = token_use;
        }
        self
    }
}

/// Everything that can go wrong talking to Opengist.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpengistError {
    /// The HTTP client could not be built (TLS set-up, or a token that cannot be sent).
    #[error("the Opengist client could not be set up: {detail}")]
    ClientInit {
        /// What failed; never contains the token.
        detail: String,
    },

    /// 401 `Bad crendentials` (sic): the token is unknown, revoked or expired.
    #[error(
        "Opengist rejected the access token (401: unknown, revoked or expired). Make a new one at {settings_url} (Settings → Access Tokens) and {token_use}"
    )]
    BadToken {
        /// Where tokens are made on this instance.
        settings_url: String,
        /// Where the token comes from, to say how to replace it.
        token_use: TokenUse,
    },

    /// 401 `Requires authentication`: no token was sent, and this operation (or this
    /// instance, when it requires login) needs one. Opengist answers a token it does not
    /// accept with a different 401, [`OpengistError::BadToken`].
    #[error(
        "Opengist needs an access token to {operation}, and none is configured. Make one at {settings_url} (Settings → Access Tokens), set OPENGIST_TOKEN to it and restart this MCP server"
    )]
    TokenRequired {
        /// What was being done.
        operation: &'static str,
        /// Where tokens are made on this instance.
        settings_url: String,
    },

    /// 403 `API is disabled`.
    #[error(
        "the REST API is disabled on the Opengist instance at {base}: an administrator must enable it (config `api.enabled: true`, or OG_API_ENABLED=true) and restart Opengist"
    )]
    ApiDisabled {
        /// The configured instance.
        base: String,
    },

    /// The instance has no REST API at `/api` (Opengist before 1.13, or a wrong URL).
    #[error(
        "no Opengist REST API answers at {base}/api: Opengist 1.13 or newer is needed, and OPENGIST_URL must be the instance's base address (the one its web pages are under)"
    )]
    ApiNotFound {
        /// The configured instance.
        base: String,
    },

    /// 403: the token lacks the scope this operation needs.
    #[error(
        "the access token lacks the `{scope}` scope needed to {operation}. Make a token with `{scope}` at {settings_url} (Settings → Access Tokens) and {token_use}"
    )]
    MissingScope {
        /// The scope needed.
        scope: Scope,
        /// What was being done, e.g. `create a gist`.
        operation: &'static str,
        /// Where tokens are made on this instance.
        settings_url: String,
        /// Where the token comes from, to say how to replace it.
        token_use: TokenUse,
    },

    /// 403: the gist belongs to someone else.
    #[error(
        "{resource} belongs to another account, and only its owner can {operation}; to change a copy of it, fork it first"
    )]
    NotOwner {
        /// The gist, e.g. `gist 3f2a…`.
        resource: String,
        /// What was being done.
        operation: &'static str,
    },

    /// 403: the gist is archived (read-only).
    #[error(
        "{resource} is archived and therefore read-only; un-archive it in the Opengist web UI to {operation}"
    )]
    Archived {
        /// The gist.
        resource: String,
        /// What was being done.
        operation: &'static str,
    },

    /// Another 403.
    #[error("Opengist refused to {operation} (403 Forbidden){}", quoted(.message))]
    Forbidden {
        /// What was being done.
        operation: &'static str,
        /// Opengist's reason, truncated.
        message: Option<String>,
    },

    /// 404: absent, or invisible to this token (private gists of others are 404 too).
    #[error("{resource} does not exist or is not visible to this token")]
    NotFound {
        /// What was looked for, e.g. `gist 3f2a…` or `user "alice"`.
        resource: String,
    },

    /// 422: Opengist's validation refused the request.
    #[error("Opengist refused to {operation} (422){}", quoted(.message))]
    Validation {
        /// What was being done.
        operation: &'static str,
        /// Opengist's reason, truncated.
        message: Option<String>,
    },

    /// 422 on a fork of the caller's own gist.
    #[error(
        "{resource} is your own gist, and Opengist does not fork a user's own gist: use it directly, or make a copy with create_gist"
    )]
    CannotForkOwn {
        /// The gist.
        resource: String,
    },

    /// 400: Opengist found the request malformed.
    #[error("Opengist rejected the request to {operation} as malformed (400){}", quoted(.message))]
    BadRequest {
        /// What was being done.
        operation: &'static str,
        /// Opengist's reason, truncated.
        message: Option<String>,
    },

    /// A redirect, which is never followed (the token must not travel elsewhere).
    #[error(
        "Opengist answered {status} (a redirect) to a request to {operation}. Redirects are not followed, so the token never goes to another address: set OPENGIST_URL to the final address (for example https:// instead of http://)"
    )]
    Redirect {
        /// The 3xx status.
        status: u16,
        /// What was being done.
        operation: &'static str,
    },

    /// 5xx: the server failed.
    #[error(
        "the Opengist server failed to {operation} ({status}){}; try again shortly, and if it persists check the instance's logs",
        quoted(.message)
    )]
    Server {
        /// The 5xx status.
        status: u16,
        /// What was being done.
        operation: &'static str,
        /// Opengist's reason, truncated.
        message: Option<String>,
    },

    /// A status this client does not expect.
    #[error("Opengist answered {status} to a request to {operation}{}", quoted(.message))]
    UnexpectedStatus {
        /// The status.
        status: u16,
        /// What was being done.
        operation: &'static str,
        /// Opengist's reason, truncated.
        message: Option<String>,
    },

    /// A timeout expired.
    #[error(
        "no answer from {host} within the {phase} of {} while trying to {operation}; the instance may be down or overloaded, or OPENGIST_URL may point at the wrong address",
        seconds(.after)
    )]
    Timeout {
        /// Which timeout.
        phase: TimeoutPhase,
        /// Its length.
        after: Duration,
        /// The host (and port) of the configured instance.
        host: String,
        /// What was being done.
        operation: &'static str,
    },

    /// Nothing listens at the configured address.
    #[error(
        "could not connect to the Opengist instance at {base}: connection refused. Check that Opengist is running and that OPENGIST_URL (scheme, host and port) is right"
    )]
    ConnectionRefused {
        /// The configured instance.
        base: String,
    },

    /// Another connection failure.
    #[error("could not talk to the Opengist instance at {base}: {detail}")]
    Connection {
        /// The configured instance.
        base: String,
        /// What happened, in words (no response data).
        detail: &'static str,
    },

    /// The answer was not the JSON this client expects.
    #[error(
        "unexpected response from Opengist to a request to {operation} ({detail}); check that OPENGIST_URL is an Opengist 1.13+ instance and not, say, a proxy's login page"
    )]
    UnexpectedResponse {
        /// What was being done.
        operation: &'static str,
        /// Where parsing failed (never response data).
        detail: String,
    },

    /// The answer exceeded the size this client reads.
    #[error(
        "Opengist's answer to a request to {operation} is larger than the {limit} bytes this client reads"
    )]
    ResponseTooLarge {
        /// What was being done.
        operation: &'static str,
        /// The limit, in bytes.
        limit: u64,
    },

    /// A write went through, but its result could not be read back.
    #[error(
        "gist {id} was {action}, but reading it back failed ({reason}); the change is made: read it with get_gist"
    )]
    WrittenButUnread {
        /// The gist.
        id: String,
        /// `created` or `updated`.
        action: &'static str,
        /// Why the read failed.
        reason: String,
    },

    /// A create went through, but Opengist's answer did not say which gist it made.
    #[error(
        "the gist was created, but Opengist's answer did not say its id; find it with list_gists (newest first)"
    )]
    CreatedWithoutId,

    /// A like toggle was sent, but re-reading the state did not show the wanted state.
    #[error(
        "the like was toggled, but reading it back shows the gist {} liked; something else may have changed it at the same time: check with check_gist_like",
        like_word(.wanted)
    )]
    LikeNotConfirmed {
        /// The state that was wanted.
        wanted: bool,
    },

    /// A write request was sent, but its answer was lost (a timeout, or the connection closed
    /// after the request went out): Opengist may or may not have applied it. The write tools
    /// read back to find out (see `tools::outcome`); this text is what is known before that.
    #[error(
        "the request to {operation} was sent, but its answer was lost ({cause}), so Opengist may or may not have applied it"
    )]
    AnswerLost {
        /// What was being done.
        operation: &'static str,
        /// How the answer was lost, in words (no response data).
        cause: String,
    },

    /// A check before a write (a request Opengist refuses before it changes anything, see
    /// `probes.rs`) was sent, but its answer was lost. The check writes nothing, so nothing was
    /// changed; only whether the real call could succeed is not known. Unlike
    /// [`OpengistError::AnswerLost`], there is nothing to read back.
    #[error(
        "the check whether this token may {operation} could not be made: Opengist's answer to it was lost ({cause}). The check writes nothing, so nothing was changed. Check that Opengist at {base} is up and answering (opengist-mcp doctor tells what works), then make the call again"
    )]
    CheckAnswerLost {
        /// The operation the check stands in for.
        operation: &'static str,
        /// How the answer was lost, in words (no response data).
        cause: String,
        /// The configured instance.
        base: String,
    },

    /// Too many requests to Opengist were in flight, and this one waited its whole queue time
    /// for a turn (see `client/limit.rs`). Nothing was sent.
    #[error(
        "Opengist is busy: the request to {operation} waited {} for a turn, because {}. Nothing was sent to Opengist, so nothing was changed; retry in a few seconds (the operator sets these limits with OPENGIST_MCP_OPENGIST_MAX_REQUESTS, OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL and OPENGIST_MCP_OPENGIST_QUEUE_SECS)",
        seconds(.waited),
        busy_cap(.cap, .limit)
    )]
    Busy {
        /// What was being done.
        operation: &'static str,
        /// Which cap was full.
        cap: BusyCap,
        /// That cap.
        limit: usize,
        /// How long it waited.
        waited: Duration,
    },

    /// An argument this client refuses before sending anything.
    #[error("{message}")]
    InvalidArgument {
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl OpengistError {
    /// The HTTP status Opengist answered with, when the error comes from one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::BadToken { .. } | Self::TokenRequired { .. } => Some(401),
            Self::ApiDisabled { .. }
            | Self::MissingScope { .. }
            | Self::NotOwner { .. }
            | Self::Archived { .. }
            | Self::Forbidden { .. } => Some(403),
            Self::NotFound { .. } => Some(404),
            Self::Validation { .. } | Self::CannotForkOwn { .. } => Some(422),
            Self::BadRequest { .. } => Some(400),
            Self::Redirect { status, .. }
            | Self::Server { status, .. }
            | Self::UnexpectedStatus { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether this is a "does not exist or is not visible" answer.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }

    /// Whether a write that failed this way may still have been applied by Opengist: its
    /// answer was lost or cut short after the request went out, or a gateway (502, 504) gave
    /// up waiting for it. Only a read-back tells; never send the write again blindly.
    pub fn write_may_have_applied(&self) -> bool {
        match self {
            Self::AnswerLost { .. } | Self::Connection { .. } => true,
            Self::Timeout { phase, .. } => *phase != TimeoutPhase::Connect,
            Self::Server { status, .. } => matches!(status, 502 | 504),
            _ => false,
        }
    }
}

fn busy_cap(cap: &BusyCap, limit: &usize) -> String {
    match cap {
        BusyCap::Principal => format!(
            "this caller already had {limit} request(s) to Opengist in flight (the per caller limit)"
        ),
        BusyCap::Server => format!(
            "this server already had {limit} request(s) to Opengist in flight (its limit for all callers together)"
        ),
    }
}

fn like_word(wanted: &bool) -> &'static str {
    if *wanted { "still not" } else { "still" }
}

fn quoted(message: &Option<String>) -> String {
    match message {
        Some(m) if !m.is_empty() => format!(": \"{m}\""),
        _ => String::new(),
    }
}

fn seconds(d: &Duration) -> String {
    let d = *d;
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// What a request was doing, for error messages.
#[derive(Debug, Clone)]
pub(crate) struct CallInfo {
    /// In words, completing "failed to …": e.g. `read a gist`.
    pub(crate) operation: &'static str,
    /// The scope the operation needs.
    pub(crate) scope: Scope,
    /// What a 404 is about: e.g. `gist 3f2a…`.
    pub(crate) resource: String,
}

impl CallInfo {
    pub(crate) fn new(operation: &'static str, scope: Scope, resource: impl Into<String>) -> Self {
        Self {
            operation,
            scope,
            resource: resource.into(),
        }
    }
}

/// The configured base URL as shown in messages: no credentials, query or fragment, no
/// trailing slash.
pub(crate) fn display_base(base: &Url) -> String {
    let mut shown = base.clone();
    // These only fail for URLs that cannot be a base, which a configured base never is.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.as_str().trim_end_matches('/').to_owned()
}

/// Where access tokens are made on this instance.
pub(crate) fn settings_url(base: &Url) -> String {
    format!("{}/-/settings/access-tokens", display_base(base))
}

/// The host (and port, when not the scheme's default) of the configured instance.
pub(crate) fn display_host(base: &Url) -> String {
    let host = base.host_str().unwrap_or("the configured host");
    match base.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Opengist's error envelope, `{"message": "...", "status": <code>}`.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: Option<String>,
    // A pre-release draft of the API named it `error`; harmless to read too.
    #[serde(default)]
    error: Option<String>,
}

/// Opengist's `message` from an error body: only that field, never the raw body; control
/// characters flattened, cut to [`MAX_MESSAGE_CHARS`] characters.
pub(crate) fn error_message(body: &[u8]) -> Option<String> {
    let parsed: ErrorBody = serde_json::from_slice(body).ok()?;
    let raw = parsed.message.or(parsed.error)?;
    let mut text: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE_CHARS + 1)
        .collect();
    if text.chars().count() > MAX_MESSAGE_CHARS {
        text = text.chars().take(MAX_MESSAGE_CHARS).collect();
        text.push('…');
    }
    let text = text.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Maps a non-success status and its body to an error.
pub(crate) fn from_status(status: u16, body: &[u8], call: &CallInfo, base: &Url) -> OpengistError {
    let message = error_message(body);
    let lower = message
        .as_deref()
        .map(str::to_lowercase)
        .unwrap_or_default();
    match status {
        // Sent only when no token came with the request; any token Opengist does not accept
        // is answered `Bad crendentials` (sic) instead.
        401 if lower.contains("requires authentication") => OpengistError::TokenRequired {
            operation: call.operation,
            settings_url: settings_url(base),
        },
        401 => OpengistError::BadToken {
            settings_url: settings_url(base),
            token_use: TokenUse::Configured,
        },
        403 if lower.contains("api is disabled") => OpengistError::ApiDisabled {
            base: display_base(base),
        },
        403 if lower.contains("scope") => OpengistError::MissingScope {
            scope: call.scope,
            operation: call.operation,
            settings_url: settings_url(base),
            token_use: TokenUse::Configured,
        },
        403 if lower.contains("not the owner") => OpengistError::NotOwner {
            resource: call.resource.clone(),
            operation: call.operation,
        },
        403 if lower.contains("archived") => OpengistError::Archived {
            resource: call.resource.clone(),
            operation: call.operation,
        },
        403 => OpengistError::Forbidden {
            operation: call.operation,
            message,
        },
        404 => OpengistError::NotFound {
            resource: call.resource.clone(),
        },
        400 => OpengistError::BadRequest {
            operation: call.operation,
            message,
        },
        422 => OpengistError::Validation {
            operation: call.operation,
            message,
        },
        300..=399 => OpengistError::Redirect {
            status,
            operation: call.operation,
        },
        500..=599 => OpengistError::Server {
            status,
            operation: call.operation,
            message,
        },
        _ => OpengistError::UnexpectedStatus {
            status,
            operation: call.operation,
            message,
        },
    }
}

/// Describes a JSON parse failure by category and position only: serde's own messages can
/// quote values from the response, which may be gist text.
pub(crate) fn describe_json_error(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match error.classify() {
        Category::Io => "the answer could not be read",
        Category::Syntax => "the answer is not valid JSON",
        Category::Eof => "the answer ends too early",
        Category::Data => "the JSON does not have the documented shape",
    };
    format!("{what}, at line {} column {}", error.line(), error.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "og_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn base() -> Url {
        Url::parse("https://gist.example.com/og").expect("url")
    }

    fn call(scope: Scope) -> CallInfo {
        CallInfo::new(
            "update a gist",
            scope,
            "gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c",
        )
    }

    fn map(status: u16, body: &str, scope: Scope) -> OpengistError {
        from_status(status, body.as_bytes(), &call(scope), &base())
    }

    #[test]
    fn unauthorized_points_at_the_token_settings() {
        let e = map(
            401,
            r#"{"message":"Bad crendentials","status":401}"#,
            Scope::GistRead,
        );
        assert!(matches!(e, OpengistError::BadToken { .. }));
        let text = e.to_string();
        assert!(
            text.contains("https://gist.example.com/og/-/settings/access-tokens"),
            "{text}"
        );
        assert!(text.contains("Settings → Access Tokens"));
        assert_eq!(e.status(), Some(401));
    }

    #[test]
    fn a_missing_token_is_not_a_rejected_one() {
        let e = map(
            401,
            r#"{"message":"Requires authentication","status":401}"#,
            Scope::AnyToken,
        );
        assert!(matches!(e, OpengistError::TokenRequired { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("none is configured"), "{text}");
        assert!(text.contains("OPENGIST_TOKEN"), "{text}");
        assert!(
            text.contains("https://gist.example.com/og/-/settings/access-tokens"),
            "{text}"
        );
        assert_eq!(e.status(), Some(401));
        // An empty 401 body is still read as a rejected token.
        assert!(matches!(
            map(401, "", Scope::GistRead),
            OpengistError::BadToken { .. }
        ));
    }

    #[test]
    fn forbidden_is_told_apart_by_its_message() {
        let disabled = map(
            403,
            r#"{"message":"API is disabled","status":403}"#,
            Scope::GistRead,
        );
        assert!(
            matches!(disabled, OpengistError::ApiDisabled { .. }),
            "{disabled}"
        );
        assert!(disabled.to_string().contains("api.enabled"));

        let scope = map(
            403,
            r#"{"message":"token lacks required scope/permission","status":403}"#,
            Scope::GistWrite,
        );
        assert!(
            matches!(
                scope,
                OpengistError::MissingScope {
                    scope: Scope::GistWrite,
                    ..
                }
            ),
            "{scope}"
        );
        assert!(scope.to_string().contains("`gist:write`"), "{scope}");

        let owner = map(
            403,
            r#"{"message":"You are not the owner of this gist","status":403}"#,
            Scope::GistWrite,
        );
        assert!(matches!(owner, OpengistError::NotOwner { .. }), "{owner}");
        assert!(
            owner
                .to_string()
                .starts_with("gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c belongs to another account")
        );

        let archived = map(
            403,
            r#"{"message":"This gist is archived and is read-only","status":403}"#,
            Scope::GistWrite,
        );
        assert!(
            matches!(archived, OpengistError::Archived { .. }),
            "{archived}"
        );

        let other = map(403, r#"{"message":"nope","status":403}"#, Scope::GistWrite);
        assert_eq!(
            other.to_string(),
            "Opengist refused to update a gist (403 Forbidden): \"nope\""
        );
    }

    #[test]
    fn not_found_never_says_deleted() {
        let e = map(
            404,
            r#"{"message":"Gist not found","status":404}"#,
            Scope::GistRead,
        );
        let text = e.to_string();
        assert_eq!(
            text,
            "gist 3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c does not exist or is not visible to this token"
        );
        assert!(!text.contains("deleted"));
        assert!(e.is_not_found());
    }

    #[test]
    fn validation_quotes_only_opengists_message_truncated() {
        let long = "x".repeat(1000);
        let body = format!(r#"{{"message":"{long}","status":422,"secret":"{TOKEN}"}}"#);
        let e = map(422, &body, Scope::GistWrite);
        let text = e.to_string();
        assert!(!text.contains(TOKEN));
        assert!(text.contains(&"x".repeat(MAX_MESSAGE_CHARS)));
        assert!(!text.contains(&"x".repeat(MAX_MESSAGE_CHARS + 1)));
        assert!(text.contains('…'));
        // The `error` spelling is read too.
        let e = map(
            422,
            r#"{"error":"files: filename cannot be empty","code":"x"}"#,
            Scope::GistWrite,
        );
        assert!(
            e.to_string()
                .ends_with(": \"files: filename cannot be empty\""),
            "{e}"
        );
    }

    #[test]
    fn non_json_bodies_are_never_quoted() {
        let e = map(
            502,
            "<html>upstream secret stack trace</html>",
            Scope::GistRead,
        );
        assert!(matches!(
            e,
            OpengistError::Server {
                status: 502,
                message: None,
                ..
            }
        ));
        assert!(!e.to_string().contains("stack trace"));
        let e = map(418, "teapot body", Scope::GistRead);
        assert!(matches!(
            e,
            OpengistError::UnexpectedStatus { status: 418, .. }
        ));
        assert!(!e.to_string().contains("teapot body"));
    }

    #[test]
    fn other_statuses() {
        assert!(matches!(
            map(400, "{}", Scope::GistRead),
            OpengistError::BadRequest { .. }
        ));
        assert!(matches!(
            map(302, "", Scope::GistRead),
            OpengistError::Redirect { status: 302, .. }
        ));
        let server = map(
            500,
            r#"{"message":"failed to read file","status":500}"#,
            Scope::GistRead,
        );
        assert_eq!(
            server.to_string(),
            "the Opengist server failed to update a gist (500): \"failed to read file\"; try again shortly, and if it persists check the instance's logs"
        );
    }

    #[test]
    fn control_characters_are_flattened() {
        assert_eq!(
            error_message(br#"{"message":"a\nb\u001b[31m"}"#).as_deref(),
            Some("a b [31m")
        );
        assert_eq!(error_message(br#"{"message":"   "}"#), None);
        assert_eq!(error_message(b"not json"), None);
    }

    #[test]
    fn base_is_shown_without_credentials() {
        let url = Url::parse("https://user:pw@gist.example.com:8443/og/?q=1#f").expect("url");
        assert_eq!(display_base(&url), "https://gist.example.com:8443/og");
        assert_eq!(display_host(&url), "gist.example.com:8443");
    }

    #[test]
    fn timeouts_name_the_timeout_and_host() {
        let e = OpengistError::Timeout {
            phase: TimeoutPhase::Request,
            after: Duration::from_millis(1500),
            host: "gist.example.com".into(),
            operation: "read a gist",
        };
        assert_eq!(
            e.to_string(),
            "no answer from gist.example.com within the request timeout of 1.5s while trying to read a gist; the instance may be down or overloaded, or OPENGIST_URL may point at the wrong address"
        );
    }

    #[test]
    fn json_errors_do_not_echo_values() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct N {
            n: u64,
        }
        let error = serde_json::from_str::<N>(r#"{"n":"SECRET TITLE"}"#).expect_err("bad type");
        let text = describe_json_error(&error);
        assert!(!text.contains("SECRET"), "{text}");
        assert!(text.contains("line 1"));
    }
}
