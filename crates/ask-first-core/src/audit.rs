//! The audit hook: one [`AuditEvent`] per guard decision and per executed or failed guarded
//! call, handed to the server's [`AuditSink`].
//!
//! An event says who (a hash of the principal), what (tool, operation, a prefix of the
//! target's fingerprint), how (the [`Route`]) and what came of it (the [`AuditOutcome`]). It
//! never carries content, titles, filenames, questions, answers or seals: the guard fills it
//! from what it already hashes, so a sink cannot leak what it was never given.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::ErrorData;
use rmcp::model::CallToolResponse;
use sha2::{Digest, Sha256};

use crate::target::Fingerprint;

/// The `_meta` key a guarded handler may set on its error result to say what became of the
/// operation when the error alone does not (`"unknown"`: the request was sent but no answer
/// says whether it took effect; `"executed"`: it took effect, only reading the result back
/// failed). Without it an error result counts as [`AuditOutcome::Failed`].
pub const OUTCOME_META_KEY: &str = "ask-first/outcome";

/// How the call was cleared, or tried to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Route {
    /// A dialog pushed to the client on its session (2025-11-25 `elicitation/create`).
    Dialog,
    /// An `input_required` result with a sealed `requestState` (2026-07-28).
    InputRequired,
    /// The two-call confirmation token (no dialog possible).
    Token,
    /// No one needed to be asked (a conditional target whose condition did not hold).
    Exempt,
    /// The approval page: a server-held record the person decides with their passkey.
    Page,
    /// CIBA: the person's identity provider asks them on their device.
    Ciba,
}

impl Route {
    /// The route's name in the audit log: `dialog`, `input_required`, `token`, `exempt`, `page`,
    /// `ciba`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dialog => "dialog",
            Self::InputRequired => "input_required",
            Self::Token => "token",
            Self::Exempt => "exempt",
            Self::Page => "page",
            Self::Ciba => "ciba",
        }
    }
}

/// What one guard decision or one guarded call came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuditOutcome {
    /// A question was put: a dialog pushed, an `input_required` returned, a token issued.
    Asked,
    /// The answer approves the operation (a ticked dialog, or a fresh token).
    Approved,
    /// The person declined, or accepted without ticking the box.
    Declined,
    /// The person cancelled the dialog.
    Cancelled,
    /// A dialog got no answer in time, or a state or token came back after its expiry.
    Expired,
    /// A state or token that was already spent (here or on another replica) came back.
    ReplayRefused,
    /// A state or token that does not open for this call came back (altered, another
    /// caller's, or for other arguments).
    Refused,
    /// The spent-nonce store could not be asked, so the answer was refused (fail closed).
    StoreUnavailable,
    /// The question could not be put to the client.
    NotAsked,
    /// The approved (or exempt) operation ran and succeeded.
    Executed,
    /// The approved (or exempt) operation ran and failed.
    Failed,
    /// The approved (or exempt) operation was attempted and it is not known whether it took
    /// effect.
    OutcomeUnknown,
}

impl AuditOutcome {
    /// The outcome's name in the audit log, e.g. `replay_refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Asked => "asked",
            Self::Approved => "approved",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
            Self::ReplayRefused => "replay_refused",
            Self::Refused => "refused",
            Self::StoreUnavailable => "store_unavailable",
            Self::NotAsked => "not_asked",
            Self::Executed => "executed",
            Self::Failed => "failed",
            Self::OutcomeUnknown => "outcome_unknown",
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// When it happened.
    pub time: SystemTime,
    /// A hash of who called (never the bearer secret or its unsalted hash): 16 hex digits.
    pub principal: String,
    /// The tool's name.
    pub tool: String,
    /// The operation ([`Target::OPERATION`](crate::Target::OPERATION)).
    pub operation: &'static str,
    /// The first 16 hex digits of the target's fingerprint: the same call gives the same
    /// value, so a question, its answer and the call it cleared can be matched up.
    pub target: String,
    /// How the call was cleared, or tried to be.
    pub route: Route,
    /// What came of it.
    pub outcome: AuditOutcome,
}

/// Receives the guard's audit events. Called inline, so keep it quick (append a line); it must
/// not fail the call, so it reports its own trouble itself.
pub trait AuditSink: Send + Sync + 'static {
    /// Records one event.
    fn record(&self, event: &AuditEvent);
}

