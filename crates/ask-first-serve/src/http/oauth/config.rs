//! [`OAuthConfig`], what an [`OAuthVerifier`](super::OAuthVerifier) checks tokens against, read
//! from the settings, and [`OAuthError`], why OAuth mode could not be set up.

use std::time::Duration;

use crate::settings::{OAuthNames, OAuthSettings};

/// The settings an [`OAuthVerifier`](super::OAuthVerifier) needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The issuer, exactly as the tokens' `iss` spells it.
    pub issuer: String,
    /// This server's resource identifier, exactly as the tokens' `aud` carries it.
    pub resource: String,
    /// Clock-skew leeway on `exp` and `nbf`.
    pub leeway: Duration,
    /// Shortest time between two key refreshes.
    pub refresh_interval: Duration,
    /// Scopes every token must carry (none: any token for the resource).
    pub scopes: Vec<String>,
}

impl OAuthConfig {
    /// The configuration the settings give, or the error naming the missing setting.
    pub fn from_settings(
        settings: &OAuthSettings,
        names: &OAuthNames,
        mode_setting: &str,
    ) -> Result<Self, OAuthError> {
        let missing = |setting: &String, what| OAuthError::Missing {
            setting: setting.clone(),
            what,
            mode_setting: mode_setting.to_owned(),
        };
        Ok(Self {
            issuer: settings.issuer.clone().ok_or_else(|| {
                missing(
                    &names.issuer,
                    "the issuer URL of the authorization server whose access tokens this \
                     server accepts (e.g. https://login.example.com/realms/team)",
                )
            })?,
            resource: settings.resource.clone().ok_or_else(|| {
                missing(
                    &names.resource,
                    "this server's public URL of /mcp, the audience its access tokens must \
                     carry (e.g. https://mcp.example.com/mcp)",
                )
            })?,
            leeway: settings.leeway,
            refresh_interval: settings.refresh_interval,
            scopes: settings.scopes.clone(),
        })
    }
}

/// Why OAuth mode could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// OAuth mode without the issuer or the resource.
    #[error(
        "{mode_setting}=oauth needs {setting}: set it to {what}, or choose another {mode_setting}"
    )]
    Missing {
        /// The missing setting.
        setting: String,
        /// What it holds.
        what: &'static str,
        /// The authentication-mode setting.
        mode_setting: String,
    },
    /// The HTTP client for metadata and keys could not be built.
    #[error("the HTTP client for the authorization server could not be built: {source}")]
    Client {
        /// What reqwest said.
        #[source]
        source: reqwest::Error,
    },
    /// A URL could not be derived from the settings.
    #[error("{setting} is not a URL this server can derive its metadata address from")]
    Url {
        /// The setting.
        setting: String,
    },
}
