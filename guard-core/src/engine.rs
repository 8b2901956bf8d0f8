//! The [`Guard`]: decides, for one call and one target, whether the operation may run.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, ServiceError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::approval::{Approved, ApprovedBy, Clearance, Exempt};
use crate::audit::{AuditOutcome, AuditSink, AuditTicket, Route};
use crate::call::{CONFIRM_TOKEN_ARG, GuardCall};
use crate::dialog::Pushed;
use crate::nonce::{MemoryNonceStore, NonceStore};
use crate::seal::{self, SealKey, SealKind, SealScope};
use crate::target::{Conditional, Target};

/// The key under which the approval question travels in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT_KEY: &str = "approval";
/// The boolean property of the dialog's form that a person ticks to approve.
pub const APPROVE_PROPERTY: &str = "approve";

/// Computes who is calling, so a seal issued to one caller does not open for another. The same
/// function also decides, in `mcp-guard-serve`'s HTTP serving, who owns a legacy session: a
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

    /// One HTTP header of the request (`None` on stdio or when it is absent).
    pub fn header(&self, name: impl http::header::AsHeaderName) -> Option<&'a http::HeaderValue> {
        self.http.and_then(|parts| parts.headers.get(name))
    }
}

/// The engine that asks before guarded operations run. Cheap to clone.
#[derive(Clone)]
pub struct Guard {
    inner: Arc<Inner>,
}

struct Inner {
    server: String,
    key: SealKey,
    nonces: Arc<dyn NonceStore>,
    elicitation: bool,
    dialog_timeout: Duration,
    token_ttl: Duration,
    state_ttl: Duration,
    principal: Box<PrincipalFn>,
    input_key: String,
    altered_state: AlteredState,
    audit: Option<Arc<dyn AuditSink>>,
}

/// What a 2026-07-28 retry gets when its `requestState` does not open: altered, forged, for
/// other arguments or another caller, or expired. Either way nothing runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AlteredState {
    /// Ask the question again with a fresh state (the default): a client that mangled the
    /// state loses nothing but a round, and an attacker gains nothing.
    #[default]
    AskAgain,
    /// Answer with a JSON-RPC `-32602 Invalid params` error that says why, as the official
    /// conformance suite expects of a server that rejects state failing its integrity check.
    JsonRpcError,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("server", &self.inner.server)
            .field("elicitation", &self.inner.elicitation)
            .field("dialog_timeout", &self.inner.dialog_timeout)
            .field("token_ttl", &self.inner.token_ttl)
            .field("state_ttl", &self.inner.state_ttl)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Guard`].
pub struct GuardBuilder {
    server: String,
    key: Option<SealKey>,
    nonces: Option<Arc<dyn NonceStore>>,
    elicitation: bool,
    dialog_timeout: Duration,
    token_ttl: Duration,
    state_ttl: Duration,
    principal: Option<Box<PrincipalFn>>,
    input_key: String,
    altered_state: AlteredState,
    audit: Option<Arc<dyn AuditSink>>,
}

impl GuardBuilder {
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

    /// How to tell callers apart. Default: [`default_principal`], a hash of the HTTP
    /// `Authorization` header when the call came over HTTP with one, else `"local"`. Served over
    /// HTTP through `mcp-guard-serve`, the same function decides who owns a legacy session.
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
                token_ttl: self.token_ttl,
                state_ttl: self.state_ttl,
                principal: self
                    .principal
                    .unwrap_or_else(|| Box::new(default_principal)),
                input_key: self.input_key,
                altered_state: self.altered_state,
                audit: self.audit,
            }),
        }
    }
}

/// A hash of the HTTP `Authorization` header, or `"local"` without one (stdio, or HTTP without
/// the header: every such caller is one principal).
pub fn default_principal(caller: &Caller<'_>) -> String {
    match caller.header(http::header::AUTHORIZATION) {
        Some(value) => {
            let digest = Sha256::digest(value.as_bytes());
            let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
            format!("bearer:{hex}")
        }
        None => "local".to_owned(),
    }
}

/// Implemented by a server that holds a [`Guard`]; the `#[guarded]` macro finds it here.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not hold a guard",
    label = "#[guarded] handlers need `Self: mcp_guard::Guarded`",
    note = "implement `mcp_guard::Guarded` for `{Self}`: `fn guard(&self) -> &mcp_guard::Guard {{ &self.guard }}`"
)]
pub trait Guarded {
    /// The server's guard.
    fn guard(&self) -> &Guard;
}

