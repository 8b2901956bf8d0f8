//! CIBA through the operator's identity provider (`ciba` in `<PREFIX>_APPROVAL_ROUTES`):
//! OpenID Connect Client-Initiated Backchannel Authentication in poll mode, with RFC 9396
//! `authorization_details`, as the guard's [`Backchannel`].
//!
//! Only in OAuth mode (`<PREFIX>_HTTP_AUTH=oauth`): there the caller's subject is proven by
//! their access token, and it is the request's `login_hint`. The server is a confidential
//! client of the provider (`<PREFIX>_CIBA_CLIENT_ID`, `<PREFIX>_CIBA_CLIENT_SECRET`,
//! authenticating with HTTP Basic, `client_secret_basic`); it finds the provider's
//! `backchannel_authentication_endpoint` and `token_endpoint` in the metadata of
//! `<PREFIX>_CIBA_ISSUER` (default `<PREFIX>_OAUTH_ISSUER`).
//!
//! A question is sent with `scope=openid`, the caller's subject as `login_hint`, the record's
//! short code as `binding_message`, `resource=<PREFIX>_OAUTH_RESOURCE` (so the token is a JWT
//! for this server) and one `authorization_details` object of type `ask_first_approval`
//! ([`AUTHORIZATION_DETAILS_TYPE`](ask_first_core::AUTHORIZATION_DETAILS_TYPE)) naming the
//! server, tool, operation and both fingerprints.
//! A token that comes back is checked before the call may run, by the same verifier OAuth
//! mode uses (signature under the issuer's published keys, `iss` = the CIBA issuer, `aud` =
//! the resource, `exp`, `nbf`), then: `sub` is the caller's subject, and its
//! `authorization_details` is exactly one object of that type whose tool, operation, target
//! and question fingerprints are the record's. The record is then spent once by the guard.
//! The client secret, tokens and `auth_req_id`s are never logged.
//!
//! One person's device gets at most `<PREFIX>_CIBA_REQUESTS_PER_MINUTE` new requests in any
//! minute from this process ([`DEFAULT_REQUESTS_PER_MINUTE`] by default); past it a call is
//! refused, saying when to call again, and nothing is sent. (The guard already sends one
//! request per person and exact call: identical calls get its code.) A poll answered
//! `invalid_grant` is [`BackchannelPoll::Consumed`], not a refusal: the provider gave the token
//! to another poll of the same request, whose call acts on it.

mod check;
mod pace;
mod settings;

use std::time::Duration;

use ask_first_core::{
    ApprovalRecord, Backchannel, BackchannelFuture, BackchannelPoll, BackchannelStarted, Caller,
};
use base64::Engine as _;
use serde::Deserialize;

use crate::http::oauth::{OAuthConfig, OAuthVerifier, Verified};
use crate::settings::OAuthNames;

pub use check::{authorization_details, check_token};
pub use settings::{CibaError, CibaNames, CibaSettings, DEFAULT_REQUESTS_PER_MINUTE};

/// How long one request to the provider may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest answer read from the provider, bytes.
const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// The grant type of the token request.
const CIBA_GRANT: &str = "urn:openid:params:grant-type:ciba";

/// The provider's endpoints, read from its metadata.
#[derive(Debug, Clone)]
struct Endpoints {
    backchannel: String,
    token: String,
}

/// The operator's identity provider as the guard's [`Backchannel`].
pub struct CibaClient {
    server: String,
    issuer: String,
    resource: String,
    client_id: String,
    secret: String,
    http: reqwest::Client,
    verifier: OAuthVerifier,
    endpoints: tokio::sync::Mutex<Option<Endpoints>>,
    /// The bound on new requests per person, and its setting's name.
    pace: (pace::Pace, String),
}

impl std::fmt::Debug for CibaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CibaClient")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// What the token endpoint answers: a token, or an error code.
#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// What the backchannel authentication endpoint answers.
#[derive(Deserialize)]
struct StartAnswer {
    #[serde(default)]
    auth_req_id: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    error: Option<String>,
}

