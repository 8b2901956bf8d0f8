//! How to reach Opengist: `OPENGIST_URL`, `OPENGIST_TOKEN`, `OPENGIST_INSECURE_TLS`,
//! `OPENGIST_MCP_REQUEST_TIMEOUT_SECS`, and how many requests go to it at once
//! (`OPENGIST_MCP_OPENGIST_MAX_REQUESTS`, `..._PER_PRINCIPAL`, `OPENGIST_MCP_OPENGIST_QUEUE_SECS`).

use std::fmt;
use std::time::Duration;

use ask_first_serve::settings::Secret;
use url::Url;

use super::error::ConfigError;
use super::var::{self, Source};
use crate::opengist::{
    DEFAULT_MAX_REQUESTS, DEFAULT_MAX_REQUESTS_PER_PRINCIPAL, DEFAULT_QUEUE_SECS, RequestLimits,
};

/// Default of `OPENGIST_MCP_REQUEST_TIMEOUT_SECS`.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 30;
/// Largest accepted `OPENGIST_MCP_REQUEST_TIMEOUT_SECS` (an hour).
pub const MAX_REQUEST_TIMEOUT_SECS: u64 = 3600;

/// The Opengist instance's base URL, normalised: http or https, no user info, no query or
/// fragment, no trailing `/` and no trailing `/api`. The API lives at `{base}/api/...`.
#[derive(Clone, PartialEq, Eq)]
pub struct OpengistUrl {
    url: Url,
    base: String,
}

impl OpengistUrl {
    /// Parses and normalises a base URL. The error never contains the value.
    pub fn parse(raw: &str) -> Result<Self, ConfigError> {
        let raw = raw.trim();
        let url = Url::parse(raw).map_err(|_| ConfigError::UrlNotAUrl)?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(ConfigError::UrlScheme);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ConfigError::UrlUserinfo);
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ConfigError::UrlQueryOrFragment);
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ConfigError::UrlNotAUrl);
        }
        let mut path = url.path().to_owned();
        loop {
            let before = path.len();
            while path.ends_with('/') {
                path.pop();
            }
            if let Some(stripped) = path.strip_suffix("/api") {
                path = stripped.to_owned();
            }
            if path.len() == before {
                break;
            }
        }
        let mut normalised = url.clone();
        normalised.set_path(&path);
        let base = normalised.as_str().trim_end_matches('/').to_owned();
        Ok(Self {
            url: normalised,
            base,
        })
    }

    /// The base without a trailing slash, e.g. `https://gist.example.com` or
    /// `https://example.com/opengist`.
    pub fn as_str(&self) -> &str {
        &self.base
    }

    /// The parsed base.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// `{base}/api` followed by `path` (which should start with `/`).
    pub fn api(&self, path: &str) -> String {
        format!("{}/api{}", self.base, path)
    }

    /// Whether the host is `localhost` or a loopback IP address.
    pub fn is_loopback(&self) -> bool {
        match self.url.host() {
            Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }

    /// Whether the scheme is plain `http`.
    pub fn is_plain_http(&self) -> bool {
        self.url.scheme() == "http"
    }
}

impl fmt::Debug for OpengistUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The normalised URL has no credentials; showing it helps diagnose a wrong instance.
        f.debug_tuple("OpengistUrl").field(&self.base).finish()
    }
}

impl fmt::Display for OpengistUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

/// Largest accepted `OPENGIST_MCP_OPENGIST_MAX_REQUESTS` and `..._PER_PRINCIPAL`.
pub const MAX_OPENGIST_REQUESTS: u64 = 1024;
/// Largest accepted `OPENGIST_MCP_OPENGIST_QUEUE_SECS` (an hour).
pub const MAX_OPENGIST_QUEUE_SECS: u64 = 3600;

/// The connection part of [`super::Config`].
pub(super) struct Connection {
    pub(super) opengist_url: Option<OpengistUrl>,
    pub(super) token: Option<Secret>,
    pub(super) insecure_tls: bool,
    pub(super) request_timeout: Duration,
    pub(super) opengist_limits: RequestLimits,
}

