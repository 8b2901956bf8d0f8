//! The [`Guard`]: decides, for one call and one target, whether the operation may run.
//!
//! One file per path a call can take: `builder` (how a guard is made, who is calling),
//! `route` (the approval routes and how a call is asked on the one it takes), `plan` (which
//! route a call takes, also for a server's `tools/list` before any call), `rejection` (what a
//! call answers instead of running: an input error, an interruption), `page` (the approval
//! page), `ciba` (the person's identity provider asks them on their device), `pushed`
//! (2025-11-25: a pushed `elicitation/create`), `input_required` (2026-07-28: `input_required`
//! with a sealed `requestState`), `token` (no dialog: the two-call `confirm_token`), `recheck`
//! (after a pushed dialog's yes: the target read again and compared with what the person was
//! shown). This file holds the guard itself and what every path shares: the question, the
//! person's answer, the spent-nonce check and the audit.

mod backchannel;
mod builder;
mod ciba;
mod flights;
mod input_required;
mod page;
mod plan;
mod pushed;
mod recheck;
mod rejection;
mod route;
mod token;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResponse, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use serde_json::Value;

use crate::approval::{Approved, ApprovedBy, Clearance, Exempt};
use crate::approval_record::{ApprovalPages, ApprovalStore};
use crate::audit::{AuditOutcome, AuditSink, AuditTicket, Route};
use crate::call::GuardCall;
use crate::clock::now_unix;
use crate::nonce::NonceStore;
use crate::seal::{self, SealKey, SealScope};
use crate::target::{Approval, Conditional, Fingerprint, Target, binding_fingerprint};

pub use backchannel::{
    AUTHORIZATION_DETAILS_TYPE, Backchannel, BackchannelFuture, BackchannelPoll, BackchannelStarted,
};
pub use builder::{Caller, GuardBuilder, PrincipalFn, default_principal};
pub use ciba::BINDING_CODE_KEY;
pub use page::{APPROVAL_URL_KEY, ELICITATION_COMPLETE_METHOD, MAX_PENDING_APPROVALS};
pub use plan::{ClientDeclared, RoutePlan, ToolNeeds};
pub use recheck::MAX_ASK_ROUNDS;
pub use rejection::{InputError, Interruption, InterruptionKind};
pub use route::ApprovalRoute;
pub use token::token_reply;

/// The key under which the approval question travels in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT_KEY: &str = "approval";
/// The boolean property of the dialog's form that a person ticks to approve.
pub const APPROVE_PROPERTY: &str = "approve";
/// The key a `#[guarded(..., person_required)]` tool carries in its `_meta` in `tools/list`,
/// set to `true`: the tool runs only after a person's yes in a dialog, never on a two-call
/// token (its input schema has no `confirm_token` unless its arguments declare one).
pub const PERSON_REQUIRED_META_KEY: &str = "ask-first/person_required";

/// The dialog the guard shows a person about `target`, exactly as both eras send it: a form
/// whose message is the target's rendered question and whose one required field is the
/// [`APPROVE_PROPERTY`] box. `None` only if the form could not be built, which does not happen
/// with this crate's fixed schema.
pub fn approval_dialog<T: Target>(target: &T) -> Option<ElicitRequestParams> {
    Guard::approval_form(target, false).ok()
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
    approval_wait: Duration,
    token_ttl: Duration,
    state_ttl: Duration,
    /// The server's own narrowing rule, if any ([`GuardBuilder::principal`]).
    principal: Option<Box<PrincipalFn>>,
    input_key: String,
    altered_state: AlteredState,
    audit: Option<Arc<dyn AuditSink>>,
    pages: Option<Arc<dyn ApprovalPages>>,
    records: Arc<dyn ApprovalStore>,
    routes: Option<Vec<ApprovalRoute>>,
    verified_tools: Vec<String>,
    page_setup: String,
    backchannel: Option<Arc<dyn Backchannel>>,
    ciba_setup: Option<String>,
    /// Identical calls taking turns, and CIBA polls shared by concurrent retries.
    flights: flights::Flights,
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
            .field("approval_wait", &self.inner.approval_wait)
            .field("token_ttl", &self.inner.token_ttl)
            .field("state_ttl", &self.inner.state_ttl)
            .finish_non_exhaustive()
    }
}

