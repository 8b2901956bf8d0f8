//! The CIBA settings: `<PREFIX>_CIBA_CLIENT_ID`, `<PREFIX>_CIBA_CLIENT_SECRET` (a secret: never
//! shown or logged), `<PREFIX>_CIBA_ISSUER` (default: `<PREFIX>_OAUTH_ISSUER`) and
//! `<PREFIX>_CIBA_REQUESTS_PER_MINUTE` (default [`DEFAULT_REQUESTS_PER_MINUTE`]).

use crate::settings::parse_issuer;

/// How many new requests one person's device gets at most in any minute, unless
/// `<PREFIX>_CIBA_REQUESTS_PER_MINUTE` says otherwise.
pub const DEFAULT_REQUESTS_PER_MINUTE: u32 = 10;
/// The most `<PREFIX>_CIBA_REQUESTS_PER_MINUTE` may allow.
const MAX_REQUESTS_PER_MINUTE: u32 = 1000;

/// The CIBA client's settings, when set.
#[derive(Clone, PartialEq, Eq)]
pub struct CibaSettings {
    /// `<PREFIX>_CIBA_CLIENT_ID`: this server's client id at the identity provider.
    pub client_id: String,
    /// `<PREFIX>_CIBA_CLIENT_SECRET`: its client secret.
    pub client_secret: String,
    /// `<PREFIX>_CIBA_ISSUER`: the provider's issuer; `None`: the OAuth issuer.
    pub issuer: Option<String>,
    /// `<PREFIX>_CIBA_REQUESTS_PER_MINUTE`: the most new requests one person's device gets in
    /// any minute (from this process).
    pub requests_per_minute: u32,
}

impl std::fmt::Debug for CibaSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CibaSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("issuer", &self.issuer)
            .field("requests_per_minute", &self.requests_per_minute)
            .finish()
    }
}

/// Why CIBA cannot be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CibaError {
    /// One of the client's two settings without the other.
    #[error(
        "{set} is set without {missing}: set both (the client this server uses at the identity provider for CIBA), or neither"
    )]
    Incomplete {
        /// The setting given.
        set: String,
        /// The setting missing.
        missing: String,
    },
    /// The issuer is not a URL an issuer can have.
    #[error(
        "{setting} must be the identity provider's issuer URL (https; plain http only on loopback), without query or fragment"
    )]
    Issuer {
        /// The setting.
        setting: String,
    },
    /// The bound on requests is not a whole number in range.
    #[error(
        "{setting} must be a whole number from 1 to 1000: how many new requests one person's device may get in any minute"
    )]
    RequestsPerMinute {
        /// The setting.
        setting: String,
    },
    /// The CIBA client (its HTTP client, or its token verifier) could not be built.
    #[error("CIBA could not be set up: {reason}")]
    Setup {
        /// Why.
        reason: String,
    },
}

/// The names of the CIBA settings under `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CibaNames {
    /// `<PREFIX>_CIBA_CLIENT_ID`.
    pub client_id: String,
    /// `<PREFIX>_CIBA_CLIENT_SECRET`.
    pub client_secret: String,
    /// `<PREFIX>_CIBA_ISSUER`.
    pub issuer: String,
    /// `<PREFIX>_CIBA_REQUESTS_PER_MINUTE`.
    pub requests_per_minute: String,
}

impl CibaNames {
    /// The names under `prefix` (`NOTES` names `NOTES_CIBA_CLIENT_ID`, ...).
    pub fn with_prefix(prefix: &str) -> Self {
        Self {
            client_id: format!("{prefix}_CIBA_CLIENT_ID"),
            client_secret: format!("{prefix}_CIBA_CLIENT_SECRET"),
            issuer: format!("{prefix}_CIBA_ISSUER"),
            requests_per_minute: format!("{prefix}_CIBA_REQUESTS_PER_MINUTE"),
        }
    }
}

