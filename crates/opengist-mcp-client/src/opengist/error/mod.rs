//! The one error type of the Opengist client, with messages a person can act on.
//!
//! Rules every message follows: it never contains the access token, never contains a response
//! body other than Opengist's own `message` field (cut to [`MAX_MESSAGE_CHARS`] characters),
//! names the configured base URL rather than anything the user pasted, and says what to do next.
//! A 404 says "does not exist or is not visible to this token", never "deleted": Opengist
//! answers 404 for private gists of other users too.

use std::fmt;
use std::time::Duration;

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

mod answer;
pub(crate) use answer::{
    CallInfo, describe_json_error, display_base, display_host, from_status, settings_url,
};

#[cfg(test)]
mod tests;
