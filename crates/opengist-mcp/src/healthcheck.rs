//! `opengist-mcp healthcheck`: whether the HTTP server configured in this environment answers
//! its health route. For a container `HEALTHCHECK` (packaging/container/): the image holds the
//! static binary and nothing else, so there is no curl or wget to ask `/healthz` with.
//!
//! It reads the same settings as the server (`OPENGIST_MCP_HTTP_ADDR` or `--http`, and
//! `OPENGIST_MCP_HTTP_TOKEN`), sends `GET /healthz` to that address (the loopback of the same
//! family when the server binds an unspecified address such as `0.0.0.0`), and exits 0 on a
//! `200` (on a team server, `OPENGIST_MCP_HTTP_AUTH=opengist`, also on the `401` its gate gives
//! a request without a person's token), 1 otherwise, with one line saying what it found. Without an HTTP address the server
//! serves stdio and there is nothing to probe: it says so and exits 0. It never talks to
//! Opengist and never prints the bearer secret.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

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
        // A team server takes only people's own Opengist tokens, which the probe has none of:
        // its gate's 401 (asked without a bearer, it asks Opengist nothing) is the answer of a
        // server that is up.
        Ok(answer)
            if config.serves_team() && answer.status() == reqwest::StatusCode::UNAUTHORIZED =>
        {
            println!(
                "opengist-mcp healthcheck: {url} answered 401 without a person's token, as a team server (OPENGIST_MCP_HTTP_AUTH=opengist) does: it is up"
            );
            ExitCode::SUCCESS
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
