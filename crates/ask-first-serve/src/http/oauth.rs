//! The OAuth 2.1 resource server (`<PREFIX>_HTTP_AUTH=oauth`): every request carries a JWT
//! access token from one authorization server, checked here against that server's published
//! keys; the principal is `oauth:<iss>#<sub>`, one per person (or client) the issuer knows.
//!
//! What is checked, in this order (any failure is a `401` with
//! `WWW-Authenticate: Bearer error="invalid_token", resource_metadata="…"`):
//! 1. `Authorization: Bearer <jwt>` is present (else `401` with the metadata pointer and no
//!    error code, RFC 6750 §3.1);
//! 2. the header's `alg` is asymmetric: RS256/384/512, PS256/384/512, ES256/384 or EdDSA.
//!    `none` and the HMAC algorithms are refused before any key is looked at, so a token
//!    "signed" with the issuer's public key as an HMAC secret never verifies. A `typ`, when
//!    present, is `JWT` or `at+jwt` (RFC 9068). Keys embedded in the token (`jwk`, `jku`,
//!    `x5u`, `x5c`) are ignored;
//! 3. the signature verifies under a key from the issuer's JWKS (found through its metadata,
//!    RFC 8414 `/.well-known/oauth-authorization-server` or OpenID
//!    `/.well-known/openid-configuration`), chosen by `kid`; a key that says its own `alg`
//!    is used only for that one; symmetric (`oct`) keys in the set are never used. An unknown
//!    `kid` re-reads the keys, at most once per `<PREFIX>_OAUTH_JWKS_REFRESH_SECS`;
//! 4. `iss` equals `<PREFIX>_OAUTH_ISSUER` and `aud` is or contains `<PREFIX>_OAUTH_RESOURCE`
//!    (byte for byte); `exp` is present and not past, `nbf` (when present) not future, both
//!    within `<PREFIX>_OAUTH_LEEWAY_SECS`; `sub` is a non-empty string of at most 256
//!    characters without control characters. A claim of the wrong JSON type is a refusal,
//!    never "absent".
//!
//! A token that verified is remembered by its SHA-256 (at most 4096, for at most a minute, never
//! past its `exp` nor past a re-read of the keys), so a client repeating its token pays for the
//! signature once, not on every request.
//!
//! With `<PREFIX>_OAUTH_SCOPES` set, a token that passes all of this but lacks one of those
//! scopes (in `scope`, or `scp`) is a `403` with `error="insufficient_scope"`.
//!
//! The authorization server unreachable while no keys are known yet is a `503` (the request
//! may be retried); later failures keep the keys last read. Metadata and keys are fetched
//! with bounded time and size and without following redirects. Tokens are never logged.
//!
//! [`OAuthVerifier::metadata_document`] is this server's Protected Resource Metadata
//! (RFC 9728), served without a token at [`METADATA_PATH`] and at the path-suffixed form
//! ([`OAuthVerifier::metadata_paths`]).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, Validation, errors::ErrorKind};
use serde::Deserialize;
use sha2::Digest as _;
use url::Url;

use crate::settings::OAuthNames;

mod authenticator;
mod config;
mod id_token;
mod keys;

pub use config::{OAuthConfig, OAuthError};
pub(crate) use id_token::CodeExchange;
use keys::{KeySet, RefreshClock};

/// Where Protected Resource Metadata is served (RFC 9728 §3), also with the MCP endpoint's
/// path appended.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How long one metadata or JWKS request may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting to the authorization server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest accepted access token, in bytes.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Longest accepted `sub`, in characters.
const MAX_SUBJECT_CHARS: usize = 256;
/// Tokens remembered as verified (by their SHA-256), so that a client repeating one token
/// does not pay for its signature on every request.
const VERIFIED_CAPACITY: usize = 4096;
/// How long a verified token is remembered at most (and never past its `exp`, nor past a
/// re-read of the keys).
const VERIFIED_TTL: Duration = Duration::from_secs(60);

/// The algorithms accepted: asymmetric only.
const ACCEPTED_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A verified access token: who it is for. The gate puts it in the request's extensions beside
/// the [`Identity`](super::Identity); a tool reads it (e.g. its `scope`) as
/// `context.extensions.get::<http::request::Parts>().and_then(|parts| parts.extensions.get::<Verified>())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// `oauth:<iss>#<sub>`.
    pub principal: String,
    /// The token's `sub`.
    pub subject: String,
    /// The token's `scope`, when it has one.
    pub scope: Option<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefusal {
    /// No bearer token: `401` with the metadata pointer, no error code.
    Missing(String),
    /// A bearer token that does not verify: `401 invalid_token`.
    Invalid(String),
    /// The authorization server's keys could not be read and none are known: `503`.
    Unavailable(String),
    /// A valid token without a scope this server requires: `403 insufficient_scope`.
    InsufficientScope(String),
}

