//! What OAuth authentication costs per request once the issuer's keys are cached. A bench
//! binary (`harness = false`) that prints its figures: `cargo bench -p ask-first-serve --bench
//! oauth`.
//!
//! An issuer is served on loopback (metadata and JWKS from a small axum app, with the fixed
//! test keys of `src/http/oauth/testdata/`); the verifier reads its keys once, then checks
//! `Authorization` headers: a token's first request (base64 and JSON of the header and claims,
//! the key lookup, the signature and the claim checks, the principal built) and its later
//! requests (the verified token remembered by its SHA-256). Figures per algorithm (ES256,
//! RS256 with a 2048-bit key, EdDSA), beside the shared secret's check
//! (SHA-256 and a constant-time compare) for scale. Goal (reported, never asserted): a cached
//! check adds under 0.2 ms per request. Medians over samples; `GUARD_BENCH_QUICK=1` for a
//! smoke run.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ask_first_serve::http::oauth::{OAuthConfig, OAuthVerifier};
use ask_first_serve::settings::OAuthNames;
use axum::Json;
use axum::routing::get;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const RSA: &[u8] = include_bytes!("../src/http/oauth/testdata/rsa-a.pkcs1.der");
const EC_P256: &[u8] = include_bytes!("../src/http/oauth/testdata/ec-p256.pkcs8.der");
const ED25519: &[u8] = include_bytes!("../src/http/oauth/testdata/ed25519.pkcs8.der");
const RESOURCE: &str = "http://127.0.0.1:8080/mcp";

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

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::var_os("GUARD_BENCH_QUICK").is_some();
    let (samples, iters) = if quick { (5, 50) } else { (25, 400) };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
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
        let verifier = Arc::new(
            OAuthVerifier::new(
                OAuthConfig {
                    issuer: issuer.clone(),
                    resource: RESOURCE.to_owned(),
                    leeway: Duration::from_secs(30),
                    refresh_interval: Duration::from_secs(30),
                    scopes: Vec::new(),
                },
                &OAuthNames::with_prefix("BENCH"),
            )
            .expect("verifier"),
        );
        let now = jsonwebtoken::get_current_timestamp();
        let claims = json!({
            "iss": issuer, "sub": "alice", "aud": RESOURCE, "iat": now, "exp": now + 3600,
            "client_id": "alice", "scope": "mcp", "jti": "0123456789abcdef0123456789abcdef",
        });
        println!("OAuth access-token check per request, the issuer's keys cached:");
        for (key, alg, kid) in keys() {
            let mut header = Header::new(alg);
            header.kid = Some(kid.to_owned());
            header.typ = Some("at+jwt".to_owned());
            // Distinct tokens (their `jti`), signed before timing: each one's first check
            // verifies its signature.
            let fresh_iters = iters / 4;
            let tokens: Vec<http::HeaderValue> = (0..samples * fresh_iters + 1)
                .map(|n| {
                    let mut claims = claims.clone();
                    claims["jti"] = json!(format!("{kid}-{n:032}"));
                    let token = jsonwebtoken::encode(&header, &claims, &key).expect("sign");
                    http::HeaderValue::from_str(&format!("Bearer {token}")).expect("header")
                })
                .collect();
            // Warm: the first check reads the metadata and the keys.
            verifier.verify_header(Some(&tokens[0])).await.expect("accepted");
            let mut first = Vec::new();
            for sample in 0..samples {
                let batch = &tokens[1 + sample * fresh_iters..1 + (sample + 1) * fresh_iters];
                let start = Instant::now();
                for value in batch {
                    black_box(verifier.verify_header(Some(black_box(value))).await.expect("accepted"));
                }
                first.push(start.elapsed().as_secs_f64() * 1e6 / fresh_iters as f64);
            }
            // The same token again and again, as a client sends it on every request.
            let repeated = &tokens[0];
            let mut again = Vec::new();
            for _ in 0..samples {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(verifier.verify_header(Some(black_box(repeated))).await.expect("accepted"));
                }
                again.push(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
            }
            println!(
                "  {alg:?}: a token's first request {:.1} µs (signature verified), its later \
                 requests {:.2} µs (remembered); goal < 200 µs; token {} bytes",
                median(&mut first),
                median(&mut again),
                repeated.len() - "Bearer ".len()
            );
        }
        assert_eq!(verifier.key_fetches().await, 1, "the keys were read once");

        // For scale: the shared secret's check (SHA-256 of the presented secret, compared in
        // constant time), as the gate does it.
        use sha2::{Digest, Sha256};
        use subtle::ConstantTimeEq;
        let secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        let mut per_check = Vec::new();
        for _ in 0..samples {
            let start = Instant::now();
            for _ in 0..iters * 10 {
                let presented: [u8; 32] = Sha256::digest(black_box(secret).as_bytes()).into();
                black_box(bool::from(presented.ct_eq(&digest)));
            }
            per_check.push(start.elapsed().as_secs_f64() * 1e6 / (iters * 10) as f64);
        }
        println!("  shared secret (for scale): {:.2} µs per request", median(&mut per_check));
    });
}
