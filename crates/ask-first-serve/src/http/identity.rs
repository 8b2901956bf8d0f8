//! The gate's credential check, as a tower [`Layer`]: who is calling.
//!
//! Each request is handed to an [`Authenticate`] (the shared secret, per-person tokens, OAuth,
//! or the server's own). Its verdict, an [`Identity`], goes into the request's extensions,
//! replacing any a client could have planted there: the session binding, the caps, the audit
//! log and the tool body ([`Identity::of`]) read it. A refused request is answered `401` (or
//! `403`) by the authenticator's [`Refusal`](super::Refusal), with `WWW-Authenticate`.
//! [`bind_http`](super::bind_http) mounts it inside the `Host`/`Origin` checks
//! ([`host_origin`](super::host_origin)); a server with its own axum `Router` mounts both:
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use std::sync::Arc;
//!
//! use ask_first_serve::SettingNames;
//! use ask_first_serve::http::host_origin::HostOriginLayer;
//! use ask_first_serve::http::identity::IdentityLayer;
//! use ask_first_serve::http::{Authenticate, Identity, TokenFile};
//! use axum::{Router, extract::Extension, routing::get};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let addr = SocketAddr::from(([127, 0, 0, 1], 8080));
//! let names = SettingNames::with_prefix("NOTES");
//! let tokens: Arc<dyn Authenticate> =
//!     Arc::new(TokenFile::load("tokens.txt", &names.http_tokens_file)?);
//! let app: Router = Router::new()
//!     .route("/whoami", get(|Extension(who): Extension<Identity>| async move {
//!         who.principal().to_owned()
//!     }))
//!     .layer(IdentityLayer::new(tokens))
//!     .layer(HostOriginLayer::new(addr, &[], &[], &names));
//! axum::serve(tokio::net::TcpListener::bind(addr).await?, app).await?;
//! # Ok(())
//! # }
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::response::{IntoResponse, Response};
use http::Request;
use tower_layer::Layer;
use tower_service::Service;

use super::{Authenticate, Identity};

/// Mounts the credential check in front of a service (see the [module](self)).
#[derive(Clone)]
pub struct IdentityLayer {
    auth: Arc<dyn Authenticate>,
}

impl std::fmt::Debug for IdentityLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityLayer").finish_non_exhaustive()
    }
}

impl IdentityLayer {
    /// The check of `auth`.
    pub fn new(auth: Arc<dyn Authenticate>) -> Self {
        Self { auth }
    }
}

impl<S> Layer<S> for IdentityLayer {
    type Service = IdentityService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        IdentityService {
            inner,
            auth: self.auth.clone(),
        }
    }
}

/// The service [`IdentityLayer`] makes: authenticates, then passes the request with its
/// [`Identity`] to `inner`.
#[derive(Clone)]
pub struct IdentityService<S> {
    inner: S,
    auth: Arc<dyn Authenticate>,
}

impl<S> std::fmt::Debug for IdentityService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityService").finish_non_exhaustive()
    }
}

impl<S, B> Service<Request<B>> for IdentityService<S>
where
    S: Service<Request<B>, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone waits for readiness; the ready one serves this request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            parts.extensions.remove::<Identity>();
            match auth.authenticate(&mut parts).await {
                Ok(identity) => {
                    parts.extensions.insert(identity);
                }
                Err(refusal) => return Ok(refusal.into_response()),
            }
            inner.call(Request::from_parts(parts, body)).await
        })
    }
}
