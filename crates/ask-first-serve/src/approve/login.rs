//! Approving with a login at the operator's identity provider (`oauth` mode): OpenID Connect
//! authorization code with PKCE, whose issuer and subject must be those of the MCP caller that
//! asked (the record's principal).
//!
//! `GET /approve/<id>/login` starts a sign-in for that one record: a fresh `state`, PKCE
//! verifier and nonce held here, and a `SameSite=Lax` cookie binding the sign-in to this
//! browser, then a redirect to the provider (`prompt=login`). The provider's redirect back
//! ([`CALLBACK_PATH`]) cannot carry the page's `SameSite=Strict` cookie when the provider is
//! on another site, so the callback decides nothing: it takes the sign-in out (a replayed
//! callback finds none), exchanges the code, checks the ID token, compares its principal with
//! the record's, and shows the question again with Approve and Decline under a fresh page
//! token and cookie. The decision is a same-origin `POST /approve/<id>/decide` with that token,
//! which a model that started the sign-in never sees; it works once, for that record only.

use std::sync::Arc;
use std::time::Duration;

use ask_first_core::{RecordId, RecordState};
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::Digest as _;

use super::held::Held;
use super::page::{PAGE_COOKIE, decision_post, not_held, record_decision};
use super::{Inner, PAGE_TTL, html, now, random_token};
use crate::http::oauth::{CodeExchange, OAuthVerifier};
use crate::settings::Secret;

mod settings;

pub(crate) use settings::LoginSettings;

/// Where the provider sends the person back; the redirect URI registered for the page's
/// client is the page's origin followed by this path.
pub(crate) const CALLBACK_PATH: &str = "/approve-login/callback";
/// The cookie binding a sign-in to the browser that started it.
const LOGIN_COOKIE: &str = "ask_first_login";
/// How long a sign-in may take at the provider.
const LOGIN_TTL: Duration = Duration::from_secs(10 * 60);

/// A sign-in started for one record (held under its `state`, for that record), waiting for
/// the provider's redirect back.
struct Started {
    verifier: String,
    nonce: String,
    binding: String,
    redirect_uri: String,
}

/// A sign-in that proved the record's principal (held under its page token, for that record):
/// it may decide that record, once.
struct SignedIn {
    principal: String,
}

/// The page's login at the operator's identity provider.
pub(crate) struct Login {
    verifier: OAuthVerifier,
    client_id: String,
    client_secret: Option<Secret>,
    /// Whether the page offers a passkey as well.
    pub(crate) passkey: bool,
    started: Held<Started>,
    signed_in: Held<SignedIn>,
}

impl Login {
    /// Forgets the sign-ins of `record`, decided.
    pub(crate) fn forget(&self, record: &RecordId) {
        self.started.forget(record);
        self.signed_in.forget(record);
    }
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_owned())
}

fn notice(status: StatusCode, title: &str, text: &str, cookie: Option<String>) -> Response {
    let nonce = random_token();
    let page = html::notice_page(title, text, &nonce);
    html::page_response(status, page, &nonce, cookie)
}

fn refused(text: &str) -> Response {
    notice(StatusCode::FORBIDDEN, "Not signed in", text, None)
}

