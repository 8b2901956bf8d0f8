//! Building a [`Guard`](super::Guard), and who is calling: the principal rule seals, tokens
//! and HTTP sessions are bound to.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};

use super::backchannel::Backchannel;
use super::{APPROVAL_INPUT_KEY, AlteredState, ApprovalRoute, Guard, Inner};
use crate::approval_memory::MemoryApprovalStore;
use crate::approval_record::{ApprovalPages, ApprovalStore};
use crate::audit::AuditSink;
use crate::identity::Identity;
use crate::nonce::{MemoryNonceStore, NonceStore};
use crate::seal::SealKey;

/// Computes who is calling, so a seal issued to one caller does not open for another. The same
/// function also decides, in `ask-first-serve`'s HTTP serving, who owns a legacy session: a
/// request on a session another principal opened is refused there.
pub type PrincipalFn = dyn Fn(&Caller<'_>) -> String + Send + Sync;

/// What a principal function sees of a request: its HTTP request head when it came over HTTP
/// (headers, URI, method), nothing on stdio. The guard builds it from rmcp's request context;
/// HTTP serving builds the same view from the request itself, so both apply one rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caller<'a> {
    http: Option<&'a http::request::Parts>,
}

impl<'a> Caller<'a> {
    /// A caller on a transport without HTTP (stdio).
    pub fn local() -> Self {
        Self { http: None }
    }

    /// A caller over HTTP, seen through its request head.
    pub fn http(parts: &'a http::request::Parts) -> Self {
        Self { http: Some(parts) }
    }

    /// The caller of a request rmcp is handling: its HTTP head when rmcp put one in the
    /// request's extensions (its streamable HTTP server does), else [`Caller::local`].
    pub fn of(context: &'a RequestContext<RoleServer>) -> Self {
        Self {
            http: context.extensions.get::<http::request::Parts>(),
        }
    }

    /// The HTTP request head, when the request came over HTTP.
    pub fn http_parts(&self) -> Option<&'a http::request::Parts> {
        self.http
    }

    /// The [`Identity`] the HTTP gate established for the request (`None` on stdio, or when
    /// the request did not pass an authenticating gate).
    pub fn identity(&self) -> Option<&'a Identity> {
        self.http.and_then(Identity::from_parts)
    }

    /// One HTTP header of the request (`None` on stdio or when it is absent).
    pub fn header(&self, name: impl http::header::AsHeaderName) -> Option<&'a http::HeaderValue> {
        self.http.and_then(|parts| parts.headers.get(name))
    }
}
/// How long a call shown the approval page by a URL elicitation waits for the decision, by
/// default ([`GuardBuilder::approval_wait`]).
const DEFAULT_APPROVAL_WAIT: Duration = Duration::from_secs(100);

/// Builds a [`Guard`].
pub struct GuardBuilder {
    server: String,
    key: Option<SealKey>,
    nonces: Option<Arc<dyn NonceStore>>,
    elicitation: bool,
    dialog_timeout: Duration,
    approval_wait: Duration,
    token_ttl: Duration,
    state_ttl: Duration,
    principal: Option<Box<PrincipalFn>>,
    input_key: String,
    altered_state: AlteredState,
    audit: Option<Arc<dyn AuditSink>>,
    pages: Option<Arc<dyn ApprovalPages>>,
    records: Option<Arc<dyn ApprovalStore>>,
    routes: Option<Vec<ApprovalRoute>>,
    verified_tools: Vec<String>,
    page_setup: Option<String>,
    backchannel: Option<Arc<dyn Backchannel>>,
    ciba_setup: Option<String>,
}

