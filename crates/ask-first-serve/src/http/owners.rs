//! Binds every legacy MCP session (`Mcp-Session-Id`) to the principal that opened it.
//!
//! A session carries pushed `elicitation/create` dialogs and their answers. Without this
//! layer, anyone who learnt a session id could post into it (answer someone else's open dialog,
//! call tools on it, close it, read its stream) with other credentials. Callers are told apart
//! exactly as the server's guard tells principals apart: [`Guard::principal_of`] on the
//! request's head, so the default rule (the `Authorization` header; none at all is a principal
//! too) and a server's own [`GuardBuilder::principal`](ask_first_core::GuardBuilder::principal)
//! both hold here. A request that names a session opened by another principal, or a live
//! session this table does not know, is refused with `403` before rmcp sees it.
//!
//! With one shared bearer secret, every client that holds it sends the same header and is the
//! same principal under the default rule. With per-person credentials (tokens, OAuth, a
//! server's own check) the gate's [`Identity`](ask_first_core::Identity) is the principal.
//!
//! One principal holds at most a set number of sessions at once (the per-principal session
//! setting, never above the session cap): an `initialize` past it is refused with `429` and
//! `Retry-After`, so one person cannot take every session place. Concurrent `initialize`s of
//! one principal at its cap can overshoot it by their number.
//!
//! The owner of a session is recorded when rmcp's answer to the request that opened it carries
//! the new `Mcp-Session-Id`. An entry goes when its session is closed by `DELETE`, and entries
//! of sessions rmcp no longer holds (expired, ended) are dropped when the next session opens and
//! every few seconds, so the table never outgrows rmcp's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use ask_first_core::{Caller, Guard};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// The header rmcp names sessions with.
const SESSION_HEADER: &str = "mcp-session-id";

/// How often entries of sessions rmcp no longer holds are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(5);
/// The `Retry-After` of an `initialize` past the per-principal cap, in seconds.
const RETRY_AFTER_SECS: u64 = 30;

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The session table: which principal opened which session.
pub(crate) struct SessionOwners {
    owners: Mutex<HashMap<String, String>>,
    sessions: Arc<LocalSessionManager>,
    guard: Guard,
    /// Sessions one principal may hold at once.
    per_principal: usize,
    /// Its setting, as messages name it.
    per_principal_setting: String,
}

impl SessionOwners {
    /// A table for the sessions of `sessions`, telling principals apart by `guard`'s rule,
    /// with at most `per_principal` sessions per principal (the setting `per_principal_setting`).
    /// Starts the task that drops entries of ended sessions (it ends with the table).
    pub(crate) fn new(
        sessions: Arc<LocalSessionManager>,
        guard: Guard,
        per_principal: usize,
        per_principal_setting: String,
    ) -> Arc<Self> {
        let owners = Arc::new(Self {
            owners: Mutex::new(HashMap::new()),
            sessions,
            guard,
            per_principal,
            per_principal_setting,
        });
        spawn_pruning(Arc::downgrade(&owners));
        owners
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn owner(&self, session: &str) -> Option<String> {
        self.table().get(session).cloned()
    }

    /// Drops the entries of sessions rmcp no longer holds.
    async fn prune(&self) {
        let sessions = self.sessions.sessions.read().await;
        self.table()
            .retain(|id, _| sessions.contains_key(id.as_str()));
    }

    async fn record(&self, session: String, principal: String) {
        self.prune().await;
        self.table().insert(session, principal);
    }

    /// How many live sessions `principal` holds (entries of ended sessions dropped first).
    async fn held_by(&self, principal: &str) -> usize {
        self.prune().await;
        self.table()
            .values()
            .filter(|owner| owner.as_str() == principal)
            .count()
    }

    /// The answer to an `initialize` past the per-principal cap.
    fn too_many(&self) -> Response {
        tracing::warn!("refused a new MCP session: the caller's session cap is reached");
        let mut response = super::json_error(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_sessions_for_principal",
            &format!(
                "these credentials already hold {} sessions, the most allowed per caller ({}); \
                 close one (DELETE) or let one go idle, then retry",
                self.per_principal, self.per_principal_setting
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        response
    }

    fn forget(&self, session: &str) {
        self.table().remove(session);
    }

    async fn is_live(&self, session: &str) -> bool {
        self.sessions.sessions.read().await.contains_key(session)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table().len()
    }
}

fn spawn_pruning(owners: Weak<SessionOwners>) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(PRUNE_EVERY);
        loop {
            ticks.tick().await;
            let Some(owners) = owners.upgrade() else {
                return;
            };
            owners.prune().await;
        }
    });
}

