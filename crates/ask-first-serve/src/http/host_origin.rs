//! The `Host` and `Origin` checks, as a tower [`Layer`]: protection against DNS rebinding and
//! against web pages of other origins.
//!
//! A request passes when its `Host` is `localhost`, `127.0.0.1` or `[::1]` with the bound port,
//! the bound address itself, or an extra host; else `403 host_not_allowed` (a missing or
//! malformed `Host` is `400 bad_host`). An `Origin`, when present, must be `http(s)://`
//! `localhost`, `127.0.0.1` or `[::1]` on any port, or an extra origin; else
//! `403 origin_not_allowed`. Refusals are JSON bodies whose message names the setting that
//! would accept the value. [`bind_http`](super::bind_http) mounts it outermost; a server with
//! its own axum `Router` mounts it the same way:
//!
//! ```no_run
//! use std::net::SocketAddr;
//!
//! use ask_first_serve::SettingNames;
//! use ask_first_serve::http::host_origin::HostOriginLayer;
//! use axum::{Router, routing::get};
//!
//! # async fn run() -> std::io::Result<()> {
//! let addr = SocketAddr::from(([127, 0, 0, 1], 8080));
//! let names = SettingNames::with_prefix("NOTES");
//! let app: Router = Router::new()
//!     .route("/status", get(|| async { "ok" }))
//!     .layer(HostOriginLayer::new(addr, &[], &[], &names));
//! let listener = tokio::net::TcpListener::bind(addr).await?;
//! axum::serve(listener, app).await
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{Either, Ready, ready};
use http::{HeaderMap, Request, StatusCode, Uri, header};
use tower_layer::Layer;
use tower_service::Service;

use crate::settings::{
    AllowedHost, AllowedOrigin, Origin, OriginPort, SettingNames, normalise_host,
};

/// Mounts the `Host` and `Origin` checks in front of a service (see the [module](self)).
#[derive(Debug, Clone)]
pub struct HostOriginLayer {
    rules: Arc<Rules>,
}

impl HostOriginLayer {
    /// The checks for a server bound to `local_addr` (its loopback names and its own address,
    /// on its port), plus `allowed_hosts` and `allowed_origins`; refusals name the settings
    /// `names` calls them.
    pub fn new(
        local_addr: SocketAddr,
        allowed_hosts: &[AllowedHost],
        allowed_origins: &[AllowedOrigin],
        names: &SettingNames,
    ) -> Self {
        Self {
            rules: Arc::new(Rules::new(
                local_addr,
                allowed_hosts,
                allowed_origins,
                names,
            )),
        }
    }

    /// The same hosts in rmcp's syntax, for its own check behind this one
    /// (`StreamableHttpServerConfig::with_allowed_hosts`).
    pub fn rmcp_allowed_hosts(&self) -> Vec<String> {
        self.rules.rmcp_allowed_hosts()
    }

    /// The same origins in rmcp's syntax (`StreamableHttpServerConfig::with_allowed_origins`).
    pub fn rmcp_allowed_origins(&self) -> Vec<String> {
        self.rules.rmcp_allowed_origins()
    }

    /// The status a request with these headers is refused with, if any.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn refusal(&self, headers: &HeaderMap, uri: &Uri) -> Option<StatusCode> {
        self.rules
            .check(headers, uri)
            .err()
            .map(|refused| refused.status)
    }
}

impl<S> Layer<S> for HostOriginLayer {
    type Service = HostOrigin<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HostOrigin {
            inner,
            rules: self.rules.clone(),
        }
    }
}

/// The service [`HostOriginLayer`] makes: answers a refused request itself, passes the others
/// to `inner`.
#[derive(Debug, Clone)]
pub struct HostOrigin<S> {
    inner: S,
    rules: Arc<Rules>,
}

impl<S, B> Service<Request<B>> for HostOrigin<S>
where
    S: Service<Request<B>, Response = axum::response::Response>,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Self::Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.rules.check(request.headers(), request.uri()) {
            Ok(()) => Either::Right(self.inner.call(request)),
            Err(refused) => Either::Left(ready(Ok(refused.into_response()))),
        }
    }
}

/// A refused request: its status, its code and the message naming the fix.
struct Refused<'a> {
    status: StatusCode,
    code: &'static str,
    message: &'a str,
}

impl Refused<'_> {
    fn into_response(self) -> axum::response::Response {
        super::json_error(self.status, self.code, self.message)
    }
}

/// An accepted `Host`: a host and a port (`None`: any port).
#[derive(Debug, Clone)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

