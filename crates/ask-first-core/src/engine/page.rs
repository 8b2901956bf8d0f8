//! The approval page: the question becomes a server-held [`ApprovalRecord`] and the person
//! decides it on a page that needs their passkey. Only the record approves.
//!
//! - 2025-11-25, a client that declares URL elicitation on a session: a pushed
//!   `elicitation/create` with mode `url`; the call waits, bounded, for the record to be
//!   decided (the client's `accept` only means the person agreed to open the link), then
//!   `notifications/elicitation/complete`, and the call runs on an approved record. Past the
//!   wait ([`GuardBuilder::approval_wait`](super::GuardBuilder::approval_wait)) it answers
//!   with the link, the record still pending; an identical retry picks the record up.
//! - 2026-07-28, a request that declares URL elicitation: `input_required` with the URL
//!   request and a sealed `requestState` naming the record; a retry runs once the record is
//!   approved, and asks again while it is pending.
//! - any other client: the result carries the link; an identical retry runs only once the
//!   record is approved, never because it was repeated.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, ContentBlock, CustomNotification, ElicitRequest, ElicitRequestParams,
    ElicitationAction, InputRequest, InputRequests, InputRequiredResult, ServerNotification,
};
use serde_json::Value;

use super::flights::call_key;
use super::token::{minutes, token_reply};
use super::{Caller, Guard, Interruption, InterruptionKind, now_unix};
use crate::approval::ApprovedBy;
use crate::approval_record::{
    ApprovalPages, ApprovalRecord, RecordId, RecordState, TooManyPending,
};
use crate::audit::{AuditOutcome, Route};
use crate::call::GuardCall;
use crate::dialog::Pushed;
use crate::page_proof::PageProof;
use crate::seal::{self, SealKind, SealScope};
use crate::target::{Approval, Target};

/// The notification that tells a client a URL elicitation it opened has been completed.
pub const ELICITATION_COMPLETE_METHOD: &str = "notifications/elicitation/complete";

/// What the result of a call waiting on the page says, under `structuredContent.status`.
pub(super) const STATUS_PENDING: &str = "approval_pending";

/// The `route` of a record put on the page.
const PAGE_ROUTE: &str = "page";

/// The most questions one principal may have waiting for an answer at once, on the page and
/// through CIBA together: past it, a call that would ask another is refused, saying so, until
/// the person answers or the open ones expire. Each is a record in the store (a file under the
/// state directory, a Redis key) for its lifetime, so a model alone cannot fill the store.
pub const MAX_PENDING_APPROVALS: usize = 20;

/// How a client can be shown the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PageVia {
    /// 2025-11-25: a pushed URL elicitation on the session.
    Pushed,
    /// 2026-07-28: `input_required` with the URL request.
    InputRequired,
    /// The link in the tool's result; an identical retry is answered from the record.
    Link,
}

impl Guard {
    /// The page, when one is configured and `principal` can approve there (a passkey enrolled
    /// for them, or a login).
    pub(super) fn page_for(&self, principal: &str) -> Option<&dyn ApprovalPages> {
        self.inner
            .pages
            .as_deref()
            .filter(|pages| pages.ready_for(principal))
    }

    /// What approving on the approval page takes (a passkey, a sign-in at the identity
    /// provider, or either; a passkey without a page), for texts that describe the page route
    /// ([`RoutePlan::sentence`](super::RoutePlan::sentence)).
    pub fn page_proof(&self) -> PageProof {
        self.inner
            .pages
            .as_deref()
            .map_or(PageProof::Passkey, |pages| pages.proof())
    }

