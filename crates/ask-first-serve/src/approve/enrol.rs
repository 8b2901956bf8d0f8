//! `<server> passkeys add`: the operator enrols a passkey from the server's terminal. The
//! command opens its own loopback listener, prints a one-time link valid for minutes, serves
//! the enrolment page there until one passkey is enrolled or the link expires, writes the
//! passkey into the state directory and exits. Nothing a model can call reaches it: the MCP
//! server has no tool, route or page that enrols.
//!
//! The listener holds `[::1]` on its port too (no other local process receives the browser the
//! link sends), answers only `localhost` on that port, and expects exactly that origin of the
//! passkey's registration. The page belongs to the first browser that opens the link: its
//! cookie carries the page's token, and the link opened anywhere else says so.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ask_first_core::RecordId;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::aaguid::AaguidList;
use super::ceremony::{self, RegistrationStarted};
use super::command::AddPasskey;
use super::page::{Refusal, checked_post, cookie_token};
use super::passkeys::PasskeyFile;
use super::site::{self, LOOPBACK_HOST};
use super::{html, invite, loopback, random_token};

/// The cookie carrying the enrolment page's token.
const ENROL_COOKIE: &str = super::page::PAGE_COOKIE;

/// What a browser other than the one that first opened the link is told.
const OPENED_ELSEWHERE: &str = "This enrolment link was already opened in another browser: the enrolment page belongs to the first browser that opened it, and keeps working there. If that was not you, someone else has this link: stop the `passkeys add` command that printed it (Ctrl-C), check which passkeys are enrolled, and run it again for a new link.";

/// One enrolment link: on `passkeys add`'s own listener, or handed out through the running
/// HTTP server (`claim`: the invitation file taken when it is used, so it works once across
/// processes).
pub(crate) struct Enrolment {
    pub(crate) server: String,
    pub(crate) code: String,
    pub(crate) principal: String,
    pub(crate) name: String,
    pub(crate) expires: Instant,
    pub(crate) file: PasskeyFile,
    pub(crate) claim: Option<PathBuf>,
    pub(crate) aaguids: Option<AaguidList>,
    pub(crate) state: Mutex<EnrolState>,
    pub(crate) done: tokio::sync::Notify,
}

#[derive(Default)]
pub(crate) struct EnrolState {
    used: bool,
    page_token: Option<String>,
    ceremony: Option<RegistrationStarted>,
    /// The AAGUID the enrolled passkey's authenticator reported.
    aaguid: Option<String>,
    /// Whether the operator was told the link was opened in a second browser.
    warned: bool,
}

impl Enrolment {
    fn lock(&self) -> std::sync::MutexGuard<'_, EnrolState> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Tells the operator (on `passkeys add`'s terminal, or in the server's log) that a second
    /// browser opened the link.
    fn warn_opened_elsewhere(&self) {
        if self.claim.is_some() {
            tracing::warn!(principal = %self.principal, "an enrolment link was opened in a second browser and refused there");
        } else {
            eprintln!(
                "Warning: the enrolment link was opened in a second browser (refused there). If you opened it only once, someone else has it: press Ctrl-C and run `passkeys add` again."
            );
        }
    }

    /// Why the link cannot be used now, if it cannot.
    fn closed(&self, code: &str) -> Option<(StatusCode, &'static str)> {
        if code != self.code {
            return Some((StatusCode::NOT_FOUND, "There is no enrolment here."));
        }
        if self.lock().used {
            return Some((
                StatusCode::GONE,
                "This enrolment link was already used: it works once. Run `passkeys add` again for another passkey.",
            ));
        }
        if Instant::now() >= self.expires {
            return Some((
                StatusCode::GONE,
                "This enrolment link has expired. Run `passkeys add` again.",
            ));
        }
        None
    }
}