impl GuardBuilder {
    /// The defaults: dialogs on, 10-minute dialogs, 100-second waits on the approval page,
    /// 5-minute tokens, 15-minute states.
    pub(super) fn new(server: String) -> Self {
        Self {
            server,
            key: None,
            nonces: None,
            elicitation: true,
            dialog_timeout: Duration::from_secs(600),
            approval_wait: DEFAULT_APPROVAL_WAIT,
            token_ttl: Duration::from_secs(300),
            state_ttl: Duration::from_secs(900),
            principal: None,
            input_key: APPROVAL_INPUT_KEY.to_owned(),
            altered_state: AlteredState::AskAgain,
            audit: None,
            pages: None,
            records: None,
            routes: None,
            verified_tools: Vec::new(),
            page_setup: None,
            backchannel: None,
            ciba_setup: None,
        }
    }

    /// The approval page: where a question is shown as a server-held record the person
    /// decides with their passkey. Without one (the default) the guard asks by form dialog
    /// and two-call token only.
    pub fn approval_pages(mut self, pages: Arc<dyn ApprovalPages>) -> Self {
        self.pages = Some(pages);
        self
    }

    /// Where approval records are kept; shared by replicas. Default: in memory.
    pub fn approval_store(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.records = Some(store);
        self
    }

    /// The routes the guard may ask on, in order (`<PREFIX>_APPROVAL_ROUTES`). Default:
    /// `page, form, token` when the page is ready (a passkey enrolled), else `form, token`.
    pub fn approval_routes(mut self, routes: Vec<ApprovalRoute>) -> Self {
        self.routes = Some(routes);
        self
    }

    /// Tools that run only after a yes a model cannot give (the approval page), as
    /// `#[guarded(always, verified)]` does for one tool; for a list the operator sets.
    pub fn verified_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.verified_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// How the operator enables the approval page, as the end of the sentence "To enable the
    /// page:" (serving names its own command and settings).
    pub fn page_setup(mut self, how: impl Into<String>) -> Self {
        self.page_setup = Some(how.into());
        self
    }

    /// The operator's identity provider, asking the person on their device (the `ciba` route,
    /// OpenID Connect CIBA). It is used only where [`approval_routes`](Self::approval_routes)
    /// names `ciba`; like the page, a model cannot complete it.
    pub fn backchannel(mut self, backchannel: Arc<dyn Backchannel>) -> Self {
        self.backchannel = Some(backchannel);
        self
    }

    /// How the operator enables CIBA, as the end of the sentence "To have the identity
    /// provider ask instead:" (serving names its settings). Without it, refusals name only
    /// the page.
    pub fn ciba_setup(mut self, how: impl Into<String>) -> Self {
        self.ciba_setup = Some(how.into());
        self
    }

