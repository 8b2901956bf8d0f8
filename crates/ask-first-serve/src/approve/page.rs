//! The approval page's handlers: `GET /approve/<id>` shows the question; `begin` and `finish`
//! run the passkey ceremony of the decision the person clicked, and record it.

use std::sync::Arc;

use ask_first_core::{RecordId, RecordState};
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::ceremony::{self, AssertionRefused};
use super::{Inner, OpenPage, PAGE_TTL, html, now, random_token};

/// The cookie that carries a page's token.
pub(crate) const PAGE_COOKIE: &str = "ask_first_page";

/// The page token in the request's cookie.
pub(crate) fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == PAGE_COOKIE)
        .map(|(_, value)| value.to_owned())
}

pub(crate) async fn show(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let nonce = random_token();
    if inner.origin(&headers).is_none() {
        return html::text(
            StatusCode::MISDIRECTED_REQUEST,
            "Refused: this request was not addressed to the page's own host and port.",
        );
    }
    let record = match RecordId::parse(&id) {
        Some(id) => inner.records.get(&id, now()).await,
        None => Ok(None),
    };
    let record = match record {
        // Only the page's own records: a CIBA record is decided by the identity provider.
        Ok(Some(record)) if record.route == "page" => record,
        Ok(_) => {
            let page = html::notice_page(
                "No such question",
                "There is no question here, or it has expired. Nothing was changed.",
                &nonce,
            );
            return html::page_response(StatusCode::NOT_FOUND, page, &nonce, None);
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The approval records cannot be read now; reload later.",
            );
        }
    };
    if record.state != RecordState::Pending {
        let page = html::notice_page(
            "Already answered",
            &format!(
                "This question was already answered: it is {}.",
                record.state.as_str()
            ),
            &nonce,
        );
        return html::page_response(StatusCode::GONE, page, &nonce, None);
    }
    // The same browser again (its cookie names a page of this record it holds): its own page.
    let token = match cookie_token(&headers) {
        Some(token) if inner.pages.renew(&record.id, &token) => token,
        _ => {
            let token = random_token();
            let page = OpenPage { ceremony: None };
            if let Err(crowded) = inner.pages.insert(&record, now(), token.clone(), page) {
                tracing::info!(record = %record.id, ?crowded, "approval page: not opened, at its bound");
                let text = crowded.text(&record.principal, PAGE_TTL);
                let page = html::notice_page("Too many open pages", &text, &nonce);
                return html::page_response(StatusCode::TOO_MANY_REQUESTS, page, &nonce, None);
            }
            token
        }
    };
    let login = format!("/approve/{id}/login");
    let enrol = enrol_hint(&inner.server, &record.principal);
    // With a login offered, the passkey buttons show only once a passkey is enrolled.
    let ways = html::Ways {
        passkey: inner.offers_passkey() && (inner.login.get().is_none() || inner.passkeys.any()),
        login: inner.login.get().map(|_| login.as_str()),
        enrol: &enrol,
        unenrolled: !inner.passkeys.any_for(&record.principal),
    };
    let page = html::approval_page(
        &inner.server,
        &record.tool,
        (&record.question, &record.evidence),
        &nonce,
        &token,
        &ways,
    );
    let cookie = format!(
        "{PAGE_COOKIE}={token}; Path=/approve/{id}; HttpOnly; SameSite=Strict; Max-Age={}{}",
        PAGE_TTL.as_secs(),
        if inner.secure() { "; Secure" } else { "" }
    );
    html::page_response(StatusCode::OK, page, &nonce, Some(cookie))
}

/// Which principal's passkey a page needs, and the command that enrols one.
fn enrol_hint(server: &str, principal: &str) -> String {
    format!(
        "This page needs a passkey enrolled for `{principal}`, who asked. The operator enrols one on the server's machine with `{}`, then opens this page again.",
        ask_first_core::enrol_command(server, principal)
    )
}

/// Why a POST was refused: its status and the text said.
pub(crate) type Refusal = (StatusCode, String);