/// Who, what and how, kept with an approval or exemption so that the call it clears can be
/// recorded too. Made only by the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditTicket {
    pub(crate) principal: String,
    pub(crate) tool: String,
    pub(crate) operation: &'static str,
    pub(crate) target: String,
    pub(crate) route: Route,
}

impl AuditTicket {
    pub(crate) fn new(
        principal: &str,
        tool: &str,
        operation: &'static str,
        fingerprint: &Fingerprint,
        route: Route,
    ) -> Self {
        Self {
            principal: hash_principal(principal),
            tool: tool.to_owned(),
            operation,
            target: fingerprint.to_string()[..16].to_owned(),
            route,
        }
    }

    pub(crate) fn event(&self, outcome: AuditOutcome) -> AuditEvent {
        AuditEvent {
            time: SystemTime::now(),
            principal: self.principal.clone(),
            tool: self.tool.clone(),
            operation: self.operation,
            target: self.target.clone(),
            route: self.route,
            outcome,
        }
    }

    /// The route the ticket's call was cleared by.
    pub fn route(&self) -> Route {
        self.route
    }
}

/// Where the guard leaves the ticket of the call it cleared, for `#[guarded]` to record the
/// call's outcome after the handler ran. Shared by a [`GuardCall`](crate::GuardCall) and its
/// clones of the slot; empty without an audit sink, or until the call is cleared.
#[derive(Debug, Clone, Default)]
pub struct AuditSlot(Arc<Mutex<Option<AuditTicket>>>);

impl AuditSlot {
    pub(crate) fn set(&self, ticket: Option<AuditTicket>) {
        match self.0.lock() {
            Ok(mut slot) => *slot = ticket,
            Err(poisoned) => *poisoned.into_inner() = ticket,
        }
    }

    /// The ticket, if the call was cleared with an audit sink present.
    pub fn take(&self) -> Option<AuditTicket> {
        match self.0.lock() {
            Ok(mut slot) => slot.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }
}

/// A salted hash of the principal, so the log can tell callers apart without naming them.
fn hash_principal(principal: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"ask-first audit principal\0")
        .chain_update(principal.as_bytes())
        .finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// What a guarded handler's response says about its operation.
pub fn outcome_of(response: &Result<CallToolResponse, ErrorData>) -> AuditOutcome {
    let Ok(CallToolResponse::Complete(result)) = response else {
        return match response {
            Ok(_) => AuditOutcome::Executed,
            Err(_) => AuditOutcome::Failed,
        };
    };
    if result.is_error != Some(true) {
        return AuditOutcome::Executed;
    }
    let said = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(OUTCOME_META_KEY))
        .and_then(|value| value.as_str());
    match said {
        Some("unknown") => AuditOutcome::OutcomeUnknown,
        Some("executed") => AuditOutcome::Executed,
        _ => AuditOutcome::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock, MetaObject};

    #[test]
    fn names_are_the_logs_words() {
        assert_eq!(AuditOutcome::ReplayRefused.as_str(), "replay_refused");
        assert_eq!(AuditOutcome::OutcomeUnknown.as_str(), "outcome_unknown");
        assert_eq!(Route::InputRequired.as_str(), "input_required");
    }

    #[test]
    fn principals_are_hashed_and_told_apart() {
        let a = hash_principal("bearer:0123");
        assert_eq!(a.len(), 16);
        assert!(!a.contains("0123"));
        assert_ne!(a, hash_principal("local"));
        assert_eq!(a, hash_principal("bearer:0123"));
    }

    #[test]
    fn a_response_tells_executed_failed_and_unknown_apart() {
        let ok: Result<CallToolResponse, ErrorData> =
            Ok(CallToolResult::success(vec![ContentBlock::text("x")]).into());
        assert_eq!(outcome_of(&ok), AuditOutcome::Executed);
        let failed: Result<CallToolResponse, ErrorData> =
            Ok(CallToolResult::error(vec![ContentBlock::text("x")]).into());
        assert_eq!(outcome_of(&failed), AuditOutcome::Failed);
        let mut unknown = CallToolResult::error(vec![ContentBlock::text("x")]);
        let mut meta = MetaObject::default();
        meta.0.insert(OUTCOME_META_KEY.to_owned(), "unknown".into());
        unknown.meta = Some(meta);
        assert_eq!(
            outcome_of(&Ok(unknown.into())),
            AuditOutcome::OutcomeUnknown
        );
        let error: Result<CallToolResponse, ErrorData> = Err(ErrorData::internal_error("x", None));
        assert_eq!(outcome_of(&error), AuditOutcome::Failed);
    }
}
