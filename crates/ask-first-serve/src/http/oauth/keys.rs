//! The issuer's keys: found through its metadata, read with bounded time and size, kept and
//! re-read (on an unknown `kid`, when stale) at most once per refresh interval.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use url::Url;

use super::{ACCEPTED_ALGORITHMS, OAuthVerifier, TokenRefusal};

/// Largest metadata or JWKS document read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// Most keys kept from one JWKS.
const MAX_KEYS: usize = 32;
/// Keys older than this are re-read on the next request (a key the issuer withdrew stops
/// verifying within this time), subject to the refresh bound.
const MAX_KEY_AGE: Duration = Duration::from_secs(15 * 60);
/// After a failed fetch, the next attempt waits at least this long (or the refresh bound, if
/// shorter), so an unreachable issuer is not asked on every request.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);

/// One usable verification key.
pub(super) struct Key {
    kid: Option<String>,
    /// The algorithms it may verify (one when the JWK names its `alg`).
    algorithms: Vec<Algorithm>,
    pub(super) key: DecodingKey,
}

/// The keys read at one time.
pub(super) struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
    /// Counts successful reads, so a waiter sees whether another request refreshed meanwhile.
    pub(super) generation: u64,
}

impl KeySet {
    pub(super) fn candidates<'a>(
        &'a self,
        kid: Option<&'a str>,
        alg: Algorithm,
    ) -> impl Iterator<Item = &'a Key> + 'a {
        self.keys.iter().filter(move |key| {
            key.algorithms.contains(&alg)
                && match kid {
                    Some(kid) => key.kid.as_deref() == Some(kid),
                    None => true,
                }
        })
    }
}

/// When the next fetch may happen, and why the last one failed.
#[derive(Default)]
pub(super) struct RefreshClock {
    next_allowed: Option<Instant>,
    last_error: Option<String>,
    /// Successful fetches so far (tests read it).
    pub(super) fetches: u64,
}

#[derive(Deserialize)]
struct ServerMetadata {
    issuer: String,
    #[serde(default)]
    jwks_uri: Option<String>,
}

#[derive(Deserialize)]
struct RawKeySet {
    keys: Vec<serde_json::Value>,
}

impl OAuthVerifier {
    /// The keys to verify with: those held, re-read when none are held yet or when they are
    /// older than [`MAX_KEY_AGE`].
    pub(super) async fn current_keys(&self) -> Result<Arc<KeySet>, TokenRefusal> {
        let held = self.keys.read().ok().and_then(|keys| keys.clone());
        match held {
            Some(keys) if keys.fetched.elapsed() < MAX_KEY_AGE => Ok(keys),
            // Stale: re-read them, unless another request is already doing so (then these
            // keys still serve meanwhile, rather than every request queueing on the fetch).
            Some(keys) => match self.refresh.try_lock() {
                Ok(clock) => Ok(self
                    .refresh_locked(clock, Some(keys.generation))
                    .await
                    .unwrap_or(keys)),
                Err(_) => Ok(keys),
            },
            None => self.refresh_keys(None).await,
        }
    }

    /// Reads the metadata and the keys again, unless another request did since `seen` (the
    /// generation the caller holds) or the last attempt was too recent. Returns the keys held
    /// afterwards; an error only when none are held.
    pub(super) async fn refresh_keys(
        &self,
        seen: Option<u64>,
    ) -> Result<Arc<KeySet>, TokenRefusal> {
        let clock = self.refresh.lock().await;
        self.refresh_locked(clock, seen).await
    }

    /// [`OAuthVerifier::refresh_keys`] with the refresh lock held.
    async fn refresh_locked(
        &self,
        mut clock: tokio::sync::MutexGuard<'_, RefreshClock>,
        seen: Option<u64>,
    ) -> Result<Arc<KeySet>, TokenRefusal> {
        let held = self.keys.read().ok().and_then(|keys| keys.clone());
        if let Some(keys) = &held
            && Some(keys.generation) != seen
        {
            return Ok(keys.clone());
        }
        let unavailable = |why: &str| {
            TokenRefusal::Unavailable(format!(
                "the keys of the authorization server {} could not be read ({why}); try again \
                 shortly",
                self.config.issuer
            ))
        };
        if clock.next_allowed.is_some_and(|next| Instant::now() < next) {
            return match held {
                Some(keys) => Ok(keys),
                None => Err(unavailable(
                    clock.last_error.as_deref().unwrap_or("not read yet"),
                )),
            };
        }
        match self.fetch_keys().await {
            Ok(keys) => {
                clock.next_allowed = Some(Instant::now() + self.config.refresh_interval);
                clock.last_error = None;
                clock.fetches += 1;
                let generation = held.as_ref().map_or(1, |keys| keys.generation + 1);
                let set = Arc::new(KeySet {
                    keys,
                    fetched: Instant::now(),
                    generation,
                });
                if let Ok(mut slot) = self.keys.write() {
                    *slot = Some(set.clone());
                }
                Ok(set)
            }
            Err(problem) => {
                tracing::warn!(
                    issuer = %self.config.issuer,
                    "could not read the authorization server's keys: {problem}"
                );
                clock.next_allowed =
                    Some(Instant::now() + RETRY_AFTER_FAILURE.min(self.config.refresh_interval));
                let result = match held {
                    Some(keys) => Ok(keys),
                    None => Err(unavailable(&problem)),
                };
                clock.last_error = Some(problem);
                result
            }
        }
    }

