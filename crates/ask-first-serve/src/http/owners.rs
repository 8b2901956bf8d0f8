//! Binds every legacy MCP session (`Mcp-Session-Id`) to the credential that opened it.
//!
//! A session carries pushed `elicitation/create` dialogs and their answers. Without this
//! layer, anyone who learnt a session id could post into it (answer someone else's open dialog,
//! call tools on it, close it, read its stream) with other credentials. A session belongs to
//! its opener's [`Guard::holder_of`]: the principal under the server's guard's rule (the gate's
//! [`Identity`], narrowed by a custom
//! [`GuardBuilder::principal`](ask_first_core::GuardBuilder::principal) if the server has one)
//! and the credential the gate named within that person (a token of several of one account).
//! A request that names a session opened by another principal or another credential of the
//! same person, or a live session this table does not know, is refused with `403` before rmcp
//! sees it.
//!
//! With one shared bearer secret, every client that holds it sends the same header and is the
//! same principal under the default rule.
//!
//! One principal (a person, whatever credential) holds at most a set number of sessions at
//! once (the per-principal session setting, never above the session cap): an `initialize` past
//! it is refused with `429` and `Retry-After`, so one person cannot take every session place.
//! The server holds at most the session-cap setting in all: an `initialize` past it gets `503`
//! with `Retry-After`. Concurrent `initialize`s at a cap can overshoot it by their number.
//!
//! [`SessionBindingLayer`] mounts it.
//!
//! The owner of a session is recorded when rmcp's answer to the request that opened it carries
//! the new `Mcp-Session-Id`. An entry goes when its session is closed by `DELETE`, and entries
//! of sessions rmcp no longer holds (expired, ended) are dropped when the next session opens and
//! every second. At that same tick every session whose credential the authenticator no
//! longer holds ([`Authenticate::is_current`]: a token removed from the token file) is closed,
//! which ends its `GET` stream and its pending dialogs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use ask_first_core::{Caller, Guard, Identity};
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use tower_layer::Layer;
use tower_service::Service;

use super::auth::Authenticate;
use crate::settings::{HttpLimits, SettingNames};

/// The header rmcp names sessions with.
const SESSION_HEADER: &str = "mcp-session-id";

/// How often entries of sessions rmcp no longer holds are dropped, and sessions of revoked
/// credentials closed.
const PRUNE_EVERY: Duration = Duration::from_secs(1);
/// The `Retry-After` of an `initialize` past the per-principal cap, in seconds.
const RETRY_AFTER_SECS: u64 = 30;

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// Who opened a session.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    /// [`Guard::holder_of`]: whose the session is.
    holder: String,
    /// [`Guard::principal_of`]: the person the caps count.
    principal: String,
    /// The gate's verdict, asked again of the authenticator ([`Authenticate::is_current`]).
    identity: Option<Identity>,
}

impl Owner {
    fn of(guard: &Guard, parts: &http::request::Parts) -> Self {
        let caller = Caller::http(parts);
        Self {
            holder: guard.holder_of(&caller),
            principal: guard.principal_of(&caller),
            identity: caller.identity().cloned(),
        }
    }
}

/// The session table: which credential opened which session.
pub(crate) struct SessionOwners {
    owners: Mutex<HashMap<String, Owner>>,
    sessions: Arc<LocalSessionManager>,
    guard: Guard,
    auth: Arc<dyn Authenticate>,
    /// Sessions one principal may hold at once.
    per_principal: usize,
    /// Its setting, as messages name it.
    per_principal_setting: String,
    /// Sessions the server holds at most, its setting, and the idle time that frees them.
    max_sessions: (usize, String, Duration),
}