/// Builds a target from a tool's validated arguments, loading the server-side facts its
/// question and condition need. An `Err` is an input error: reported as such, and no one is
/// asked.
///
/// # Check before asking
///
/// `resolve` runs before anyone is asked and before any confirmation token is issued, so it
/// is where a call that cannot succeed must be stopped: whatever the server can know
/// beforehand is checked here, not left to the operation after a person said yes. At least:
/// - the record exists and is visible to the server's credentials;
/// - the caller may change it (ownership, a read-only or archived state);
/// - the credentials are valid and carry the permissions (scopes) the operation needs,
///   learned cheaply and without side effects, and learned again when the backend answers
///   "unauthorised" or "forbidden";
/// - the backend answers at all.
///
/// A failed check is a [`Rejection`] naming the problem and its fix: the engine then shows no
/// dialog, returns no `input_required` and issues no token, in every protocol era. A check
/// must never change anything; when the backend offers no side-effect-free way to learn a
/// fact, leave that fact to the operation and say so in the question.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be built from the arguments `{A}`",
    label = "the guarded handler's target",
    note = "implement `mcp_guard::Resolve<{S}, {A}>` for `{Self}`: validate the arguments and load the server-side facts"
)]
pub trait Resolve<S: ?Sized, A>: Target + Sized {
    /// Validates `args` and loads facts through `server`.
    fn resolve(server: &S, args: &A) -> impl Future<Output = Result<Self, Rejection>> + Send;
}

/// An input error found while resolving a target: the call is reported as failed, with this
/// message, and nothing is asked or changed.
#[derive(Debug, Clone)]
pub struct Rejection {
    result: CallToolResult,
}

impl Rejection {
    /// A rejection with a message that names the problem and its fix.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            result: CallToolResult::error(vec![ContentBlock::text(message.into())]),
        }
    }

    /// A rejection carrying a complete error result.
    pub fn from_result(mut result: CallToolResult) -> Self {
        result.is_error = Some(true);
        Self { result }
    }

    /// The message text(s), joined.
    pub fn message(&self) -> String {
        self.result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The error result sent back to the client.
    pub fn into_response(self) -> CallToolResponse {
        self.result.into()
    }
}

/// Why a guarded call did not run (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InterruptionKind {
    /// 2026-07-28: a question was returned as `input_required`; the client retries with the answer.
    InputRequired,
    /// No dialog could be shown: a confirmation token was issued.
    TokenIssued,
    /// A quoted token was refused (spent, expired, other arguments, altered); a fresh one was issued.
    TokenRefused,
    /// The person declined, or accepted without ticking the box.
    Declined,
    /// The person cancelled the dialog.
    Cancelled,
    /// No answer came within the dialog timeout.
    TimedOut,
    /// The question could not be delivered.
    NotAsked,
    /// The spent-nonce store failed, so the answer could not be checked for reuse.
    StoreFailed,
    /// The client cancelled the call (`notifications/cancelled`) before it could run; a
    /// pushed dialog still open was withdrawn and its answer, should one come, is ignored.
    CallCancelled,
    /// A retry's `requestState` did not open and the guard answers that with an error
    /// ([`AlteredState::JsonRpcError`]).
    StateRejected,
}

/// The answer to send instead of running the operation.
#[derive(Debug)]
pub struct Interruption {
    kind: InterruptionKind,
    response: Box<CallToolResponse>,
    /// Set when the answer is a JSON-RPC error rather than a tool result.
    error: Option<Box<rmcp::ErrorData>>,
}

