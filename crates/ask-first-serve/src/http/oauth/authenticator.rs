//! The verifier as the gate's [`Authenticate`]: the checked token's
//! principal, or the refusal with its `WWW-Authenticate` challenge; and the Protected Resource
//! Metadata served to anyone.

use axum::response::IntoResponse as _;

use crate::http::{AuthFuture, Authenticate, Identity, Refusal};

use super::{OAuthVerifier, TokenRefusal};

impl Authenticate for OAuthVerifier {
    /// The `Authorization` header's access token: its principal as the [`Identity`], and the
    /// [`Verified`](super::Verified) token (subject, scope) in the request's extensions, where a tool finds it
    /// through `RequestContext::extensions` (in the `http::request::Parts` rmcp puts there).
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        Box::pin(async move {
            match self
                .verify_header(parts.headers.get(http::header::AUTHORIZATION))
                .await
            {
                Ok(verified) => {
                    let identity = Identity::new(verified.principal.clone());
                    parts.extensions.insert(verified);
                    Ok(identity)
                }
                Err(TokenRefusal::Missing(message)) => {
                    Err(Refusal::unauthorized(message).with_challenge(self.challenge_header(false)))
                }
                Err(TokenRefusal::Invalid(message)) => {
                    Err(Refusal::invalid_token(message).with_challenge(self.challenge_header(true)))
                }
                Err(TokenRefusal::Unavailable(message)) => Err(Refusal::unavailable(message)),
                Err(TokenRefusal::InsufficientScope(message)) => Err(Refusal::forbidden(message)
                    .with_challenge(
                        http::HeaderValue::from_str(&format!(
                            "Bearer error=\"insufficient_scope\", scope=\"{}\", \
                             resource_metadata=\"{}\"",
                            self.config.scopes.join(" "),
                            self.metadata_url
                        ))
                        .unwrap_or_else(|_| http::HeaderValue::from_static("Bearer")),
                    )),
            }
        })
    }

    /// The Protected Resource Metadata, at each of [`OAuthVerifier::metadata_paths`], for
    /// anyone (a client learns from it where to get a token).
    fn public_routes(&self) -> Option<axum::Router> {
        let document = axum::body::Bytes::from(self.metadata_document.clone());
        let mut router = axum::Router::new();
        for path in &self.metadata_paths {
            let document = document.clone();
            router = router.route(
                path,
                axum::routing::get(move || {
                    std::future::ready(
                        (
                            [(
                                http::header::CONTENT_TYPE,
                                http::HeaderValue::from_static("application/json"),
                            )],
                            document,
                        )
                            .into_response(),
                    )
                }),
            );
        }
        Some(router)
    }
}

impl OAuthVerifier {
    fn challenge_header(&self, invalid_token: bool) -> http::HeaderValue {
        http::HeaderValue::from_str(&self.challenge(invalid_token))
            .unwrap_or_else(|_| http::HeaderValue::from_static("Bearer"))
    }
}
