//! CIBA: the question becomes a server-held [`ApprovalRecord`] (route `ciba`) and the
//! operator's identity provider asks the person about it on their own device. The call
//! answers "pending" with a short code the device shows too; an identical retry polls the
//! provider once, and runs only when a token came back that names exactly this record
//! (checked by the [`Backchannel`]) and the record is spent by this call. Both eras answer the
//! same way: a tool result the client retries (there is no URL for the client to open).

use std::time::Duration;

use rand::Rng as _;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::backchannel::{Backchannel, BackchannelPoll};
use super::page::{STATUS_PENDING, store_failed};
use super::token::{minutes, token_reply};
use super::{Caller, Guard, Interruption, InterruptionKind, now_unix};
use crate::approval::ApprovedBy;
use crate::approval_record::{ApprovalRecord, RecordState};
use crate::audit::{AuditOutcome, Route};
use crate::call::GuardCall;
use crate::target::{Approval, Target};

/// The `route` of a record put on CIBA.
pub(super) const CIBA_ROUTE: &str = "ciba";

/// The key of a pending result's `structuredContent` that holds the code the device shows.
pub const BINDING_CODE_KEY: &str = "binding_code";

/// The letters of a binding code: no 0/O, 1/I/L, so it reads back unambiguously.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// How many letters a binding code has.
const CODE_LEN: usize = 6;

/// What every CIBA text says the route proves.
const PROVES: &str =
    "only the person's own identity provider, approving on their device, lets this call run, once";

impl Guard {
    /// The backchannel, when one is configured.
    pub(super) fn backchannel(&self) -> Option<&dyn Backchannel> {
        self.inner.backchannel.as_deref()
    }

    /// Whether CIBA can ask about the call behind `context`: a backchannel is configured and
    /// the caller has a subject at the identity provider (OAuth mode).
    pub(super) fn ciba_reaches(&self, context: &RequestContext<RoleServer>) -> bool {
        self.backchannel()
            .is_some_and(|backchannel| backchannel.subject(&Caller::of(context)).is_some())
    }