impl Interruption {
    fn text(kind: InterruptionKind, text: String) -> Self {
        Self {
            kind,
            response: Box::new(CallToolResult::error(vec![ContentBlock::text(text)]).into()),
            error: None,
        }
    }

    /// The client cancelled the call (`notifications/cancelled`): nothing runs. rmcp sends
    /// no response for a cancelled request, so this text is for logs and direct callers.
    fn cancelled_call() -> Self {
        Self::text(
            InterruptionKind::CallCancelled,
            "The client cancelled this call: it was not run and nothing was changed.".to_owned(),
        )
    }

    /// Why the call did not run.
    pub fn kind(&self) -> InterruptionKind {
        self.kind
    }

    /// The response for the client as a tool result (an interruption that is a JSON-RPC
    /// error gives its message as an error result).
    pub fn into_response(self) -> CallToolResponse {
        *self.response
    }

    /// For a tool that declares an `outputSchema`: the token reply's facts move from
    /// `structuredContent` to the result's `_meta` under [`token_reply::META_KEY`]. Clients
    /// such as the TypeScript SDK 1.x validate `structuredContent` against the output schema
    /// even on an error result, and would turn the token reply into an exception the model
    /// never reads. `#[guarded]` calls this for handlers that return `Json<T>`.
    pub fn for_output_schema(mut self) -> Self {
        if let CallToolResponse::Complete(result) = self.response.as_mut()
            && let Some(facts) = result.structured_content.take()
        {
            let mut meta = result.meta.take().unwrap_or_default();
            meta.0.insert(token_reply::META_KEY.to_owned(), facts);
            result.meta = Some(meta);
        }
        self
    }

    /// The answer for the client: a tool result, or a JSON-RPC error where the guard was set
    /// to answer one ([`AlteredState::JsonRpcError`]). What `#[guarded]` handlers return.
    pub fn into_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        match self.error {
            Some(error) => Err(*error),
            None => Ok(*self.response),
        }
    }
}

/// Why the token path was taken; the token's text says so.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoDialog {
    SwitchedOff,
    NotDeclared,
    /// A pushed dialog failed because the client could not show it; says how.
    DialogFailed(String),
}

/// The keys of a token reply's `structuredContent` (or, for a tool with an `outputSchema`, of
/// the object under [`META_KEY`](token_reply::META_KEY) in its `_meta`), so a program can read
/// the token without parsing the text.
pub mod token_reply {
    /// Where a tool with an `outputSchema` carries the token reply's facts: `_meta[META_KEY]`
    /// (see [`Interruption::for_output_schema`](crate::Interruption::for_output_schema)).
    pub const META_KEY: &str = "mcp-guard/token_reply";
    /// `"confirmation_required"`, or `"token_refused"` when a quoted token was not accepted.
    pub const STATUS: &str = "status";
    /// The token to quote.
    pub const CONFIRM_TOKEN: &str = "confirm_token";
    /// The tool to call again, with the same arguments plus the token.
    pub const TOOL: &str = "tool";
    /// Seconds the token stays valid.
    pub const EXPIRES_IN_SECONDS: &str = "expires_in_seconds";
    /// Why no person was asked.
    pub const WHY_NO_DIALOG: &str = "why_no_dialog";
    /// Why a quoted token was refused, when one was.
    pub const REFUSED_BECAUSE: &str = "refused_because";
}