    /// The seal key; shared by replicas that answer each other's questions. Default: a random
    /// key for this process.
    pub fn key(mut self, key: SealKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The spent-nonce store; shared by replicas. Default: in memory.
    pub fn nonce_store(mut self, store: Arc<dyn NonceStore>) -> Self {
        self.nonces = Some(store);
        self
    }

    /// `false` (the `ELICITATION=false` switch) sends every guarded call down the two-call
    /// token path. It never removes the guard. Default: `true`.
    pub fn elicitation(mut self, enabled: bool) -> Self {
        self.elicitation = enabled;
        self
    }

    /// How long a pushed dialog (2025-11-25 era) may wait for its answer. Default: 10 minutes.
    pub fn dialog_timeout(mut self, timeout: Duration) -> Self {
        self.dialog_timeout = timeout;
        self
    }

    /// How long a call shown the approval page by a URL elicitation (2025-11-25 era) waits
    /// for the person's decision before answering. Past it, the call answers with the page's
    /// link and "not approved yet" (`approval_pending`, nothing changed); the record stays
    /// pending, and an identical retry picks it up (runs at once if the person approved
    /// meanwhile, else is shown the same page again and waits again). Default: 100 seconds,
    /// below common clients' own request timeouts (the Python SDK's 120 s), so the client gets
    /// an answer it can retry rather than a timeout of its own.
    pub fn approval_wait(mut self, wait: Duration) -> Self {
        self.approval_wait = wait;
        self
    }

    /// How long a confirmation token stays valid. Default: 5 minutes.
    pub fn token_ttl(mut self, ttl: Duration) -> Self {
        self.token_ttl = ttl;
        self
    }

    /// How long a sealed `requestState` stays valid (2026-07-28 era). Default: 15 minutes.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// A rule of your own that tells callers apart further. Without one:
    /// [`default_principal`], the principal of the request's [`Identity`] (set by the HTTP
    /// gate), else a hash of the HTTP `Authorization` header when the call came over HTTP with
    /// one, else `"local"`. Served over HTTP through `ask-first-serve`, the same principal
    /// decides who owns a legacy session and what the per-person caps count.
    ///
    /// The rule can only **narrow** a proven identity, never replace it: when the gate proved
    /// who is calling ([`Identity::is_proven`]: tokens, OAuth, a server's own check, the
    /// shared secret), the principal is that identity's, a `/`, then the rule's value
    /// ([`Guard::principal_of`](super::Guard::principal_of)), so a header the rule reads can
    /// split one person's callers apart but never make them someone else. On stdio, and
    /// without authentication ([`Identity::unproven`]), the rule's value is the principal.
    pub fn principal(
        mut self,
        principal: impl Fn(&Caller<'_>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.principal = Some(Box::new(principal));
        self
    }

    /// The key the question travels under in `inputRequests` / `inputResponses` (2026-07-28).
    /// Default: [`APPROVAL_INPUT_KEY`].
    pub fn input_key(mut self, key: impl Into<String>) -> Self {
        self.input_key = key.into();
        self
    }

    /// What a retry whose `requestState` does not open gets. Default: [`AlteredState::AskAgain`].
    pub fn altered_state(mut self, policy: AlteredState) -> Self {
        self.altered_state = policy;
        self
    }

    /// Where to record every decision and every guarded call's outcome. Default: nowhere.
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// The guard.
    pub fn build(self) -> Guard {
        Guard {
            inner: Arc::new(Inner {
                server: self.server,
                key: self.key.unwrap_or_else(SealKey::random),
                nonces: self
                    .nonces
                    .unwrap_or_else(|| Arc::new(MemoryNonceStore::new())),
                elicitation: self.elicitation,
                dialog_timeout: self.dialog_timeout,
                approval_wait: self.approval_wait,
                token_ttl: self.token_ttl,
                state_ttl: self.state_ttl,
                principal: self.principal,
                input_key: self.input_key,
                altered_state: self.altered_state,
                audit: self.audit,
                pages: self.pages,
                records: self
                    .records
                    .unwrap_or_else(|| Arc::new(MemoryApprovalStore::new())),
                routes: self.routes,
                verified_tools: self.verified_tools,
                page_setup: self.page_setup.unwrap_or_else(|| {
                    "give the guard an approval page (GuardBuilder::approval_pages) and enrol a passkey".to_owned()
                }),
                backchannel: self.backchannel,
                ciba_setup: self.ciba_setup,
                flights: Default::default(),
            }),
        }
    }
}

/// The principal of the request's [`Identity`] when the HTTP gate put one in its head (the
/// authenticator's verdict: `token:alice`, `oauth:<issuer>#<subject>`, ...); else a hash of the
/// HTTP `Authorization` header, or `"local"` without one (stdio, or HTTP without the header:
/// every such caller is one principal).
///
/// Under one shared bearer secret every client sends the same header, so every holder of the
/// secret is one principal: per-session and per-principal binding separates nobody among them.
pub fn default_principal(caller: &Caller<'_>) -> String {
    if let Some(identity) = caller.identity() {
        return identity.principal().to_owned();
    }
    match caller.header(http::header::AUTHORIZATION) {
        Some(value) => {
            let digest = Sha256::digest(value.as_bytes());
            let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
            format!("bearer:{hex}")
        }
        None => "local".to_owned(),
    }
}
