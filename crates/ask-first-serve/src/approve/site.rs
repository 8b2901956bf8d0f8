//! Where the pages are served and for which WebAuthn relying party: the page's own loopback
//! listener (`http://localhost:PORT`, relying party `localhost`), or the HTTP server's own
//! address at its public URL (relying party: that URL's host).

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};
use url::Url;

/// The relying party of the loopback listener and of `passkeys add`'s own link.
pub(crate) const LOOPBACK_HOST: &str = "localhost";

/// A public base the pages are served at: its origin (`https://mcp.example.com`, no path) and
/// the WebAuthn relying party id (its host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicBase {
    pub(crate) origin: String,
    pub(crate) rp: String,
}

/// The public base of an HTTP server bound to `local`: `public_url` (the operator's
/// `<PREFIX>_PUBLIC_URL`), else the origin of `resource` (the OAuth resource, the public URL of
/// its `/mcp`) when passkeys can be made there (not an IP address, https or localhost), else
/// `http://localhost:PORT` for a loopback address. An error says why the pages cannot be
/// served there (`setting` names the public URL's setting).
pub(crate) fn public_base(
    public_url: Option<&str>,
    resource: Option<&str>,
    local: Option<SocketAddr>,
    setting: &str,
) -> Result<PublicBase, String> {
    if public_url.is_none()
        && let Some(resource) = resource
    {
        let from_resource = base_of(resource, "the OAuth resource", None);
        if from_resource.is_ok() || !local.is_some_and(|l| l.ip().is_loopback()) {
            return from_resource;
        }
    }
    let (raw, from) = match (public_url, local) {
        (Some(url), _) => (url.to_owned(), setting.to_owned()),
        (None, Some(local)) if local.ip().is_loopback() => (
            format!("http://{LOOPBACK_HOST}:{}", local.port()),
            "the loopback address".to_owned(),
        ),
        _ => {
            return Err(format!(
                "the server has no public URL a browser reaches it at: set {setting} (e.g. https://mcp.example.com)"
            ));
        }
    };
    base_of(&raw, &from, public_url.is_some().then_some(setting))
}

/// The base at `raw` (`from` says where it came from); `setting`: it is the public URL
/// setting's value, which must have no path.
fn base_of(raw: &str, from: &str, setting: Option<&str>) -> Result<PublicBase, String> {
    let url = Url::parse(raw).map_err(|e| format!("{from} `{raw}` is not a URL: {e}"))?;
    let Some(host) = url.host_str().map(str::to_ascii_lowercase) else {
        return Err(format!("{from} `{raw}` has no host"));
    };
    if url
        .host()
        .is_some_and(|h| !matches!(h, url::Host::Domain(_)))
    {
        return Err(format!(
            "{from} `{raw}` names an IP address; passkeys need a domain name (use localhost, or the server's name)"
        ));
    }
    let secure = url.scheme() == "https"
        || (url.scheme() == "http" && (host == LOOPBACK_HOST || host.ends_with(".localhost")));
    if !secure {
        return Err(format!(
            "{from} `{raw}` is not https: browsers offer passkeys only on https (or on localhost)"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() {
        return Err(format!("{from} `{raw}` carries a user, password or query"));
    }
    if let Some(setting) = setting
        && url.path() != "/"
    {
        return Err(format!(
            "{setting} `{raw}` has a path: give the origin only (scheme, host and port); the pages are served at /approve/ and /enrol/"
        ));
    }
    Ok(PublicBase {
        origin: url.origin().ascii_serialization(),
        rp: host,
    })
}

/// Whether a browser reaches `host` on this machine's loopback: `localhost` and its subdomains
/// (browsers resolve them to `::1` and `127.0.0.1` themselves).
pub(crate) fn names_loopback(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == LOOPBACK_HOST || host.ends_with(".localhost")
}

/// The loopback listener's own origin, `http://localhost:PORT` with the `port` it bound, when
/// `headers` say the request was made to exactly that (its `Host`), else `None`: another port
/// (the origin of some other local page), another name (a rebinding name, an IP address).
pub(crate) fn loopback_origin(headers: &HeaderMap, port: u16) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let (name, sent_port) = host.rsplit_once(':')?;
    (name.eq_ignore_ascii_case(LOOPBACK_HOST) && sent_port == port.to_string())
        .then(|| format!("http://{LOOPBACK_HOST}:{port}"))
}

/// A loopback listener's gate: a request whose `Host` is not `localhost` with the `port` the
/// listener bound is answered `421 Misdirected Request`, naming the one place it serves.
pub(crate) async fn pinned_host(
    axum::extract::State(port): axum::extract::State<u16>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if loopback_origin(request.headers(), port).is_some() {
        return next.run(request).await;
    }
    super::html::text(
        axum::http::StatusCode::MISDIRECTED_REQUEST,
        format!(
            "Refused: this page is served at http://{LOOPBACK_HOST}:{port} only, and this request was addressed to another host or port."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTING: &str = "T_PUBLIC_URL";

    #[test]
    fn the_public_base_is_the_setting_then_the_resource_then_loopback() {
        let local = Some(SocketAddr::from(([127, 0, 0, 1], 8080)));
        let base = |p, r, l| public_base(p, r, l, SETTING);
        assert_eq!(
            base(
                Some("https://mcp.example.com"),
                Some("https://x.example/mcp"),
                local
            ),
            Ok(PublicBase {
                origin: "https://mcp.example.com".into(),
                rp: "mcp.example.com".into()
            })
        );
        assert_eq!(
            base(None, Some("https://mcp.example.com:8443/mcp"), local).map(|b| (b.origin, b.rp)),
            Ok((
                "https://mcp.example.com:8443".into(),
                "mcp.example.com".into()
            ))
        );
        assert_eq!(
            base(None, None, local).map(|b| b.origin),
            Ok("http://localhost:8080".into())
        );
        // No public URL known: the error names the setting.
        let public = Some(SocketAddr::from(([0, 0, 0, 0], 8080)));
        assert!(base(None, None, public).unwrap_err().contains(SETTING));
        for refused in [
            "http://mcp.example.com",
            "https://10.0.0.1",
            "https://mcp.example.com/base",
            "https://u:p@mcp.example.com",
            "not a url",
        ] {
            assert!(base(Some(refused), None, local).is_err(), "{refused}");
        }
        assert!(base(Some("http://localhost:9000/"), None, None).is_ok());
        // A resource on an IP address cannot hold passkeys: on loopback, localhost instead.
        assert_eq!(
            base(None, Some("http://127.0.0.1:8080/mcp"), local).map(|b| b.origin),
            Ok("http://localhost:8080".into())
        );
        assert!(base(None, Some("http://10.0.0.1:8080/mcp"), public).is_err());
    }

    #[test]
    fn the_loopback_listener_answers_only_to_localhost_on_its_own_port() {
        let headers = |host: &str| {
            let mut map = HeaderMap::new();
            map.insert(header::HOST, host.parse().expect("value"));
            map
        };
        for host in ["localhost:4000", "LocalHost:4000"] {
            assert_eq!(
                loopback_origin(&headers(host), 4000).as_deref(),
                Some("http://localhost:4000"),
                "{host}"
            );
        }
        for host in [
            "localhost:4001",
            "localhost:04000",
            "evil.example:4000",
            "127.0.0.1:4000",
            "[::1]:4000",
            "localhost",
            "localhost:x",
            "localhost:4000:4000",
        ] {
            assert_eq!(loopback_origin(&headers(host), 4000), None, "{host}");
        }
        assert_eq!(loopback_origin(&HeaderMap::new(), 4000), None);
    }
}
