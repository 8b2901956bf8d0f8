//! The OAuth 2.1 resource-server settings (`<PREFIX>_HTTP_AUTH=oauth`): which authorization
//! server issues the access tokens this server accepts, which resource they must be for, and
//! how much clock skew and key refreshing is tolerated.
//!
//! Parsing only checks each value's shape; whether the pair is complete is checked when HTTP
//! serving starts in OAuth mode (the other modes ignore these settings).

use std::time::Duration;

use url::Url;

use super::{SettingError, is_loopback};

/// Default clock-skew leeway on `exp` and `nbf`, in seconds.
pub const DEFAULT_OAUTH_LEEWAY_SECS: u64 = 30;
/// Default shortest time between two key refreshes caused by an unknown `kid`, in seconds.
pub const DEFAULT_OAUTH_REFRESH_SECS: u64 = 30;

/// The names of the OAuth settings, as every message shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthNames {
    /// The authorization server's issuer URL (`<PREFIX>_OAUTH_ISSUER`).
    pub issuer: String,
    /// This server's resource identifier, the public URL of its `/mcp` (`<PREFIX>_OAUTH_RESOURCE`).
    pub resource: String,
    /// Clock-skew leeway on `exp`/`nbf` (`<PREFIX>_OAUTH_LEEWAY_SECS`).
    pub leeway: String,
    /// Shortest time between two unknown-`kid` key refreshes (`<PREFIX>_OAUTH_JWKS_REFRESH_SECS`).
    pub refresh: String,
    /// Scopes every token must carry (`<PREFIX>_OAUTH_SCOPES`).
    pub scopes: String,
}

impl OAuthNames {
    /// Every name of this block, to change each in place.
    pub fn each_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.issuer,
            &mut self.resource,
            &mut self.leeway,
            &mut self.refresh,
            &mut self.scopes,
        ]
        .into_iter()
    }

    /// `<prefix>_OAUTH_ISSUER`, `<prefix>_OAUTH_RESOURCE`, `<prefix>_OAUTH_LEEWAY_SECS` and
    /// `<prefix>_OAUTH_JWKS_REFRESH_SECS` and `<prefix>_OAUTH_SCOPES`.
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |suffix: &str| format!("{prefix}_{suffix}");
        Self {
            issuer: name("OAUTH_ISSUER"),
            resource: name("OAUTH_RESOURCE"),
            leeway: name("OAUTH_LEEWAY_SECS"),
            refresh: name("OAUTH_JWKS_REFRESH_SECS"),
            scopes: name("OAUTH_SCOPES"),
        }
    }
}

impl Default for OAuthNames {
    fn default() -> Self {
        Self::with_prefix("MCP")
    }
}

/// The OAuth settings as read (each one optional until OAuth mode needs it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// `<PREFIX>_OAUTH_ISSUER`: an `https` URL (plain `http` only on a loopback host), no
    /// query or fragment, compared byte for byte with the tokens' `iss`.
    pub issuer: Option<String>,
    /// `<PREFIX>_OAUTH_RESOURCE`: an absolute `http(s)` URL without fragment, compared byte for
    /// byte with the tokens' `aud`.
    pub resource: Option<String>,
    /// `<PREFIX>_OAUTH_LEEWAY_SECS` (0 to 300; default [`DEFAULT_OAUTH_LEEWAY_SECS`]).
    pub leeway: Duration,
    /// `<PREFIX>_OAUTH_JWKS_REFRESH_SECS` (1 to 3600; default [`DEFAULT_OAUTH_REFRESH_SECS`]).
    pub refresh_interval: Duration,
    /// `<PREFIX>_OAUTH_SCOPES`: scopes every token must carry (in its `scope`, or `scp`),
    /// separated by spaces or commas; none by default.
    pub scopes: Vec<String>,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            issuer: None,
            resource: None,
            leeway: Duration::from_secs(DEFAULT_OAUTH_LEEWAY_SECS),
            refresh_interval: Duration::from_secs(DEFAULT_OAUTH_REFRESH_SECS),
            scopes: Vec::new(),
        }
    }
}

impl OAuthSettings {
    /// Reads the OAuth settings through `get` (a set, non-empty value, or `None`).
    pub fn from_lookup(
        names: &OAuthNames,
        mut get: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let issuer = match get(&names.issuer) {
            Some(raw) => {
                Some(
                    parse_issuer(raw.trim()).ok_or_else(|| SettingError::OAuthIssuer {
                        setting: names.issuer.clone(),
                    })?,
                )
            }
            None => None,
        };
        let resource = match get(&names.resource) {
            Some(raw) => {
                Some(
                    parse_resource(raw.trim()).ok_or_else(|| SettingError::OAuthResource {
                        setting: names.resource.clone(),
                    })?,
                )
            }
            None => None,
        };
        let mut number = |setting: &String, min: u64, max: u64, default: u64| match get(setting) {
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
        let leeway = number(&names.leeway, 0, 300, DEFAULT_OAUTH_LEEWAY_SECS)?;
        let refresh = number(&names.refresh, 1, 3600, DEFAULT_OAUTH_REFRESH_SECS)?;
        let scopes: Vec<String> = get(&names.scopes)
            .unwrap_or_default()
            .split([' ', ','])
            .filter(|scope| !scope.is_empty())
            .map(str::to_owned)
            .collect();
        // RFC 6749 3.3: a scope token is visible ASCII except `"` and `\`.
        if scopes.iter().any(|scope| {
            !scope
                .bytes()
                .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\')
        }) {
            return Err(SettingError::OAuthScopes {
                setting: names.scopes.clone(),
            });
        }
        Ok(Self {
            issuer,
            resource,
            leeway: Duration::from_secs(leeway),
            refresh_interval: Duration::from_secs(refresh),
            scopes,
        })
    }
}

/// Whether `url`'s host is a loopback name or address.
pub(crate) fn is_loopback_url(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => is_loopback(ip.into()),
        Some(url::Host::Ipv6(ip)) => is_loopback(ip.into()),
        None => false,
    }
}