/// When a pushed `elicitation/create` failed because the client cannot show a dialog at all
/// (rather than because the person answered, or the dialog broke midway), says how; the call
/// then takes the two-call token path. Gateways such as proxies declare elicitation upstream
/// whatever their own client declared, and answer `-32601 Method not found`.
fn dialog_unavailable(error: &ServiceError) -> Option<String> {
    match error {
        ServiceError::McpError(data) => {
            let message = data.message.to_ascii_lowercase();
            let unsupported = [
                "not supported",
                "unsupported",
                "does not support",
                "not implemented",
            ]
            .iter()
            .any(|phrase| message.contains(phrase));
            if data.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND {
                Some("the client answered the dialog request with JSON-RPC error -32601 (method not found)".to_owned())
            } else if unsupported {
                Some(format!(
                    "the client answered the dialog request with JSON-RPC error {} (elicitation not supported)",
                    data.code.0
                ))
            } else {
                None
            }
        }
        ServiceError::TransportSend(_) | ServiceError::TransportClosed => {
            Some("the connection could not carry the dialog request to the client".to_owned())
        }
        _ => None,
    }
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn minutes(d: Duration) -> String {
    let secs = d.as_secs();
    if d.subsec_nanos() != 0 {
        // A bound that is not whole seconds would read "within 0 seconds" when truncated.
        let ms = d.as_millis();
        format!("{ms} millisecond{}", if ms == 1 { "" } else { "s" })
    } else if secs >= 60 && secs.is_multiple_of(60) {
        let m = secs / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{secs} second{}", if secs == 1 { "" } else { "s" })
    }
}

fn approval_schema() -> Option<ElicitationSchema> {
    serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": {
            APPROVE_PROPERTY: {
                "type": "boolean",
                "title": "Approve",
                "description": "Tick to let this operation run. Leave it unticked, decline or cancel to change nothing.",
                "default": false
            }
        },
        "required": [APPROVE_PROPERTY]
    }))
    .ok()
}

/// The person's answer, read from an elicitation result.
enum Answer {
    Yes,
    NotTicked,
    Declined,
    Cancelled,
}

fn read_answer(action: &ElicitationAction, content: Option<&Value>) -> Answer {
    match action {
        ElicitationAction::Accept => {
            let ticked = content
                .and_then(|c| c.get(APPROVE_PROPERTY))
                .and_then(Value::as_bool)
                == Some(true);
            if ticked {
                Answer::Yes
            } else {
                Answer::NotTicked
            }
        }
        ElicitationAction::Decline => Answer::Declined,
        _ => Answer::Cancelled,
    }
}

/// The route a decision took: the token path says so in its result; otherwise the era's
/// dialog route.
fn route_of(modern: bool, result: &Result<ApprovedBy, Interruption>) -> Route {
    match result {
        Ok(ApprovedBy::Token) => Route::Token,
        Err(i)
            if matches!(
                i.kind,
                InterruptionKind::TokenIssued | InterruptionKind::TokenRefused
            ) =>
        {
            Route::Token
        }
        _ if modern => Route::InputRequired,
        _ => Route::Dialog,
    }
}

/// What the audit log calls a decision.
fn decision_outcome(result: &Result<ApprovedBy, Interruption>) -> AuditOutcome {
    match result {
        Ok(_) => AuditOutcome::Approved,
        Err(interruption) => match interruption.kind {
            InterruptionKind::InputRequired
            | InterruptionKind::TokenIssued
            | InterruptionKind::TokenRefused => AuditOutcome::Asked,
            InterruptionKind::Declined => AuditOutcome::Declined,
            InterruptionKind::Cancelled | InterruptionKind::CallCancelled => {
                AuditOutcome::Cancelled
            }
            InterruptionKind::StateRejected => AuditOutcome::Refused,
            InterruptionKind::TimedOut => AuditOutcome::Expired,
            InterruptionKind::NotAsked => AuditOutcome::NotAsked,
            InterruptionKind::StoreFailed => AuditOutcome::StoreUnavailable,
        },
    }
}

/// What the audit log calls a state or token that did not open.
fn refusal_outcome(reason: seal::SealError) -> AuditOutcome {
    match reason {
        seal::SealError::Expired => AuditOutcome::Expired,
        _ => AuditOutcome::Refused,
    }
}