impl TokenRefusal {
    /// The message for the caller.
    pub fn message(&self) -> &str {
        match self {
            Self::Missing(message)
            | Self::Invalid(message)
            | Self::Unavailable(message)
            | Self::InsufficientScope(message) => message,
        }
    }
}

/// A token already verified: who it is, until when.
#[derive(Clone)]
struct Remembered {
    verified: Verified,
    /// Its `exp`, in seconds since the epoch.
    expires: u64,
    /// The key set it was verified under: a re-read of the keys forgets it.
    generation: u64,
    at: Instant,
}

/// Checks access tokens from one issuer for one resource. Cheap to share (`Arc`).
pub struct OAuthVerifier {
    config: OAuthConfig,
    verified: quick_cache::sync::Cache<[u8; 32], Remembered>,
    client: reqwest::Client,
    keys: RwLock<Option<Arc<KeySet>>>,
    refresh: tokio::sync::Mutex<RefreshClock>,
    metadata_url: String,
    metadata_document: String,
    metadata_paths: Vec<String>,
    validation: Validation,
}

impl std::fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("issuer", &self.config.issuer)
            .field("resource", &self.config.resource)
            .finish_non_exhaustive()
    }
}

/// `scp` as providers send it: a space-separated string, or a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum ScopeList {
    Text(String),
    List(Vec<String>),
}

#[derive(Deserialize)]
struct AccessClaims {
    iss: String,
    sub: String,
    #[serde(default)]
    scp: Option<ScopeList>,
    /// Also checked by jsonwebtoken (required, not past); read here for the cache.
    #[serde(default)]
    exp: Option<f64>,
    #[serde(default)]
    scope: Option<String>,
    /// RFC 9396: what the token was authorized for (read for CIBA tokens).
    #[serde(default)]
    authorization_details: Option<serde_json::Value>,
}