/// An issuer: `https://host[:port][/path]` (plain `http` only on loopback), no query, no
/// fragment, no user info. Returned exactly as given (the tokens' `iss` must match it byte for
/// byte, and RFC 8414 requires the metadata's `issuer` to be identical too).
pub fn parse_issuer(raw: &str) -> Option<String> {
    let url = Url::parse(raw).ok()?;
    let secure = match url.scheme() {
        "https" => true,
        "http" => is_loopback_url(&url),
        _ => false,
    };
    (secure
        && url.host().is_some()
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none()
        && !raw.contains(char::is_whitespace))
    .then(|| raw.to_owned())
}

/// A resource identifier (RFC 8707): an absolute `http(s)` URL with a host and no fragment,
/// returned exactly as given.
pub fn parse_resource(raw: &str) -> Option<String> {
    let url = Url::parse(raw).ok()?;
    (matches!(url.scheme(), "https" | "http")
        && url.host().is_some()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none()
        && !raw.contains(char::is_whitespace))
    .then(|| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuers_are_https_or_loopback_http() {
        assert!(parse_issuer("https://login.example.com").is_some());
        assert!(parse_issuer("https://login.example.com/realms/team").is_some());
        assert!(parse_issuer("http://127.0.0.1:9000").is_some());
        assert!(parse_issuer("http://localhost:9000/").is_some());
        assert!(parse_issuer("http://[::1]:9000").is_some());
        assert!(parse_issuer("http://login.example.com").is_none());
        assert!(parse_issuer("https://login.example.com?x=1").is_none());
        assert!(parse_issuer("https://login.example.com#x").is_none());
        assert!(parse_issuer("https://user@login.example.com").is_none());
        assert!(parse_issuer("login.example.com").is_none());
        assert!(parse_issuer("ftp://login.example.com").is_none());
    }

    #[test]
    fn resources_are_absolute_urls_without_fragment() {
        assert!(parse_resource("https://mcp.example.com/mcp").is_some());
        assert!(parse_resource("http://127.0.0.1:8080/mcp").is_some());
        assert!(parse_resource("https://mcp.example.com/mcp#x").is_none());
        assert!(parse_resource("/mcp").is_none());
    }

    #[test]
    fn numbers_and_shapes_are_named_in_errors() {
        let names = OAuthNames::with_prefix("NOTES");
        let error = OAuthSettings::from_lookup(&names, |name| {
            (name == "NOTES_OAUTH_ISSUER").then(|| "http://login.example.com".to_owned())
        })
        .expect_err("plain http off loopback");
        assert!(
            error.to_string().starts_with("NOTES_OAUTH_ISSUER "),
            "{error}"
        );
        let error = OAuthSettings::from_lookup(&names, |name| {
            (name == "NOTES_OAUTH_LEEWAY_SECS").then(|| "3601".to_owned())
        })
        .expect_err("out of range");
        assert!(
            error.to_string().starts_with("NOTES_OAUTH_LEEWAY_SECS "),
            "{error}"
        );
        let read = OAuthSettings::from_lookup(&names, |_| None).expect("defaults");
        assert_eq!(read, OAuthSettings::default());
        let read = OAuthSettings::from_lookup(&names, |name| {
            (name == "NOTES_OAUTH_SCOPES").then(|| " notes.read, notes.write ".to_owned())
        })
        .expect("scopes");
        assert_eq!(read.scopes, ["notes.read", "notes.write"]);
        let error = OAuthSettings::from_lookup(&names, |name| {
            (name == "NOTES_OAUTH_SCOPES").then(|| "notes\"read".to_owned())
        })
        .expect_err("a quote");
        assert!(
            error.to_string().starts_with("NOTES_OAUTH_SCOPES "),
            "{error}"
        );
    }

    #[test]
    fn the_oauth_settings_belong_to_the_oauth_mode() {
        let names = super::super::SettingNames::with_prefix("NOTES");
        let read = |pairs: &'static [(&'static str, &'static str)]| {
            super::super::AuthSettings::from_lookup(&names, &[], |name| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            })
        };
        let auth = read(&[
            ("NOTES_HTTP_AUTH", "oauth"),
            ("NOTES_OAUTH_ISSUER", "https://login.example.com"),
            ("NOTES_OAUTH_RESOURCE", "https://mcp.example.com/mcp"),
            ("NOTES_OAUTH_LEEWAY_SECS", "5"),
        ])
        .expect("oauth");
        assert_eq!(auth.mode, super::super::AuthMode::OAuth);
        assert_eq!(
            auth.oauth.issuer.as_deref(),
            Some("https://login.example.com")
        );
        assert_eq!(auth.oauth.leeway, Duration::from_secs(5));
        let error = read(&[("NOTES_OAUTH_RESOURCE", "https://mcp.example.com/mcp")])
            .expect_err("another mode");
        assert!(
            error
                .to_string()
                .starts_with("NOTES_OAUTH_RESOURCE does not apply with NOTES_HTTP_AUTH=secret"),
            "{error}"
        );
    }
}
