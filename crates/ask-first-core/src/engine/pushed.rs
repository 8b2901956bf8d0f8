//! 2025-11-25: the guard pushes `elicitation/create` to the client and waits, bounded, for
//! the person's answer; a client that cannot show the dialog gets the token path.

use rmcp::service::ServiceError;

use super::token::{NoDialog, minutes};
use super::{Guard, Interruption, InterruptionKind, read_answer};
use crate::approval::ApprovedBy;
use crate::audit::{AuditOutcome, Route};
use crate::call::GuardCall;
use crate::dialog::Pushed;
use crate::target::Target;

/// When a pushed `elicitation/create` failed because the client cannot show a dialog at all
/// (rather than because the person answered, or the dialog broke midway), says how; the call
/// then takes the two-call token path (or, for a tool that requires a person, is refused). Gateways such as proxies declare elicitation upstream
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

impl Guard {
    /// 2025-11-25: push `elicitation/create` and wait, bounded. `changed`: the target changed
    /// since it was last shown, and the dialog says so.
    pub(super) async fn push_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        changed: bool,
    ) -> Result<ApprovedBy, Interruption> {
        let params = Self::approval_form(target, changed)?;
        if let Some(ticket) = self.ticket(call, target, Route::Dialog) {
            self.record(&ticket, AuditOutcome::Asked);
        }
        let timeout = self.inner.dialog_timeout;
        match crate::dialog::push(&call.context, params, timeout).await {
            Pushed::Answered(result) => {
                self.outcome(read_answer(&result.action, result.content.as_ref()))
            }
            Pushed::CallCancelled => Err(Interruption::cancelled_call()),
            Pushed::Refused(refusal) => {
                Err(Interruption::text(InterruptionKind::NotAsked, refusal))
            }
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
                self.no_dialog(call, target, NoDialog::DialogFailed(how))
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
}
