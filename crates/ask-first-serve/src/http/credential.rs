//! The credential the gate checks ([`Credential::choose`], as [`auth`] describes)
//! and the start-up lines that say how to present it ([`announce`]).

use std::net::SocketAddr;
use std::sync::Arc;

use crate::settings::{AuthMode, Secret, SettingNames, is_loopback};

use super::{Authenticate, HttpError, HttpOptions, MCP_PATH, TokenFile, auth, oauth};

/// The credential [`bind_http`](super::bind_http) chose.
pub(super) enum Credential {
    /// The bearer secret setting.
    Configured(Secret),
    /// Made up at start, printed once on stderr.
    Minted(Secret),
    /// The no-authentication setting.
    None,
    /// Per-person tokens from a file.
    Tokens(Arc<TokenFile>, std::path::PathBuf),
    /// The server's own authenticator.
    Own(Arc<dyn Authenticate>),
    /// OAuth 2.1 access tokens from one issuer.
    OAuth(Arc<oauth::OAuthVerifier>),
}

impl Credential {
    /// The credential `options` ask for on `addr` ([`auth`] says how it chooses).
    pub(super) fn choose(addr: SocketAddr, options: &HttpOptions) -> Result<Self, HttpError> {
        let names = &options.names;
        if let Some(own) = &options.authenticator {
            return Ok(Self::Own(own.clone()));
        }
        match &options.auth.mode {
            AuthMode::Tokens => {
                let Some(path) = &options.auth.tokens_file else {
                    return Err(HttpError::TokensFileMissing {
                        setting: names.http_tokens_file.clone(),
                        mode_setting: names.http_auth.clone(),
                    });
                };
                let file = TokenFile::load(path, &names.http_tokens_file)?;
                return Ok(Self::Tokens(Arc::new(file), path.clone()));
            }
            // `AuthMode::OAuth` builds its authenticator here.
            AuthMode::OAuth => {
                let config = oauth::OAuthConfig::from_settings(
                    &options.auth.oauth,
                    &names.oauth,
                    &names.http_auth,
                )?;
                return Ok(Self::OAuth(Arc::new(oauth::OAuthVerifier::new(
                    config,
                    &names.oauth,
                )?)));
            }
            AuthMode::Server(_) => {
                return Err(HttpError::NoAuthenticator {
                    setting: names.http_auth.clone(),
                    mode: options.auth.mode.to_string(),
                });
            }
            AuthMode::Secret | AuthMode::None => {}
        }
        let no_auth = options.no_auth || options.auth.mode == AuthMode::None;
        Ok(match (&options.bearer_token, no_auth) {
            (Some(_), true) => {
                return Err(HttpError::AuthConflict {
                    no_auth: names.http_no_auth.clone(),
                    setting: names.http_token.clone(),
                });
            }
            (Some(secret), false) => Self::Configured(secret.clone()),
            (None, true) if !is_loopback(addr.ip()) => {
                return Err(HttpError::NoAuthNotLoopback {
                    addr,
                    no_auth: names.http_no_auth.clone(),
                    setting: names.http_token.clone(),
                });
            }
            (None, true) => Self::None,
            (None, false) if !is_loopback(addr.ip()) => {
                return Err(HttpError::TokenRequired {
                    addr,
                    setting: names.http_token.clone(),
                });
            }
            (None, false) => Self::Minted(auth::mint_secret()),
        })
    }

    pub(super) fn authenticator(&self, names: &SettingNames) -> Arc<dyn Authenticate> {
        match self {
            Self::Configured(secret) => Arc::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`, the secret being the \
                     value of {} on the server",
                    names.http_token
                ),
            )),
            Self::Minted(secret) => Arc::new(auth::SharedSecret::new(
                secret,
                format!(
                    "this server needs `Authorization: Bearer <secret>`: no {} is set, so the \
                     server made up a secret at start and printed it on its stderr (set {} to \
                     choose one)",
                    names.http_token, names.http_token
                ),
            )),
            Self::None => Arc::new(auth::Anonymous),
            Self::Tokens(file, _) => file.clone(),
            Self::Own(own) => own.clone(),
            Self::OAuth(verifier) => verifier.clone(),
        }
    }
}

/// The start-up line of the shared-secret mode: what it proves.
fn one_principal_line(names: &SettingNames) -> String {
    format!(
        "Every client holding this secret is ONE principal, `local` (whatever the secret, so \
         a passkey enrolled with `passkeys add` keeps approving across restarts): they share \
         sessions' ownership, approvals and caps, and any of them can act on another's \
         session. To tell people apart, give each their own token ({auth}=tokens with {file}) \
         or use OAuth ({auth}=oauth).",
        auth = names.http_auth,
        file = names.http_tokens_file,
    )
}

/// Says on stderr (never through tracing, so never into a log collector) how to authenticate:
/// the made-up secret with a client configuration, that every holder of a secret is one
/// principal, how many per-person tokens are listed, or that there is no authentication.
pub(super) fn announce(credential: &Credential, local_addr: SocketAddr, names: &SettingNames) {
    match credential {
        Credential::Configured(_) => eprintln!(
            "HTTP clients authenticate with the shared bearer secret {token}. {line}",
            token = names.http_token,
            line = one_principal_line(names),
        ),
        Credential::Minted(secret) => {
            let url = format!("http://{local_addr}{MCP_PATH}");
            let client = serde_json::json!({
                "type": "http",
                "url": url,
                "headers": { "Authorization": format!("Bearer {}", secret.expose()) },
            });
            eprintln!(
                "No {token} is set, so this run requires a secret made up at start (shown only \
                 here). Send it on every request:\n\n    Authorization: Bearer {secret}\n\n\
                 A client configuration for this run:\n\n    {client}\n\n\
                 To keep one secret across restarts, set {token}; to serve without \
                 authentication (any local process then acts with this server's full rights), \
                 set {no_auth}=true.\n{line}",
                token = names.http_token,
                no_auth = names.http_no_auth,
                secret = secret.expose(),
                line = one_principal_line(names),
            );
        }
        Credential::None => eprintln!(
            "WARNING: {no_auth}=true (or {auth}=none): serving HTTP at \
             http://{local_addr}{MCP_PATH} without authentication: no credential at all. Any \
             process on this machine that can reach the port acts with this server's full rights, and every caller is \
             one principal, `local` (or a hash of the Authorization header it sends; Host and \
             Origin checks stop web pages, not processes). Set {token} \
             and unset {no_auth} to require a secret, or {auth}=tokens for per-person tokens.",
            no_auth = names.http_no_auth,
            auth = names.http_auth,
            token = names.http_token,
        ),
        Credential::Tokens(file, path) => eprintln!(
            "HTTP clients authenticate with per-person tokens: {count} listed in {setting} \
             ({path}), re-read when it changes; each person is their own principal \
             (token:<name>, which `passkeys add --principal` names for their passkey).",
            count = file.token_count().unwrap_or(0),
            setting = names.http_tokens_file,
            path = path.display(),
        ),
        Credential::Own(_) => {}
        Credential::OAuth(verifier) => {
            let config = verifier.config();
            eprintln!(
                "HTTP clients authenticate with OAuth 2.1 access tokens (JWT) issued by {issuer} \
                 for the resource {resource}; each subject is its own principal \
                 (oauth:<issuer>#<subject>, which `passkeys add --principal` names for their \
                 passkey). Protected Resource Metadata: {metadata}",
                issuer = config.issuer,
                resource = config.resource,
                metadata = verifier.metadata_url(),
            );
            // Read the issuer's keys now, so the first request does not wait on them.
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.prefetch().await });
        }
    }
}