    /// Asks about `target` on the approval page, shown `via`.
    pub(super) async fn page_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        via: PageVia,
        changed: bool,
    ) -> Result<ApprovedBy, Interruption> {
        let approval = Approval::of(target);
        // The record is approved by the principal's passkeys, and answers only the credential
        // that asked: its sealed state is scoped to, and its lookup filtered by, the holder.
        let caller = Caller::of(&call.context);
        let principal = self.principal_of(&caller);
        let holder = self.holder_of(&caller);
        let scope = self.scope::<T>(&approval, &holder);
        let now = now_unix();
        let mut changed = changed;
        // Identical link-route calls take turns, so concurrent ones find the record the first
        // one made instead of each making one; `used`: the call they share.
        let mut turn = None;
        let mut used = None;
        // A retry answered from a record: the state that names it, or (no state) the record
        // about exactly this call that answers it (an approved one first).
        let known = match via {
            PageVia::InputRequired => match call.request_state.as_deref() {
                Some(state) => {
                    match seal::open(&self.inner.key, SealKind::PageRecord, &scope, state, now) {
                        Ok(opened) => {
                            self.load_record(&RecordId::from_bytes(opened.nonce))
                                .await?
                        }
                        Err(reason) => {
                            changed |= matches!(
                                reason,
                                seal::SealError::TargetChanged | seal::SealError::OtherTarget
                            );
                            None
                        }
                    }
                }
                None => None,
            },
            PageVia::Link | PageVia::Pushed => {
                if via == PageVia::Link {
                    let key = call_key(&principal, T::OPERATION, &approval);
                    turn = Some(self.inner.flights.calls.take(key.clone()).await);
                    used = Some(key);
                }
                let open = self
                    .records_store()
                    .find_open(
                        &principal,
                        T::OPERATION,
                        &approval.binding,
                        &approval.shown,
                        now,
                    )
                    .await
                    .map_err(store_failed)?;
                answering(open, PAGE_ROUTE, &holder)
            }
        };
        let known = known.filter(|r| {
            r.route == PAGE_ROUTE
                && r.holder == holder
                && r.is_for(&principal, T::OPERATION, &approval.binding, &approval.shown)
        });
        if let Some(record) = &known {
            match record.state {
                RecordState::Approved => {
                    if self.spend_record(&record.id).await? {
                        if let Some(key) = used {
                            self.inner.flights.used(key);
                        }
                        return Ok(ApprovedBy::Page);
                    }
                }
                RecordState::Declined => return Err(self.declined_on_page(call, record).await),
                RecordState::Pending if via == PageVia::Pushed => {
                    return self.push_and_wait(call, &scope, record).await;
                }
                RecordState::Pending => {
                    return Err(self.show(call, &scope, record, via, true).await);
                }
                RecordState::Spent => {}
            }
        }
        let twin = match &used {
            Some(key) => self.is_twin(call, key).await?,
            None => false,
        };
        if twin {
            // Made before an identical call used the approval, and come after it: its twin.
            return Err(super::ciba::used_by_twin(call));
        }
        let record = self
            .new_record(call, target, &approval, (&principal, &holder), changed)
            .await?;
        if let Some(ticket) = self.ticket(call, target, Route::Page) {
            self.record(&ticket, AuditOutcome::Asked);
        }
        if via != PageVia::Pushed {
            let shown = self.show(call, &scope, &record, via, false).await;
            drop(turn);
            return Err(shown);
        }
        self.push_and_wait(call, &scope, &record).await
    }

    /// The record store (in memory unless the builder was given one).
    pub(super) fn records_store(&self) -> &dyn crate::approval_record::ApprovalStore {
        self.inner.records.as_ref()
    }

    pub(super) async fn load_record(
        &self,
        id: &RecordId,
    ) -> Result<Option<ApprovalRecord>, Interruption> {
        self.records_store()
            .get(id, now_unix())
            .await
            .map_err(store_failed)
    }

    pub(super) async fn spend_record(&self, id: &RecordId) -> Result<bool, Interruption> {
        self.records_store()
            .spend(id, now_unix())
            .await
            .map_err(store_failed)
    }

    /// A fresh pending record for `target`, stored.
    async fn new_record<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        approval: &Approval,
        who: (&str, &str),
        changed: bool,
    ) -> Result<ApprovalRecord, Interruption> {
        let record = self.pending_record(call, target, approval, who, changed)?;
        self.records_store()
            .create(&record, MAX_PENDING_APPROVALS, now_unix())
            .await
            .map_err(store_failed)?
            .map_err(|full| self.too_many_pending(call, full))?;
        Ok(record)
    }

    /// What a call gets when its principal has [`MAX_PENDING_APPROVALS`] questions open.
    pub(super) fn too_many_pending(&self, call: &GuardCall, full: TooManyPending) -> Interruption {
        tracing::warn!(tool = %call.tool, limit = full.limit, "refused to ask: too many questions are waiting for this person");
        Interruption::text(
            InterruptionKind::NotAsked,
            format!(
                "Nothing was changed, and the person was not asked: {} questions are waiting for their answer already, the most {} keeps open for one person. Ask them to answer (approve or decline) the open ones, or wait until those expire (a question expires {} after it was asked); then call `{}` again.",
                full.limit,
                self.inner.server,
                minutes(self.inner.state_ttl),
                call.tool
            ),
        )
    }

    /// What a retry gets for a record the person declined on the page: the decline, said
    /// once (the record is spent; calling again asks afresh).
    async fn declined_on_page(&self, call: &GuardCall, record: &ApprovalRecord) -> Interruption {
        if let Err(error) = self
            .records_store()
            .spend_declined(&record.id, now_unix())
            .await
        {
            tracing::warn!(%error, "a told decline could not be marked; it may be told again");
        }
        Interruption::text(
            InterruptionKind::Declined,
            format!(
                "The person declined on the approval page: nothing was changed. Calling `{}` again asks them afresh.",
                call.tool
            ),
        )
    }
    /// A fresh pending record for `target`, not stored yet.
    pub(super) fn pending_record<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        approval: &Approval,
        (principal, holder): (&str, &str),
        changed: bool,
    ) -> Result<ApprovalRecord, Interruption> {
        // The form dialog's own message: the page shows the question byte for byte as a
        // dialog would.
        let question = match Self::approval_form(target, changed)? {
            ElicitRequestParams::FormElicitationParams { message, .. }
            | ElicitRequestParams::UrlElicitationParams { message, .. } => message,
            _ => Self::message(target),
        };
        let expires_at = now_unix().saturating_add(self.inner.state_ttl.as_secs());
        let mut record = ApprovalRecord::pending(
            principal,
            holder,
            &call.tool,
            T::OPERATION,
            &approval.binding,
            &approval.shown,
            question,
            expires_at,
        );
        record.evidence = target.evidence();
        Ok(record)
    }

    async fn url(&self, record: &ApprovalRecord) -> Result<String, Interruption> {
        let Some(pages) = self.inner.pages.as_deref() else {
            return Err(Interruption::text(
                InterruptionKind::NotAsked,
                "Nothing was changed: this server has no approval page.".to_owned(),
            ));
        };
        pages.url(&record.id).await.map_err(|why| {
            tracing::warn!(%why, "the approval page cannot be opened");
            Interruption::text(
                InterruptionKind::NotAsked,
                format!("Nothing was changed: the approval page cannot be opened: {why}."),
            )
        })
    }

    /// The interruption that shows `record`'s page: `input_required` with the URL request,
    /// or the link in the result. `again`: the person has not decided yet.
    async fn show(
        &self,
        call: &GuardCall,
        scope: &SealScope<'_>,
        record: &ApprovalRecord,
        via: PageVia,
        again: bool,
    ) -> Interruption {
        let url = match self.url(record).await {
            Ok(url) => url,
            Err(interruption) => return interruption,
        };
        let message = page_message(&self.inner.server, record, self.page_proof());
        if via == PageVia::InputRequired {
            let state = seal::seal_nonce(
                &self.inner.key,
                SealKind::PageRecord,
                scope,
                0,
                record.expires_at,
                *record.id.as_bytes(),
            );
            let request = InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message,
                    url,
                    elicitation_id: record.id.to_string(),
                },
            ));
            let mut requests = InputRequests::new();
            requests.insert(self.inner.input_key.clone(), request);
            return Interruption {
                kind: InterruptionKind::InputRequired,
                response: Box::new(InputRequiredResult::new(Some(requests), Some(state)).into()),
                error: None,
            };
        }
        let server = &self.inner.server;
        let tool = &call.tool;
        let ttl = minutes(Duration::from_secs(
            record.expires_at.saturating_sub(now_unix()),
        ));
        let status = if again {
            "The person has not approved it yet: nothing was changed."
        } else {
            "Nothing was changed yet."
        };
        let text = format!(
            "{status}\n\nWhat this call would do:\n{question}{evidence}\n\n{server} asks the person to approve this on a page that needs {proof}. Ask the person to open this link and approve; then call `{tool}` again with exactly the same arguments:\n{url}\n\nOpening the link approves nothing, and calling again before the person approved changes nothing: only the person's yes on that page lets this call run, once. The link is valid for {ttl}.",
            question = record.question,
            evidence = evidence_text(record),
            proof = self.page_proof().theirs(),
        );
        let mut structured = serde_json::Map::new();
        structured.insert(token_reply::STATUS.to_owned(), Value::from(STATUS_PENDING));
        structured.insert(token_reply::TOOL.to_owned(), Value::from(tool.to_string()));
        structured.insert(APPROVAL_URL_KEY.to_owned(), Value::from(url));
        structured.insert(
            token_reply::EXPIRES_IN_SECONDS.to_owned(),
            Value::from(record.expires_at.saturating_sub(now_unix())),
        );
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(Value::Object(structured));
        Interruption {
            kind: InterruptionKind::ApprovalPending,
            response: Box::new(result.into()),
            error: None,
        }
    }

    /// 2025-11-25: push the URL elicitation, then wait for the record to be decided.
    async fn push_and_wait(
        &self,
        call: &GuardCall,
        scope: &SealScope<'_>,
        record: &ApprovalRecord,
    ) -> Result<ApprovedBy, Interruption> {
        let url = self.url(record).await?;
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: page_message(&self.inner.server, record, self.page_proof()),
            url,
            elicitation_id: record.id.to_string(),
        };
        // The whole call, the push included, answers within the wait.
        let timeout = self.inner.approval_wait;
        let deadline = tokio::time::Instant::now() + timeout;
        match crate::dialog::push(&call.context, params, timeout).await {
            Pushed::Answered(result) => match result.action {
                ElicitationAction::Accept => {}
                ElicitationAction::Decline => {
                    return Err(Interruption::text(
                        InterruptionKind::Declined,
                        "The person at the client declined to open the approval page: nothing was changed.".to_owned(),
                    ));
                }
                _ => {
                    return Err(Interruption::text(
                        InterruptionKind::Cancelled,
                        "The approval page was dismissed at the client: nothing was changed."
                            .to_owned(),
                    ));
                }
            },
            Pushed::CallCancelled => return Err(Interruption::cancelled_call()),
            Pushed::Refused(refusal) => {
                return Err(Interruption::text(InterruptionKind::NotAsked, refusal));
            }
            Pushed::Failed(error) => {
                tracing::info!(%error, tool = %call.tool, "the URL elicitation failed; giving the link in the result");
                return Err(self.show(call, scope, record, PageVia::Link, false).await);
            }
        }
        // The client's accept says only that the person was offered the page: the record
        // decides.
        let state = loop {
            let state = self.load_record(&record.id).await?.map(|r| r.state);
            if !matches!(state, Some(RecordState::Pending)) {
                break state;
            }
            let changed = async {
                match self.inner.pages.as_deref() {
                    Some(pages) => pages.changed(&record.id).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = changed => {}
                () = call.context.ct.cancelled() => return Err(Interruption::cancelled_call()),
                // Answered before the client's own timeout ends the call: the link, and
                // "not approved yet"; the record stays pending for a retry.
                () = tokio::time::sleep_until(deadline) => {
                    return Err(self.show(call, scope, record, PageVia::Link, true).await);
                }
            }
        };
        let complete = CustomNotification::new(
            ELICITATION_COMPLETE_METHOD,
            Some(serde_json::json!({ "elicitationId": record.id.to_string() })),
        );
        if let Err(error) = call
            .context
            .peer
            .send_notification(ServerNotification::CustomNotification(complete))
            .await
        {
            tracing::info!(%error, "could not tell the client the approval page is done");
        }
        match state {
            Some(RecordState::Approved) if self.spend_record(&record.id).await? => {
                Ok(ApprovedBy::Page)
            }
            Some(RecordState::Declined) => Err(self.declined_on_page(call, record).await),
            _ => Err(Interruption::text(
                InterruptionKind::NotAsked,
                "Nothing was changed: the approval expired or was already used.".to_owned(),
            )),
        }
    }
}