impl SessionOwners {
    /// A table for the sessions of `sessions`, telling principals and credentials apart by
    /// `guard`'s rule and the gate's identity, asking `auth` whether each session's credential
    /// is still good, with the session caps of `limits` (named as `names` call them). Starts
    /// the task that drops entries of ended sessions and closes those of revoked credentials
    /// (it ends with the table).
    fn new(
        sessions: Arc<LocalSessionManager>,
        guard: Guard,
        auth: Arc<dyn Authenticate>,
        limits: &HttpLimits,
        names: &SettingNames,
    ) -> Arc<Self> {
        let owners = Arc::new(Self {
            owners: Mutex::new(HashMap::new()),
            sessions,
            guard,
            auth,
            per_principal: limits.bounds.session_cap(limits.max_sessions),
            per_principal_setting: names.bounds.sessions_per_principal.clone(),
            max_sessions: (
                limits.max_sessions,
                names.max_sessions.clone(),
                limits.session_idle,
            ),
        });
        spawn_pruning(Arc::downgrade(&owners));
        owners
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn owner(&self, session: &str) -> Option<Owner> {
        self.table().get(session).cloned()
    }

    /// Drops the entries of sessions rmcp no longer holds.
    async fn prune(&self) {
        let sessions = self.sessions.sessions.read().await;
        self.table()
            .retain(|id, _| sessions.contains_key(id.as_str()));
    }

    /// Closes every session whose credential the authenticator no longer holds.
    async fn close_revoked(&self) {
        // Copied out first: the authenticator may read its file, and requests wait on the table.
        let held: Vec<(String, Identity)> = self
            .table()
            .iter()
            .filter_map(|(session, owner)| Some((session.clone(), owner.identity.clone()?)))
            .collect();
        let revoked: Vec<String> = held
            .into_iter()
            .filter(|(_, identity)| !self.auth.is_current(identity))
            .map(|(session, _)| session)
            .collect();
        for session in revoked {
            tracing::info!("closed an MCP session whose credential was revoked");
            self.forget(&session);
            let _ = self.sessions.close_session(&session.as_str().into()).await;
        }
    }

    /// Closes every session `identity` opened (its credential was found revoked).
    pub(crate) async fn close_of(&self, identity: &Identity) {
        let theirs: Vec<String> = self
            .table()
            .iter()
            .filter(|(_, owner)| owner.identity.as_ref() == Some(identity))
            .map(|(session, _)| session.clone())
            .collect();
        for session in theirs {
            tracing::info!("closed an MCP session whose credential is no longer accepted");
            self.forget(&session);
            let _ = self.sessions.close_session(&session.as_str().into()).await;
        }
    }

    async fn record(&self, session: String, owner: Owner) {
        self.prune().await;
        self.table().insert(session, owner);
    }

    /// How many live sessions `principal` holds (entries of ended sessions dropped first).
    async fn held_by(&self, principal: &str) -> usize {
        self.prune().await;
        self.table()
            .values()
            .filter(|owner| owner.principal == principal)
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
            owners.close_revoked().await;
        }
    });
}

/// Binds every legacy session to the credential that opened it, and caps sessions per
/// principal and in all (see the [module](self)), as a tower layer. Mount it inside the gate
/// ([`IdentityLayer`](super::identity::IdentityLayer), whose [`Identity`] it reads) and inside
/// the envelope checks ([`JsonRpcLayer`](super::wire::JsonRpcLayer), whose record of the
/// method it reads), around rmcp's service built on the same session manager. Make it inside a
/// Tokio runtime: it starts the task that forgets ended sessions, closes those of revoked
/// credentials and returns their memory.
///
/// ```no_run
/// use std::sync::Arc;
///
/// use ask_first_core::{Guard, HasGuard};
/// use ask_first_serve::SettingNames;
/// use ask_first_serve::http::limits::HttpLimits;
/// use ask_first_serve::http::owners::SessionBindingLayer;
/// use ask_first_serve::http::{Authenticate, ReplicaSessionManager};
/// use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
/// # #[derive(Clone)] struct Notes { guard: Guard }
/// # impl HasGuard for Notes { fn guard(&self) -> &Guard { &self.guard } }
/// # impl rmcp::ServerHandler for Notes {}
///
/// # fn app(notes: Notes, auth: Arc<dyn Authenticate>) -> axum::Router {
/// let limits = HttpLimits::default();
/// let sessions = Arc::new(limits.session_manager());
/// let binding = SessionBindingLayer::new(
///     sessions.clone(),
///     notes.guard().clone(),
///     auth,
///     &limits,
///     &SettingNames::with_prefix("NOTES"),
/// );
/// let config = StreamableHttpServerConfig::default().with_legacy_session_mode(true);
/// let manager = Arc::new(ReplicaSessionManager::new(sessions, None));
/// let mcp = StreamableHttpService::new(move || Ok(notes.clone()), manager, config);
/// axum::Router::new().nest_service("/mcp", mcp).layer(binding)
/// # }
/// ```
#[derive(Clone)]
pub struct SessionBindingLayer {
    owners: Arc<SessionOwners>,
}

impl std::fmt::Debug for SessionBindingLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBindingLayer")
            .finish_non_exhaustive()
    }
}

impl SessionBindingLayer {
    /// The binding of the sessions `sessions` holds (the manager rmcp's service uses), telling
    /// callers apart by `guard`'s rule ([`Guard::holder_of`]) on the gate's identity, asking
    /// `auth` every second whether each session's credential is still good
    /// ([`Authenticate::is_current`]), with the session caps of `limits`; refusals name the
    /// settings as `names` call them.
    pub fn new(
        sessions: Arc<LocalSessionManager>,
        guard: Guard,
        auth: Arc<dyn Authenticate>,
        limits: &HttpLimits,
        names: &SettingNames,
    ) -> Self {
        super::limits::spawn_memory_return(sessions.clone());
        Self {
            owners: SessionOwners::new(sessions, guard, auth, limits, names),
        }
    }