/// The accepted `Host` and `Origin` values, and the messages that name their settings.
#[derive(Debug)]
struct Rules {
    hosts: Vec<HostRule>,
    origins: Vec<AllowedOrigin>,
    port: u16,
    /// The messages, naming the server's settings.
    host_refused: String,
    origin_refused: String,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Rules {
    fn new(
        local_addr: SocketAddr,
        allowed_hosts: &[AllowedHost],
        allowed_origins: &[AllowedOrigin],
        names: &SettingNames,
    ) -> Self {
        let port = local_addr.port();
        let mut hosts: Vec<HostRule> = LOOPBACK_NAMES
            .iter()
            .map(|name| HostRule {
                host: (*name).to_owned(),
                port: Some(port),
            })
            .collect();
        let bound = normalise_host(&local_addr.ip().to_string());
        if !hosts.iter().any(|rule| rule.host == bound) {
            hosts.push(HostRule {
                host: bound,
                port: Some(port),
            });
        }
        hosts.extend(allowed_hosts.iter().map(|extra| HostRule {
            host: extra.host.clone(),
            port: extra.port,
        }));
        let mut origins: Vec<AllowedOrigin> = ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                LOOPBACK_NAMES.iter().map(|host| AllowedOrigin::Tuple {
                    scheme: (*scheme).to_owned(),
                    host: (*host).to_owned(),
                    port: OriginPort::Any,
                })
            })
            .collect();
        origins.extend(allowed_origins.iter().cloned());
        Self {
            hosts,
            origins,
            port,
            host_refused: format!(
                "this Host is not accepted (protection against DNS rebinding); to reach the \
                 server under another name, add it to {}",
                names.allowed_hosts
            ),
            origin_refused: format!(
                "this Origin is not accepted; to allow a browser application, add its origin \
                 to {}",
                names.allowed_origins
            ),
        }
    }

    /// The same host list, in rmcp's syntax (an entry without a port matches any port there;
    /// a `Host` without a port is compared as port 80 here, so on port 80 the bare names are
    /// added for rmcp too).
    fn rmcp_allowed_hosts(&self) -> Vec<String> {
        let mut list: Vec<String> = self
            .hosts
            .iter()
            .map(|rule| {
                AllowedHost {
                    host: rule.host.clone(),
                    port: rule.port,
                }
                .to_string()
            })
            .collect();
        if self.port == 80 {
            list.extend(LOOPBACK_NAMES.iter().map(|name| {
                AllowedHost {
                    host: (*name).to_owned(),
                    port: None,
                }
                .to_string()
            }));
        }
        list
    }

    fn rmcp_allowed_origins(&self) -> Vec<String> {
        self.origins.iter().map(ToString::to_string).collect()
    }

    /// The Host and Origin checks.
    fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refused<'_>> {
        self.check_host(headers, uri)?;
        self.check_origin(headers)
    }

    fn check_host(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refused<'_>> {
        let bad = || Refused {
            status: StatusCode::BAD_REQUEST,
            code: "bad_host",
            message: "the Host header is missing or malformed",
        };
        let text = match headers.get(header::HOST) {
            Some(value) => value.to_str().map_err(|_| bad())?,
            // HTTP/2 carries the authority in the URI instead.
            None => uri.authority().ok_or_else(bad)?.as_str(),
        };
        // The same parser as the configured entries: no user info, a port that fits 16 bits.
        let AllowedHost { host, port } = AllowedHost::parse(text).ok_or_else(bad)?;
        let effective_port = port.unwrap_or(80);
        let allowed = self.hosts.iter().any(|rule| {
            rule.host == host && rule.port.is_none_or(|allowed| allowed == effective_port)
        });
        if allowed {
            Ok(())
        } else {
            tracing::warn!("refused an HTTP request whose Host header is not allowed");
            Err(Refused {
                status: StatusCode::FORBIDDEN,
                code: "host_not_allowed",
                message: &self.host_refused,
            })
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refused<'_>> {
        let Some(value) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let refused = || {
            tracing::warn!("refused an HTTP request whose Origin header is not allowed");
            Refused {
                status: StatusCode::FORBIDDEN,
                code: "origin_not_allowed",
                message: &self.origin_refused,
            }
        };
        let text = value.to_str().map_err(|_| refused())?;
        // The one Origin parser and matcher, shared with CORS.
        let origin = Origin::parse(text).ok_or_else(refused)?;
        if origin.is_in(&self.origins) {
            Ok(())
        } else {
            Err(refused())
        }
    }
}