/// A decision's POST, after [`checked_post`]'s checks: the page's token and whether the person
/// chose Approve (else Decline).
pub(crate) fn decision_post(
    inner: &Inner,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(String, bool), Refusal> {
    let (_, body) = checked_post(inner.origin(headers), headers, body)?;
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    match body.get("decision").and_then(|d| d.as_str()) {
        Some("approve") => Ok((token.to_owned(), true)),
        Some("decline") => Ok((token.to_owned(), false)),
        _ => Err((
            StatusCode::BAD_REQUEST,
            "Refused: the decision is neither approve nor decline.".to_owned(),
        )),
    }
}

/// A POST's JSON body, after the checks every POST passes: made to the pages' `origin` (`None`:
/// to something else), from that origin, with the page's token in both the cookie and the body.
pub(crate) fn checked_post(
    origin: Option<String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(String, serde_json::Value), Refusal> {
    let refused = |text: &str| Err((StatusCode::FORBIDDEN, text.to_owned()));
    let Some(origin) = origin else {
        return refused("Refused: this request was not addressed to the page's own host and port.");
    };
    let sent_origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if sent_origin != Some(origin.as_str()) {
        return refused("Refused: this request did not come from the page itself.");
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "Refused: the request is not JSON.".to_owned(),
        ));
    };
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if token.is_empty() || cookie_token(headers).as_deref() != Some(token) {
        return refused(
            "Refused: this request does not carry the page's own token; reload the page.",
        );
    }
    Ok((origin, body))
}

pub(crate) async fn begin(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !inner.offers_passkey() {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: this page does not approve with a passkey; sign in instead.",
        );
    }
    let (token, approve) = match decision_post(&inner, &headers, &body) {
        Ok(decision) => decision,
        Err((status, text)) => return html::text(status, text),
    };
    let token = token.as_str();
    let started = match ceremony::start_authentication(inner.rp()) {
        Ok(started) => started,
        Err(error) => {
            tracing::warn!(%error, "approval page: the passkey request could not begin");
            return html::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The passkey request could not begin.",
            );
        }
    };
    let begun = inner.pages.update(token, |record, page| {
        if record.to_string() == id {
            page.ceremony = Some((approve, started.state));
        }
        record.to_string() == id
    });
    if begun != Some(true) {
        return not_held(
            &inner,
            &id,
            "Refused: this page has expired or was used; reload it.",
        )
        .await;
    }
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    (StatusCode::OK, headers, started.options).into_response()
}

pub(crate) async fn finish(
    State(inner): State<Arc<Inner>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (origin, body) = match checked_post(inner.origin(&headers), &headers, &body) {
        Ok(checked) => checked,
        Err((status, text)) => return html::text(status, text),
    };
    let token = body
        .get("token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    // The page's token and its ceremony work once: taken out whatever comes next.
    let Some((
        record_id,
        OpenPage {
            ceremony: Some((approve, state)),
        },
    )) = inner.pages.take(token)
    else {
        return not_held(
            &inner,
            &id,
            "Refused: no passkey request is open on this page (it expired, or was used); reload it.",
        )
        .await;
    };
    if record_id.to_string() != id {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: this page's token is for another question; reload it.",
        );
    }
    let record = match inner.records.get(&record_id, now()).await {
        Ok(Some(record)) if record.state == RecordState::Pending && record.route == "page" => {
            record
        }
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
    };
    let credential = body
        .get("credential")
        .map(|c| c.to_string())
        .unwrap_or_default();
    let enrolled = match inner.passkeys.load() {
        Ok(enrolled) => enrolled,
        Err(error) => {
            tracing::warn!(%error, "approval page: the passkeys cannot be read");
            return html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                "The enrolled passkeys cannot be read.",
            );
        }
    };
    let verified = ceremony::finish_authentication(
        state,
        credential.as_bytes(),
        &origin,
        inner.rp(),
        &enrolled,
        &record.principal,
    );
    let (server, principal) = (&inner.server, &record.principal);
    let enrol = format!(
        "The operator enrols a passkey for `{principal}` on the server's machine with `{}`.",
        ask_first_core::enrol_command(server, principal)
    );
    let (index, dynamic) = match verified {
        Ok(verified) => verified,
        Err(refused) => {
            let text = match refused {
                AssertionRefused::NotEnrolled => format!(
                    "Nothing was decided: this passkey is not enrolled on {server}. {enrol}"
                ),
                AssertionRefused::OtherPrincipal => format!(
                    "Nothing was decided: this passkey approves another principal's questions, not those of `{principal}`, which asked this. {enrol}"
                ),
                AssertionRefused::Invalid(why) => format!("Nothing was decided: {why}."),
            };
            tracing::info!(record = %record_id, "approval page: a passkey answer was refused");
            return html::text(StatusCode::FORBIDDEN, text);
        }
    };
    if let (Some(entry), Some(dynamic)) = (enrolled.get(index), dynamic)
        && let Err(error) = inner.passkeys.update(&entry.credential_id, dynamic)
    {
        tracing::warn!(%error, "approval page: the passkey's counter could not be saved");
    }
    record_decision(&inner, &record_id, approve, "a passkey", "try again").await
}