impl Guard {
    /// Starts building a guard for the server named `server` (the name shown in fallback texts
    /// and the start-up notice).
    pub fn builder(server: impl Into<String>) -> GuardBuilder {
        GuardBuilder {
            server: server.into(),
            key: None,
            nonces: None,
            elicitation: true,
            dialog_timeout: Duration::from_secs(600),
            token_ttl: Duration::from_secs(300),
            state_ttl: Duration::from_secs(900),
            principal: None,
            input_key: APPROVAL_INPUT_KEY.to_owned(),
            altered_state: AlteredState::AskAgain,
            audit: None,
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.inner.server
    }

    /// Who `caller` is under this guard's principal rule ([`GuardBuilder::principal`], by
    /// default [`default_principal`]): what seals and tokens are bound to, and what HTTP
    /// serving binds a legacy session to.
    pub fn principal_of(&self, caller: &Caller<'_>) -> String {
        (self.inner.principal)(caller)
    }

    /// Records what became of a guarded call that `ticket`'s clearance let run: executed,
    /// failed, or outcome unknown (see [`OUTCOME_META_KEY`](crate::OUTCOME_META_KEY)).
    /// `#[guarded]` calls this after the handler's body; a hand-written handler may too.
    pub fn record_call(
        &self,
        ticket: Option<&AuditTicket>,
        response: &Result<CallToolResponse, rmcp::ErrorData>,
    ) {
        if let Some(ticket) = ticket {
            self.record(ticket, crate::audit::outcome_of(response));
        }
    }

    fn record(&self, ticket: &AuditTicket, outcome: AuditOutcome) {
        if let Some(sink) = &self.inner.audit {
            sink.record(&ticket.event(outcome));
        }
    }

    /// The ticket for `target` on `route`; `None` (and no work) without an audit sink.
    fn ticket<T: Target>(&self, call: &GuardCall, target: &T, route: Route) -> Option<AuditTicket> {
        self.inner.audit.as_ref()?;
        let principal = (self.inner.principal)(&Caller::of(&call.context));
        Some(AuditTicket::new(
            &principal,
            &call.tool,
            T::OPERATION,
            &target.fingerprint(),
            route,
        ))
    }

    /// Records a step inside a path whose fingerprint and principal are already at hand.
    fn note<T: Target>(
        &self,
        call: &GuardCall,
        scope: &SealScope<'_>,
        route: Route,
        outcome: AuditOutcome,
    ) {
        if self.inner.audit.is_some() {
            let ticket = AuditTicket::new(
                scope.principal,
                &call.tool,
                T::OPERATION,
                scope.fingerprint,
                route,
            );
            self.record(&ticket, outcome);
        }
    }

    /// Whether dialogs are switched on (`ELICITATION`).
    pub fn elicitation_enabled(&self) -> bool {
        self.inner.elicitation
    }

    /// Asks about `target`, always. `Ok` only with an approval for exactly this target.
    pub async fn approve<T: Target>(
        &self,
        call: GuardCall,
        target: T,
    ) -> Result<Approved<T>, Interruption> {
        let cancelled = call.context.ct.clone();
        let (route, mut decided) = self.ask(&call, &target).await;
        // The client may have cancelled the call while it was being asked about: a cancelled
        // call never runs, whatever the answer was.
        if decided.is_ok() && cancelled.is_cancelled() {
            decided = Err(Interruption::cancelled_call());
        }
        let ticket = self.ticket(&call, &target, route);
        if let Some(ticket) = &ticket {
            self.record(ticket, decision_outcome(&decided));
        }
        let by = decided?;
        call.audit.set(ticket);
        Ok(Approved::new(target, by))
    }

    /// Clears a conditional target: exempt when `needs_approval` is false, otherwise asked
    /// about as in [`approve`](Self::approve).
    pub async fn clear<T: Conditional>(
        &self,
        call: GuardCall,
        target: T,
        needs_approval: bool,
    ) -> Result<Clearance<T>, Interruption> {
        if !needs_approval {
            if call.context.ct.is_cancelled() {
                return Err(Interruption::cancelled_call());
            }
            call.audit.set(self.ticket(&call, &target, Route::Exempt));
            return Ok(Clearance::Exempt(Exempt::new(target)));
        }
        self.approve(call, target).await.map(Clearance::Approved)
    }

    async fn ask<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
    ) -> (Route, Result<ApprovedBy, Interruption>) {
        let modern = call
            .context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let capabilities = if modern {
            // 2026-07-28: capabilities hold for this request only.
            call.context.meta.client_capabilities()
        } else {
            // 2025-11-25: only the handshake counts. A pushed dialog needs the session the
            // handshake opened; a stateless legacy request has none (rmcp gives it default,
            // empty capabilities), so it takes the token path instead of waiting on a channel
            // that cannot carry the answer.
            call.context
                .peer
                .peer_info()
                .map(|info| info.capabilities.clone())
        };
        let declared = capabilities
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let result = match (self.inner.elicitation, declared, modern) {
            (false, _, _) => self.token_path(call, target, NoDialog::SwitchedOff).await,
            (true, false, _) => self.token_path(call, target, NoDialog::NotDeclared).await,
            (true, true, true) => self.input_required_path(call, target).await,
            (true, true, false) => self.push_path(call, target).await,
        };
        (route_of(modern, &result), result)
    }