impl Connection {
    /// Reads the connection settings, adding the warnings they call for.
    pub(super) fn parse(
        source: &Source<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<Self, ConfigError> {
        let opengist_url = match source.get(var::OPENGIST_URL) {
            Some(raw) => Some(OpengistUrl::parse(&raw)?),
            None => None,
        };
        if let Some(url) = &opengist_url
            && url.is_plain_http()
            && !url.is_loopback()
        {
            warnings.push(
                "OPENGIST_URL uses plain http to a host that is not this machine: the access \
                 token and every gist travel unencrypted; use https"
                    .to_owned(),
            );
        }

        let token = match source.get(var::OPENGIST_TOKEN) {
            Some(raw) => Some(parse_token(&raw, warnings)?),
            None => None,
        };
        match (&opengist_url, &token) {
            (None, Some(_)) => warnings.push(
                "OPENGIST_TOKEN is set but OPENGIST_URL is not: the server starts unconfigured \
                 and every tool call answers with setup instructions"
                    .to_owned(),
            ),
            (Some(_), None) => warnings.push(
                "OPENGIST_URL is set but OPENGIST_TOKEN is not: the server starts unconfigured \
                 and every tool call answers with setup instructions (make a token in Opengist \
                 under Settings -> Access Tokens and set OPENGIST_TOKEN)"
                    .to_owned(),
            ),
            _ => {}
        }

        let insecure_tls = match source.flag_or_exact(var::OPENGIST_INSECURE_TLS).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(ConfigError::InsecureTls),
        };
        if insecure_tls {
            warnings.push(
                "OPENGIST_INSECURE_TLS is on: the Opengist certificate is not verified, so \
                 anyone on the network path could read the token"
                    .to_owned(),
            );
        }

        let request_timeout = Duration::from_secs(source.number(
            var::OPENGIST_MCP_REQUEST_TIMEOUT_SECS,
            1,
            MAX_REQUEST_TIMEOUT_SECS,
            DEFAULT_REQUEST_TIMEOUT_SECS,
        )?);

        let max_in_flight = source.number(
            var::OPENGIST_MCP_OPENGIST_MAX_REQUESTS,
            1,
            MAX_OPENGIST_REQUESTS,
            DEFAULT_MAX_REQUESTS,
        )?;
        let per_principal = source.number(
            var::OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL,
            1,
            MAX_OPENGIST_REQUESTS,
            DEFAULT_MAX_REQUESTS_PER_PRINCIPAL,
        )?;
        let queue_wait = Duration::from_secs(source.number(
            var::OPENGIST_MCP_OPENGIST_QUEUE_SECS,
            1,
            MAX_OPENGIST_QUEUE_SECS,
            DEFAULT_QUEUE_SECS,
        )?);
        let opengist_limits = RequestLimits {
            max_in_flight: usize::try_from(max_in_flight).unwrap_or(usize::MAX),
            per_principal: usize::try_from(per_principal).unwrap_or(usize::MAX),
            queue_wait,
        };

        Ok(Self {
            opengist_url,
            token,
            insecure_tls,
            request_timeout,
            opengist_limits,
        })
    }
}

/// Trims the token; refuses one a header cannot carry; warns (without the value) about an
/// unexpected shape.
fn parse_token(raw: &str, warnings: &mut Vec<String>) -> Result<Secret, ConfigError> {
    let token = raw.trim();
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError::TokenNotHeaderSafe);
    }
    let well_shaped = token
        .strip_prefix("og_")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !well_shaped {
        warnings.push(
            "OPENGIST_TOKEN does not look like an Opengist access token (og_ followed by 64 hex \
             digits); the value is not shown. If calls fail with 401, copy the token again from \
             Opengist, Settings -> Access Tokens"
                .to_owned(),
        );
    }
    Ok(Secret::new(token))
}
