//! What OAuth authentication costs per request once the issuer's keys are cached, on divan:
//! `cargo bench -p ask-first-serve --bench oauth`.
//!
//! An issuer is served on loopback (metadata and JWKS from a small axum app, with the fixed
//! test keys of `src/http/oauth/testdata/`); the verifier reads its keys once, then checks
//! `Authorization` headers, per algorithm (ES256, RS256 with a 2048-bit key, EdDSA):
//! - `first_request`: a token's first request (base64 and JSON of the header and claims, the
//!   key lookup, the signature and the claim checks, the principal built); each iteration a
//!   token never seen, signed outside the timing;
//! - `later_requests`: its later requests (the verified token remembered by its SHA-256);
//! - `shared_secret`, for scale: the shared secret's check (SHA-256 and a constant-time
//!   compare), as the gate does it.
//!
//! Goal: a cached check adds under 0.2 ms per request. Figures are divan's; nothing is asserted
//! about them. `cargo test --benches` runs each once.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ask_first_serve::http::oauth::{OAuthConfig, OAuthVerifier};
use ask_first_serve::settings::OAuthNames;
use axum::Json;
use axum::routing::get;
use divan::Bencher;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

fn main() {
    divan::main();
}

const RSA: &[u8] = include_bytes!("../src/http/oauth/testdata/rsa-a.pkcs1.der");
const EC_P256: &[u8] = include_bytes!("../src/http/oauth/testdata/ec-p256.pkcs8.der");
const ED25519: &[u8] = include_bytes!("../src/http/oauth/testdata/ed25519.pkcs8.der");
const RESOURCE: &str = "http://127.0.0.1:8080/mcp";
const ALGORITHMS: [&str; 3] = ["ES256", "RS256", "EdDSA"];

fn keys() -> Vec<(EncodingKey, Algorithm, &'static str)> {
    vec![
        (EncodingKey::from_ec_der(EC_P256), Algorithm::ES256, "ec"),
        (EncodingKey::from_rsa_der(RSA), Algorithm::RS256, "rsa"),
        (EncodingKey::from_ed_der(ED25519), Algorithm::EdDSA, "ed"),
    ]
}

fn public_jwk(key: &EncodingKey, alg: Algorithm, kid: &str) -> Value {
    let mut value =
        serde_json::to_value(Jwk::from_encoding_key(key, alg).expect("jwk")).expect("json");
    value["kid"] = json!(kid);
    value
}

/// Runs `future` to its end: polled once in place (a check with the keys cached finishes
/// without waiting, so no scheduler is measured with it), on `runtime` if it has to wait.
/// Call it inside `runtime.enter()`.
fn finish<F: Future>(runtime: &Runtime, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => runtime.block_on(future),
    }
}

/// An issuer on loopback and a verifier that has read its keys, on one current-thread runtime
/// (the issuer answers while the verifier waits on it), and a signer of fresh tokens.
struct Fixture {
    runtime: Runtime,
    verifier: OAuthVerifier,
    header: Header,
    key: EncodingKey,
    claims: Value,
    kid: &'static str,
    next: AtomicU64,
}

impl Fixture {
    fn new(algorithm: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let (issuer, verifier) = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let issuer = format!("http://{}", listener.local_addr().expect("addr"));
            let jwks = json!({ "keys": keys().iter().map(|(key, alg, kid)| public_jwk(key, *alg, kid)).collect::<Vec<_>>() });
            let metadata = json!({ "issuer": issuer, "jwks_uri": format!("{issuer}/jwks") });
            let app = axum::Router::new()
                .route(
                    "/.well-known/oauth-authorization-server",
                    get(move || std::future::ready(Json(metadata.clone()))),
                )
                .route("/jwks", get(move || std::future::ready(Json(jwks.clone()))));
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            let verifier = OAuthVerifier::new(
                OAuthConfig {
                    issuer: issuer.clone(),
                    resource: RESOURCE.to_owned(),
                    leeway: Duration::from_secs(30),
                    refresh_interval: Duration::from_secs(30),
                    scopes: Vec::new(),
                },
                &OAuthNames::with_prefix("BENCH"),
            )
            .expect("verifier");
            (issuer, verifier)
        });
        let (key, alg, kid) = keys()
            .into_iter()
            .find(|(_, alg, _)| format!("{alg:?}") == algorithm)
            .expect("a known algorithm");
        let mut header = Header::new(alg);
        header.kid = Some(kid.to_owned());
        header.typ = Some("at+jwt".to_owned());
        let now = jsonwebtoken::get_current_timestamp();
        let claims = json!({
            "iss": issuer, "sub": "alice", "aud": RESOURCE, "iat": now, "exp": now + 3600,
            "client_id": "alice", "scope": "mcp", "jti": "",
        });
        let fixture = Self {
            runtime,
            verifier,
            header,
            key,
            claims,
            kid,
            next: AtomicU64::new(0),
        };
        // Warm: the first check reads the metadata and the keys.
        let token = fixture.token();
        fixture
            .runtime
            .block_on(fixture.verifier.verify_header(Some(&token)))
            .expect("accepted");
        fixture
    }

    /// A token never signed before (its `jti`), as an `Authorization` value.
    fn token(&self) -> http::HeaderValue {
        let mut claims = self.claims.clone();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        claims["jti"] = json!(format!("{}-{n:032}", self.kid));
        let token = jsonwebtoken::encode(&self.header, &claims, &self.key).expect("sign");
        http::HeaderValue::from_str(&format!("Bearer {token}")).expect("header")
    }
}

/// A token's first request: its signature verified.
#[divan::bench(args = ALGORITHMS)]
fn first_request(bencher: Bencher, algorithm: &str) {
    let fixture = Fixture::new(algorithm);
    let _entered = fixture.runtime.enter();
    bencher
        .with_inputs(|| fixture.token())
        .bench_local_refs(|value| {
            finish(
                &fixture.runtime,
                fixture.verifier.verify_header(Some(black_box(value))),
            )
            .expect("accepted")
        });
    let fetches = fixture.runtime.block_on(fixture.verifier.key_fetches());
    assert_eq!(fetches, 1, "the keys were read once");
}

/// The same token again and again, as a client sends it on every request.
#[divan::bench(args = ALGORITHMS)]
fn later_requests(bencher: Bencher, algorithm: &str) {
    let fixture = Fixture::new(algorithm);
    let _entered = fixture.runtime.enter();
    let token = fixture.token();
    finish(
        &fixture.runtime,
        fixture.verifier.verify_header(Some(&token)),
    )
    .expect("accepted");
    bencher.bench_local(|| {
        finish(
            &fixture.runtime,
            fixture.verifier.verify_header(Some(black_box(&token))),
        )
        .expect("accepted")
    });
}

/// For scale: the shared secret's check (SHA-256 of the presented secret, compared in constant
/// time), as the gate does it.
#[divan::bench]
fn shared_secret(bencher: Bencher) {
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;
    let secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
    bencher.bench_local(|| {
        let presented: [u8; 32] = Sha256::digest(black_box(secret).as_bytes()).into();
        bool::from(presented.ct_eq(&digest))
    });
}
