//! The verifier against an issuer served over real HTTP on loopback (metadata and JWKS from a
//! small axum app that counts its JWKS reads), with fixed test keys (`testdata/`, generated
//! with openssl for these tests only: RSA PKCS#1, P-256 and Ed25519 PKCS#8).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::extract::State;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::{Value, json};

use super::keys::metadata_candidates;
use super::*;

const RSA_A: &[u8] = include_bytes!("testdata/rsa-a.pkcs1.der");
const RSA_B: &[u8] = include_bytes!("testdata/rsa-b.pkcs1.der");
const EC_P256: &[u8] = include_bytes!("testdata/ec-p256.pkcs8.der");
const ED25519: &[u8] = include_bytes!("testdata/ed25519.pkcs8.der");

const RESOURCE: &str = "http://127.0.0.1:8080/mcp";

/// The issuer's state: the JWKS it serves, and how often it was read.
struct Issuer {
    jwks: Mutex<Value>,
    jwks_reads: AtomicUsize,
    issuer: String,
    /// The `issuer` its metadata names (normally `issuer`).
    metadata_issuer: Mutex<String>,
}

async fn metadata(State(state): State<Arc<Issuer>>) -> Json<Value> {
    let named = state.metadata_issuer.lock().expect("lock").clone();
    Json(json!({ "issuer": named, "jwks_uri": format!("{}/jwks", state.issuer) }))
}

async fn jwks(State(state): State<Arc<Issuer>>) -> Json<Value> {
    state.jwks_reads.fetch_add(1, Ordering::SeqCst);
    Json(state.jwks.lock().expect("lock").clone())
}

/// Serves an issuer (OpenID discovery only, as oidc-provider does) on a loopback port.
async fn start_issuer(keys: Vec<Value>) -> Arc<Issuer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let issuer = format!("http://{}", listener.local_addr().expect("addr"));
    let state = Arc::new(Issuer {
        jwks: Mutex::new(json!({ "keys": keys })),
        jwks_reads: AtomicUsize::new(0),
        metadata_issuer: Mutex::new(issuer.clone()),
        issuer,
    });
    let app = axum::Router::new()
        .route("/.well-known/openid-configuration", get(metadata))
        .route("/jwks", get(jwks))
        .with_state(state.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    state
}

fn rsa_a() -> EncodingKey {
    EncodingKey::from_rsa_der(RSA_A)
}

fn rsa_b() -> EncodingKey {
    EncodingKey::from_rsa_der(RSA_B)
}

fn ec() -> EncodingKey {
    EncodingKey::from_ec_der(EC_P256)
}

fn ed() -> EncodingKey {
    EncodingKey::from_ed_der(ED25519)
}