impl CibaClient {
    /// The client of `server` for `settings` (named `ciba_names`), checking tokens for `oauth`
    /// (the OAuth mode's configuration: its resource is the tokens' audience, its leeway and
    /// key refreshing apply). Nothing is fetched yet.
    pub fn new(
        server: &str,
        settings: &CibaSettings,
        ciba_names: &CibaNames,
        oauth: &OAuthConfig,
        names: &OAuthNames,
    ) -> Result<Self, CibaError> {
        let issuer = settings
            .issuer
            .clone()
            .unwrap_or_else(|| oauth.issuer.clone());
        let config = OAuthConfig {
            issuer: issuer.clone(),
            scopes: Vec::new(),
            ..oauth.clone()
        };
        let verifier = OAuthVerifier::new(config, names).map_err(|source| CibaError::Setup {
            reason: source.to_string(),
        })?;
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|source| CibaError::Setup {
                reason: source.to_string(),
            })?;
        Ok(Self {
            server: server.to_owned(),
            issuer,
            resource: oauth.resource.clone(),
            client_id: settings.client_id.clone(),
            secret: settings.client_secret.clone(),
            http,
            verifier,
            endpoints: tokio::sync::Mutex::new(None),
            pace: (
                pace::Pace::new(settings.requests_per_minute),
                ciba_names.requests_per_minute.clone(),
            ),
        })
    }

    /// The issuer asked.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The provider's endpoints, read from its metadata on first need (again after a failure).
    async fn endpoints(&self) -> Result<Endpoints, String> {
        let mut held = self.endpoints.lock().await;
        if let Some(endpoints) = held.as_ref() {
            return Ok(endpoints.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let answer = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("its metadata at {url} could not be read ({e})"))?;
        if !answer.status().is_success() {
            return Err(format!(
                "its metadata at {url} answered {}",
                answer.status()
            ));
        }
        let metadata: serde_json::Value = read_json(answer).await?;
        let text = |key: &str| {
            metadata
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        if text("issuer").as_deref() != Some(self.issuer.as_str()) {
            return Err(format!(
                "its metadata at {url} names another issuer than {}",
                self.issuer
            ));
        }
        let backchannel = text("backchannel_authentication_endpoint").ok_or_else(|| {
            format!("it does not offer CIBA (no backchannel_authentication_endpoint in {url})")
        })?;
        let token = text("token_endpoint")
            .ok_or_else(|| format!("its metadata at {url} has no token_endpoint"))?;
        let endpoints = Endpoints { backchannel, token };
        *held = Some(endpoints.clone());
        Ok(endpoints)
    }

    /// POSTs `form` to `url` with this client's credentials (HTTP Basic, each part
    /// form-urlencoded as RFC 6749 §2.3.1 says).
    async fn post(&self, url: &str, form: &[(&str, &str)]) -> Result<reqwest::Response, String> {
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            encode(&self.client_id),
            encode(&self.secret)
        ));
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        self.http
            .post(url)
            .header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body)
            .send()
            .await
            .map_err(|e| format!("the identity provider could not be reached ({e})"))
    }

    async fn start_request(
        &self,
        subject: &str,
        record: &ApprovalRecord,
        code: &str,
    ) -> Result<BackchannelStarted, String> {
        let (pace, setting) = &self.pace;
        if let Err(wait) = pace.admit(subject, std::time::Instant::now()) {
            tracing::warn!(
                "refused to send another CIBA request: the person's bound per minute is reached"
            );
            return Err(format!(
                "nothing was sent to their device, which got as many requests in the last minute as {setting} allows; call again in {} s, or after the person answered the open ones",
                wait.as_secs().max(1)
            ));
        }
        let endpoints = self.endpoints().await?;
        let details = authorization_details(&self.server, record).to_string();
        let answer = self
            .post(
                &endpoints.backchannel,
                &[
                    ("scope", "openid"),
                    ("login_hint", subject),
                    ("binding_message", code),
                    ("resource", &self.resource),
                    ("authorization_details", &details),
                ],
            )
            .await?;
        let status = answer.status();
        let answer: StartAnswer = read_json(answer).await?;
        match (answer.auth_req_id, answer.error) {
            (Some(auth_req_id), None) if status.is_success() => Ok(BackchannelStarted {
                auth_req_id,
                expires_in: answer.expires_in.unwrap_or(60),
            }),
            (_, Some(error)) => Err(format!(
                "the identity provider refused the request ({error}); check that the caller is a user it knows and that client {} may use CIBA with authorization_details of type {}",
                self.client_id,
                ask_first_core::AUTHORIZATION_DETAILS_TYPE
            )),
            _ => Err(format!("the identity provider answered {status}")),
        }
    }

    async fn poll_request(&self, subject: &str, record: &ApprovalRecord) -> BackchannelPoll {
        let Some(auth_req_id) = record.auth_req_id.as_deref() else {
            return BackchannelPoll::Refused("the record names no request".to_owned());
        };
        let endpoints = match self.endpoints().await {
            Ok(endpoints) => endpoints,
            Err(why) => return BackchannelPoll::Refused(why),
        };
        let answer = match self
            .post(
                &endpoints.token,
                &[("grant_type", CIBA_GRANT), ("auth_req_id", auth_req_id)],
            )
            .await
        {
            Ok(answer) => answer,
            Err(why) => return BackchannelPoll::Refused(why),
        };
        let answer: TokenAnswer = match read_json(answer).await {
            Ok(answer) => answer,
            Err(why) => return BackchannelPoll::Refused(why),
        };
        match (answer.access_token, answer.error.as_deref()) {
            (_, Some("authorization_pending" | "slow_down")) => BackchannelPoll::Pending,
            (_, Some("access_denied")) => BackchannelPoll::Declined,
            (_, Some("expired_token")) => BackchannelPoll::Expired,
            // Not a refusal: the provider gave this request's token to another poll (an
            // identical call's, here or on another replica), which acts on it.
            (_, Some("invalid_grant")) => BackchannelPoll::Consumed,
            (_, Some(error)) => BackchannelPoll::Refused(format!(
                "the identity provider answered `{error}` (a request already answered, or not this server's)"
            )),
            (Some(token), None) => match self.verifier.verify_with_details(&token).await {
                Ok((verified, details)) => {
                    match check_token(&verified.subject, details.as_ref(), subject, record) {
                        Ok(()) => BackchannelPoll::Approved,
                        Err(why) => BackchannelPoll::Refused(why.to_owned()),
                    }
                }
                Err(refusal) => BackchannelPoll::Refused(refusal.message().to_owned()),
            },
            (None, None) => BackchannelPoll::Refused(
                "the identity provider answered without a token".to_owned(),
            ),
        }
    }
}