    /// What closes the sessions of a credential found revoked (it holds the table weakly).
    pub(crate) fn revocation_hook(&self) -> super::recheck::OnRevoked {
        let owners = Arc::downgrade(&self.owners);
        Box::new(move |identity| {
            let owners = owners.upgrade();
            Box::pin(async move {
                if let Some(owners) = owners {
                    owners.close_of(&identity).await;
                }
            })
        })
    }
}

impl<S> Layer<S> for SessionBindingLayer {
    type Service = SessionBinding<S>;

    fn layer(&self, inner: S) -> Self::Service {
        SessionBinding {
            inner,
            owners: self.owners.clone(),
        }
    }
}

/// The service [`SessionBindingLayer`] makes.
#[derive(Clone)]
pub struct SessionBinding<S> {
    inner: S,
    owners: Arc<SessionOwners>,
}

impl<S> std::fmt::Debug for SessionBinding<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBinding").finish_non_exhaustive()
    }
}

impl<S> Service<Request> for SessionBinding<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = S::Error;
    type Future = super::ResponseFuture<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let inner = super::take_ready(&mut self.inner);
        Box::pin(bind_sessions(self.owners.clone(), request, inner))
    }
}

/// Refuses requests on another credential's session; records new sessions.
async fn bind_sessions<S>(
    owners: Arc<SessionOwners>,
    request: Request,
    mut inner: S,
) -> Result<Response, S::Error>
where
    S: Service<Request, Response = Response>,
{
    let (parts, body) = request.into_parts();
    let caller = Owner::of(&owners.guard, &parts);
    let request = Request::from_parts(parts, body);
    match session_of(request.headers()) {
        Some(session) => {
            let mine = match owners.owner(&session) {
                Some(owner) => owner.holder == caller.holder,
                // A session rmcp holds without a recorded owner is nobody's to use; unknown
                // sessions go on to rmcp, which answers 404 for them.
                None => !owners.is_live(&session).await,
            };
            if !mine {
                tracing::warn!(
                    "refused a request on an MCP session that another credential opened"
                );
                return Ok(super::json_error(
                    StatusCode::FORBIDDEN,
                    "session_not_yours",
                    "this Mcp-Session-Id belongs to a session opened by another caller or with \
                     another credential (another token, even of the same account, or another \
                     Authorization header): only the credential that opened a session may use \
                     it or answer its dialogs; open your own session with `initialize`",
                ));
            }
            let closing = request.method() == Method::DELETE;
            let response = inner.call(request).await?;
            if closing && response.status().is_success() {
                owners.forget(&session);
            }
            Ok(response)
        }
        None => {
            let request = if request.method() == Method::POST {
                let (parts, body) = request.into_parts();
                let (body, method) = super::envelope::method_of(&parts.extensions, body).await;
                if method.get() == Some("initialize") {
                    let (max, setting, idle) = &owners.max_sessions;
                    if owners.sessions.sessions.read().await.len() >= *max {
                        return Ok(super::limits::too_many_sessions(*max, setting, *idle));
                    }
                    if owners.held_by(&caller.principal).await >= owners.per_principal {
                        return Ok(owners.too_many());
                    }
                }
                Request::from_parts(parts, body)
            } else {
                request
            };
            let response = inner.call(request).await?;
            if let Some(session) = session_of(response.headers()) {
                owners.record(session, caller).await;
            }
            Ok(response)
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

    /// `alice` and `bob` as an authenticating gate names them, each with the given credential.
    fn proven(principal: &str, credential: &str, user: Option<&str>) -> http::request::Parts {
        let mut head = parts(Some("Bearer whatever"));
        head.extensions
            .insert(Identity::new(principal).with_credential(credential));
        if let Some(user) = user {
            head.headers.insert("x-user", user.parse().expect("value"));
        }
        head
    }

    fn x_user_rule() -> Guard {
        Guard::builder("test")
            .principal(|caller| {
                caller
                    .header("x-user")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("nobody")
                    .to_owned()
            })
            .build()
    }

    #[test]
    fn a_custom_principal_rule_narrows_a_proven_identity_and_never_replaces_it() {
        let guard = x_user_rule();
        let of = |head: &http::request::Parts| guard.principal_of(&Caller::http(head));
        // Person B's token with A's header is B, narrowed: never A (the attack).
        let alice = of(&proven("token:alice", "a1", Some("alice")));
        let bob_as_alice = of(&proven("token:bob", "b1", Some("alice")));
        assert_eq!(alice, "token:alice/alice");
        assert_ne!(bob_as_alice, alice);
        assert_eq!(bob_as_alice, "token:bob/alice");
        // The rule still tells one person's callers apart (the positive control).
        assert_ne!(of(&proven("token:alice", "a1", Some("work"))), alice);
        // A `/` in the identity's principal cannot move the boundary.
        assert_ne!(
            of(&proven("oauth:i#a/b", "x", Some("c"))),
            of(&proven("oauth:i#a", "x", Some("b/c")))
        );
        // Without a proven identity (no authentication, stdio) the rule's value is the principal.
        let mut anonymous = parts(Some("Bearer same"));
        anonymous
            .headers
            .insert("x-user", "alice".parse().expect("value"));
        anonymous
            .extensions
            .insert(Identity::unproven(default_principal(&Caller::http(
                &anonymous,
            ))));
        assert_eq!(of(&anonymous), "alice");
        assert_eq!(guard.principal_of(&Caller::local()), "nobody");
    }

    #[test]
    fn one_persons_credentials_are_one_principal_and_different_holders() {
        let guard = Guard::builder("test").build();
        let first = proven("opengist:admin#1", "t1", None);
        let second = proven("opengist:admin#1", "t2", None);
        let principal = |head: &http::request::Parts| guard.principal_of(&Caller::http(head));
        let holder = |head: &http::request::Parts| guard.holder_of(&Caller::http(head));
        assert_eq!(principal(&first), principal(&second));
        assert_ne!(holder(&first), holder(&second));
        assert_eq!(
            holder(&first),
            holder(&proven("opengist:admin#1", "t1", None))
        );
        // Without a credential the holder is the principal.
        let mut plain = parts(None);
        plain.extensions.insert(Identity::new("oauth:i#s"));
        assert_eq!(holder(&plain), "oauth:i#s");
    }

    fn owner(principal: &str, credential: &str) -> Owner {
        Owner {
            holder: format!("{principal}\0credential:{credential}"),
            principal: principal.to_owned(),
            identity: Some(Identity::new(principal).with_credential(credential)),
        }
    }

    /// Holds every credential but `revoked`.
    struct AllBut(&'static str);

    impl Authenticate for AllBut {
        fn authenticate<'a>(
            &'a self,
            _parts: &'a mut http::request::Parts,
        ) -> super::super::auth::AuthFuture<'a> {
            Box::pin(std::future::ready(Ok(Identity::new("unused"))))
        }

        fn is_current(&self, identity: &Identity) -> bool {
            identity.credential() != Some(self.0)
        }
    }

    fn table(sessions: &Arc<LocalSessionManager>, revoked: &'static str) -> Arc<SessionOwners> {
        let mut limits = HttpLimits::default();
        limits.bounds.sessions_per_principal = 2;
        SessionOwners::new(
            sessions.clone(),
            Guard::builder("test").build(),
            Arc::new(AllBut(revoked)),
            &limits,
            &SettingNames::with_prefix("NOTES"),
        )
    }

    #[tokio::test]
    async fn sessions_are_counted_per_principal_among_live_ones() {
        let sessions = Arc::new(LocalSessionManager::default());
        let owners = table(&sessions, "none");
        let mut live = Vec::new();
        // Two credentials of alice count for one person.
        for (principal, credential) in [
            ("token:alice", "a1"),
            ("token:alice", "a2"),
            ("token:bob", "b1"),
        ] {
            let (id, transport) = sessions.create_session().await.expect("session");
            owners
                .record(id.to_string(), owner(principal, credential))
                .await;
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
    async fn a_revoked_credentials_sessions_are_closed_and_the_others_kept() {
        let sessions = Arc::new(LocalSessionManager::default());
        let owners = table(&sessions, "a2");
        let (kept, _kept) = sessions.create_session().await.expect("session");
        let (gone, _gone) = sessions.create_session().await.expect("session");
        owners
            .record(kept.to_string(), owner("token:alice", "a1"))
            .await;
        owners
            .record(gone.to_string(), owner("token:alice", "a2"))
            .await;
        owners.close_revoked().await;
        let held = sessions.sessions.read().await;
        assert!(
            !held.contains_key(&gone),
            "the revoked token's session is open"
        );
        assert!(
            held.contains_key(&kept),
            "the other token's session was closed"
        );
        drop(held);
        assert_eq!(owners.owner(gone.as_ref()), None);
        assert!(owners.owner(kept.as_ref()).is_some());
    }

    #[tokio::test]
    async fn closed_sessions_are_forgotten() {
        let owners = table(&Arc::new(LocalSessionManager::default()), "none");
        owners.record("one".to_owned(), owner("local", "l")).await;
        owners.record("two".to_owned(), owner("local", "l")).await;
        // rmcp holds neither: only the newest entry is kept.
        assert_eq!(owners.len(), 1);
        assert_eq!(owners.owner("two"), Some(owner("local", "l")));
        assert_eq!(owners.owner("one"), None);
        owners.prune().await;
        assert_eq!(owners.len(), 0);
        owners.record("three".to_owned(), owner("local", "l")).await;
        owners.forget("three");
        assert_eq!(owners.len(), 0);
    }
}