/// The public JWK of `key` with `kid`; `named_alg`: whether it says its `alg`.
fn public_jwk(key: &EncodingKey, alg: Algorithm, kid: &str, named_alg: bool) -> Value {
    let jwk = Jwk::from_encoding_key(key, alg).expect("jwk");
    let mut value = serde_json::to_value(jwk).expect("json");
    value["kid"] = json!(kid);
    value["use"] = json!("sig");
    if !named_alg {
        value.as_object_mut().expect("object").remove("alg");
    }
    value
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

fn claims(issuer: &str, sub: &str) -> Value {
    json!({ "iss": issuer, "sub": sub, "aud": RESOURCE, "iat": now(), "exp": now() + 300 })
}

fn sign(key: &EncodingKey, alg: Algorithm, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

fn verifier(issuer: &str, refresh: Duration) -> OAuthVerifier {
    let config = OAuthConfig {
        issuer: issuer.to_owned(),
        resource: RESOURCE.to_owned(),
        leeway: Duration::from_secs(30),
        refresh_interval: refresh,
        scopes: Vec::new(),
    };
    OAuthVerifier::new(config, &OAuthNames::with_prefix("TEST")).expect("verifier")
}

async fn standard() -> (Arc<Issuer>, OAuthVerifier) {
    let issuer = start_issuer(vec![
        public_jwk(&rsa_a(), Algorithm::RS256, "rsa-a", true),
        public_jwk(&ec(), Algorithm::ES256, "ec", true),
        public_jwk(&ed(), Algorithm::EdDSA, "ed", true),
        // Says no `alg`: good for RS256 and PS256 alike.
        public_jwk(&rsa_b(), Algorithm::RS256, "rsa-b", false),
    ])
    .await;
    let verifier = verifier(&issuer.issuer, Duration::from_secs(30));
    (issuer, verifier)
}

fn assert_invalid(result: Result<Verified, TokenRefusal>, expected: &str) {
    match result {
        Err(TokenRefusal::Invalid(message)) => {
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
        other => panic!("expected an invalid_token refusal ({expected}), got {other:?}"),
    }
}

#[tokio::test]
async fn tokens_signed_with_each_asymmetric_algorithm_are_accepted() {
    let (issuer, verifier) = standard().await;
    let cases = [
        (rsa_a(), Algorithm::RS256, "rsa-a"),
        (ec(), Algorithm::ES256, "ec"),
        (ed(), Algorithm::EdDSA, "ed"),
        (rsa_b(), Algorithm::PS256, "rsa-b"),
        (rsa_b(), Algorithm::RS512, "rsa-b"),
    ];
    for (key, alg, kid) in cases {
        let token = sign(&key, alg, kid, &claims(&issuer.issuer, "alice"));
        let verified = verifier.verify(&token).await.expect("accepted");
        assert_eq!(verified.principal, format!("oauth:{}#alice", issuer.issuer));
        assert_eq!(verified.subject, "alice");
    }
    // `aud` may be a list that contains the resource; a token may have no `typ`.
    let mut list = claims(&issuer.issuer, "bob");
    list["aud"] = json!(["https://other.example/api", RESOURCE]);
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec".to_owned());
    header.typ = None;
    let token = jsonwebtoken::encode(&header, &list, &ec()).expect("sign");
    let verified = verifier.verify(&token).await.expect("accepted");
    assert_eq!(verified.principal, format!("oauth:{}#bob", issuer.issuer));
    // Two subjects are two principals.
    assert_ne!(
        verifier
            .verify(&sign(
                &ec(),
                Algorithm::ES256,
                "ec",
                &claims(&issuer.issuer, "alice")
            ))
            .await
            .expect("accepted")
            .principal,
        verified.principal
    );
    assert_eq!(
        issuer.jwks_reads.load(Ordering::SeqCst),
        1,
        "keys read once"
    );
}

#[tokio::test]
async fn wrong_audience_issuer_and_times_are_refused() {
    let (issuer, verifier) = standard().await;
    // Positive control with the same key and shape.
    let good = sign(
        &ec(),
        Algorithm::ES256,
        "ec",
        &claims(&issuer.issuer, "alice"),
    );
    verifier.verify(&good).await.expect("control accepted");

    let mut other_audience = claims(&issuer.issuer, "alice");
    other_audience["aud"] = json!("http://127.0.0.1:8080/other");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &other_audience))
            .await,
        "resource=http://127.0.0.1:8080/mcp",
    );
    let mut no_audience = claims(&issuer.issuer, "alice");
    no_audience.as_object_mut().expect("object").remove("aud");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &no_audience))
            .await,
        "`aud`",
    );

    let other_issuer = claims("http://127.0.0.1:1", "alice");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &other_issuer))
            .await,
        "another authorization server",
    );
    // The issuer with a trailing slash is another issuer: compared byte for byte.
    let slash = claims(&format!("{}/", issuer.issuer), "alice");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &slash))
            .await,
        "another authorization server",
    );

    let mut expired = claims(&issuer.issuer, "alice");
    expired["exp"] = json!(now() - 120);
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &expired))
            .await,
        "expired",
    );
    // Within the leeway (30 s) it is still accepted.
    let mut just_expired = claims(&issuer.issuer, "alice");
    just_expired["exp"] = json!(now() - 5);
    verifier
        .verify(&sign(&ec(), Algorithm::ES256, "ec", &just_expired))
        .await
        .expect("within the leeway");
    let mut no_exp = claims(&issuer.issuer, "alice");
    no_exp.as_object_mut().expect("object").remove("exp");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &no_exp))
            .await,
        "`exp`",
    );

    let mut not_yet = claims(&issuer.issuer, "alice");
    not_yet["nbf"] = json!(now() + 600);
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &not_yet))
            .await,
        "not valid yet",
    );
    let mut started = claims(&issuer.issuer, "alice");
    started["nbf"] = json!(now() - 10);
    verifier
        .verify(&sign(&ec(), Algorithm::ES256, "ec", &started))
        .await
        .expect("nbf in the past");
}