/// `<server> passkeys add` with `options`, for the server named `server` whose settings are
/// prefixed `prefix`; its passkeys go to `state_dir`, else to the default state directory.
/// Prints the one-time link, waits for the enrolment or the link's expiry, and returns the
/// process exit code.
pub async fn add_passkey(
    server: &str,
    prefix: &str,
    state_dir: Option<PathBuf>,
    options: &AddPasskey,
) -> i32 {
    let state_setting = format!("{prefix}_STATE_DIR");
    let AddPasskey {
        principal,
        name,
        valid_for: valid,
    } = options.clone();
    if valid.is_zero() || valid > AddPasskey::MAX_VALID {
        eprintln!(
            "the enrolment link's validity must be from 1 to {} seconds",
            AddPasskey::MAX_VALID.as_secs()
        );
        return 2;
    }
    let aaguids = match AaguidList::from_env(prefix) {
        Ok(list) => list,
        Err(error) => {
            eprintln!("{error}");
            return 2;
        }
    };
    let Some(dir) = state_dir.or_else(|| crate::settings::default_state_dir(server)) else {
        eprintln!("there is no state directory to keep passkeys in: set {state_setting}");
        return 1;
    };
    if let Some(base) = invite::server_base(prefix) {
        return match base {
            Ok(base) => invite::through_server(server, &base, &dir, &principal, &name, valid).await,
            Err(why) => {
                eprintln!("{why}");
                1
            }
        };
    }
    // `[::1]` held on the same port: the link reaches this listener and nobody else.
    let bound = match loopback::bind(0) {
        Ok(bound) => bound,
        Err(error) => {
            eprintln!("cannot open a loopback port for the enrolment page: {error}");
            return 1;
        }
    };
    let (port, _other_family) = (bound.port, bound.held);
    let listener = match tokio::net::TcpListener::from_std(bound.listener) {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot open a loopback port for the enrolment page: {error}");
            return 1;
        }
    };
    let enrolment = Arc::new(Enrolment {
        server: server.to_owned(),
        code: RecordId::random().to_string(),
        principal,
        name,
        expires: Instant::now() + valid,
        file: PasskeyFile::new(&dir, &state_setting),
        claim: None,
        aaguids,
        state: Mutex::new(EnrolState::default()),
        done: tokio::sync::Notify::new(),
    });
    let router = Router::new()
        .route("/enrol/{code}", get(page))
        .route("/enrol/{code}/begin", post(begin))
        .route("/enrol/{code}/finish", post(finish))
        .with_state(OwnListener {
            enrolment: enrolment.clone(),
            port,
        })
        .layer(middleware::from_fn_with_state(port, site::pinned_host));
    let link = format!("http://{LOOPBACK_HOST}:{port}/enrol/{}", enrolment.code);
    println!(
        "Open this link on this machine within {} to enrol a passkey that approves the questions of `{}` on {server}'s approval page (it works once):\n{link}",
        minutes(valid),
        enrolment.principal,
    );
    let _ = std::io::stdout().flush();
    let waiter = enrolment.clone();
    let finished = async move {
        tokio::select! {
            () = waiter.done.notified() => true,
            () = tokio::time::sleep_until(waiter.expires.into()) => false,
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<bool>();
    let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
        let enrolled = finished.await;
        let _ = tx.send(enrolled);
    });
    if let Err(error) = serve.await {
        eprintln!("the enrolment page failed: {error}");
        return 1;
    }
    if rx.await.unwrap_or(false) {
        println!(
            "Enrolled passkey `{}` for `{}` in {} (its authenticator reports the AAGUID {}).",
            enrolment.name,
            enrolment.principal,
            dir.join(super::PASSKEYS_FILE).display(),
            enrolment.lock().aaguid.as_deref().unwrap_or("?"),
        );
        0
    } else {
        eprintln!("The enrolment link expired: no passkey was enrolled.");
        1
    }
}

pub(crate) fn minutes(d: Duration) -> String {
    let secs = d.as_secs();
    if secs.is_multiple_of(60) {
        format!("{} minute{}", secs / 60, if secs == 60 { "" } else { "s" })
    } else {
        format!("{secs} seconds")
    }
}

/// The enrolment served on `passkeys add`'s own listener, bound to `port`.
#[derive(Clone)]
struct OwnListener {
    enrolment: Arc<Enrolment>,
    port: u16,
}

async fn page(
    State(own): State<OwnListener>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let origin = site::loopback_origin(&headers, own.port);
    show(&own.enrolment, origin, &code, &headers, false)
}

