//! The HTTP gate's parsing of `Host`, `Origin` and `Authorization`: the input is split at NUL
//! bytes into the three values (and a request target). Never panics; a request without the
//! bearer secret is never let through; an `Origin` is let through only if it is a loopback one
//! or the configured extra.
#![no_main]

use http::{HeaderMap, HeaderValue, Uri, header};
use libfuzzer_sys::fuzz_target;
use ask_first_serve::settings::{AllowedHost, AllowedOrigin, Secret};
use ask_first_serve::http::{HttpOptions, gate_verdict};

const SECRET: &str = "fuzz-bearer-secret-0123456789";

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0);
    let host = parts.next().unwrap_or_default();
    let origin = parts.next();
    let authorization = parts.next();
    let target = parts.next().unwrap_or(b"/mcp");
    // The configured lists are parsed from the input too.
    let extra = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let options = HttpOptions {
        bearer_token: Some(Secret::new(SECRET)),
        allowed_hosts: AllowedHost::parse(&extra).into_iter().collect(),
        allowed_origins: AllowedOrigin::parse(&extra).into_iter().collect(),
        ..HttpOptions::default()
    };
    let mut headers = HeaderMap::new();
    let Ok(host) = HeaderValue::from_bytes(host) else { return };
    headers.insert(header::HOST, host);
    if let Some(origin) = origin {
        let Ok(origin) = HeaderValue::from_bytes(origin) else { return };
        headers.insert(header::ORIGIN, origin);
    }
    let mut has_secret = false;
    if let Some(authorization) = authorization {
        has_secret = authorization
            .windows(SECRET.len())
            .any(|window| window == SECRET.as_bytes());
        let Ok(authorization) = HeaderValue::from_bytes(authorization) else { return };
        headers.insert(header::AUTHORIZATION, authorization);
    }
    let uri = Uri::try_from(target).unwrap_or_else(|_| Uri::from_static("/mcp"));
    let local = "127.0.0.1:8080".parse().expect("address");
    let verdict = gate_verdict(local, &options, &headers, &uri);
    if verdict.is_ok() {
        assert!(has_secret, "let through without the secret: {headers:?}");
    }
    for addr in ["[::1]:443", "0.0.0.0:80"] {
        let _ = gate_verdict(addr.parse().expect("address"), &options, &headers, &uri);
    }
});
