//! How HTTP requests are authenticated: the `<PREFIX>_HTTP_AUTH` setting and the settings of
//! its modes, read by [`AuthSettings::from_lookup`] (which a server with its own configuration
//! code, such as `opengist-mcp`, calls too).
//!
//! | `<PREFIX>_HTTP_AUTH` | who a caller is | needs |
//! |---|---|---|
//! | `secret` (default) | every holder of the one bearer secret is **one** principal, `local`, whatever the secret | `<PREFIX>_HTTP_TOKEN`, or on loopback a secret made up at start |
//! | `tokens` | each person their own principal, `token:<name>` | `<PREFIX>_HTTP_TOKENS_FILE` |
//! | `oauth` | `oauth:<issuer>#<subject>` from an OAuth 2.1 access token | the `<PREFIX>_OAUTH_*` settings |
//! | `none` | every caller is `local` (or a hash of the `Authorization` header it sends; loopback only) | nothing; `<PREFIX>_HTTP_NO_AUTH=true` is the same |
//! | a server's own mode | what the server's authenticator says | the server's settings |

use std::path::PathBuf;

use super::{SettingError, SettingNames};

/// How HTTP requests are authenticated (`<PREFIX>_HTTP_AUTH`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// `secret`: one bearer secret (`<PREFIX>_HTTP_TOKEN`, or made up at start on loopback).
    /// Every client holding it is one principal, `local`, whatever the secret.
    #[default]
    Secret,
    /// `tokens`: per-person tokens, their hashes listed in `<PREFIX>_HTTP_TOKENS_FILE`.
    Tokens,
    /// `oauth`: OAuth 2.1 access tokens (the `<PREFIX>_OAUTH_*` settings).
    OAuth,
    /// `none` (or `<PREFIX>_HTTP_NO_AUTH=true`): nothing checked, loopback only.
    None,
    /// A mode the server itself defines (e.g. opengist-mcp's `opengist`); the server supplies
    /// the authenticator (`HttpOptions::authenticator`).
    Server(String),
}

impl AuthMode {
    /// The value of `<PREFIX>_HTTP_AUTH` that selects this mode.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Secret => "secret",
            Self::Tokens => "tokens",
            Self::OAuth => "oauth",
            Self::None => "none",
            Self::Server(name) => name,
        }
    }

    /// Whether every caller is told apart from the others by this mode (`tokens`, `oauth`, a
    /// server's own mode); `false` for `secret` and `none`, where every caller is one
    /// principal.
    pub fn is_per_person(&self) -> bool {
        matches!(self, Self::Tokens | Self::OAuth | Self::Server(_))
    }
}

impl std::fmt::Display for AuthMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The authentication settings: the mode and each mode's own settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthSettings {
    /// `<PREFIX>_HTTP_AUTH`.
    pub mode: AuthMode,
    /// `<PREFIX>_HTTP_TOKENS_FILE` (mode `tokens` only).
    pub tokens_file: Option<PathBuf>,
    // The OAuth settings.
    /// `<PREFIX>_OAUTH_*` (mode `oauth` only).
    pub oauth: super::OAuthSettings,
}