/// The answer to a POST whose page (or sign-in) is not held: the question `id` was already
/// answered or expired (its pages were forgotten then), else `refusal`.
pub(crate) async fn not_held(inner: &Inner, id: &str, refusal: &str) -> Response {
    let record = match RecordId::parse(id) {
        Some(id) => inner.records.get(&id, now()).await,
        None => Ok(None),
    };
    match record {
        Ok(Some(record)) if record.state == RecordState::Pending => {
            html::text(StatusCode::FORBIDDEN, refusal)
        }
        Ok(Some(_)) => html::text(
            StatusCode::GONE,
            "This question was already answered, or has expired.",
        ),
        _ => html::text(StatusCode::FORBIDDEN, refusal),
    }
}

/// What the page says once the person approved. The page cannot tell how its link reached the
/// person: a client waiting on the page (URL elicitation) goes on by itself, while after a link
/// in a tool's result nothing runs until the client calls again. Both stay true here.
pub(crate) const APPROVED: &str = "Approved. Return to your chat: the call runs once, exactly as shown, when your client makes it again (a client that is waiting for this page goes on by itself). You may close this page.";

/// Records the person's decision on `record` (proven by `proof`, for the log) and answers the
/// page; wakes the calls waiting on it. `retry` says what to do when the store failed.
pub(crate) async fn record_decision(
    inner: &Inner,
    record: &RecordId,
    approve: bool,
    proof: &str,
    retry: &str,
) -> Response {
    match inner.records.decide(record, approve, now()).await {
        Ok(Ok(())) => {
            inner.decided.notify_waiters();
            inner.forget(record);
            tracing::info!(record = %record, approved = approve, proof, "approval page: decided");
            html::text(
                StatusCode::OK,
                if approve {
                    APPROVED
                } else {
                    "Declined. Nothing will be changed; you may close this page."
                },
            )
        }
        Ok(Err(refused)) => {
            html::text(StatusCode::GONE, format!("Nothing was decided: {refused}."))
        }
        Err(error) => {
            tracing::warn!(%error, "approval page: the record store failed");
            html::text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("The decision could not be recorded; {retry}."),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        map
    }

    #[test]
    fn only_posts_from_the_page_itself_with_its_token_pass() {
        let origin = || Some("http://localhost:4000".to_owned());
        let body = br#"{"token":"abc","decision":"approve"}"#;
        let good = [
            ("host", "localhost:4000"),
            ("origin", "http://localhost:4000"),
            ("cookie", "other=1; ask_first_page=abc"),
        ];
        assert!(checked_post(origin(), &headers(&good), body).is_ok());
        // Not made to the pages' origin at all.
        assert!(checked_post(None, &headers(&good), body).is_err());
        for (drop, why) in [(1, "no origin"), (2, "no cookie")] {
            let mut pairs = good.to_vec();
            pairs.remove(drop);
            assert!(
                checked_post(origin(), &headers(&pairs), body).is_err(),
                "{why}"
            );
        }
        let mut foreign = good.to_vec();
        foreign[1] = ("origin", "http://localhost:4001");
        assert!(checked_post(origin(), &headers(&foreign), body).is_err());
        let mut other_token = good.to_vec();
        other_token[2] = ("cookie", "ask_first_page=abd");
        assert!(checked_post(origin(), &headers(&other_token), body).is_err());
    }
}