/// Implemented by a server that holds a [`Guard`]: its `#[guarded]` handlers ask through it,
/// and serving reads it.
///
/// A server without it is reported at each `#[guarded(..)]` (on `always` or `when`), and once
/// where it is served; the message says what to write.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not hold a guard: add `impl ask_first::HasGuard for {Self}`",
    label = "`{Self}` must implement `ask_first::HasGuard`: its #[guarded] tools ask through the guard it holds",
    note = "write `impl ask_first::HasGuard for {Self} {{ fn guard(&self) -> &ask_first::Guard {{ &self.guard }} }}`, with a field `guard: ask_first::Guard` built by `Serving::guard_builder()` or `Guard::builder(\"name\")`"
)]
pub trait HasGuard {
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
/// A failed check is a [`InputError`] naming the problem and its fix: the engine then shows no
/// dialog, returns no `input_required` and issues no token, in every protocol era. A check
/// must never change anything; when the backend offers no side-effect-free way to learn a
/// fact, leave that fact to the operation and say so in the question.
///
/// # Read again after a yes
///
/// A yes holds only for what the person was shown. On a 2026-07-28 retry and on a token's
/// second call, the target is resolved afresh in the call that runs, and its answer opens only
/// if the target's binding and its rendered question are exactly those the answer was given
/// for. On 2025-11-25 the person answers a pushed dialog while the call waits, so after a yes
/// the guard reads the target again with [`recheck`](Resolve::recheck) right before the
/// operation: the same, and the operation runs on the target just read; changed, the person
/// is asked again with the new facts and a line saying the target changed since it was shown,
/// up to [`MAX_ASK_ROUNDS`] questions, then the call is refused saying why. A `recheck` that
/// fails is answered with its message and nothing runs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be built from the arguments `{A}`",
    label = "the guarded handler's target",
    note = "implement `ask_first::Resolve<{S}, {A}>` for `{Self}`: validate the arguments and load the server-side facts"
)]
pub trait Resolve<S: ?Sized, A>: Target + Sized {
    /// Validates `args` and loads facts through `server`.
    fn resolve(server: &S, args: &A) -> impl Future<Output = Result<Self, InputError>> + Send;