#[tokio::test]
async fn claims_of_the_wrong_type_are_refused_not_ignored() {
    let (issuer, verifier) = standard().await;
    for (claim, value) in [
        ("exp", json!("99999999999")),
        ("nbf", json!("99999999999")),
        ("aud", json!(42)),
        ("iss", json!([issuer.issuer])),
        ("sub", json!(7)),
    ] {
        let mut body = claims(&issuer.issuer, "alice");
        body[claim] = value;
        let result = verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &body))
            .await;
        assert!(
            matches!(result, Err(TokenRefusal::Invalid(_))),
            "{claim}: {result:?}"
        );
    }
    for sub in ["", "a\nb", &"x".repeat(257)] {
        let body = claims(&issuer.issuer, sub);
        assert_invalid(
            verifier
                .verify(&sign(&ec(), Algorithm::ES256, "ec", &body))
                .await,
            "`sub`",
        );
    }
}

#[tokio::test]
async fn none_hmac_and_tampered_tokens_are_refused() {
    let (issuer, verifier) = standard().await;
    let body = claims(&issuer.issuer, "alice");

    // alg none, with and without a signature part, with a known kid.
    for alg in ["none", "None", "NONE"] {
        let header = json!({ "alg": alg, "typ": "JWT", "kid": "rsa-a" });
        for signature in ["", "AAAA"] {
            let token = format!("{}.{}.{signature}", b64(&header), b64(&body));
            assert_invalid(verifier.verify(&token).await, "asymmetric");
        }
    }

    // HS256 "signed" with the issuer's public key, in the forms a confused verifier might use
    // as the HMAC secret: the JWK's modulus, the JWK's JSON, the key's DER.
    let jwks = issuer.jwks.lock().expect("lock").clone();
    let rsa_jwk = jwks["keys"][0].clone();
    let secrets: Vec<Vec<u8>> = vec![
        rsa_jwk["n"].as_str().expect("n").as_bytes().to_vec(),
        rsa_jwk.to_string().into_bytes(),
        RSA_A.to_vec(),
    ];
    for secret in secrets {
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let key = EncodingKey::from_secret(&secret).expect("secret");
            let token = sign(&key, alg, "rsa-a", &body);
            assert_invalid(verifier.verify(&token).await, "not accepted");
        }
    }

    // Tampered: a changed signature byte, a changed payload under the old signature, the
    // signature of another key under a known kid.
    let good = sign(&rsa_a(), Algorithm::RS256, "rsa-a", &body);
    verifier.verify(&good).await.expect("control accepted");
    let (message, signature) = good.rsplit_once('.').expect("three parts");
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).expect("b64");
    bytes[10] ^= 0x01;
    let flipped = format!("{message}.{}", URL_SAFE_NO_PAD.encode(&bytes));
    assert_invalid(verifier.verify(&flipped).await, "signature");
    let (header_part, _) = message.split_once('.').expect("parts");
    let forged_body = claims(&issuer.issuer, "mallory");
    let swapped = format!("{header_part}.{}.{signature}", b64(&forged_body));
    assert_invalid(verifier.verify(&swapped).await, "signature");
    let other_key = sign(&rsa_b(), Algorithm::RS256, "rsa-a", &forged_body);
    assert_invalid(verifier.verify(&other_key).await, "signature");

    // A key that names its `alg` verifies only that one (rsa-a says RS256).
    let ps = sign(&rsa_a(), Algorithm::PS256, "rsa-a", &body);
    assert_invalid(verifier.verify(&ps).await, "does not publish");

    // A `typ` that is not an access token's, garbage, and an over-long token.
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec".to_owned());
    header.typ = Some("dpop+jwt".to_owned());
    let token = jsonwebtoken::encode(&header, &body, &ec()).expect("sign");
    assert_invalid(verifier.verify(&token).await, "`typ`");
    assert_invalid(verifier.verify("not a token").await, "asymmetric");
    assert_invalid(verifier.verify(&"a".repeat(20_000)).await, "longer");
}