    /// Asks about `target` through the identity provider; `None` when this call's caller has
    /// no subject there (not OAuth mode), so another route must ask.
    pub(super) async fn ciba_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        changed: bool,
    ) -> Option<Result<ApprovedBy, Interruption>> {
        let backchannel = self.backchannel()?;
        let caller = Caller::of(&call.context);
        let subject = backchannel.subject(&caller)?;
        Some(
            self.ciba_ask(call, target, changed, backchannel, &subject)
                .await,
        )
    }

    async fn ciba_ask<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        changed: bool,
        backchannel: &dyn Backchannel,
        subject: &str,
    ) -> Result<ApprovedBy, Interruption> {
        let approval = Approval::of(target);
        let caller = Caller::of(&call.context);
        let principal = self.principal_of(&caller);
        let holder = self.holder_of(&caller);
        let now = now_unix();
        let known = self
            .records_store()
            .find_open(
                &principal,
                T::OPERATION,
                &approval.binding,
                &approval.shown,
                now,
            )
            .await
            .map_err(store_failed)?
            .filter(|r| {
                r.route == CIBA_ROUTE
                    && r.holder == holder
                    && r.is_for(&principal, T::OPERATION, &approval.binding, &approval.shown)
            });
        if let Some(record) = known {
            match record.state {
                RecordState::Approved => {
                    if self.spend_record(&record.id).await? {
                        return Ok(ApprovedBy::Ciba);
                    }
                    return Err(already_used());
                }
                RecordState::Pending => {
                    return self.ciba_poll(call, backchannel, subject, &record).await;
                }
                RecordState::Declined | RecordState::Spent => {}
            }
        }
        // A fresh question: the record first (its fingerprints name it to the provider), then
        // the provider's request, then the record stored with the request it polls.
        let mut record =
            self.pending_record(call, target, &approval, (&principal, &holder), changed)?;
        record.route = CIBA_ROUTE.to_owned();
        let code = binding_code();
        let started = backchannel
            .start(subject, &record, &code)
            .await
            .map_err(|why| {
                tracing::warn!(tool = %call.tool, %why, "the identity provider could not be asked");
                Interruption::text(
                    InterruptionKind::NotAsked,
                    format!(
                        "Nothing was changed: {} could not ask the person's identity provider to approve `{}`: {why}.",
                        self.inner.server, call.tool
                    ),
                )
            })?;
        record.auth_req_id = Some(started.auth_req_id);
        record.binding_code = Some(code);
        record.expires_at = record
            .expires_at
            .min(now_unix().saturating_add(started.expires_in.max(1)));
        self.records_store()
            .create(&record)
            .await
            .map_err(store_failed)?;
        if let Some(ticket) = self.ticket(call, target, Route::Ciba) {
            self.record(&ticket, AuditOutcome::Asked);
        }
        Err(self.ciba_pending(call, &record, false))
    }

    /// Polls the provider once about `record` and acts on its answer.
    async fn ciba_poll(
        &self,
        call: &GuardCall,
        backchannel: &dyn Backchannel,
        subject: &str,
        record: &ApprovalRecord,
    ) -> Result<ApprovedBy, Interruption> {
        let store = self.records_store();
        match backchannel.poll(subject, record).await {
            BackchannelPoll::Pending => Err(self.ciba_pending(call, record, true)),
            BackchannelPoll::Approved => {
                // Decided and spent here, each step atomic in the store: of two retries that
                // both saw the token, one runs.
                let decided = store
                    .decide(&record.id, true, now_unix())
                    .await
                    .map_err(store_failed)?;
                if decided.is_ok() && self.spend_record(&record.id).await? {
                    tracing::info!(tool = %call.tool, "approved through the identity provider");
                    Ok(ApprovedBy::Ciba)
                } else {
                    Err(already_used())
                }
            }
            BackchannelPoll::Declined => {
                self.close(record).await?;
                Err(Interruption::text(
                    InterruptionKind::Declined,
                    "The person declined on their device (through their identity provider): nothing was changed.".to_owned(),
                ))
            }
            BackchannelPoll::Expired => {
                self.close(record).await?;
                Err(Interruption::text(
                    InterruptionKind::TimedOut,
                    format!(
                        "The person did not answer on their device before the request expired: nothing was changed. Calling `{}` again with the same arguments asks them afresh.",
                        call.tool
                    ),
                ))
            }
            BackchannelPoll::Refused(why) => {
                tracing::warn!(tool = %call.tool, %why, "refused the identity provider's answer");
                self.close(record).await?;
                Err(Interruption::text(
                    InterruptionKind::NotAsked,
                    format!(
                        "Nothing was changed: the identity provider's answer was refused ({why}). Calling `{}` again with the same arguments asks the person afresh.",
                        call.tool
                    ),
                ))
            }
        }
    }

    /// Closes `record` (declined), so that the next identical call asks afresh.
    async fn close(&self, record: &ApprovalRecord) -> Result<(), Interruption> {
        self.records_store()
            .decide(&record.id, false, now_unix())
            .await
            .map_err(store_failed)
            .map(drop)
    }

    /// The result that says the question waits on the person's device.
    fn ciba_pending(&self, call: &GuardCall, record: &ApprovalRecord, again: bool) -> Interruption {
        let server = &self.inner.server;
        let tool = &call.tool;
        let code = record.binding_code.as_deref().unwrap_or("");
        let left = record.expires_at.saturating_sub(now_unix());
        let ttl = minutes(Duration::from_secs(left));
        let status = if again {
            "The person has not approved it yet: nothing was changed."
        } else {
            "Nothing was changed yet."
        };
        let text = format!(
            "{status} Pending, code {code}: approve on your device, then call `{tool}` again with exactly the same arguments.\n\nWhat this call would do:\n{question}\n\n{server} asked the person's identity provider to ask them on their own device (their phone), showing the code {code}. Calling again before they approved changes nothing: {PROVES}. The request is open for {ttl}.",
            question = record.question,
        );
        let mut structured = serde_json::Map::new();
        structured.insert(token_reply::STATUS.to_owned(), Value::from(STATUS_PENDING));
        structured.insert(token_reply::TOOL.to_owned(), Value::from(tool.to_string()));
        structured.insert(BINDING_CODE_KEY.to_owned(), Value::from(code));
        structured.insert(
            token_reply::EXPIRES_IN_SECONDS.to_owned(),
            Value::from(left),
        );
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(Value::Object(structured));
        Interruption {
            kind: InterruptionKind::ApprovalPending,
            response: Box::new(result.into()),
            error: None,
        }
    }
}

fn already_used() -> Interruption {
    Interruption::text(
        InterruptionKind::NotAsked,
        "Nothing was changed: this approval was already used. Call again to ask the person afresh."
            .to_owned(),
    )
}

/// A fresh binding code: [`CODE_LEN`] characters (capital letters and digits) of
/// [`CODE_ALPHABET`].
fn binding_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| char::from(CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_codes_are_short_unambiguous_and_fresh() {
        let code = binding_code();
        assert_eq!(code.len(), CODE_LEN);
        assert!(code.bytes().all(|b| CODE_ALPHABET.contains(&b)), "{code}");
        // The provider's binding_message shape: 1-20 of [a-zA-Z0-9-._+/!?#].
        assert!(code.chars().all(|c| c.is_ascii_alphanumeric()));
        assert!((0..20).any(|_| binding_code() != code));
    }
}
