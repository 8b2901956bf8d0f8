//! What a request that failed becomes: the call it was ([`CallInfo`]), the configured base
//! URL as messages show it, Opengist's `message` read from an error body, and the mapping
//! from status and body to an [`OpengistError`].

use serde::Deserialize;
use url::Url;

use super::{MAX_MESSAGE_CHARS, OpengistError, Scope, TokenUse};

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