#[tokio::test]
async fn symmetric_keys_in_the_jwks_are_never_used() {
    let secret = b"a shared secret the issuer should never have published";
    let mut oct = public_jwk(
        &EncodingKey::from_secret(secret).expect("secret"),
        Algorithm::HS256,
        "shared",
        true,
    );
    oct["use"] = json!("sig");
    let issuer = start_issuer(vec![oct, public_jwk(&ec(), Algorithm::ES256, "ec", true)]).await;
    let verifier = verifier(&issuer.issuer, Duration::from_secs(30));
    let body = claims(&issuer.issuer, "alice");
    let key = EncodingKey::from_secret(secret).expect("secret");
    assert_invalid(
        verifier
            .verify(&sign(&key, Algorithm::HS256, "shared", &body))
            .await,
        "not accepted",
    );
    verifier
        .verify(&sign(&ec(), Algorithm::ES256, "ec", &body))
        .await
        .expect("control accepted");
}

#[tokio::test]
async fn an_unknown_kid_refreshes_the_keys_at_most_once_per_interval() {
    let interval = Duration::from_secs(2);
    let issuer = start_issuer(vec![public_jwk(&rsa_a(), Algorithm::RS256, "a", true)]).await;
    let verifier = verifier(&issuer.issuer, interval);
    let body = claims(&issuer.issuer, "alice");
    let with_a = sign(&rsa_a(), Algorithm::RS256, "a", &body);
    let with_b = sign(&rsa_b(), Algorithm::RS256, "b", &body);

    // Tokens with kids the issuer never publishes, signed before anything is timed (ES256:
    // quick to sign even in a debug build).
    let made_up: Vec<String> = (0..50)
        .map(|n| sign(&ec(), Algorithm::ES256, &format!("made-up-{n}"), &body))
        .collect();
    let again: Vec<String> = (0..20)
        .map(|n| sign(&ec(), Algorithm::ES256, &format!("again-{n}"), &body))
        .collect();

    verifier.verify(&with_a).await.expect("accepted");
    let first_read = Instant::now();
    assert_eq!(issuer.jwks_reads.load(Ordering::SeqCst), 1);

    // The issuer rotates in key b. Within the interval, unknown kids (b's and made-up ones)
    // cause no read at all.
    issuer.jwks.lock().expect("lock")["keys"]
        .as_array_mut()
        .expect("array")
        .push(public_jwk(&rsa_b(), Algorithm::RS256, "b", true));
    for made_up in &made_up {
        assert_invalid(verifier.verify(made_up).await, "does not publish");
    }
    let refused = verifier.verify(&with_b).await;
    if first_read.elapsed() < interval {
        assert_invalid(refused, "does not publish");
        assert_eq!(
            issuer.jwks_reads.load(Ordering::SeqCst),
            1,
            "no read within the interval"
        );
    }

    // Once the interval has passed, b's kid causes one read and b's tokens verify.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if verifier.verify(&with_b).await.is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "key b never accepted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second_read = Instant::now();
    assert_eq!(issuer.jwks_reads.load(Ordering::SeqCst), 2, "one more read");
    assert!(first_read.elapsed() >= interval);
    // Made-up kids right after: still bounded (checked only while within the interval, as
    // a slow machine may take longer than it).
    for made_up in &again {
        assert_invalid(verifier.verify(made_up).await, "does not publish");
    }
    if second_read.elapsed() < interval {
        assert_eq!(issuer.jwks_reads.load(Ordering::SeqCst), 2);
    }
    // Key a still verifies (kept from the set).
    verifier.verify(&with_a).await.expect("a still accepted");
}

