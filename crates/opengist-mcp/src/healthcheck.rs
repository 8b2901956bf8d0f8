//! `opengist-mcp healthcheck`: whether the HTTP server configured in this environment answers
//! its health route. For a container `HEALTHCHECK` (packaging/container/): the image holds the
//! static binary and nothing else, so there is no curl or wget to ask `/healthz` with.
//!
//! It reads the same settings as the server (`OPENGIST_MCP_HTTP_ADDR` or `--http`,
//! `OPENGIST_MCP_HTTP_AUTH` and `OPENGIST_MCP_HTTP_TOKEN`), sends `GET /healthz` to that
//! address (the loopback of the same family when the server binds an unspecified address such
//! as `0.0.0.0`), and exits 0 when the server is up, 1 otherwise, with one line saying what it
//! found:
//! - with the shared secret (`secret`, the default) the probe sends it and needs a `200`; a
//!   `401` means the secret here is not the server's. With `none` it needs a `200` too.
//! - in the modes where each caller brings their own credential (`tokens`, `oauth`,
//!   `opengist`) the probe holds none, so the gate's `401` (with its `WWW-Authenticate: Bearer`
//!   challenge) counts as alive. Chosen over a route that answers without a credential: nothing
//!   the server serves answers an unauthenticated caller, so nothing about it can be learnt
//!   without one, and no credential (a person's token, a short-lived OAuth token) has to be
//!   given to the container for its health. The `401` comes from the whole serving path
//!   (accept loop, Host check, the gate), as a `200` would.
//!
//! Without an HTTP address the server serves stdio and there is nothing to probe: it says so
//! and exits 0. It never talks to Opengist (or to an OAuth issuer) and never prints the bearer
//! secret.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use ask_first_serve::settings::AuthMode;

use crate::config::Config;
use crate::http::HEALTH_PATH;

/// How long the probe waits for the whole answer.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a probe of a server bound at `bound` connects: the loopback of the same family for an
/// unspecified address (`0.0.0.0`, `[::]`), else the bound address itself. Both pass the HTTP
/// gate's `Host` check (loopback with the bound port, or the bound address).
pub(crate) fn probe_addr(bound: SocketAddr) -> SocketAddr {
    let ip = match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port())
}

/// Runs the probe for `config`; prints one line and returns success only on a `200`.
pub async fn run(config: &Config) -> ExitCode {
    let Some(bound) = config.serve.http_addr else {
        println!(
            "opengist-mcp healthcheck: no HTTP address is configured (OPENGIST_MCP_HTTP_ADDR or --http), so the server serves stdio and there is nothing to probe"
        );
        return ExitCode::SUCCESS;
    };
    if bound.port() == 0 {
        eprintln!(
            "opengist-mcp healthcheck: the HTTP address {bound} has port 0 (any free port), which cannot be probed; set OPENGIST_MCP_HTTP_ADDR to the address with its real port"
        );
        return ExitCode::FAILURE;
    }
    let url = format!("http://{}{HEALTH_PATH}", probe_addr(bound));
    crate::opengist::install_tls_provider();
    let client = match reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(_) => {
            eprintln!("opengist-mcp healthcheck: the HTTP client could not be set up");
            return ExitCode::FAILURE;
        }
    };
    let mut request = client.get(&url);
    if let Some(token) = &config.serve.http_token {
        request = request.bearer_auth(token.expose());
    }
    match request.send().await {
        Ok(answer) if answer.status() == reqwest::StatusCode::OK => {
            println!("opengist-mcp healthcheck: {url} answered 200");
            ExitCode::SUCCESS
        }
        // Each caller brings their own credential, which the probe has none of: the gate's 401
        // (asked without a bearer, it asks Opengist or the issuer nothing) is the answer of a
        // server that is up.
        Ok(answer)
            if answer.status() == reqwest::StatusCode::UNAUTHORIZED && gate_challenge(&answer) =>
        {
            match callers_bring_credentials(config) {
                Some(mode) => {
                    println!(
                        "opengist-mcp healthcheck: {url} answered 401 to a probe without a credential, as a server with OPENGIST_MCP_HTTP_AUTH={mode} does: it is up"
                    );
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!(
                        "opengist-mcp healthcheck: {url} answered 401: the OPENGIST_MCP_HTTP_TOKEN here is not the server's"
                    );
                    ExitCode::FAILURE
                }
            }
        }
        Ok(answer) => {
            let hint = match answer.status().as_u16() {
                401 => ": the OPENGIST_MCP_HTTP_TOKEN here is not the server's",
                403 => {
                    ": the server refused this Host (is OPENGIST_MCP_HTTP_ADDR the address it serves?)"
                }
                _ => "",
            };
            eprintln!(
                "opengist-mcp healthcheck: {url} answered {}{hint}",
                answer.status().as_u16()
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            let why = if error.is_timeout() {
                format!("no answer within {}s", PROBE_TIMEOUT.as_secs())
            } else if error.is_connect() {
                "nothing accepted the connection".to_owned()
            } else {
                "the request failed".to_owned()
            };
            eprintln!(
                "opengist-mcp healthcheck: {url}: {why}; is opengist-mcp serving HTTP at {bound}?"
            );
            ExitCode::FAILURE
        }
    }
}

/// The mode, when the server configured here takes each caller's own credential (`tokens`,
/// `oauth`, `opengist`): the probe has none to send. `None` for `secret` (the probe sends it)
/// and `none`.
fn callers_bring_credentials(config: &Config) -> Option<String> {
    match &config.serve.auth.mode {
        AuthMode::Secret | AuthMode::None => None,
        mode => Some(mode.as_str().to_owned()),
    }
}

/// Whether a `401` carries the gate's `WWW-Authenticate: Bearer` challenge.
fn gate_challenge(answer: &reqwest::Response) -> bool {
    answer
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("Bearer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_address_is_probed_on_its_loopback() {
        let probe = |s: &str| probe_addr(s.parse().expect("addr")).to_string();
        assert_eq!(probe("0.0.0.0:8765"), "127.0.0.1:8765");
        assert_eq!(probe("[::]:8765"), "[::1]:8765");
        assert_eq!(probe("127.0.0.1:9"), "127.0.0.1:9");
        assert_eq!(probe("192.0.2.7:80"), "192.0.2.7:80");
    }
}