/// The key of a pending result's `structuredContent` that holds the page's URL.
pub const APPROVAL_URL_KEY: &str = "approval_url";

/// The message a URL elicitation carries: what the page is for, the question, then the
/// evidence the page shows below it, by name and digest.
fn page_message(server: &str, record: &ApprovalRecord, proof: PageProof) -> String {
    format!(
        "{server} asks you to approve this on its approval page, with {}:\n{}{}",
        proof.yours(),
        record.question,
        evidence_text(record),
    )
}

/// The evidence the page shows below the question, by name, size and digest (never an
/// excerpt), after a blank line and a sentence saying whose text it is; empty without
/// evidence. The names stay framed and escaped, as in a question.
fn evidence_text(record: &ApprovalRecord) -> String {
    if record.evidence.is_empty() {
        return String::new();
    }
    format!(
        "\n\nThe page shows below it what exactly changes, supplied by the caller and not written by the server; the same names and digests must appear there:\n{}",
        record.evidence.summary()
    )
}

/// Of the records about exactly one call, the one that answers `holder`'s retry on `route`:
/// an approved one first (a yes is never hidden by a newer question), then a declined one (a
/// no is said once), then the newest pending one.
pub(super) fn answering(
    records: Vec<ApprovalRecord>,
    route: &str,
    holder: &str,
) -> Option<ApprovalRecord> {
    let rank = |state: RecordState| match state {
        RecordState::Approved => 3,
        RecordState::Declined => 2,
        RecordState::Pending => 1,
        RecordState::Spent => 0,
    };
    records
        .into_iter()
        .filter(|r| r.route == route && r.holder == holder && r.state != RecordState::Spent)
        .max_by_key(|r| (rank(r.state), r.expires_at))
}