impl Backchannel for CibaClient {
    fn subject(&self, caller: &Caller<'_>) -> Option<String> {
        let verified = caller.http_parts()?.extensions.get::<Verified>()?;
        Some(verified.subject.clone())
    }

    fn start<'a>(
        &'a self,
        subject: &'a str,
        record: &'a ApprovalRecord,
        binding_code: &'a str,
    ) -> BackchannelFuture<'a, Result<BackchannelStarted, String>> {
        Box::pin(self.start_request(subject, record, binding_code))
    }

    fn poll<'a>(
        &'a self,
        subject: &'a str,
        record: &'a ApprovalRecord,
    ) -> BackchannelFuture<'a, BackchannelPoll> {
        Box::pin(self.poll_request(subject, record))
    }
}

/// Reads a JSON answer of at most [`MAX_ANSWER_BYTES`].
async fn read_json<T: serde::de::DeserializeOwned>(answer: reqwest::Response) -> Result<T, String> {
    if answer
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err("the identity provider's answer is too large".to_owned());
    }
    let bytes = answer
        .bytes()
        .await
        .map_err(|e| format!("the identity provider's answer could not be read ({e})"))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err("the identity provider's answer is too large".to_owned());
    }
    serde_json::from_slice(&bytes)
        .map_err(|_| "the identity provider's answer is not the JSON expected".to_owned())
}