impl OAuthVerifier {
    /// A verifier for `config`. Nothing is fetched yet: the issuer's metadata and keys are
    /// read on the first request (or by [`OAuthVerifier::prefetch`]).
    pub fn new(config: OAuthConfig, names: &OAuthNames) -> Result<Self, OAuthError> {
        // reqwest needs a process-wide TLS crypto provider when built without its own: ring,
        // unless the process installed one already (then that one is used).
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|source| OAuthError::Client { source })?;
        let resource = Url::parse(&config.resource).map_err(|_| OAuthError::Url {
            setting: names.resource.clone(),
        })?;
        let resource_path = resource.path().trim_end_matches('/').to_owned();
        let mut metadata_url = resource.clone();
        metadata_url.set_path(&format!("{METADATA_PATH}{resource_path}"));
        metadata_url.set_query(None);
        let mut metadata_paths = vec![METADATA_PATH.to_owned()];
        for suffix in [super::MCP_PATH, resource_path.as_str()] {
            let path = format!("{METADATA_PATH}{suffix}");
            if !metadata_paths.contains(&path) {
                metadata_paths.push(path);
            }
        }
        let mut metadata_document = serde_json::json!({
            "resource": config.resource,
            "authorization_servers": [config.issuer],
            "bearer_methods_supported": ["header"],
        });
        if !config.scopes.is_empty() {
            metadata_document["scopes_supported"] = serde_json::json!(config.scopes);
        }
        let metadata_document = metadata_document.to_string();
        let mut validation = Validation::new(Algorithm::RS256);
        validation.algorithms = Vec::new();
        validation.leeway = config.leeway.as_secs();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&[&config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        Ok(Self {
            config,
            verified: quick_cache::sync::Cache::new(VERIFIED_CAPACITY),
            client,
            keys: RwLock::new(None),
            refresh: tokio::sync::Mutex::new(RefreshClock::default()),
            metadata_url: metadata_url.to_string(),
            metadata_document,
            metadata_paths,
            validation,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The URL of this server's Protected Resource Metadata, as `401`s point to it.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The Protected Resource Metadata (RFC 9728), a JSON object.
    pub fn metadata_document(&self) -> &str {
        &self.metadata_document
    }

    /// The paths the metadata is served at: [`METADATA_PATH`], and it followed by the MCP
    /// endpoint's path and by the resource URL's path.
    pub fn metadata_paths(&self) -> &[String] {
        &self.metadata_paths
    }

    /// The `WWW-Authenticate` value of a `401`: with `error="invalid_token"` when a token was
    /// presented and refused.
    pub fn challenge(&self, invalid_token: bool) -> String {
        if invalid_token {
            format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{}\"",
                self.metadata_url
            )
        } else {
            format!("Bearer resource_metadata=\"{}\"", self.metadata_url)
        }
    }

    /// Reads the issuer's metadata and keys now, logging (not failing) when it cannot.
    pub async fn prefetch(&self) {
        if let Err(problem) = self.refresh_keys(None).await {
            tracing::warn!(
                "the authorization server's keys could not be read at start (requests get 503 \
                 until they can): {}",
                problem.message()
            );
        }
    }

    /// Successful key reads so far.
    #[doc(hidden)]
    pub async fn key_fetches(&self) -> u64 {
        self.refresh.lock().await.fetches
    }

    /// Checks the `Authorization` header of one request.
    pub async fn verify_header(
        &self,
        authorization: Option<&http::HeaderValue>,
    ) -> Result<Verified, TokenRefusal> {
        let token = super::auth::bearer_of(authorization);
        match token {
            Some(token) => self.verify(token).await,
            None => Err(TokenRefusal::Missing(format!(
                "this server needs `Authorization: Bearer <access token>`, a JWT access token \
                 from {} for the resource {}; the metadata at {} says where to get one",
                self.config.issuer, self.config.resource, self.metadata_url
            ))),
        }
    }

    /// Checks one access token.
    pub async fn verify(&self, token: &str) -> Result<Verified, TokenRefusal> {
        let header = self.header_of(token)?;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        if let Some(hit) = self.remembered(&digest) {
            return Ok(hit);
        }
        let (claims, generation) = self.decode(token, &header).await?;
        let expires = claims.exp.unwrap_or(0.0);
        let missing: Vec<String> = {
            let granted = granted_scopes(&claims);
            self.config
                .scopes
                .iter()
                .filter(|scope| !granted.contains(&scope.as_str()))
                .cloned()
                .collect()
        };
        let verified = self.accept(claims).map_err(invalid)?;
        if !missing.is_empty() {
            tracing::warn!("refused an OAuth access token without a required scope");
            return Err(TokenRefusal::InsufficientScope(format!(
                "the access token lacks the scope {} this server requires; request \
                 a token with scope \"{}\"",
                missing.join(" "),
                self.config.scopes.join(" ")
            )));
        }
        self.verified.insert(
            digest,
            Remembered {
                verified: verified.clone(),
                // `as` saturates: a negative or NaN `exp` never remembers.
                expires: expires as u64,
                generation,
                at: Instant::now(),
            },
        );
        Ok(verified)
    }

    /// Checks one access token as [`verify`](Self::verify) does (signature, `iss`, `aud`,
    /// `exp`, `nbf`, `sub`), without requiring scopes and without remembering it, and answers
    /// its `authorization_details` claim (RFC 9396) too: what a CIBA token is checked with.
    pub(crate) async fn verify_with_details(
        &self,
        token: &str,
    ) -> Result<(Verified, Option<serde_json::Value>), TokenRefusal> {
        let header = self.header_of(token)?;
        let (mut claims, _) = self.decode(token, &header).await?;
        let details = claims.authorization_details.take();
        let verified = self.accept(claims).map_err(invalid)?;
        Ok((verified, details))
    }

    /// The token's header, when its size, algorithm and `typ` may be those of an access token.
    fn header_of(&self, token: &str) -> Result<jsonwebtoken::Header, TokenRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid(
                "it is longer than any access token this server accepts",
            ));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            invalid(
                "it is not a signed JWT with an asymmetric algorithm (RS*, PS*, ES256, ES384 \
                 or EdDSA; `none` and HS* are never accepted)",
            )
        })?;
        if !ACCEPTED_ALGORITHMS.contains(&header.alg) {
            return Err(invalid(
                "its algorithm is not accepted (only RS*, PS*, ES256, ES384 and EdDSA; `none` \
                 and HS* never are)",
            ));
        }
        if let Some(typ) = &header.typ {
            let typ = typ.to_ascii_lowercase();
            if !matches!(typ.as_str(), "jwt" | "at+jwt" | "application/at+jwt") {
                return Err(invalid("its `typ` says it is not an access token"));
            }
        }
        Ok(header)
    }

    /// The token's claims once its signature verified under one of the issuer's keys and
    /// jsonwebtoken checked `iss`, `aud`, `exp` and `nbf`; with the key set's generation.
    async fn decode(
        &self,
        token: &str,
        header: &jsonwebtoken::Header,
    ) -> Result<(AccessClaims, u64), TokenRefusal> {
        let kid = header.kid.as_deref();
        let mut keys = self.current_keys().await?;
        if keys.candidates(kid, header.alg).next().is_none() && kid.is_some() {
            // Perhaps the issuer rotated its keys: read them again (bounded).
            keys = self
                .refresh_keys(Some(keys.generation))
                .await
                .unwrap_or(keys);
        }
        let mut validation = self.validation.clone();
        validation.algorithms = vec![header.alg];
        let mut last = None;
        for key in keys.candidates(kid, header.alg) {
            match jsonwebtoken::decode::<AccessClaims>(token, &key.key, &validation) {
                Ok(data) => return Ok((data.claims, keys.generation)),
                Err(error) => {
                    let signature = matches!(
                        error.kind(),
                        ErrorKind::InvalidSignature
                            | ErrorKind::InvalidEcdsaKey
                            | ErrorKind::InvalidRsaKey(_)
                            | ErrorKind::InvalidEddsaKey
                            | ErrorKind::InvalidKeyFormat
                    );
                    if !signature {
                        return Err(invalid(&self.describe(error.kind())));
                    }
                    last = Some(error);
                }
            }
        }
        Err(match last {
            Some(_) => invalid("its signature does not verify under the issuer's keys"),
            None => invalid(&format!(
                "it is signed with a key {} does not publish (unknown `kid`, or no key for its \
                 algorithm)",
                self.config.issuer
            )),
        })
    }

    /// The token of `digest` if it was verified under the keys held now, less than
    /// [`VERIFIED_TTL`] ago, and has not expired since.
    fn remembered(&self, digest: &[u8; 32]) -> Option<Verified> {
        let hit = self.verified.get(digest)?;
        let generation = self
            .keys
            .read()
            .ok()
            .and_then(|keys| keys.as_ref().map(|keys| keys.generation));
        (Some(hit.generation) == generation
            && hit.at.elapsed() < VERIFIED_TTL
            && jsonwebtoken::get_current_timestamp() < hit.expires)
            .then_some(hit.verified)
    }

    fn accept(&self, claims: AccessClaims) -> Result<Verified, &'static str> {
        // jsonwebtoken checked `iss` against the setting; check again, byte for byte.
        if claims.iss != self.config.issuer {
            return Err("it was issued by another authorization server");
        }
        let subject = claims.sub;
        if subject.is_empty()
            || subject.chars().count() > MAX_SUBJECT_CHARS
            || subject.chars().any(char::is_control)
        {
            return Err("its `sub` is empty, too long or has control characters");
        }
        Ok(Verified {
            principal: format!("oauth:{}#{}", claims.iss, subject),
            subject,
            scope: claims.scope,
        })
    }

    fn describe(&self, kind: &ErrorKind) -> String {
        match kind {
            ErrorKind::ExpiredSignature => {
                "it has expired (`exp`); get a new one from the authorization server".to_owned()
            }
            ErrorKind::ImmatureSignature => "it is not valid yet (`nbf`)".to_owned(),
            ErrorKind::InvalidIssuer => format!(
                "it was issued by another authorization server (its `iss` is not {})",
                self.config.issuer
            ),
            ErrorKind::InvalidAudience => format!(
                "it is not for this server: its `aud` does not contain {} (request the token \
                 with resource={})",
                self.config.resource, self.config.resource
            ),
            ErrorKind::MissingRequiredClaim(claim) => {
                format!("it lacks the `{claim}` claim (exp, iss, aud and sub are required)")
            }
            ErrorKind::InvalidClaimFormat(claim) => {
                format!("its `{claim}` claim has the wrong type")
            }
            ErrorKind::InvalidAlgorithm => "its algorithm does not fit the key".to_owned(),
            _ => "it is malformed".to_owned(),
        }
    }
}

/// A refusal of a token that does not verify, logged (without the token).
fn invalid(why: &str) -> TokenRefusal {
    tracing::warn!("refused an OAuth access token: {why}");
    TokenRefusal::Invalid(format!("the access token was refused: {why}"))
}

/// The scopes a token grants: its `scope` (RFC 9068) and its `scp` (a string or a list, as
/// some providers send them).
fn granted_scopes(claims: &AccessClaims) -> Vec<&str> {
    let mut granted: Vec<&str> = claims
        .scope
        .as_deref()
        .map(|scope| scope.split(' ').collect())
        .unwrap_or_default();
    match &claims.scp {
        Some(ScopeList::Text(text)) => granted.extend(text.split(' ')),
        Some(ScopeList::List(list)) => granted.extend(list.iter().map(String::as_str)),
        None => {}
    }
    granted.retain(|scope| !scope.is_empty());
    granted
}

#[cfg(test)]
mod tests;