impl CibaSettings {
    /// Reads the settings through `get` (a value; `None` when unset or empty): `None` when no
    /// client is set.
    pub fn from_lookup(
        names: &CibaNames,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, CibaError> {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let issuer = match get(&names.issuer) {
            Some(raw) => Some(parse_issuer(raw.trim()).ok_or_else(|| CibaError::Issuer {
                setting: names.issuer.clone(),
            })?),
            None => None,
        };
        let requests_per_minute = match get(&names.requests_per_minute) {
            Some(raw) => raw
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_REQUESTS_PER_MINUTE).contains(n))
                .ok_or_else(|| CibaError::RequestsPerMinute {
                    setting: names.requests_per_minute.clone(),
                })?,
            None => DEFAULT_REQUESTS_PER_MINUTE,
        };
        match (get(&names.client_id), get(&names.client_secret)) {
            (Some(client_id), Some(client_secret)) => Ok(Some(Self {
                client_id: client_id.trim().to_owned(),
                client_secret,
                issuer,
                requests_per_minute,
            })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(CibaError::Incomplete {
                set: names.client_id.clone(),
                missing: names.client_secret.clone(),
            }),
            (None, Some(_)) => Err(CibaError::Incomplete {
                set: names.client_secret.clone(),
                missing: names.client_id.clone(),
            }),
        }
    }

    /// Reads the settings under `prefix` from the environment.
    pub fn from_env(prefix: &str) -> Result<Option<Self>, CibaError> {
        Self::from_lookup(&CibaNames::with_prefix(prefix), |name| {
            std::env::var(name).ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<CibaSettings>, CibaError> {
        let names = CibaNames::with_prefix("NOTES");
        CibaSettings::from_lookup(&names, |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn both_or_neither_and_the_secret_is_never_shown() {
        assert!(read(&[]).expect("none").is_none());
        let set = read(&[
            ("NOTES_CIBA_CLIENT_ID", "mcp"),
            ("NOTES_CIBA_CLIENT_SECRET", "s3cret-value"),
        ])
        .expect("read")
        .expect("set");
        assert_eq!(set.client_id, "mcp");
        assert_eq!(set.issuer, None);
        assert!(!format!("{set:?}").contains("s3cret"));
        let half = read(&[("NOTES_CIBA_CLIENT_ID", "mcp")]).unwrap_err();
        assert!(
            half.to_string().contains("NOTES_CIBA_CLIENT_SECRET"),
            "{half}"
        );
        let half = read(&[("NOTES_CIBA_CLIENT_SECRET", "x")]).unwrap_err();
        assert!(!half.to_string().contains("x\""), "{half}");
    }

    #[test]
    fn the_issuer_is_https_or_loopback() {
        let ok = read(&[
            ("NOTES_CIBA_CLIENT_ID", "mcp"),
            ("NOTES_CIBA_CLIENT_SECRET", "s"),
            ("NOTES_CIBA_ISSUER", "https://id.example/realms/team"),
        ])
        .expect("read")
        .expect("set");
        assert_eq!(ok.issuer.as_deref(), Some("https://id.example/realms/team"));
        let bad = read(&[
            ("NOTES_CIBA_CLIENT_ID", "mcp"),
            ("NOTES_CIBA_CLIENT_SECRET", "s"),
            ("NOTES_CIBA_ISSUER", "http://id.example"),
        ]);
        assert!(matches!(bad, Err(CibaError::Issuer { .. })));
    }

    #[test]
    fn the_bound_on_requests_has_a_default_and_a_range() {
        let client = [
            ("NOTES_CIBA_CLIENT_ID", "mcp"),
            ("NOTES_CIBA_CLIENT_SECRET", "s"),
        ];
        let set = read(&client).expect("read").expect("set");
        assert_eq!(set.requests_per_minute, DEFAULT_REQUESTS_PER_MINUTE);
        let with = |value: &str| {
            let mut pairs = client.to_vec();
            pairs.push(("NOTES_CIBA_REQUESTS_PER_MINUTE", value));
            read(&pairs)
        };
        assert_eq!(
            with(" 3 ").expect("read").expect("set").requests_per_minute,
            3
        );
        for bad in ["0", "-1", "ten", "1001", "2.5"] {
            let error = with(bad).expect_err(bad);
            assert!(
                error
                    .to_string()
                    .starts_with("NOTES_CIBA_REQUESTS_PER_MINUTE"),
                "{error}"
            );
        }
    }
}