    /// Reads the target again after a person said yes to `shown` in a pushed dialog, right
    /// before the operation runs. The guard compares the result's binding and rendered question
    /// with `shown`'s: any difference asks the person again.
    ///
    /// The default resolves again ([`resolve`](Resolve::resolve)). Override it to re-read only
    /// what the question showed, or, for a target whose shown facts all come from the
    /// arguments (so nothing but a new call can change them), to return `Ok(shown)` without a
    /// second request to the backend.
    fn recheck(
        server: &S,
        args: &A,
        shown: Self,
    ) -> impl Future<Output = Result<Self, InputError>> + Send {
        drop(shown);
        Self::resolve(server, args)
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

/// What the audit log calls a decision.
fn decision_outcome<X>(result: &Result<X, Interruption>) -> AuditOutcome {
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
            InterruptionKind::StateRejected | InterruptionKind::TargetChanged => {
                AuditOutcome::Refused
            }
            InterruptionKind::PersonRequired | InterruptionKind::VerifiedUnavailable => {
                AuditOutcome::NotAsked
            }
            InterruptionKind::ApprovalPending => AuditOutcome::Asked,
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
        GuardBuilder::new(server.into())
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.inner.server
    }

    /// Who `caller` is: the person, as per-person caps count them and the audit log records
    /// them. Without a rule of the server's own, [`default_principal`]. With one
    /// ([`GuardBuilder::principal`]): a proven [`Identity`](crate::Identity)'s principal, a `/`,
    /// then the rule's value (the rule narrows the gate's verdict, never replaces it; a `/` or
    /// `%` in the identity's principal is written `%2F` / `%25`, so the first `/` is the
    /// boundary); without a proven identity (stdio, no authentication), the rule's value.
    pub fn principal_of(&self, caller: &Caller<'_>) -> String {
        let Some(rule) = &self.inner.principal else {
            return default_principal(caller);
        };
        match caller.identity().filter(|identity| identity.is_proven()) {
            Some(identity) => format!(
                "{}/{}",
                identity.principal().replace('%', "%25").replace('/', "%2F"),
                rule(caller)
            ),
            None => rule(caller),
        }
    }

    /// Who `caller` is and with which credential: [`Guard::principal_of`], then the
    /// credential the gate named ([`Identity::credential`](crate::Identity::credential)),
    /// when it named one. A legacy HTTP session, a pending dialog (its session), a sealed
    /// `requestState` and a confirmation token belong to it: another credential of the same
    /// person cannot answer, use or replay them.
    pub fn holder_of(&self, caller: &Caller<'_>) -> String {
        let principal = self.principal_of(caller);
        match caller.identity().and_then(crate::Identity::credential) {
            // A NUL appears in no principal (an HTTP header value cannot carry one, and the
            // gate's principals are printable), so the boundary is unambiguous.
            Some(credential) => format!("{principal}\0credential:{credential}"),
            None => principal,
        }
    }

    /// Records what became of a guarded call that `ticket`'s clearance let run: executed,
    /// failed, or outcome unknown (see [`OUTCOME_META_KEY`](crate::OUTCOME_META_KEY)).
    /// `#[guarded]` calls this after the handler's body (through `__private::record_call`).
    pub(crate) fn record_call(
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
        self.ticket_for::<T>(call, &binding_fingerprint(target), route)
    }

    /// The ticket for the target whose binding has `fingerprint`.
    fn ticket_for<T: Target>(
        &self,
        call: &GuardCall,
        fingerprint: &Fingerprint,
        route: Route,
    ) -> Option<AuditTicket> {
        self.inner.audit.as_ref()?;
        let principal = self.principal_of(&Caller::of(&call.context));
        Some(AuditTicket::new(
            &principal,
            &call.tool,
            T::OPERATION,
            fingerprint,
            route,
        ))
    }

    /// Records a step inside a path whose fingerprint is already at hand (the record names the
    /// principal, not the credential: the audit counts people).
    fn note<T: Target>(
        &self,
        call: &GuardCall,
        scope: &SealScope<'_>,
        route: Route,
        outcome: AuditOutcome,
    ) {
        if self.inner.audit.is_some() {
            let ticket = AuditTicket::new(
                &self.principal_of(&Caller::of(&call.context)),
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

    /// Asks about `target`, always. `Ok` only with an approval for exactly this target, as it
    /// reads right before the operation runs.
    ///
    /// `recheck` reads the target again after a yes given in a pushed (2025-11-25) dialog:
    /// `#[guarded]` passes [`Resolve::recheck`]. A hand-written handler passes its own; one whose
    /// shown facts cannot change without a new call passes `|shown| async move { Ok(shown) }`.
    /// See [`Resolve`] ("Read again after a yes").
    pub async fn approve<T, F, Fut>(
        &self,
        call: GuardCall,
        target: T,
        recheck: F,
    ) -> Result<Approved<T>, Interruption>
    where
        T: Target,
        F: FnMut(T) -> Fut,
        Fut: Future<Output = Result<T, InputError>>,
    {
        let cancelled = call.context.ct.clone();
        let mut audited = binding_fingerprint(&target);
        let (route, mut decided) = self.ask_current(&call, target, recheck, &mut audited).await;
        // The client may have cancelled the call while it was being asked about: a cancelled
        // call never runs, whatever the answer was.
        if decided.is_ok() && cancelled.is_cancelled() {
            decided = Err(Interruption::cancelled_call());
        }
        let ticket = self.ticket_for::<T>(&call, &audited, route);
        if let Some(ticket) = &ticket {
            self.record(ticket, decision_outcome(&decided));
        }
        let (target, by) = decided?;
        call.audit.set(ticket);
        Ok(Approved::new(target, by))
    }

    /// Clears a conditional target: exempt when `needs_approval` is false, otherwise asked
    /// about as in [`approve`](Self::approve) (with the same `recheck`).
    pub async fn clear<T, F, Fut>(
        &self,
        call: GuardCall,
        target: T,
        needs_approval: bool,
        recheck: F,
    ) -> Result<Clearance<T>, Interruption>
    where
        T: Conditional,
        F: FnMut(T) -> Fut,
        Fut: Future<Output = Result<T, InputError>>,
    {
        if !needs_approval {
            if call.context.ct.is_cancelled() {
                return Err(Interruption::cancelled_call());
            }
            call.audit.set(self.ticket(&call, &target, Route::Exempt));
            return Ok(Clearance::Exempt(Exempt::new(target)));
        }
        self.approve(call, target, recheck)
            .await
            .map(Clearance::Approved)
    }

    fn scope<'a, T: Target>(&self, approval: &'a Approval, principal: &'a str) -> SealScope<'a> {
        SealScope {
            operation: T::OPERATION,
            fingerprint: &approval.binding,
            shown: &approval.shown,
            principal,
        }
    }

    fn message<T: Target>(target: &T) -> String {
        target.question().render()
    }

    /// The dialog: the target's question and one required `approve` box. Both eras send it.
    /// `changed`: the target changed since it was last shown, and the message says so first.
    fn approval_form<T: Target>(
        target: &T,
        changed: bool,
    ) -> Result<ElicitRequestParams, Interruption> {
        let Some(schema) = approval_schema() else {
            return Err(Interruption::text(
                InterruptionKind::NotAsked,
                "The question could not be built: nothing was changed.".to_owned(),
            ));
        };
        let question = Self::message(target);
        let message = if changed {
            format!("{}\n{question}", recheck::CHANGED_LINE)
        } else {
            question
        };
        Ok(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
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
}