#[tokio::test]
async fn an_unreachable_issuer_is_unavailable_and_a_wrong_metadata_issuer_is_named() {
    // A port nothing listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let absent = format!("http://127.0.0.1:{port}");
    let verifier = verifier(&absent, Duration::from_secs(30));
    let token = sign(&ec(), Algorithm::ES256, "ec", &claims(&absent, "alice"));
    match verifier.verify(&token).await {
        Err(TokenRefusal::Unavailable(message)) => {
            assert!(message.contains("could not connect"), "{message}");
        }
        other => panic!("expected 503, got {other:?}"),
    }

    let issuer = start_issuer(vec![public_jwk(&ec(), Algorithm::ES256, "ec", true)]).await;
    *issuer.metadata_issuer.lock().expect("lock") = "https://elsewhere.example".to_owned();
    let verifier = super::tests::verifier(&issuer.issuer, Duration::from_secs(1));
    let token = sign(
        &ec(),
        Algorithm::ES256,
        "ec",
        &claims(&issuer.issuer, "alice"),
    );
    match verifier.verify(&token).await {
        Err(TokenRefusal::Unavailable(message)) => {
            assert!(message.contains("elsewhere.example"), "{message}");
        }
        other => panic!("expected 503, got {other:?}"),
    }
    // Fixed at the issuer: accepted once the retry bound has passed.
    *issuer.metadata_issuer.lock().expect("lock") = issuer.issuer.clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    while verifier.verify(&token).await.is_err() {
        assert!(Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_header_and_the_metadata_pointer() {
    let (issuer, verifier) = standard().await;
    assert_eq!(
        verifier.metadata_url(),
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        verifier.metadata_paths(),
        [
            "/.well-known/oauth-protected-resource".to_owned(),
            "/.well-known/oauth-protected-resource/mcp".to_owned()
        ]
    );
    let document: Value = serde_json::from_str(verifier.metadata_document()).expect("json");
    assert_eq!(document["resource"], RESOURCE);
    assert_eq!(document["authorization_servers"], json!([issuer.issuer]));
    assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    assert_eq!(
        verifier.challenge(false),
        "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""
    );
    assert!(
        verifier
            .challenge(true)
            .starts_with("Bearer error=\"invalid_token\", ")
    );

    assert!(matches!(
        verifier.verify_header(None).await,
        Err(TokenRefusal::Missing(_))
    ));
    let basic = http::HeaderValue::from_static("Basic YWxpY2U6c2VjcmV0");
    assert!(matches!(
        verifier.verify_header(Some(&basic)).await,
        Err(TokenRefusal::Missing(_))
    ));
    let token = sign(
        &ec(),
        Algorithm::ES256,
        "ec",
        &claims(&issuer.issuer, "alice"),
    );
    let value = http::HeaderValue::from_str(&format!("bearer  {token}")).expect("header");
    verifier
        .verify_header(Some(&value))
        .await
        .expect("accepted");
}

#[test]
fn metadata_is_looked_for_where_rfc_8414_and_openid_put_it() {
    assert_eq!(
        metadata_candidates("https://as.example.com"),
        [
            "https://as.example.com/.well-known/oauth-authorization-server",
            "https://as.example.com/.well-known/openid-configuration"
        ]
    );
    assert_eq!(
        metadata_candidates("https://as.example.com/realms/team/"),
        [
            "https://as.example.com/.well-known/oauth-authorization-server/realms/team",
            "https://as.example.com/.well-known/openid-configuration/realms/team",
            "https://as.example.com/realms/team/.well-known/openid-configuration"
        ]
    );
}

#[tokio::test]
async fn a_remembered_token_is_forgotten_when_its_key_is_withdrawn() {
    let interval = Duration::from_secs(1);
    let issuer = start_issuer(vec![public_jwk(&rsa_a(), Algorithm::RS256, "a", true)]).await;
    let verifier = verifier(&issuer.issuer, interval);
    let body = claims(&issuer.issuer, "alice");
    let with_a = sign(&rsa_a(), Algorithm::RS256, "a", &body);
    let with_b = sign(&rsa_b(), Algorithm::RS256, "b", &body);
    // Verified, then remembered: repeating it reads nothing.
    for _ in 0..3 {
        verifier.verify(&with_a).await.expect("accepted");
    }
    assert_eq!(issuer.jwks_reads.load(Ordering::SeqCst), 1);

    // The issuer withdraws key a and publishes b; once b's kid has made the server re-read the
    // keys, a's token is checked again (not taken from memory) and refused.
    *issuer.jwks.lock().expect("lock") =
        json!({ "keys": [public_jwk(&rsa_b(), Algorithm::RS256, "b", true)] });
    let deadline = Instant::now() + Duration::from_secs(20);
    while verifier.verify(&with_b).await.is_err() {
        assert!(Instant::now() < deadline, "key b never accepted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_invalid(verifier.verify(&with_a).await, "does not publish");
}

#[tokio::test]
async fn required_scopes_are_checked_in_scope_and_scp() {
    let issuer = start_issuer(vec![public_jwk(&ec(), Algorithm::ES256, "ec", true)]).await;
    let config = OAuthConfig {
        issuer: issuer.issuer.clone(),
        resource: RESOURCE.to_owned(),
        leeway: Duration::from_secs(30),
        refresh_interval: Duration::from_secs(30),
        scopes: vec!["notes.read".to_owned(), "notes.write".to_owned()],
    };
    let verifier = OAuthVerifier::new(config, &OAuthNames::with_prefix("TEST")).expect("verifier");
    let document: Value = serde_json::from_str(verifier.metadata_document()).expect("json");
    assert_eq!(
        document["scopes_supported"],
        json!(["notes.read", "notes.write"])
    );
    let with = |extra: Value| {
        let mut body = claims(&issuer.issuer, "alice");
        for (key, value) in extra.as_object().expect("object") {
            body[key] = value.clone();
        }
        sign(&ec(), Algorithm::ES256, "ec", &body)
    };
    for granted in [
        json!({ "scope": "openid notes.write notes.read" }),
        json!({ "scp": "notes.read notes.write" }),
        json!({ "scp": ["notes.write", "notes.read"] }),
        json!({ "scope": "notes.read", "scp": ["notes.write"] }),
    ] {
        verifier
            .verify(&with(granted.clone()))
            .await
            .unwrap_or_else(|refusal| panic!("{granted}: {refusal:?}"));
    }
    for lacking in [
        json!({}),
        json!({ "scope": "notes.read" }),
        json!({ "scope": "notes.read notes.writer" }),
        json!({ "scp": ["notes.read notes.write"] }),
    ] {
        match verifier.verify(&with(lacking.clone())).await {
            Err(TokenRefusal::InsufficientScope(message)) => {
                assert!(message.contains("notes.write"), "{lacking}: {message}");
            }
            other => panic!("{lacking}: expected insufficient_scope, got {other:?}"),
        }
    }
    // A bad token is still a 401, whatever its scopes.
    let mut other = claims(&issuer.issuer, "alice");
    other["aud"] = json!("http://127.0.0.1:8080/other");
    other["scope"] = json!("notes.read notes.write");
    assert_invalid(
        verifier
            .verify(&sign(&ec(), Algorithm::ES256, "ec", &other))
            .await,
        "not for this server",
    );
}
