//! OpenID Connect for the approval page's login: the provider's endpoints from its discovery
//! document, the authorization code exchanged at its token endpoint, and the ID token checked
//! (OpenID Connect Core §3.1.3.7) under the same keys the access tokens are checked with.
//!
//! An ID token is not an access token: its audience is the page's client id, not the resource,
//! and it must carry the nonce the page sent with the sign-in.

use jsonwebtoken::Validation;
use jsonwebtoken::errors::ErrorKind;
use serde::Deserialize;
use url::Url;

use super::keys::metadata_candidates;
use super::{ACCEPTED_ALGORITHMS, MAX_SUBJECT_CHARS, MAX_TOKEN_BYTES, OAuthVerifier};

/// Where the person signs in and where the code is exchanged.
#[derive(Debug, Clone)]
pub(crate) struct LoginEndpoints {
    pub(crate) authorization: String,
    pub(crate) token: String,
}

#[derive(Deserialize)]
struct ProviderMetadata {
    issuer: String,
    #[serde(default)]
    authorization_endpoint: Option<String>,
    #[serde(default)]
    token_endpoint: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    id_token: Option<String>,
}

/// `aud` as an ID token carries it: one client id or a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct IdClaims {
    iss: String,
    sub: String,
    aud: Audience,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
}

/// What the code exchange needs besides the code.
pub(crate) struct CodeExchange<'a> {
    pub(crate) token_endpoint: &'a str,
    pub(crate) code: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) verifier: &'a str,
    pub(crate) client_id: &'a str,
    pub(crate) client_secret: Option<&'a str>,
}

fn secure(url: &str) -> bool {
    Url::parse(url).is_ok_and(|parsed| {
        parsed.scheme() == "https"
            || (parsed.scheme() == "http" && crate::settings::is_loopback_url(&parsed))
    })
}

impl OAuthVerifier {
    /// The issuer's authorization and token endpoints, from its metadata (whose `issuer` must
    /// equal the setting); https only, plain http on loopback.
    pub(crate) async fn login_endpoints(&self) -> Result<LoginEndpoints, String> {
        let mut problems = Vec::new();
        for url in metadata_candidates(&self.config.issuer) {
            match self.fetch_json::<ProviderMetadata>(&url).await {
                Ok(metadata) if metadata.issuer != self.config.issuer => {
                    problems.push(format!("{url} names another issuer"));
                }
                Ok(ProviderMetadata {
                    authorization_endpoint: Some(authorization),
                    token_endpoint: Some(token),
                    ..
                }) => {
                    if !secure(&authorization) || !secure(&token) {
                        return Err(format!(
                            "the endpoints in {url} are not https URLs (plain http only on loopback)"
                        ));
                    }
                    return Ok(LoginEndpoints {
                        authorization,
                        token,
                    });
                }
                Ok(_) => problems.push(format!(
                    "{url} has no `authorization_endpoint` or `token_endpoint`"
                )),
                Err(problem) => problems.push(problem),
            }
        }
        Err(problems.join("; "))
    }

    /// Exchanges an authorization code (with its PKCE verifier) for the ID token.
    pub(crate) async fn exchange_code(&self, exchange: CodeExchange<'_>) -> Result<String, String> {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", exchange.code)
            .append_pair("redirect_uri", exchange.redirect_uri)
            .append_pair("code_verifier", exchange.verifier)
            .append_pair("client_id", exchange.client_id)
            .finish();
        let mut request = self
            .client
            .post(exchange.token_endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json");
        if let Some(secret) = exchange.client_secret {
            // client_secret_basic: each part form-encoded first (RFC 6749 §2.3.1).
            let encode = |text: &str| {
                url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            };
            request = request.basic_auth(encode(exchange.client_id), Some(encode(secret)));
        }
        let response = request.body(form).send().await.map_err(|_| {
            "the identity provider's token endpoint could not be reached".to_owned()
        })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|_| "the identity provider's answer could not be read".to_owned())?;
        if !status.is_success() {
            return Err(format!(
                "the identity provider refused the sign-in's code ({status})"
            ));
        }
        let answer: TokenAnswer = serde_json::from_slice(&body)
            .map_err(|_| "the identity provider did not answer with JSON".to_owned())?;
        answer.id_token.ok_or_else(|| {
            "the identity provider sent no ID token (is `openid` allowed?)".to_owned()
        })
    }

