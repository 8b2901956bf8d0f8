//! Who may use the HTTP endpoint, and who they are: the credential check behind the gate's
//! Host and Origin checks. One public abstraction, [`Authenticate`], turns a request head into
//! an [`Identity`] or a [`Refusal`]; the gate puts the identity in the request's extensions,
//! where the principal rule ([`default_principal`](ask_first_core::default_principal)), the
//! session binding, the caps, the audit log and the tool body ([`Identity::of`]) find it.
//!
//! How [`bind_http`](crate::http::bind_http) chooses, in this order:
//! 1. the server's own authenticator ([`HttpOptions::authenticator`](super::HttpOptions)),
//!    when it gives one (e.g. opengist-mcp's `opengist` mode);
//! 2. the mode setting (`<PREFIX>_HTTP_AUTH`, [`AuthMode`](crate::settings::AuthMode)):
//!    - `tokens`: per-person tokens whose hashes are listed in a file
//!      ([`TokenFile`](super::tokens::TokenFile)); the
//!      principal is `token:<name>`;
//!    - `oauth`: OAuth 2.1 access tokens; the principal is `oauth:<issuer>#<subject>`;
//!    - `none` (or `<PREFIX>_HTTP_NO_AUTH=true`): nothing is checked ([`Anonymous`]), loopback
//!      only, with a warning on stderr at start; the principal is `local` (or, for a caller
//!      sending an `Authorization` header, a hash of it);
//!    - `secret` (the default): the bearer-secret setting is set: every request needs
//!      `Authorization: Bearer <secret>` ([`SharedSecret`]); else, on a loopback address, the
//!      server makes up a random secret for this run ([`mint_secret`]), prints it once on stderr
//!      with a ready client configuration, and requires it. It is never logged (tracing never
//!      sees it) and never written anywhere else. On another address: refused at start. The
//!      principal is `local` whatever the secret, so passkeys enrolled with `passkeys add`'s
//!      default survive restarts; sessions, seals and tokens are bound to the secret too.
//!
//! Each mode's principal is stable across restarts: it names the person (or, for a shared
//! secret, the one principal every holder is), never a value made up at start.
//!
//! What each proves: a shared secret proves only that the caller holds the secret, so every
//! holder is **one** principal (a start-up line says so): session binding and per-principal caps
//! separate nobody among them. A per-person token or an OAuth access token names one person.
//! Host and Origin checks stop web pages in a browser, not local processes: without any
//! credential, any process of any local user that can reach the port acts with the server's
//! full rights.

use std::future::Future;
use std::pin::Pin;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub use ask_first_core::Identity;

use crate::settings::Secret;

/// What [`Authenticate::authenticate`] returns: a boxed future, so that the trait stays
/// object-safe (the gate holds a `dyn Authenticate`).
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Identity, Refusal>> + Send + 'a>>;

/// Checks one HTTP request's credential and says who it is from. The gate calls it for every
/// request, after the Host and Origin checks and before any route (the health check included);
/// the returned [`Identity`] goes into the request's extensions before the session-ownership
/// check, so the principal it names owns the sessions it opens.
///
/// A server's own verifier (a backend account check, a gateway's signed header) implements it
/// and is given to [`HttpOptions::authenticator`](super::HttpOptions). It may also insert
/// server-specific extensions into `parts.extensions` (e.g. the person's backend credential),
/// which rmcp hands to the tool through `RequestContext::extensions` (inside the
/// `http::request::Parts` it inserts there).
///
/// ```
/// use ask_first_serve::http::{AuthFuture, Authenticate, Identity, Refusal};
///
/// /// Trusts a header set by an authenticating gateway in front (and nothing else can reach
/// /// the port).
/// struct GatewayUser;
///
/// impl Authenticate for GatewayUser {
///     fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
///         let user = parts
///             .headers
///             .get("x-authenticated-user")
///             .and_then(|value| value.to_str().ok())
///             .map(|user| Identity::new(format!("gateway:{user}")));
///         Box::pin(async move {
///             user.ok_or_else(|| Refusal::unauthorized("send the request through the gateway"))
///         })
///     }
/// }
/// ```
pub trait Authenticate: Send + Sync + 'static {
    /// Checks one request head. `Ok`: who it is from; `Err`: the answer the request gets
    /// instead of being routed.
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a>;

    /// Routes this way of authenticating serves to anyone, outside the gate (no Host, Origin
    /// or credential check), such as OAuth protected-resource metadata at
    /// `/.well-known/oauth-protected-resource`. Their paths must not be `/mcp` or `/healthz`,
    /// and the router must have no fallback of its own (the server's answers every other path).
    /// Default: none.
    fn public_routes(&self) -> Option<axum::Router> {
        None
    }

    /// Whether the credential `identity` names is still good, asked every few seconds of the
    /// identity of every open legacy session: `false` ends the session (and its `GET` stream
    /// and pending dialogs) at once, without waiting for its next request, which the gate
    /// would refuse. An authenticator that learns of revocations by itself (a re-read token
    /// file) says so here. It must answer quickly: no network request.
    /// Default: `true` (revocations take effect at the next request).
    fn is_current(&self, identity: &Identity) -> bool {
        let _ = identity;
        true
    }

    /// How often to ask again, by calling [`authenticate`](Self::authenticate) with the head
    /// of the request that opened them, about the credential of open long-lived streams (`GET`
    /// and `subscriptions/listen` streams), for an authenticator that learns of a revocation
    /// only by asking its backend. Once per distinct credential per period, however many
    /// streams it holds; a refusal of `401` or `403` (or another identity) ends those streams
    /// and closes the credential's sessions, a `503` keeps them. Default: `None`, never (a
    /// stream is checked once, when it opens; [`is_current`](Self::is_current) still ends the
    /// sessions of a credential the authenticator knows to be revoked).
    fn recheck_open_streams(&self) -> Option<std::time::Duration> {
        None
    }
}

