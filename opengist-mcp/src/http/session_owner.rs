//! Binds every legacy MCP session (`Mcp-Session-Id`) to the caller that opened it.
//!
//! A session carries pushed `elicitation/create` dialogs and their answers. Without this
//! layer, anyone who learnt a session id could post into it (answer someone else's open dialog,
//! call tools on it) with other credentials. The caller is told apart exactly as the guard
//! tells principals apart: by the `Authorization` header (none at all is a principal too). A
//! request that names a session opened by another principal is refused with `403`, before
//! rmcp sees it, so dialog answers are accepted only from the session's own principal.
//!
//! With one shared bearer secret (`OPENGIST_MCP_HTTP_TOKEN`), every client that holds it sends
//! the same header and is the same principal (the README says so).
//!
//! The owner of a session is recorded when rmcp's answer to the request that opened it
//! carries the new `Mcp-Session-Id`. Entries of sessions that rmcp has closed are dropped when
//! the next session opens, so the table never outgrows rmcp's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use sha2::{Digest, Sha256};

/// The header rmcp names sessions with.
const SESSION_HEADER: &str = "mcp-session-id";

/// Who is calling: a digest of the `Authorization` header, or none without one.
type Principal = Option<[u8; 32]>;

fn principal_of(headers: &HeaderMap) -> Principal {
    headers
        .get(header::AUTHORIZATION)
        .map(|value| Sha256::digest(value.as_bytes()).into())
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The session table: which principal opened which session.
pub(crate) struct SessionOwners {
    owners: Mutex<HashMap<String, Principal>>,
    sessions: Arc<LocalSessionManager>,
}

impl SessionOwners {
    /// A table for the sessions of `sessions`.
    pub(crate) fn new(sessions: Arc<LocalSessionManager>) -> Arc<Self> {
        Arc::new(Self {
            owners: Mutex::new(HashMap::new()),
            sessions,
        })
    }

    fn owner(&self, session: &str) -> Option<Principal> {
        self.owners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session)
            .copied()
    }

    async fn record(&self, session: String, principal: Principal) {
        let live: Vec<String> = {
            let sessions = self.sessions.sessions.read().await;
            let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            owners
                .keys()
                .filter(|id| sessions.contains_key(id.as_str()))
                .cloned()
                .collect()
        };
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.retain(|id, _| live.contains(id));
        owners.insert(session, principal);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.owners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The middleware: refuses requests on another principal's session; records new sessions.
pub(crate) async fn bind_sessions(
    State(owners): State<Arc<SessionOwners>>,
    request: Request,
    next: Next,
) -> Response {
    let principal = principal_of(request.headers());
    match session_of(request.headers()) {
        Some(session) => {
            if owners
                .owner(&session)
                .is_some_and(|owner| owner != principal)
            {
                tracing::warn!(
                    "refused a request on an MCP session that another caller opened (different Authorization)"
                );
                return super::json_error(
                    StatusCode::FORBIDDEN,
                    "session_not_yours",
                    "this Mcp-Session-Id belongs to a session opened with other credentials \
                     (another Authorization header): open your own session with `initialize`",
                );
            }
            // Unknown sessions go on to rmcp, which answers 404 for them.
            next.run(request).await
        }
        None => {
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

    #[test]
    fn principals_differ_by_authorization_header_and_none_is_one() {
        let mut alice = HeaderMap::new();
        alice.insert(header::AUTHORIZATION, "Bearer alice".parse().unwrap());
        let mut mallory = HeaderMap::new();
        mallory.insert(header::AUTHORIZATION, "Bearer mallory".parse().unwrap());
        assert_ne!(principal_of(&alice), principal_of(&mallory));
        assert_eq!(principal_of(&alice), principal_of(&alice.clone()));
        assert_ne!(principal_of(&alice), principal_of(&HeaderMap::new()));
        assert_eq!(principal_of(&HeaderMap::new()), None);
    }

    #[tokio::test]
    async fn closed_sessions_are_forgotten_when_the_next_opens() {
        let owners = SessionOwners::new(Arc::new(LocalSessionManager::default()));
        owners.record("one".to_owned(), None).await;
        owners.record("two".to_owned(), None).await;
        // rmcp holds neither: only the newest entry is kept.
        assert_eq!(owners.len(), 1);
        assert_eq!(owners.owner("two"), Some(None));
        assert_eq!(owners.owner("one"), None);
    }
}