pub(super) fn store_failed(error: crate::approval_record::RecordStoreError) -> Interruption {
    tracing::warn!(%error, "approval record store failed; refusing");
    Interruption::text(
        InterruptionKind::StoreFailed,
        format!(
            "Nothing was changed: the approval could not be checked, because {error}. Once the store answers again, repeat the call."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Evidence, EvidenceItem};
    use crate::target::Fingerprint;

    crate::wording!(struct Q = "q";);

    fn record(holder: &str, route: &str, state: RecordState, expires_at: u64) -> ApprovalRecord {
        let fp = Fingerprint::of_question(&crate::question::Question::new::<Q>([]));
        let mut record =
            ApprovalRecord::pending("p", holder, "t", "op", &fp, &fp, "Q".into(), expires_at);
        record.route = route.to_owned();
        record.state = state;
        record
    }

    #[test]
    fn a_retry_is_answered_from_its_own_yes_first_then_its_no_then_its_newest_question() {
        let approved = record("laptop", PAGE_ROUTE, RecordState::Approved, 100);
        let declined = record("laptop", PAGE_ROUTE, RecordState::Declined, 150);
        let older = record("laptop", PAGE_ROUTE, RecordState::Pending, 120);
        let newer = record("laptop", PAGE_ROUTE, RecordState::Pending, 200);
        // The same person's other credential asked later: its question is its own.
        let phone = record("phone", PAGE_ROUTE, RecordState::Pending, 300);
        let ciba = record("laptop", "ciba", RecordState::Approved, 400);
        let spent = record("laptop", PAGE_ROUTE, RecordState::Spent, 500);
        let all = vec![
            phone.clone(),
            newer.clone(),
            older.clone(),
            declined.clone(),
            approved.clone(),
            ciba,
            spent,
        ];
        let pick = |records: &[ApprovalRecord], holder: &str| {
            answering(records.to_vec(), PAGE_ROUTE, holder).map(|r| r.id)
        };
        assert_eq!(pick(&all, "laptop"), Some(approved.id), "the yes first");
        let no_yes: Vec<_> = all
            .iter()
            .filter(|r| r.id != approved.id)
            .cloned()
            .collect();
        assert_eq!(pick(&no_yes, "laptop"), Some(declined.id), "then the no");
        let questions: Vec<_> = no_yes
            .iter()
            .filter(|r| r.id != declined.id)
            .cloned()
            .collect();
        assert_eq!(
            pick(&questions, "laptop"),
            Some(newer.id),
            "then the newest"
        );
        assert_eq!(pick(&all, "phone"), Some(phone.id));
        assert_eq!(pick(&all, "tablet"), None);
    }

    crate::wording!(struct Ask = "This will delete 1 file(s) (10 bytes).";);

    fn evidence_record(evidence: Evidence) -> ApprovalRecord {
        let fp = Fingerprint::of_question(&crate::question::Question::new::<Ask>([]));
        let mut record = ApprovalRecord::pending(
            "local",
            "local",
            "delete",
            "op",
            &fp,
            &fp,
            "This will delete 1 file(s) (10 bytes).".into(),
            9,
        );
        record.evidence = evidence;
        record
    }

    #[test]
    fn the_url_elicitation_names_the_evidence_by_name_and_digest() {
        let gone = |name: &str| {
            Evidence::new().group(
                "Files deleted",
                [EvidenceItem::readable(name, b"0123456789")],
            )
        };
        let scratch = page_message(
            "og",
            &evidence_record(gone("scratch.txt")),
            PageProof::Passkey,
        );
        let keep = page_message("og", &evidence_record(gone("keep.txt")), PageProof::Passkey);
        assert_ne!(scratch, keep);
        assert!(
            scratch.contains("not written by the server; the same names and digests must appear there:\nFiles deleted:\n- «scratch.txt»: 10 bytes, SHA-256 "),
            "{scratch}"
        );
        // Never an excerpt: content stays on the page.
        assert!(!scratch.contains("0123456789"), "{scratch}");
        // Positive control: without evidence the message is the question alone, as before.
        let bare = page_message("og", &evidence_record(Evidence::new()), PageProof::Passkey);
        assert!(
            bare.ends_with(":\nThis will delete 1 file(s) (10 bytes)."),
            "{bare}"
        );
    }
}