/// Why a request was refused: `401` (with `WWW-Authenticate`), `403`, or `503` (the verifier's
/// backend is unreachable), and a message for the caller that names the fix. Never holds a
/// credential.
#[derive(Debug, Clone)]
pub struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
    challenge: Option<HeaderValue>,
}

impl Refusal {
    /// `401 unauthorized` with `WWW-Authenticate: Bearer`: no credential, or not one this server
    /// knows.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            code: "unauthorized",
            message: message.into(),
            challenge: Some(HeaderValue::from_static("Bearer")),
        }
    }

    /// `401 invalid_token` with `WWW-Authenticate: Bearer error="invalid_token"`: a credential
    /// that is malformed, expired, revoked, or for another audience (RFC 6750, 3.1).
    pub fn invalid_token(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            code: "invalid_token",
            message: message.into(),
            challenge: Some(HeaderValue::from_static(r#"Bearer error="invalid_token""#)),
        }
    }

    /// `403 forbidden`: the caller is known but may not use this server.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            code: "forbidden",
            message: message.into(),
            challenge: None,
        }
    }

    /// `503 unavailable`: the credential could not be checked now (the verifier's backend is
    /// down); the caller may retry.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "unavailable",
            message: message.into(),
            challenge: None,
        }
    }

    /// The same refusal with another `WWW-Authenticate` value (e.g. with the
    /// `resource_metadata` pointer of OAuth protected-resource metadata).
    pub fn with_challenge(mut self, challenge: HeaderValue) -> Self {
        self.challenge = Some(challenge);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The machine-readable code of the JSON body (`unauthorized`, `invalid_token`, ...).
    pub fn code(&self) -> &str {
        self.code
    }

    /// The message for the caller.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `WWW-Authenticate` value, if the answer carries one.
    pub fn challenge(&self) -> Option<&HeaderValue> {
        self.challenge.as_ref()
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut response = super::json_error(self.status, self.code, &self.message);
        if let Some(challenge) = self.challenge {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

impl From<Refusal> for Response<Body> {
    fn from(refusal: Refusal) -> Self {
        refusal.into_response()
    }
}

/// The bearer token of an `Authorization: Bearer <token>` header, if the request has one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    bearer_of(headers.get(header::AUTHORIZATION))
}

/// The token of an `Authorization` header's value when its scheme is `Bearer` (any case) and
/// the token is not empty; `None` otherwise, or without a value. Every credential check reads
/// the header through this one parser.
pub fn bearer_of(authorization: Option<&HeaderValue>) -> Option<&str> {
    authorization
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim_start())
        })
        .filter(|token| !token.is_empty())
}

/// The first 12 bytes of a SHA-256 digest, as hex.
pub(crate) fn short_hex(digest: &[u8]) -> String {
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// The principal every holder of the one shared bearer secret is: `local`, the principal of a
/// stdio client and the one `passkeys add` enrols by default. Every holder is one principal
/// anyway, so naming it after the secret would tell nobody apart; a stable name keeps the
/// operator's passkeys valid across restarts (a made-up secret changes at every start) and
/// across a change of the secret. What ties a session, a pending dialog, a sealed
/// `requestState`, a confirmation token or an approval record to the secret is the identity's
/// credential (a digest of `Bearer <secret>`): a client with another secret opens none of them.
pub(crate) const SHARED_SECRET_PRINCIPAL: &str = "local";

/// One bearer secret shared by every client (configured, or made up at start). Every holder is
/// one principal, `local` (whatever the secret), with the credential `bearer:<hash>`
/// (a digest of `Bearer <secret>`) to which sessions, dialogs, seals and tokens are bound.
pub struct SharedSecret {
    /// SHA-256 of the secret: comparing digests keeps the comparison's time independent of
    /// the secret's length too.
    digest: [u8; 32],
    identity: Identity,
    refused: String,
}

impl SharedSecret {
    /// `refused` is the message a request without the secret gets (naming where to find it).
    pub fn new(secret: &Secret, refused: String) -> Self {
        let header: [u8; 32] = Sha256::digest(format!("Bearer {}", secret.expose())).into();
        Self {
            digest: Sha256::digest(secret.expose().as_bytes()).into(),
            identity: Identity::new(SHARED_SECRET_PRINCIPAL)
                .with_credential(format!("bearer:{}", short_hex(&header))),
            refused,
        }
    }

    fn check(&self, headers: &HeaderMap) -> Result<Identity, Refusal> {
        let ok = bearer_token(headers).is_some_and(|token| {
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            bool::from(digest.ct_eq(&self.digest))
        });
        if ok {
            return Ok(self.identity.clone());
        }
        tracing::warn!("refused an HTTP request without the right bearer secret");
        Err(Refusal::unauthorized(self.refused.clone()))
    }
}

impl Authenticate for SharedSecret {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let verdict = self.check(&parts.headers);
        Box::pin(std::future::ready(verdict))
    }
}