    fn scope<'a, T: Target>(
        &self,
        fingerprint: &'a crate::Fingerprint,
        principal: &'a str,
    ) -> SealScope<'a> {
        SealScope {
            operation: T::OPERATION,
            fingerprint,
            principal,
        }
    }

    fn message<T: Target>(target: &T) -> String {
        target.question().render()
    }

    /// The dialog: the target's question and one required `approve` box. Both eras send it.
    fn approval_form<T: Target>(target: &T) -> Result<ElicitRequestParams, Interruption> {
        let Some(schema) = approval_schema() else {
            return Err(Interruption::text(
                InterruptionKind::NotAsked,
                "The question could not be built: nothing was changed.".to_owned(),
            ));
        };
        Ok(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: Self::message(target),
            requested_schema: schema,
        })
    }

    fn outcome(&self, answer: Answer) -> Result<ApprovedBy, Interruption> {
        match answer {
            Answer::Yes => Ok(ApprovedBy::Dialog),
            Answer::NotTicked => Err(Interruption::text(
                InterruptionKind::Declined,
                "Not approved: the dialog was accepted without ticking \"Approve\", so it was declined and nothing was changed.".to_owned(),
            )),
            Answer::Declined => Err(Interruption::text(
                InterruptionKind::Declined,
                "The person at the client declined: nothing was changed.".to_owned(),
            )),
            Answer::Cancelled => Err(Interruption::text(
                InterruptionKind::Cancelled,
                "The dialog was cancelled at the client: nothing was changed.".to_owned(),
            )),
        }
    }

    /// Spends a nonce; a failed store counts as spent.
    async fn spend(&self, nonce: &seal::Nonce, expires_at: u64) -> Result<bool, Interruption> {
        match self.inner.nonces.spend(nonce, expires_at, now_unix()).await {
            Ok(fresh) => Ok(fresh),
            Err(error) => {
                tracing::warn!(%error, "spent-nonce store failed; refusing the answer");
                Err(Interruption::text(
                    InterruptionKind::StoreFailed,
                    format!(
                        "Nothing was changed: the answer could not be checked for reuse, because {error}. It was refused rather than risk its being used twice. Once the store answers again, repeat the call."
                    ),
                ))
            }
        }
    }

    // 2025-11-25: push elicitation/create and wait, bounded.
    async fn push_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
    ) -> Result<ApprovedBy, Interruption> {
        let params = Self::approval_form(target)?;
        if let Some(ticket) = self.ticket(call, target, Route::Dialog) {
            self.record(&ticket, AuditOutcome::Asked);
        }
        let timeout = self.inner.dialog_timeout;
        match crate::dialog::push(&call.context, params, timeout).await {
            Pushed::Answered(result) => {
                self.outcome(read_answer(&result.action, result.content.as_ref()))
            }
            Pushed::CallCancelled => Err(Interruption::cancelled_call()),
            Pushed::Failed(ServiceError::Timeout { .. }) => Err(Interruption::text(
                InterruptionKind::TimedOut,
                format!(
                    "No answer came from the person at the client within {}: nothing was changed.",
                    minutes(timeout)
                ),
            )),
            // A cancelled call never falls back to the token path (Pushed::CallCancelled above).
            Pushed::Failed(error) if let Some(how) = dialog_unavailable(&error) => {
                tracing::info!(%error, tool = %call.tool, "the client cannot show the approval dialog; using the two-call token");
                self.token_path(call, target, NoDialog::DialogFailed(how))
                    .await
            }
            Pushed::Failed(error) => {
                tracing::warn!(%error, tool = %call.tool, "could not deliver the approval dialog");
                Err(Interruption::text(
                    InterruptionKind::NotAsked,
                    format!(
                        "{} could not show the approval dialog ({error}): nothing was changed.",
                        self.inner.server
                    ),
                ))
            }
        }
    }

    // 2026-07-28: return input_required with a sealed requestState; open it on the retry.
    async fn input_required_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
    ) -> Result<ApprovedBy, Interruption> {
        let fingerprint = target.fingerprint();
        let principal = (self.inner.principal)(&Caller::of(&call.context));
        let scope = self.scope::<T>(&fingerprint, &principal);
        let now = now_unix();
        let mut round = 0u8;
        if let Some(state) = call.request_state.as_deref() {
            match seal::open(&self.inner.key, SealKind::RequestState, &scope, state, now) {
                Ok(opened) => {
                    round = opened.round.saturating_add(1);
                    let answer = call
                        .input_responses
                        .as_ref()
                        .and_then(|responses| responses.get(self.inner.input_key.as_str()))
                        .and_then(|value| {
                            let action: ElicitationAction =
                                serde_json::from_value(value.get("action")?.clone()).ok()?;
                            Some(read_answer(&action, value.get("content")))
                        });
                    if let Some(answer) = answer {
                        if self.spend(&opened.nonce, opened.expires_at).await? {
                            return self.outcome(answer);
                        }
                        self.note::<T>(
                            call,
                            &scope,
                            Route::InputRequired,
                            AuditOutcome::ReplayRefused,
                        );
                        tracing::info!(tool = %call.tool, "replayed requestState: asking afresh");
                    } else {
                        tracing::info!(tool = %call.tool, "retry without a readable answer: asking afresh");
                    }
                }
                Err(reason) if self.inner.altered_state == AlteredState::JsonRpcError => {
                    tracing::info!(tool = %call.tool, %reason, "requestState is no answer: refusing");
                    let message = format!(
                        "Invalid params: the requestState was refused: {reason}. Nothing was changed; call the tool again without requestState and inputResponses to be asked afresh."
                    );
                    return Err(Interruption {
                        kind: InterruptionKind::StateRejected,
                        response: Box::new(
                            CallToolResult::error(vec![ContentBlock::text(message.clone())]).into(),
                        ),
                        error: Some(Box::new(rmcp::ErrorData::invalid_params(message, None))),
                    });
                }
                Err(reason) => {
                    self.note::<T>(call, &scope, Route::InputRequired, refusal_outcome(reason));
                    tracing::info!(tool = %call.tool, %reason, "requestState is no answer: asking afresh");
                }
            }
        }
        let form = Self::approval_form(target)?;
        let expires_at = now.saturating_add(self.inner.state_ttl.as_secs());
        let state = seal::seal(
            &self.inner.key,
            SealKind::RequestState,
            &scope,
            round,
            expires_at,
        );
        let request = InputRequest::Elicitation(ElicitRequest::new(form));
        let mut requests = InputRequests::new();
        requests.insert(self.inner.input_key.clone(), request);
        Err(Interruption {
            kind: InterruptionKind::InputRequired,
            response: Box::new(InputRequiredResult::new(Some(requests), Some(state)).into()),
            error: None,
        })
    }

    // No dialog possible: the two-call token.
    async fn token_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        why: NoDialog,
    ) -> Result<ApprovedBy, Interruption> {
        let fingerprint = target.fingerprint();
        let principal = (self.inner.principal)(&Caller::of(&call.context));
        let scope = self.scope::<T>(&fingerprint, &principal);
        let now = now_unix();
        let refusal = match call.confirm_token.as_deref() {
            None => None,
            Some(token) => {
                match seal::open(&self.inner.key, SealKind::ConfirmToken, &scope, token, now) {
                    Ok(opened) => {
                        if self.spend(&opened.nonce, opened.expires_at).await? {
                            return Ok(ApprovedBy::Token);
                        }
                        self.note::<T>(call, &scope, Route::Token, AuditOutcome::ReplayRefused);
                        Some("it has already been used; a token works once".to_owned())
                    }
                    Err(reason) => {
                        self.note::<T>(call, &scope, Route::Token, refusal_outcome(reason));
                        Some(reason.to_string())
                    }
                }
            }
        };
        let expires_at = now.saturating_add(self.inner.token_ttl.as_secs());
        let token = seal::seal(
            &self.inner.key,
            SealKind::ConfirmToken,
            &scope,
            0,
            expires_at,
        );
        let server = &self.inner.server;
        let tool = &call.tool;
        let why_text = match &why {
            NoDialog::SwitchedOff => format!(
                "{server} did not ask a person: dialogs are switched off on this server (ELICITATION=false), so guarded tools use a two-call token instead."
            ),
            NoDialog::NotDeclared => format!(
                "{server} did not ask a person: this request did not declare the elicitation capability, or its connection cannot carry a dialog, so guarded tools use a two-call token instead."
            ),
            NoDialog::DialogFailed(how) => format!(
                "{server} tried to ask a person, but the approval dialog failed: {how}. No one saw the question, so guarded tools use a two-call token instead."
            ),
        };
        let mut text = String::new();
        let mut structured = serde_json::Map::new();
        structured.insert(
            token_reply::STATUS.to_owned(),
            Value::from(if refusal.is_some() {
                "token_refused"
            } else {
                "confirmation_required"
            }),
        );
        structured.insert(
            token_reply::CONFIRM_TOKEN.to_owned(),
            Value::from(token.clone()),
        );
        structured.insert(token_reply::TOOL.to_owned(), Value::from(tool.clone()));
        structured.insert(
            token_reply::EXPIRES_IN_SECONDS.to_owned(),
            Value::from(self.inner.token_ttl.as_secs()),
        );
        structured.insert(
            token_reply::WHY_NO_DIALOG.to_owned(),
            Value::from(why_text.clone()),
        );
        if let Some(reason) = &refusal {
            structured.insert(
                token_reply::REFUSED_BECAUSE.to_owned(),
                Value::from(reason.clone()),
            );
        }
        let kind = match refusal {
            Some(reason) => {
                text.push_str(&format!(
                    "The confirm_token was not accepted: {reason}. Nothing was changed.\n\n"
                ));
                InterruptionKind::TokenRefused
            }
            None => {
                text.push_str("Nothing was changed yet.\n\n");
                InterruptionKind::TokenIssued
            }
        };
        text.push_str(&format!(
            "What this call would do:\n{question}\n\n{why_text}\n\nTo go ahead, call `{tool}` again with exactly the same arguments plus `{CONFIRM_TOKEN_ARG}`:\n{CONFIRM_TOKEN_ARG}: {token}\n\nThis token proves only that the same call was made twice, nothing more: it is not a person's approval. It works once, for these exact arguments, within {ttl}.",
            question = Self::message(target),
            ttl = minutes(self.inner.token_ttl),
        ));
        // The text for people and models; the same facts as structured content for programs.
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(Value::Object(structured));
        Err(Interruption {
            kind,
            response: Box::new(result.into()),
            error: None,
        })
    }
}
