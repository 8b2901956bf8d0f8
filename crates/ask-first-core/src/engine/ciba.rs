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
use super::flights::{CallKey, call_key};
use super::page::{MAX_PENDING_APPROVALS, STATUS_PENDING, answering, store_failed};
use super::token::{minutes, token_reply};
use super::{Caller, Guard, Interruption, InterruptionKind, now_unix};
use crate::approval::ApprovedBy;
use crate::approval_record::{ApprovalRecord, RecordState, RecordStoreError, TooManyPending};
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

/// How long a CIBA record outlives its request, seconds: a retry within it is told that the
/// request expired unanswered before a new one is sent.
const EXPIRY_NOTICE_SECS: u64 = 300;
/// How often, and how many times, a retry reads its record again after the provider said that
/// another poll got the answer.
const READ_AGAIN_EVERY: Duration = Duration::from_millis(200);
const READ_AGAIN_TRIES: usize = 15;

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
        // One request per person and exact call: identical calls take turns, so the ones after
        // the first find its record (and its code) instead of starting requests of their own.
        let key = call_key(&principal, T::OPERATION, &approval);
        let turn = self.inner.flights.calls.take(key.clone()).await;
        let now = now_unix();
        let records: Vec<ApprovalRecord> = self
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
            .into_iter()
            .filter(|r| {
                r.route == CIBA_ROUTE
                    && r.is_for(&principal, T::OPERATION, &approval.binding, &approval.shown)
            })
            .collect();
        let mut expired = None;
        if let Some(record) = answering(records.clone(), CIBA_ROUTE, &holder) {
            match record.state {
                RecordState::Approved => {
                    drop(turn);
                    return self.ciba_spend(call, &key, &record).await;
                }
                RecordState::Declined => {
                    self.close(&record).await?;
                    return Err(declined_on_device(call));
                }
                RecordState::Pending if still_asking(&record, now) => {
                    drop(turn);
                    return self
                        .ciba_poll(call, &key, (backchannel, subject), &record)
                        .await;
                }
                RecordState::Pending => {
                    // Its request expired unanswered: closed, and the person asked afresh,
                    // told that the first one expired.
                    self.close(&record).await?;
                    expired = record.binding_code.clone();
                }
                RecordState::Spent => {}
            }
        }
        let elsewhere = records.iter().find(|r| {
            r.holder != holder && r.state == RecordState::Pending && still_asking(r, now)
        });
        if let Some(other) = elsewhere {
            return Err(self.ciba_elsewhere(call, other));
        }
        if self.is_twin(call, &key).await? {
            // Made before an identical call used the approval, and come after it: its twin,
            // told so, rather than a new question for the person.
            return Err(used_by_twin(call));
        }
        // The record first (its fingerprints name it to the provider), then the provider's
        // request, then the record stored with the request it polls.
        let mut record =
            self.pending_record(call, target, &approval, (&principal, &holder), changed)?;
        record.route = CIBA_ROUTE.to_owned();
        if let Some(old) = &expired {
            // The device shows the question (`authorization_details`): it says so first.
            record.question = format!(
                "Your earlier request about this (code {old}) expired unanswered; this one replaces it.\n{}",
                record.question
            );
        }
        let asked = self
            .ciba_start(call, target, record, (backchannel, subject))
            .await;
        drop(turn);
        let record = asked?;
        Err(self.ciba_pending(call, &record, Pending::Asked { expired }))
    }

    /// Sends the fresh question `record` (pending, not stored yet) to the provider, then
    /// stores it with the request it polls.
    async fn ciba_start<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        mut record: ApprovalRecord,
        (backchannel, subject): (&dyn Backchannel, &str),
    ) -> Result<ApprovalRecord, Interruption> {
        let store = self.records_store();
        // The bound first: a request is never sent for a record that could not be stored.
        let open = store
            .count_pending(&record.principal, now_unix())
            .await
            .map_err(store_failed)?;
        if open >= MAX_PENDING_APPROVALS {
            let full = TooManyPending {
                limit: MAX_PENDING_APPROVALS,
            };
            return Err(self.too_many_pending(call, full));
        }
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
        let request_expires_at = now_unix().saturating_add(started.expires_in.max(1));
        record.auth_req_id = Some(started.auth_req_id);
        record.binding_code = Some(code);
        record.request_expires_at = Some(request_expires_at);
        record.expires_at = request_expires_at.saturating_add(EXPIRY_NOTICE_SECS);
        if let Err(full) = store
            .create(&record, MAX_PENDING_APPROVALS, now_unix())
            .await
            .map_err(store_failed)?
        {
            // Filled meanwhile (another replica): the request sent lets nothing run.
            return Err(self.too_many_pending(call, full));
        }
        if let Some(ticket) = self.ticket(call, target, Route::Ciba) {
            self.record(&ticket, AuditOutcome::Asked);
        }
        Ok(record)
    }

    /// Polls the provider about `record` (one poll shared by the concurrent retries of this
    /// record) and acts on its answer.
    async fn ciba_poll(
        &self,
        call: &GuardCall,
        key: &CallKey,
        (backchannel, subject): (&dyn Backchannel, &str),
        record: &ApprovalRecord,
    ) -> Result<ApprovedBy, Interruption> {
        let polled = self
            .inner
            .flights
            .polls
            .run(record.id, self.poll_and_note(backchannel, subject, record))
            .await
            .map_err(store_failed)?;
        match polled {
            BackchannelPoll::Pending => Err(self.ciba_pending(call, record, Pending::Again)),
            BackchannelPoll::Approved => self.ciba_spend(call, key, record).await,
            BackchannelPoll::Consumed => self.ciba_read_again(call, key, record).await,
            BackchannelPoll::Declined => Err(declined_on_device(call)),
            BackchannelPoll::Expired => Err(Interruption::text(
                InterruptionKind::TimedOut,
                format!(
                    "The person did not answer on their device before the request expired: nothing was changed. Calling `{}` again with the same arguments asks them afresh.",
                    call.tool
                ),
            )),
            BackchannelPoll::Refused(why) => {
                tracing::warn!(tool = %call.tool, %why, "refused the identity provider's answer");
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

    /// One poll, and what the record becomes on its answer, once for every retry that shares
    /// it: approved on a checked token; closed on a decline, an expiry or a refusal; left as
    /// it is while pending, and on a request the provider no longer holds open.
    async fn poll_and_note(
        &self,
        backchannel: &dyn Backchannel,
        subject: &str,
        record: &ApprovalRecord,
    ) -> Result<BackchannelPoll, RecordStoreError> {
        let polled = backchannel.poll(subject, record).await;
        let store = self.records_store();
        match &polled {
            BackchannelPoll::Approved => {
                // Already decided (another replica polled first): the spend tells.
                let _ = store.decide(&record.id, true, now_unix()).await?;
            }
            BackchannelPoll::Declined | BackchannelPoll::Expired | BackchannelPoll::Refused(_) => {
                let now = now_unix();
                let _ = store.decide(&record.id, false, now).await?;
                store.spend_declined(&record.id, now).await?;
            }
            BackchannelPoll::Pending | BackchannelPoll::Consumed => {}
        }
        Ok(polled)
    }

    /// Spends the approved `record` for this call: it runs, or another identical call did.
    async fn ciba_spend(
        &self,
        call: &GuardCall,
        key: &CallKey,
        record: &ApprovalRecord,
    ) -> Result<ApprovedBy, Interruption> {
        if self.spend_record(&record.id).await? {
            self.inner.flights.used(key.clone());
            tracing::info!(tool = %call.tool, "approved through the identity provider");
            return Ok(ApprovedBy::Ciba);
        }
        Err(match self.load_record(&record.id).await?.map(|r| r.state) {
            Some(RecordState::Spent) => used_by_twin(call),
            _ => already_used(),
        })
    }

    /// After the provider said it no longer holds the request open: what the record says,
    /// read again for a while (the poll that got the token decides it, on this replica or
    /// another). The record is never closed on it.
    async fn ciba_read_again(
        &self,
        call: &GuardCall,
        key: &CallKey,
        record: &ApprovalRecord,
    ) -> Result<ApprovedBy, Interruption> {
        for _ in 0..READ_AGAIN_TRIES {
            match self.load_record(&record.id).await?.map(|r| r.state) {
                Some(RecordState::Approved) => return self.ciba_spend(call, key, record).await,
                Some(RecordState::Spent) => return Err(used_by_twin(call)),
                Some(RecordState::Declined) => {
                    self.close(record).await?;
                    return Err(declined_on_device(call));
                }
                None => return Err(already_used()),
                Some(RecordState::Pending) => {}
            }
            tokio::select! {
                () = tokio::time::sleep(READ_AGAIN_EVERY) => {}
                () = call.context.ct.cancelled() => return Err(Interruption::cancelled_call()),
            }
        }
        tracing::info!(tool = %call.tool, "the identity provider no longer holds a request open that is still pending here");
        Err(Interruption::text(
            InterruptionKind::NotAsked,
            format!(
                "Nothing was changed by this call: the person's identity provider has already answered this request to another poll (perhaps an identical call on another replica of {}), which acts on the answer. Calling `{}` again with the same arguments tells where it stands.",
                self.inner.server, call.tool
            ),
        ))
    }

    /// Closes `record` (declined, then spent), so that the next identical call asks afresh.
    async fn close(&self, record: &ApprovalRecord) -> Result<(), Interruption> {
        let store = self.records_store();
        let now = now_unix();
        store
            .decide(&record.id, false, now)
            .await
            .map_err(store_failed)?
            .ok();
        store
            .spend_declined(&record.id, now)
            .await
            .map_err(store_failed)
            .map(drop)
    }

    /// The refusal of a call whose identical request waits on the person's device for another
    /// of their credentials: no second request is sent.
    fn ciba_elsewhere(&self, call: &GuardCall, other: &ApprovalRecord) -> Interruption {
        let code = other.binding_code.as_deref().unwrap_or("");
        let left = other
            .request_expires_at
            .unwrap_or(other.expires_at)
            .saturating_sub(now_unix());
        Interruption::text(
            InterruptionKind::NotAsked,
            format!(
                "Nothing was changed, and no new request was sent: the person's device is already asking them about exactly this call (code {code}), for another of their credentials, and only that credential's call runs on their yes. Make the call with that credential, or call `{}` again after that request was answered or expired (within {}).",
                call.tool,
                minutes(Duration::from_secs(left))
            ),
        )
    }

    /// The result that says the question waits on the person's device.
    fn ciba_pending(
        &self,
        call: &GuardCall,
        record: &ApprovalRecord,
        how: Pending,
    ) -> Interruption {
        let server = &self.inner.server;
        let tool = &call.tool;
        let code = record.binding_code.as_deref().unwrap_or("");
        let left = record
            .request_expires_at
            .unwrap_or(record.expires_at)
            .saturating_sub(now_unix());
        let ttl = minutes(Duration::from_secs(left));
        let status = match how {
            Pending::Again => "The person has not approved it yet: nothing was changed.".to_owned(),
            Pending::Asked { expired: None } => "Nothing was changed yet.".to_owned(),
            Pending::Asked { expired: Some(old) } => format!(
                "The person did not answer the earlier request (code {old}) before it expired: nothing was changed. A new request was sent, and their device says that the earlier one expired."
            ),
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

/// Why a pending result is given.
enum Pending {
    /// A request was just sent; `expired`: the code of the earlier one, which expired
    /// unanswered.
    Asked { expired: Option<String> },
    /// The request waits still.
    Again,
}

/// Whether `record`'s request is still open at the provider at `now`.
fn still_asking(record: &ApprovalRecord, now: u64) -> bool {
    now < record.request_expires_at.unwrap_or(record.expires_at)
}

fn declined_on_device(call: &GuardCall) -> Interruption {
    Interruption::text(
        InterruptionKind::Declined,
        format!(
            "The person declined on their device (through their identity provider): nothing was changed. Calling `{}` again asks them afresh.",
            call.tool
        ),
    )
}

/// What a call gets whose identical twin, made at the same time, used the approval.
pub(super) fn used_by_twin(call: &GuardCall) -> Interruption {
    Interruption::text(
        InterruptionKind::NotAsked,
        format!(
            "Nothing more was changed: the person's approval was used by an identical call made at the same time, which runs it, once. Do not call `{}` again unless the person wants it done again: calling again asks them afresh.",
            call.tool
        ),
    )
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
