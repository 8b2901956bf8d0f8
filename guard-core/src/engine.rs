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
use crate::nonce::{MemoryNonceStore, NonceStore};
use crate::seal::{self, SealKey, SealKind, SealScope};
use crate::target::{Conditional, Target};

/// The key under which the approval question travels in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT_KEY: &str = "approval";
/// The boolean property of the dialog's form that a person ticks to approve.
pub const APPROVE_PROPERTY: &str = "approve";

/// Computes who is calling, so a seal issued to one caller does not open for another.
pub type PrincipalFn = dyn Fn(&RequestContext<RoleServer>) -> String + Send + Sync;

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
    audit: Option<Arc<dyn AuditSink>>,
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

    /// How to tell callers apart. Default: a hash of the HTTP `Authorization` header when the
    /// call came over HTTP with one, else `"local"`.
    pub fn principal(
        mut self,
        principal: impl Fn(&RequestContext<RoleServer>) -> String + Send + Sync + 'static,
    ) -> Self {
        self.principal = Some(Box::new(principal));
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
                audit: self.audit,
            }),
        }
    }
}

/// A hash of the HTTP `Authorization` header, or `"local"`.
pub fn default_principal(context: &RequestContext<RoleServer>) -> String {
    let authorization = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(http::header::AUTHORIZATION));
    match authorization {
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
}

/// The answer to send instead of running the operation.
#[derive(Debug)]
pub struct Interruption {
    kind: InterruptionKind,
    response: Box<CallToolResponse>,
}

impl Interruption {
    fn text(kind: InterruptionKind, text: String) -> Self {
        Self {
            kind,
            response: Box::new(CallToolResult::error(vec![ContentBlock::text(text)]).into()),
        }
    }

    /// Why the call did not run.
    pub fn kind(&self) -> InterruptionKind {
        self.kind
    }

    /// The response for the client.
    pub fn into_response(self) -> CallToolResponse {
        *self.response
    }
}

/// Why the token path was taken; the token's text says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoDialog {
    SwitchedOff,
    NotDeclared,
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
            InterruptionKind::Cancelled => AuditOutcome::Cancelled,
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
            audit: None,
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.inner.server
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
        let principal = (self.inner.principal)(&call.context);
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
        let (route, decided) = self.ask(&call, &target).await;
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
        match call
            .context
            .peer
            .create_elicitation_with_timeout(params, Some(timeout))
            .await
        {
            Ok(result) => self.outcome(read_answer(&result.action, result.content.as_ref())),
            Err(ServiceError::Timeout { .. }) => Err(Interruption::text(
                InterruptionKind::TimedOut,
                format!(
                    "No answer came from the person at the client within {}: nothing was changed.",
                    minutes(timeout)
                ),
            )),
            Err(error) => {
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
        let principal = (self.inner.principal)(&call.context);
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
                        .and_then(|responses| responses.get(APPROVAL_INPUT_KEY))
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
        requests.insert(APPROVAL_INPUT_KEY.to_owned(), request);
        Err(Interruption {
            kind: InterruptionKind::InputRequired,
            response: Box::new(InputRequiredResult::new(Some(requests), Some(state)).into()),
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
        let principal = (self.inner.principal)(&call.context);
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
        let why_text = match why {
            NoDialog::SwitchedOff => format!(
                "{server} did not ask a person: dialogs are switched off on this server (ELICITATION=false), so guarded tools use a two-call token instead."
            ),
            NoDialog::NotDeclared => format!(
                "{server} did not ask a person: this request did not declare the elicitation capability, or its connection cannot carry a dialog, so guarded tools use a two-call token instead."
            ),
        };
        let mut text = String::new();
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
        Err(Interruption::text(kind, text))
    }
}