async fn begin(
    State(own): State<OwnListener>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let origin = site::loopback_origin(&headers, own.port);
    start(
        &own.enrolment,
        origin,
        LOOPBACK_HOST,
        &code,
        &headers,
        &body,
    )
}

async fn finish(
    State(own): State<OwnListener>,
    UrlPath(code): UrlPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let origin = site::loopback_origin(&headers, own.port);
    complete(
        &own.enrolment,
        origin,
        LOOPBACK_HOST,
        &code,
        &headers,
        &body,
    )
}

/// The enrolment page for a request made to `origin` (`None`: to something else) with
/// `headers`; `secure`: its cookie is `Secure` (https). The first browser to open the link
/// owns the page: the same browser again (its cookie) gets it again, any other is told.
pub(crate) fn show(
    enrolment: &Enrolment,
    origin: Option<String>,
    code: &str,
    headers: &HeaderMap,
    secure: bool,
) -> Response {
    let nonce = random_token();
    if origin.is_none() {
        return html::text(
            StatusCode::MISDIRECTED_REQUEST,
            "Refused: this request was not addressed to the page's own host and port.",
        );
    }
    if let Some((status, text)) = enrolment.closed(code) {
        let page = html::notice_page("Enrolment closed", text, &nonce);
        return html::page_response(status, page, &nonce, None);
    }
    let token = {
        let mut state = enrolment.lock();
        match state.page_token.clone() {
            None => state.page_token.insert(random_token()).clone(),
            Some(owned) if cookie_token(headers).as_deref() == Some(owned.as_str()) => owned,
            Some(_) => {
                if !std::mem::replace(&mut state.warned, true) {
                    enrolment.warn_opened_elsewhere();
                }
                let page =
                    html::notice_page("Enrolment link already opened", OPENED_ELSEWHERE, &nonce);
                return html::page_response(StatusCode::CONFLICT, page, &nonce, None);
            }
        }
    };
    let page = html::enrol_page(&enrolment.server, &enrolment.principal, &nonce, &token);
    let cookie = format!(
        "{ENROL_COOKIE}={token}; Path=/enrol/{code}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    );
    html::page_response(StatusCode::OK, page, &nonce, Some(cookie))
}

/// The checks of both POSTs: the link open, the page's own origin and token.
fn checked(
    enrolment: &Enrolment,
    origin: Option<String>,
    code: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(String, serde_json::Value), Refusal> {
    if let Some((status, text)) = enrolment.closed(code) {
        return Err((status, text.to_owned()));
    }
    let (origin, body) = checked_post(origin, headers, body)?;
    let token = body.get("token").and_then(|t| t.as_str());
    if token.is_none() || enrolment.lock().page_token.as_deref() != token {
        return Err((
            StatusCode::FORBIDDEN,
            "Refused: this is not the page's own token; reload the link.".to_owned(),
        ));
    }
    Ok((origin, body))
}

/// Begins the registration for relying party `rp`: the browser's options.
pub(crate) fn start(
    enrolment: &Enrolment,
    origin: Option<String>,
    rp: &str,
    code: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    if let Err((status, text)) = checked(enrolment, origin, code, headers, body) {
        return html::text(status, text);
    }
    let started = match ceremony::start_registration(&enrolment.principal, rp) {
        Ok(started) => started,
        Err(error) => return html::text(StatusCode::INTERNAL_SERVER_ERROR, error),
    };
    let options = started.options.clone();
    enrolment.lock().ceremony = Some(started);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    (StatusCode::OK, headers, options).into_response()
}

/// Finishes the registration for relying party `rp` and keeps the passkey, once.
pub(crate) fn complete(
    enrolment: &Enrolment,
    origin: Option<String>,
    rp: &str,
    code: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let (origin, body) = match checked(enrolment, origin, code, headers, body) {
        Ok(checked) => checked,
        Err((status, text)) => return html::text(status, text),
    };
    let Some(started) = enrolment.lock().ceremony.take() else {
        return html::text(
            StatusCode::FORBIDDEN,
            "Refused: no enrolment was begun on this page; reload the link.",
        );
    };
    let credential = body
        .get("credential")
        .map(|c| c.to_string())
        .unwrap_or_default();
    let enrolled = match ceremony::finish_registration(
        started,
        credential.as_bytes(),
        &origin,
        rp,
        &enrolment.principal,
        &enrolment.name,
        enrolment.aaguids.as_ref(),
    ) {
        Ok(enrolled) => enrolled,
        Err(error) => return html::text(StatusCode::FORBIDDEN, format!("Not enrolled: {error}.")),
    };
    {
        let mut state = enrolment.lock();
        if state.used {
            return html::text(StatusCode::GONE, "This enrolment link was already used.");
        }
        state.used = true;
        state.aaguid = Some(enrolled.aaguid.clone());
    }
    let aaguid = enrolled.aaguid.clone();
    if let Some(claim) = &enrolment.claim
        && !invite::claim(claim)
    {
        return html::text(
            StatusCode::GONE,
            "This enrolment link was already used, or has expired.",
        );
    }
    if let Err(error) = enrolment.file.add(enrolled) {
        match &enrolment.claim {
            Some(claim) => {
                tracing::warn!(%error, "the enrolled passkey could not be saved");
                invite::report(claim, Err(&error.to_string()));
            }
            None => eprintln!("{error}"),
        }
        return html::text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The passkey could not be saved; see the server's log.",
        );
    }
    if let Some(claim) = &enrolment.claim {
        invite::report(claim, Ok(&aaguid));
    }
    enrolment.done.notify_one();
    html::text(
        StatusCode::OK,
        "Enrolled. This passkey now approves questions on the approval page; you may close this page.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enrolment() -> Enrolment {
        let dir = std::env::temp_dir().join(format!("ask-first-enrol-{}", RecordId::random()));
        Enrolment {
            server: "notes".into(),
            code: RecordId::random().to_string(),
            principal: "local".into(),
            name: "passkey".into(),
            expires: Instant::now() + AddPasskey::DEFAULT_VALID,
            file: PasskeyFile::new(&dir, "T_STATE_DIR"),
            claim: None,
            aaguids: None,
            state: Mutex::new(EnrolState::default()),
            done: tokio::sync::Notify::new(),
        }
    }

    fn with_cookie(cookie: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(cookie) = cookie {
            headers.insert(header::COOKIE, cookie.parse().expect("a cookie"));
        }
        headers
    }

    fn cookie_of(response: &Response) -> Option<String> {
        let set = response.headers().get(header::SET_COOKIE)?.to_str().ok()?;
        set.split(';').next().map(str::to_owned)
    }

    async fn body_of(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024)
            .await
            .expect("a body");
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn the_page_belongs_to_the_first_browser_that_opened_it() {
        let enrolment = enrolment();
        let origin = || Some("http://localhost:4000".to_owned());
        let code = enrolment.code.clone();
        let first = show(&enrolment, origin(), &code, &with_cookie(None), false);
        assert_eq!(first.status(), StatusCode::OK);
        let cookie = cookie_of(&first).expect("the page's cookie");
        let token = cookie
            .split_once('=')
            .map(|(_, t)| t.to_owned())
            .expect("a token");
        // A second browser, without that cookie or with another: told, and given no token.
        for other in [None, Some("ask_first_page=someone-else")] {
            let second = show(&enrolment, origin(), &code, &with_cookie(other), false);
            assert_eq!(second.status(), StatusCode::CONFLICT);
            assert!(cookie_of(&second).is_none());
            let text = body_of(second).await;
            assert!(text.contains("already opened in another browser"), "{text}");
            assert!(!text.contains(&token));
        }
        // The first browser reloading keeps its page and its token.
        let again = show(
            &enrolment,
            origin(),
            &code,
            &with_cookie(Some(&cookie)),
            false,
        );
        assert_eq!(again.status(), StatusCode::OK);
        assert!(body_of(again).await.contains(&token));
        // And its POSTs still begin the enrolment.
        let mut headers = with_cookie(Some(&cookie));
        headers.insert(
            header::ORIGIN,
            "http://localhost:4000".parse().expect("an origin"),
        );
        let body = format!(r#"{{"token":"{token}"}}"#);
        let begun = start(
            &enrolment,
            origin(),
            LOOPBACK_HOST,
            &code,
            &headers,
            body.as_bytes(),
        );
        assert_eq!(begun.status(), StatusCode::OK);
        assert!(body_of(begun).await.contains("challenge"));
    }
}