    /// The metadata's `jwks_uri`, then the keys it lists.
    async fn fetch_keys(&self) -> Result<Vec<Key>, String> {
        let jwks_uri = self.discover().await?;
        let set: RawKeySet = self.fetch_json(&jwks_uri).await?;
        let keys: Vec<Key> = set
            .keys
            .into_iter()
            .filter_map(usable_key)
            .take(MAX_KEYS)
            .collect();
        if keys.is_empty() {
            return Err(format!(
                "{jwks_uri} lists no signature key this server can use (RSA, EC P-256/P-384, \
                 Ed25519)"
            ));
        }
        Ok(keys)
    }

    /// RFC 8414 metadata first, then OpenID Connect discovery, each where the issuer's path
    /// puts it; the document's `issuer` must equal the setting.
    async fn discover(&self) -> Result<String, String> {
        let mut problems = Vec::new();
        for url in metadata_candidates(&self.config.issuer) {
            match self.fetch_json::<ServerMetadata>(&url).await {
                Ok(metadata) if metadata.issuer != self.config.issuer => {
                    problems.push(format!(
                        "{url} names the issuer {:?}, not {:?} (set the issuer setting to \
                         exactly the metadata's `issuer`)",
                        metadata.issuer, self.config.issuer
                    ));
                }
                Ok(metadata) => {
                    let Some(jwks_uri) = metadata.jwks_uri else {
                        problems.push(format!("{url} has no `jwks_uri`"));
                        continue;
                    };
                    let secure = Url::parse(&jwks_uri).is_ok_and(|parsed| {
                        parsed.scheme() == "https"
                            || (parsed.scheme() == "http"
                                && crate::settings::is_loopback_url(&parsed))
                    });
                    if !secure {
                        return Err(format!(
                            "the `jwks_uri` in {url} is not an https URL (plain http only on \
                             loopback)"
                        ));
                    }
                    return Ok(jwks_uri);
                }
                Err(problem) => problems.push(problem),
            }
        }
        Err(problems.join("; "))
    }

    pub(super) async fn fetch_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<T, String> {
        let mut response = self
            .client
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|error| format!("{url}: {}", describe_fetch_error(&error)))?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(format!("{url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("{url}: {}", describe_fetch_error(&error)))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("{url} sent more than {MAX_DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|_| format!("{url} did not send the JSON expected"))
    }
}

fn describe_fetch_error(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_redirect() {
        "redirected (not followed)"
    } else {
        "the request failed"
    }
}

/// The metadata URLs of `issuer`, in the order tried: RFC 8414 (well-known before the path),
/// OpenID Connect with the well-known before the path, then after it.
pub(super) fn metadata_candidates(issuer: &str) -> Vec<String> {
    let Ok(url) = Url::parse(issuer) else {
        return Vec::new();
    };
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// A JWK as a verification key, when it is an asymmetric signature key this server can use.
fn usable_key(value: serde_json::Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(value).ok()?;
    if matches!(
        &jwk.common.public_key_use,
        Some(usage) if *usage != PublicKeyUse::Signature
    ) {
        return None;
    }
    let by_type: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &ACCEPTED_ALGORITHMS[..6],
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(params) => match params.curve {
            EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
            _ => return None,
        },
        // Symmetric and unknown key types are never used.
        _ => return None,
    };
    let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
        Some(named) => {
            let named = key_algorithm(named)?;
            by_type.contains(&named).then(|| vec![named])?
        }
        None => by_type.to_vec(),
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id,
        algorithms,
        key,
    })
}

fn key_algorithm(named: KeyAlgorithm) -> Option<Algorithm> {
    let algorithm = Algorithm::try_from(named).ok()?;
    ACCEPTED_ALGORITHMS
        .contains(&algorithm)
        .then_some(algorithm)
}