impl AuthSettings {
    /// Reads `<PREFIX>_HTTP_AUTH`, its alias `<PREFIX>_HTTP_NO_AUTH` and each mode's settings
    /// through `get` (a value; `None` when unset). `server_modes`: the extra values of
    /// `<PREFIX>_HTTP_AUTH` this server accepts (e.g. `&["opengist"]`), read as
    /// [`AuthMode::Server`].
    ///
    /// Refused, naming the settings: an unknown mode; `<PREFIX>_HTTP_NO_AUTH=true` with another
    /// mode than `none`; `<PREFIX>_HTTP_TOKEN` (the shared secret) with another mode than
    /// `secret`; `tokens` without `<PREFIX>_HTTP_TOKENS_FILE`, or that file with another mode.
    ///
    /// ```
    /// use ask_first_serve::settings::{AuthMode, AuthSettings, SettingNames};
    ///
    /// let names = SettingNames::with_prefix("NOTES");
    /// let env = |name: &str| match name {
    ///     "NOTES_HTTP_AUTH" => Some("tokens".to_owned()),
    ///     "NOTES_HTTP_TOKENS_FILE" => Some("/etc/notes/tokens".to_owned()),
    ///     _ => None,
    /// };
    /// let auth = AuthSettings::from_lookup(&names, &[], env).unwrap();
    /// assert_eq!(auth.mode, AuthMode::Tokens);
    ///
    /// let env = |name: &str| (name == "NOTES_HTTP_AUTH").then(|| "opengist".to_owned());
    /// let auth = AuthSettings::from_lookup(&names, &["opengist"], env).unwrap();
    /// assert_eq!(auth.mode, AuthMode::Server("opengist".to_owned()));
    /// assert!(AuthSettings::from_lookup(&names, &[], env).is_err());
    /// ```
    pub fn from_lookup(
        names: &SettingNames,
        server_modes: &[&str],
        mut get: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let mut get = |name: &str| {
            get(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let no_auth = match get(&names.http_no_auth).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                return Err(SettingError::Switch {
                    setting: names.http_no_auth.clone(),
                });
            }
        };
        let mode = match get(&names.http_auth) {
            None if no_auth => AuthMode::None,
            None => AuthMode::Secret,
            Some(value) => match value.as_str() {
                "secret" => AuthMode::Secret,
                "tokens" => AuthMode::Tokens,
                "oauth" => AuthMode::OAuth,
                "none" => AuthMode::None,
                other if server_modes.contains(&other) => AuthMode::Server(other.to_owned()),
                _ => {
                    let mut accepted = vec!["secret", "tokens", "oauth", "none"];
                    accepted.extend_from_slice(server_modes);
                    return Err(SettingError::AuthMode {
                        setting: names.http_auth.clone(),
                        accepted: accepted
                            .iter()
                            .map(|mode| format!("`{mode}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            },
        };
        if no_auth && mode != AuthMode::None {
            return Err(SettingError::AuthConflict {
                setting: names.http_no_auth.clone(),
                mode_setting: names.http_auth.clone(),
                mode: mode.to_string(),
            });
        }
        if no_auth && get(&names.http_token).is_some() {
            return Err(SettingError::NoAuthWithSecret {
                no_auth: names.http_no_auth.clone(),
                setting: names.http_token.clone(),
            });
        }
        if mode != AuthMode::Secret && get(&names.http_token).is_some() {
            return Err(SettingError::AuthConflict {
                setting: names.http_token.clone(),
                mode_setting: names.http_auth.clone(),
                mode: mode.to_string(),
            });
        }
        let tokens_file = get(&names.http_tokens_file).map(PathBuf::from);
        match (&mode, &tokens_file) {
            (AuthMode::Tokens, None) => {
                return Err(SettingError::TokensFileMissing {
                    setting: names.http_tokens_file.clone(),
                    mode_setting: names.http_auth.clone(),
                });
            }
            (AuthMode::Tokens, Some(_)) | (_, None) => {}
            (_, Some(_)) => {
                return Err(SettingError::AuthConflict {
                    setting: names.http_tokens_file.clone(),
                    mode_setting: names.http_auth.clone(),
                    mode: mode.to_string(),
                });
            }
        }
        // OAuth
        let oauth = super::OAuthSettings::from_lookup(&names.oauth, &mut get)?;
        if mode != AuthMode::OAuth {
            let stray = [
                (oauth.issuer.is_some(), &names.oauth.issuer),
                (oauth.resource.is_some(), &names.oauth.resource),
            ];
            if let Some((_, setting)) = stray.iter().find(|(set, _)| *set) {
                return Err(SettingError::AuthConflict {
                    setting: (*setting).clone(),
                    mode_setting: names.http_auth.clone(),
                    mode: mode.to_string(),
                });
            }
        }
        Ok(Self {
            mode,
            tokens_file,
            oauth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)], extra: &[&str]) -> Result<AuthSettings, SettingError> {
        let names = SettingNames::with_prefix("NOTES");
        AuthSettings::from_lookup(&names, extra, |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn modes_and_their_alias() {
        assert_eq!(read(&[], &[]).expect("default").mode, AuthMode::Secret);
        assert_eq!(
            read(&[("NOTES_HTTP_NO_AUTH", "true")], &[])
                .expect("alias")
                .mode,
            AuthMode::None
        );
        assert_eq!(
            read(
                &[("NOTES_HTTP_NO_AUTH", "true"), ("NOTES_HTTP_AUTH", "none")],
                &[]
            )
            .expect("both")
            .mode,
            AuthMode::None
        );
        assert_eq!(
            read(&[("NOTES_HTTP_AUTH", " oauth ")], &[])
                .expect("oauth")
                .mode,
            AuthMode::OAuth
        );
        let tokens = read(
            &[
                ("NOTES_HTTP_AUTH", "tokens"),
                ("NOTES_HTTP_TOKENS_FILE", "/etc/notes/tokens"),
            ],
            &[],
        )
        .expect("tokens");
        assert_eq!(tokens.mode, AuthMode::Tokens);
        assert_eq!(
            tokens.tokens_file.as_deref(),
            Some(std::path::Path::new("/etc/notes/tokens"))
        );
        assert_eq!(
            read(&[("NOTES_HTTP_AUTH", "opengist")], &["opengist"])
                .expect("server mode")
                .mode,
            AuthMode::Server("opengist".to_owned())
        );
    }

    #[test]
    fn contradictions_and_unknown_modes_name_their_settings() {
        let error = read(&[("NOTES_HTTP_AUTH", "opengist")], &[]).expect_err("unknown");
        let text = error.to_string();
        assert!(
            text.starts_with("NOTES_HTTP_AUTH ") && text.contains("`tokens`"),
            "{text}"
        );
        let error = read(
            &[
                ("NOTES_HTTP_AUTH", "Tokens"),
                ("NOTES_HTTP_TOKENS_FILE", "f"),
            ],
            &[],
        )
        .expect_err("case matters");
        assert!(error.to_string().starts_with("NOTES_HTTP_AUTH "), "{error}");
        let error = read(&[("NOTES_HTTP_AUTH", "tokens")], &[]).expect_err("no file");
        assert!(
            error.to_string().contains("NOTES_HTTP_TOKENS_FILE"),
            "{error}"
        );
        let error = read(
            &[
                ("NOTES_HTTP_AUTH", "secret"),
                ("NOTES_HTTP_NO_AUTH", "true"),
            ],
            &[],
        )
        .expect_err("contradiction");
        assert!(
            error.to_string().contains("NOTES_HTTP_NO_AUTH")
                && error.to_string().contains("NOTES_HTTP_AUTH"),
            "{error}"
        );
        let error = read(
            &[
                ("NOTES_HTTP_AUTH", "tokens"),
                ("NOTES_HTTP_TOKENS_FILE", "f"),
                ("NOTES_HTTP_TOKEN", "0123456789abcdef0123"),
            ],
            &[],
        )
        .expect_err("a secret with tokens");
        assert!(
            error.to_string().starts_with("NOTES_HTTP_TOKEN "),
            "{error}"
        );
        let error =
            read(&[("NOTES_HTTP_TOKENS_FILE", "f")], &[]).expect_err("a file without tokens");
        assert!(
            error.to_string().starts_with("NOTES_HTTP_TOKENS_FILE "),
            "{error}"
        );
        let error = read(
            &[
                ("NOTES_HTTP_NO_AUTH", "true"),
                ("NOTES_HTTP_TOKEN", "0123456789abcdef0123"),
            ],
            &[],
        )
        .expect_err("no authentication with a secret");
        assert!(
            error.to_string().contains("contradict each other"),
            "{error}"
        );
        let error = read(&[("NOTES_HTTP_NO_AUTH", "yes")], &[]).expect_err("a bad switch");
        assert!(
            error.to_string().starts_with("NOTES_HTTP_NO_AUTH "),
            "{error}"
        );
    }
}