    /// Checks an ID token for `client_id` carrying `nonce`: signed by the issuer with an
    /// asymmetric key, `iss` the setting, `aud` containing `client_id` (and `azp`, when
    /// present, `client_id`), not expired, the nonce equal. The principal it proves,
    /// `oauth:<iss>#<sub>`, as the gate names the MCP caller.
    pub(crate) async fn verify_id_token(
        &self,
        token: &str,
        client_id: &str,
        nonce: &str,
    ) -> Result<String, String> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err("the ID token is too long".to_owned());
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| "the ID token is not a signed JWT".to_owned())?;
        if !ACCEPTED_ALGORITHMS.contains(&header.alg) {
            return Err("the ID token's algorithm is not accepted".to_owned());
        }
        let kid = header.kid.as_deref();
        let mut keys = self
            .current_keys()
            .await
            .map_err(|r| r.message().to_owned())?;
        if keys.candidates(kid, header.alg).next().is_none() && kid.is_some() {
            keys = self
                .refresh_keys(Some(keys.generation))
                .await
                .unwrap_or(keys);
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[client_id]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        for key in keys.candidates(kid, header.alg) {
            match jsonwebtoken::decode::<IdClaims>(token, &key.key, &validation) {
                Ok(data) => return accept(data.claims, &self.config.issuer, client_id, nonce),
                Err(error) if matches!(error.kind(), ErrorKind::InvalidSignature) => {}
                Err(error) => {
                    return Err(match error.kind() {
                        ErrorKind::ExpiredSignature => "the ID token has expired".to_owned(),
                        ErrorKind::InvalidAudience => {
                            "the ID token is for another client".to_owned()
                        }
                        ErrorKind::InvalidIssuer => {
                            "the ID token was issued by another provider".to_owned()
                        }
                        _ => "the ID token is malformed".to_owned(),
                    });
                }
            }
        }
        Err("the ID token's signature does not verify under the issuer's keys".to_owned())
    }
}

fn accept(claims: IdClaims, issuer: &str, client_id: &str, nonce: &str) -> Result<String, String> {
    if claims.iss != issuer {
        return Err("the ID token was issued by another provider".to_owned());
    }
    let many = match &claims.aud {
        Audience::One(aud) if aud == client_id => false,
        Audience::Many(list) if list.iter().any(|aud| aud == client_id) => list.len() > 1,
        _ => return Err("the ID token is for another client".to_owned()),
    };
    match &claims.azp {
        Some(azp) if azp != client_id => {
            return Err("the ID token was given to another client (`azp`)".to_owned());
        }
        None if many => return Err("the ID token has several audiences and no `azp`".to_owned()),
        _ => {}
    }
    if claims.nonce.as_deref() != Some(nonce) {
        return Err("the ID token does not carry this sign-in's nonce".to_owned());
    }
    let subject = claims.sub;
    if subject.is_empty()
        || subject.chars().count() > MAX_SUBJECT_CHARS
        || subject.chars().any(char::is_control)
    {
        return Err("the ID token's `sub` is empty, too long or has control characters".to_owned());
    }
    Ok(format!("oauth:{}#{subject}", claims.iss))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(aud: Audience, azp: Option<&str>, nonce: Option<&str>, sub: &str) -> IdClaims {
        IdClaims {
            iss: "https://id.example".to_owned(),
            sub: sub.to_owned(),
            aud,
            azp: azp.map(str::to_owned),
            nonce: nonce.map(str::to_owned),
        }
    }

    #[test]
    fn only_this_clients_token_with_this_nonce_proves_its_subject() {
        let check = |c| accept(c, "https://id.example", "page", "N");
        assert_eq!(
            check(claims(
                Audience::One("page".into()),
                None,
                Some("N"),
                "alice"
            )),
            Ok("oauth:https://id.example#alice".to_owned())
        );
        assert!(
            check(claims(
                Audience::One("other".into()),
                None,
                Some("N"),
                "alice"
            ))
            .is_err()
        );
        assert!(
            check(claims(
                Audience::One("page".into()),
                None,
                Some("M"),
                "alice"
            ))
            .is_err()
        );
        assert!(check(claims(Audience::One("page".into()), None, None, "alice")).is_err());
        assert!(
            check(claims(
                Audience::One("page".into()),
                Some("x"),
                Some("N"),
                "a"
            ))
            .is_err()
        );
        let both = || Audience::Many(vec!["page".into(), "x".into()]);
        assert!(check(claims(both(), None, Some("N"), "alice")).is_err());
        assert!(check(claims(both(), Some("page"), Some("N"), "alice")).is_ok());
        assert!(check(claims(Audience::One("page".into()), None, Some("N"), "")).is_err());
        let mut other = claims(Audience::One("page".into()), None, Some("N"), "alice");
        other.iss = "https://elsewhere.example".to_owned();
        assert!(check(other).is_err());
    }
}