/// The middleware: refuses requests on another principal's session; records new sessions.
pub(crate) async fn bind_sessions(
    State(owners): State<Arc<SessionOwners>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let principal = owners.guard.principal_of(&Caller::http(&parts));
    let request = Request::from_parts(parts, body);
    match session_of(request.headers()) {
        Some(session) => {
            let mine = match owners.owner(&session) {
                Some(owner) => owner == principal,
                // A session rmcp holds without a recorded owner is nobody's to use; unknown
                // sessions go on to rmcp, which answers 404 for them.
                None => !owners.is_live(&session).await,
            };
            if !mine {
                tracing::warn!("refused a request on an MCP session that another principal opened");
                return super::json_error(
                    StatusCode::FORBIDDEN,
                    "session_not_yours",
                    "this Mcp-Session-Id belongs to a session opened by another caller (other \
                     credentials, such as another Authorization header): open your own session \
                     with `initialize`",
                );
            }
            let closing = request.method() == Method::DELETE;
            let response = next.run(request).await;
            if closing && response.status().is_success() {
                owners.forget(&session);
            }
            response
        }
        None => {
            let request = if request.method() == Method::POST {
                let (parts, body) = request.into_parts();
                // The limits layer read the body already: this is a copy from memory.
                let bytes = axum::body::to_bytes(body, super::limits::MAX_BODY_BYTES)
                    .await
                    .unwrap_or_default();
                if super::limits::is_initialize(&bytes)
                    && owners.held_by(&principal).await >= owners.per_principal
                {
                    return owners.too_many();
                }
                Request::from_parts(parts, Body::from(bytes))
            } else {
                request
            };
            let response = next.run(request).await;
            if let Some(session) = session_of(response.headers()) {
                owners.record(session, principal).await;
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ask_first_core::default_principal;

    fn parts(authorization: Option<&str>) -> http::request::Parts {
        let mut builder = http::Request::builder().uri("/mcp");
        if let Some(value) = authorization {
            builder = builder.header(http::header::AUTHORIZATION, value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    #[test]
    fn principals_differ_by_authorization_header_and_none_is_one() {
        let guard = Guard::builder("test").build();
        let of = |authorization| guard.principal_of(&Caller::http(&parts(authorization)));
        assert_ne!(of(Some("Bearer alice")), of(Some("Bearer mallory")));
        assert_eq!(of(Some("Bearer alice")), of(Some("Bearer alice")));
        assert_ne!(of(Some("Bearer alice")), of(None));
        assert_eq!(of(None), default_principal(&Caller::local()));
    }

    #[test]
    fn a_custom_principal_rule_is_the_one_applied() {
        let guard = Guard::builder("test")
            .principal(|caller| {
                caller
                    .header("x-user")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("nobody")
                    .to_owned()
            })
            .build();
        let mut alice = parts(Some("Bearer same"));
        alice
            .headers
            .insert("x-user", "alice".parse().expect("value"));
        let mut bob = parts(Some("Bearer same"));
        bob.headers.insert("x-user", "bob".parse().expect("value"));
        assert_eq!(guard.principal_of(&Caller::http(&alice)), "alice");
        assert_ne!(
            guard.principal_of(&Caller::http(&alice)),
            guard.principal_of(&Caller::http(&bob))
        );
    }

    #[tokio::test]
    async fn sessions_are_counted_per_principal_among_live_ones() {
        let sessions = Arc::new(LocalSessionManager::default());
        let owners = SessionOwners::new(
            sessions.clone(),
            Guard::builder("test").build(),
            2,
            "NOTES_HTTP_SESSIONS_PER_PRINCIPAL".to_owned(),
        );
        use rmcp::transport::streamable_http_server::SessionManager as _;
        let mut live = Vec::new();
        for owner in ["token:alice", "token:alice", "token:bob"] {
            let (id, transport) = sessions.create_session().await.expect("session");
            owners.record(id.to_string(), owner.to_owned()).await;
            live.push((id, transport));
        }
        assert_eq!(owners.held_by("token:alice").await, 2);
        assert_eq!(owners.held_by("token:bob").await, 1);
        assert_eq!(owners.held_by("token:carol").await, 0);
        let refusal = owners.too_many();
        assert_eq!(refusal.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(refusal.headers().contains_key(header::RETRY_AFTER));
        // A session rmcp no longer holds does not count.
        let (first, _) = &live[0];
        sessions.close_session(first).await.expect("closed");
        assert_eq!(owners.held_by("token:alice").await, 1);
    }

    #[tokio::test]
    async fn closed_sessions_are_forgotten() {
        let owners = SessionOwners::new(
            Arc::new(LocalSessionManager::default()),
            Guard::builder("test").build(),
            2,
            "NOTES_HTTP_SESSIONS_PER_PRINCIPAL".to_owned(),
        );
        owners.record("one".to_owned(), "local".to_owned()).await;
        owners.record("two".to_owned(), "local".to_owned()).await;
        // rmcp holds neither: only the newest entry is kept.
        assert_eq!(owners.len(), 1);
        assert_eq!(owners.owner("two").as_deref(), Some("local"));
        assert_eq!(owners.owner("one"), None);
        owners.prune().await;
        assert_eq!(owners.len(), 0);
        owners.record("three".to_owned(), "local".to_owned()).await;
        owners.forget("three");
        assert_eq!(owners.len(), 0);
    }
}
