//! The login's settings: its client at the identity provider, and which ways the page offers.

use super::{CALLBACK_PATH, LOGIN_TTL, Login};
use crate::approve::ApprovalSettingError;
use crate::approve::PAGE_TTL;
use crate::approve::held::Held;
use crate::http::oauth::{OAuthConfig, OAuthVerifier};
use crate::settings::{OAuthNames, OAuthSettings, Secret};

/// The ways the page offers to approve, and the login's client, as the settings say.
#[derive(Debug, Clone)]
pub(crate) struct LoginSettings {
    client_id: Option<String>,
    client_secret: Option<Secret>,
    /// Whether a passkey approves on the page.
    pub(crate) passkey: bool,
    /// Whether a login approves on the page.
    pub(crate) login: bool,
}

impl LoginSettings {
    /// Reads `<PREFIX>_APPROVAL_LOGIN_CLIENT_ID`, `<PREFIX>_APPROVAL_LOGIN_CLIENT_SECRET` and
    /// `<PREFIX>_APPROVAL_PAGE_METHODS` (`passkey`, `login`; default: a passkey, and a login
    /// when its client is configured).
    pub(crate) fn from_env(prefix: &str) -> Result<Self, ApprovalSettingError> {
        Self::from_vars(prefix, |name| std::env::var(name).ok())
    }

    /// As [`LoginSettings::from_env`], each setting read through `get`.
    fn from_vars(
        prefix: &str,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ApprovalSettingError> {
        let var = |name: &str| {
            get(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let id_setting = format!("{prefix}_APPROVAL_LOGIN_CLIENT_ID");
        let client_id = var(&id_setting);
        let client_secret = var(&format!("{prefix}_APPROVAL_LOGIN_CLIENT_SECRET")).map(Secret::new);
        let methods_setting = format!("{prefix}_APPROVAL_PAGE_METHODS");
        let (passkey, login) = match var(&methods_setting) {
            None => (true, client_id.is_some()),
            Some(text) => {
                let (mut passkey, mut login) = (false, false);
                for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    match word.to_ascii_lowercase().as_str() {
                        "passkey" => passkey = true,
                        "login" => login = true,
                        _ => {
                            return Err(ApprovalSettingError::Login {
                                reason: format!(
                                    "{methods_setting}: `{word}` is neither `passkey` nor `login`"
                                ),
                            });
                        }
                    }
                }
                if !passkey && !login {
                    return Err(ApprovalSettingError::Login {
                        reason: format!("{methods_setting} names no method (passkey, login)"),
                    });
                }
                if login && client_id.is_none() {
                    return Err(ApprovalSettingError::Login {
                        reason: format!(
                            "{methods_setting} offers `login`, which needs {id_setting}: the client id registered at the identity provider for the approval page (redirect URI: the server's public URL followed by {CALLBACK_PATH})"
                        ),
                    });
                }
                (passkey, login)
            }
        };
        Ok(Self {
            client_id,
            client_secret,
            passkey,
            login,
        })
    }

    /// The login for a server in `oauth` mode (`oauth`: its OAuth settings), when offered.
    pub(crate) fn login(
        &self,
        oauth: Option<(&OAuthSettings, &OAuthNames)>,
        mode_setting: &str,
    ) -> Result<Option<Login>, ApprovalSettingError> {
        let Some(client_id) = self.client_id.clone().filter(|_| self.login) else {
            return Ok(None);
        };
        let Some((settings, names)) = oauth else {
            return Err(ApprovalSettingError::Login {
                reason: format!(
                    "the approval page's login needs {mode_setting}=oauth: the person signs in at the identity provider whose access tokens the server accepts (or leave `login` out of the page's methods)"
                ),
            });
        };
        let mut config =
            OAuthConfig::from_settings(settings, names, mode_setting).map_err(|e| {
                ApprovalSettingError::Login {
                    reason: e.to_string(),
                }
            })?;
        config.scopes.clear();
        let verifier =
            OAuthVerifier::new(config, names).map_err(|e| ApprovalSettingError::Login {
                reason: e.to_string(),
            })?;
        Ok(Some(Login {
            verifier,
            client_id,
            client_secret: self.client_secret.clone(),
            passkey: self.passkey,
            started: Held::new(LOGIN_TTL),
            signed_in: Held::new(PAGE_TTL),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<LoginSettings, ApprovalSettingError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        LoginSettings::from_vars("T", move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_login_is_offered_when_configured_and_only_as_the_operator_says() {
        let none = read(&[]).expect("defaults");
        assert!(none.passkey && !none.login);
        let configured = read(&[("T_APPROVAL_LOGIN_CLIENT_ID", "page")]).expect("login");
        assert!(configured.passkey && configured.login);
        let only = read(&[
            ("T_APPROVAL_LOGIN_CLIENT_ID", "page"),
            ("T_APPROVAL_PAGE_METHODS", " Login "),
        ])
        .expect("login only");
        assert!(!only.passkey && only.login);
        let passkey_only = read(&[
            ("T_APPROVAL_LOGIN_CLIENT_ID", "page"),
            ("T_APPROVAL_PAGE_METHODS", "passkey"),
        ])
        .expect("passkey only");
        assert!(passkey_only.passkey && !passkey_only.login);
        assert!(
            passkey_only
                .login(None, "T_HTTP_AUTH")
                .expect("nothing to build")
                .is_none()
        );
        let wrong = read(&[("T_APPROVAL_PAGE_METHODS", "passkey,sms")]).unwrap_err();
        assert!(wrong.to_string().contains("`sms`"), "{wrong}");
        let unconfigured = read(&[("T_APPROVAL_PAGE_METHODS", "login")]).unwrap_err();
        assert!(
            unconfigured
                .to_string()
                .contains("T_APPROVAL_LOGIN_CLIENT_ID"),
            "{unconfigured}"
        );
        assert!(read(&[("T_APPROVAL_PAGE_METHODS", " , ")]).is_err());
        // Outside oauth mode the login cannot be set up: the error names the mode's setting.
        let outside = configured.login(None, "T_HTTP_AUTH").unwrap_err();
        assert!(
            outside.to_string().contains("T_HTTP_AUTH=oauth"),
            "{outside}"
        );
    }
}
