//! 2026-07-28: `tools/call` returns `input_required` with a sealed, single-use
//! `requestState`; the retry carries the person's answer and the state, opened here.

use rmcp::model::{
    CallToolResult, ContentBlock, ElicitRequest, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult,
};

use super::{
    AlteredState, Caller, Guard, Interruption, InterruptionKind, now_unix, read_answer,
    refusal_outcome,
};
use crate::approval::ApprovedBy;
use crate::audit::{AuditOutcome, Route};
use crate::call::GuardCall;
use crate::seal::{self, SealKind};
use crate::target::{Approval, Target};

impl Guard {
    /// 2026-07-28: return `input_required` with a sealed `requestState`; open it on the retry.
    /// A state issued for what the target showed before it changed asks again, saying so.
    pub(super) async fn input_required_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
    ) -> Result<ApprovedBy, Interruption> {
        let approval = Approval::of(target);
        let holder = self.holder_of(&Caller::of(&call.context));
        let scope = self.scope::<T>(&approval, &holder);
        let now = now_unix();
        let mut round = 0u8;
        let mut changed = false;
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
                // A state for what the target showed before it changed is genuine: it is
                // asked about again with the new facts, whatever the altered-state setting.
                Err(reason)
                    if self.inner.altered_state == AlteredState::JsonRpcError
                        && reason != seal::SealError::TargetChanged =>
                {
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
                    // Genuine, for another binding or other shown facts: what the person
                    // is asked now differs from what they answered, and the question says so.
                    changed = matches!(
                        reason,
                        seal::SealError::TargetChanged | seal::SealError::OtherTarget
                    );
                }
            }
        }
        let form = Self::approval_form(target, changed)?;
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
}