/// No authentication: only when the operator asked for it, on loopback. Nothing is proved, so
/// the identity is [unproven](Identity::unproven): what the default principal rule reads from
/// the request (a hash of whatever
/// `Authorization` header it sent, else `local`): callers that send different headers are kept
/// apart, but anyone can send any header.
pub struct Anonymous;

impl Authenticate for Anonymous {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let principal = ask_first_core::default_principal(&ask_first_core::Caller::http(parts));
        Box::pin(std::future::ready(Ok(Identity::unproven(principal))))
    }
}

/// A random bearer secret for one run: 32 bytes from the operating system's generator, as
/// 64 hex characters.
pub fn mint_secret() -> Secret {
    Secret::new(random_hex())
}

/// 32 random bytes from the operating system's generator, as 64 hex characters.
pub(crate) fn random_hex() -> String {
    use std::fmt::Write;
    let bytes: [u8; 32] = rand::random();
    let mut text = String::with_capacity(64);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_first_core::{Caller, default_principal};

    fn parts(authorization: Option<&str>) -> http::request::Parts {
        let mut builder = http::Request::builder().uri("/mcp");
        if let Some(value) = authorization {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    #[tokio::test]
    async fn the_shared_secret_is_one_stable_principal_bound_to_its_credential() {
        let secret = Secret::new("0123456789abcdef0123");
        let auth = SharedSecret::new(&secret, "no".to_owned());
        let mut good = parts(Some("Bearer 0123456789abcdef0123"));
        let identity = auth.authenticate(&mut good).await.expect("accepted");
        // The principal is `local` whatever the secret (what `passkeys add` enrols by default),
        // and the default rule reads it from the identity the gate put in the head.
        assert_eq!(identity.principal(), "local");
        good.extensions.insert(identity.clone());
        assert_eq!(default_principal(&Caller::http(&good)), "local");
        // Another secret: the same principal, another credential (what sessions, seals and
        // tokens are bound to).
        let other = SharedSecret::new(&Secret::new("another-secret-0123456789"), "no".to_owned());
        let theirs = other
            .authenticate(&mut parts(Some("Bearer another-secret-0123456789")))
            .await
            .expect("accepted");
        assert_eq!(theirs.principal(), identity.principal());
        assert!(
            identity
                .credential()
                .is_some_and(|c| c.starts_with("bearer:"))
        );
        assert_ne!(theirs.credential(), identity.credential());
        assert!(identity.is_proven());
        // Another spelling of the scheme is the same principal now.
        let mut other = parts(Some("bearer   0123456789abcdef0123"));
        assert_eq!(
            auth.authenticate(&mut other).await.expect("accepted"),
            identity
        );
        for bad in [None, Some("Bearer 0123456789abcdef012"), Some("Basic x")] {
            let refusal = auth
                .authenticate(&mut parts(bad))
                .await
                .expect_err("refused");
            assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(
                refusal.challenge().map(|v| v.as_bytes()),
                Some(&b"Bearer"[..])
            );
        }
    }

    #[test]
    fn refusals_carry_their_status_and_challenge() {
        let response = Refusal::invalid_token("expired").into_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            response.headers()[header::WWW_AUTHENTICATE],
            r#"Bearer error="invalid_token""#
        );
        let response = Refusal::unavailable("down").into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(!response.headers().contains_key(header::WWW_AUTHENTICATE));
        let refusal = Refusal::unauthorized("x")
            .with_challenge(HeaderValue::from_static(r#"Bearer resource_metadata="m""#));
        assert_eq!(
            refusal.challenge().map(HeaderValue::as_bytes),
            Some(&br#"Bearer resource_metadata="m""#[..])
        );
        assert_eq!(Refusal::forbidden("no").status(), StatusCode::FORBIDDEN);
    }
}