/// `GET /approve/<id>/login`: starts a sign-in for this record and sends the browser to the
/// provider.
pub(crate) async fn start(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let Some(login) = inner.login.get() else {
        return refused("This server's approval page offers no login.");
    };
    let Some(origin) = inner.origin(&headers) else {
        return html::text(
            StatusCode::MISDIRECTED_REQUEST,
            "This page is served on its own address only.",
        );
    };
    let record = match RecordId::parse(&id) {
        Some(id) => inner.records.get(&id, now()).await,
        None => Ok(None),
    };
    let record = match record {
        Ok(Some(record)) if record.state == RecordState::Pending => record,
        Ok(_) => {
            return notice(
                StatusCode::GONE,
                "No such question",
                "There is no open question here, or it was already answered. Nothing was changed.",
                None,
            );
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now; reload later.",
            );
        }
    };
    let endpoints = match login.verifier.login_endpoints().await {
        Ok(endpoints) => endpoints,
        Err(problem) => {
            tracing::warn!("approval page: the identity provider's metadata: {problem}");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The identity provider cannot be reached now; try again shortly.",
            );
        }
    };
    let (state, verifier, nonce, binding) = (
        random_token(),
        random_token(),
        random_token(),
        random_token(),
    );
    let challenge = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    let redirect_uri = format!("{origin}{CALLBACK_PATH}");
    let Ok(mut url) = url::Url::parse(&endpoints.authorization) else {
        return html::text(
            StatusCode::SERVICE_UNAVAILABLE,
            "The identity provider's sign-in address is not a URL.",
        );
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &login.client_id)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", "openid")
        .append_pair("state", &state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("prompt", "login");
    let started = Started {
        verifier,
        nonce,
        binding: binding.clone(),
        redirect_uri,
    };
    if let Err(crowded) = login.started.insert(&record, now(), state, started) {
        tracing::info!(record = %record.id, ?crowded, "approval page: a sign-in not started, at its bound");
        let text = crowded.text(&record.principal, LOGIN_TTL);
        return notice(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-ins",
            &text,
            None,
        );
    }
    let mut headers = HeaderMap::new();
    let bind = format!(
        "{LOGIN_COOKIE}={binding}; Path={CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age={}{}",
        LOGIN_TTL.as_secs(),
        if inner.secure() { "; Secure" } else { "" }
    );
    for (name, value) in [
        (header::LOCATION, url.to_string()),
        (header::SET_COOKIE, bind),
        (header::CACHE_CONTROL, "no-store".to_owned()),
        (header::REFERRER_POLICY, "no-referrer".to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    (StatusCode::SEE_OTHER, headers).into_response()
}

/// The provider's redirect back: its `state`, `code` and `error` (each the first given).
#[derive(Default)]
struct Callback {
    state: Option<String>,
    code: Option<String>,
    error: Option<String>,
}

impl Callback {
    fn of(uri: &Uri) -> Self {
        let mut back = Self::default();
        for (name, value) in url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
            let slot = match name.as_ref() {
                "state" => &mut back.state,
                "code" => &mut back.code,
                "error" => &mut back.error,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        back
    }
}

/// `GET <CALLBACK_PATH>`: checks the sign-in and shows the question with Approve and Decline.
pub(crate) async fn callback(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let back = Callback::of(&uri);
    let Some(login) = inner.login.get() else {
        return refused("This server's approval page offers no login.");
    };
    // The sign-in works once: taken out whatever comes next.
    let started = back
        .state
        .as_deref()
        .and_then(|state| login.started.take(state));
    let Some((started_for, started)) = started else {
        tracing::info!("approval page: a sign-in callback with no open sign-in was refused");
        return refused(
            "Nothing was decided: this sign-in was already used or has expired. Open the approval link again.",
        );
    };
    if cookie(&headers, LOGIN_COOKIE).as_deref() != Some(started.binding.as_str()) {
        return refused(
            "Nothing was decided: this sign-in was started in another browser. Open the approval link in this one.",
        );
    }
    let Some(code) = back.code.filter(|_| back.error.is_none()) else {
        return refused(
            "Nothing was decided: the sign-in at the identity provider did not complete.",
        );
    };
    let Ok(token_endpoint) = login.verifier.login_endpoints().await.map(|e| e.token) else {
        return html::text(
            StatusCode::SERVICE_UNAVAILABLE,
            "The identity provider cannot be reached now; open the approval link again shortly.",
        );
    };
    let exchange = CodeExchange {
        token_endpoint: &token_endpoint,
        code: &code,
        redirect_uri: &started.redirect_uri,
        verifier: &started.verifier,
        client_id: &login.client_id,
        client_secret: login.client_secret.as_ref().map(Secret::expose),
    };
    let checked = match login.verifier.exchange_code(exchange).await {
        Ok(id_token) => {
            login
                .verifier
                .verify_id_token(&id_token, &login.client_id, &started.nonce)
                .await
        }
        Err(problem) => Err(problem),
    };
    let principal = match checked {
        Ok(principal) => principal,
        Err(problem) => {
            tracing::info!("approval page: a sign-in was refused: {problem}");
            return refused(&format!("Nothing was decided: {problem}."));
        }
    };
    let record = match inner.records.get(&started_for, now()).await {
        Ok(Some(record)) if record.state == RecordState::Pending => record,
        Ok(_) => {
            return notice(
                StatusCode::GONE,
                "Already answered",
                "This question was already answered, or has expired. Nothing was changed.",
                None,
            );
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now; open the approval link again later.",
            );
        }
    };
    if principal != record.principal {
        tracing::info!(record = %record.id, "approval page: a login as another subject was refused");
        return refused(&format!(
            "Nothing was decided: you signed in as `{principal}`, but this question was asked by `{}`; only that account may approve it.",
            record.principal
        ));
    }
    let token = random_token();
    if let Err(crowded) =
        login
            .signed_in
            .insert(&record, now(), token.clone(), SignedIn { principal })
    {
        let text = crowded.text(&record.principal, PAGE_TTL);
        return notice(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-ins",
            &text,
            None,
        );
    }
    let nonce = random_token();
    let page = html::signed_in_page(
        &inner.server,
        &record.tool,
        (&record.question, &record.evidence),
        &record.id.to_string(),
        &nonce,
        &token,
    );
    let cookie = format!(
        "{PAGE_COOKIE}={token}; Path=/approve/{}; HttpOnly; SameSite=Strict; Max-Age={}{}",
        record.id,
        PAGE_TTL.as_secs(),
        if inner.secure() { "; Secure" } else { "" }
    );
    html::page_response(StatusCode::OK, page, &nonce, Some(cookie))
}

/// `POST /approve/<id>/decide`: the decision of the person who signed in, once.
pub(crate) async fn decide(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(login) = inner.login.get() else {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: this server's approval page offers no login.",
        );
    };
    let (token, approve) = match decision_post(&inner, &headers, &body) {
        Ok(decision) => decision,
        Err((status, text)) => return html::text(status, text),
    };
    let token = token.as_str();
    const NOBODY: &str = "Refused: nobody signed in for this question on this page; open the approval link and sign in.";
    let (signed_for, signed_in) = match login.signed_in.take(token) {
        Some((record, signed_in)) if record.to_string() == id => (record, signed_in),
        // A sign-in for another question: it decides nothing here.
        Some(_) => return html::text(StatusCode::FORBIDDEN, NOBODY),
        None => return not_held(&inner, &id, NOBODY).await,
    };
    match inner.records.get(&signed_for, now()).await {
        Ok(Some(record))
            if record.state == RecordState::Pending && record.principal == signed_in.principal => {}
        Ok(_) => {
            return html::text(
                StatusCode::GONE,
                "This question was already answered, or has expired.",
            );
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now.",
            );
        }
    }
    record_decision(&inner, &signed_for, approve, "a login", "sign in again").await
}
