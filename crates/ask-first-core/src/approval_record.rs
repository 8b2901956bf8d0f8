//! The approval record: the server-held side of a question the guard put on the approval page.
//!
//! A record holds who asked (the principal, and the credential when the identity carries one),
//! what was asked about (the target's binding and question fingerprints, the rendered
//! question), the route, its expiry and its state. Only the record approves: a client's
//! `accept` on a URL elicitation, a hook or a repeated call reads the record and finds it
//! pending. The page decides it once (pending → approved or declined) and the guard spends an
//! approved record once (approved → spent), in the same store, so one yes runs one call.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use rand::RngCore;

use crate::evidence::Evidence;
use crate::target::Fingerprint;

/// The unguessable name of one record: 16 random bytes, written as 22 base64url characters.
/// It is the only thing an approval page's URL carries.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordId([u8; 16]);

impl RecordId {
    /// A fresh random id.
    pub fn random() -> Self {
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// The id whose bytes are `bytes` (the nonce a sealed `requestState` carries).
    pub(crate) fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// The id's 16 bytes.
    pub(crate) fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// Reads an id as it appears in a URL; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        if text.len() != 22 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordId({self})")
    }
}

/// Where a record stands. It moves only forward: pending → approved → spent, or pending →
/// declined → spent (the decline told to the caller once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordState {
    /// Shown, not yet decided.
    Pending,
    /// The person approved it on the page; the call it names has not run yet.
    Approved,
    /// The person declined it (on the page or their device); not yet told to the caller.
    Declined,
    /// Approved and used by the one call it was for, or declined and told.
    Spent,
}

impl RecordState {
    /// The state's name in stored records and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Declined => "declined",
            Self::Spent => "spent",
        }
    }

    /// Reads a state's name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => Self::Pending,
            "approved" => Self::Approved,
            "declined" => Self::Declined,
            "spent" => Self::Spent,
            _ => return None,
        })
    }
}

/// One question put on the approval page, as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// Its unguessable id.
    pub id: RecordId,
    /// Who asked (the guard's principal of the calling request): whose passkeys approve it.
    pub principal: String,
    /// Which of that principal's credentials asked (the guard's holder of the calling
    /// request): only a call made with it is answered from the record.
    pub holder: String,
    /// The name of the tool that asked.
    pub tool: String,
    /// The target's operation ([`Target::OPERATION`](crate::Target::OPERATION)).
    pub operation: String,
    /// The fingerprint of the target's binding, hex.
    pub target: String,
    /// The fingerprint of the question shown, hex.
    pub shown: String,
    /// The question exactly as the form dialog shows it.
    pub question: String,
    /// What exactly the call changes, shown on the page below the question
    /// ([`Target::evidence`](crate::Target::evidence)); empty for a target that gives none.
    pub evidence: Evidence,
    /// The route it was put on (`page` or `ciba`).
    pub route: String,
    /// On the `ciba` route: the identity provider's `auth_req_id`, polled on the retry.
    pub auth_req_id: Option<String>,
    /// On the `ciba` route: the short code the person's device shows beside the question
    /// (`binding_message`).
    pub binding_code: Option<String>,
    /// On the `ciba` route: when the provider's request expires, Unix seconds. The record
    /// outlives it, so that the retry after it can say that the request expired unanswered.
    pub request_expires_at: Option<u64>,
    /// When it stops being decidable or spendable, Unix seconds.
    pub expires_at: u64,
    /// Where it stands.
    pub state: RecordState,
}

impl ApprovalRecord {
    /// A pending record for `question` about the target with these fingerprints.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pending(
        principal: &str,
        holder: &str,
        tool: &str,
        operation: &str,
        target: &Fingerprint,
        shown: &Fingerprint,
        question: String,
        expires_at: u64,
    ) -> Self {
        Self {
            id: RecordId::random(),
            principal: principal.to_owned(),
            holder: holder.to_owned(),
            tool: tool.to_owned(),
            operation: operation.to_owned(),
            target: target.to_string(),
            shown: shown.to_string(),
            question,
            evidence: Evidence::new(),
            route: "page".to_owned(),
            auth_req_id: None,
            binding_code: None,
            request_expires_at: None,
            expires_at,
            state: RecordState::Pending,
        }
    }

    /// Whether this record is about exactly this call: the same principal, operation, binding
    /// and question shown.
    pub fn is_for(
        &self,
        principal: &str,
        operation: &str,
        target: &Fingerprint,
        shown: &Fingerprint,
    ) -> bool {
        self.principal == principal
            && self.operation == operation
            && self.target == target.to_string()
            && self.shown == shown.to_string()
    }

    /// The record as one JSON object (what the durable stores keep).
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({
            "id": self.id.to_string(),
            "principal": self.principal,
            "holder": self.holder,
            "tool": self.tool,
            "operation": self.operation,
            "target": self.target,
            "shown": self.shown,
            "question": self.question,
            "route": self.route,
            "auth_req_id": self.auth_req_id,
            "binding_code": self.binding_code,
            "request_expires_at": self.request_expires_at,
            "expires_at": self.expires_at,
            "state": self.state.as_str(),
        });
        if !self.evidence.is_empty() {
            json["evidence"] = self.evidence.to_json();
        }
        json
    }

    /// Reads a record written by [`to_json`](Self::to_json); `None` if any field is missing or
    /// of the wrong kind. A record written without evidence reads with none.
    pub fn from_json(value: &serde_json::Value) -> Option<Self> {
        let text = |key: &str| value.get(key)?.as_str().map(str::to_owned);
        let evidence = match value.get("evidence") {
            None => Evidence::new(),
            Some(evidence) => Evidence::from_json(evidence)?,
        };
        Some(Self {
            id: RecordId::parse(value.get("id")?.as_str()?)?,
            principal: text("principal")?,
            holder: text("holder")?,
            tool: text("tool")?,
            operation: text("operation")?,
            target: text("target")?,
            shown: text("shown")?,
            question: text("question")?,
            evidence,
            route: text("route")?,
            auth_req_id: text("auth_req_id"),
            binding_code: text("binding_code"),
            request_expires_at: value.get("request_expires_at").and_then(|v| v.as_u64()),
            expires_at: value.get("expires_at")?.as_u64()?,
            state: RecordState::parse(value.get("state")?.as_str()?)?,
        })
    }
}

/// Why a store could not answer. The guard refuses rather than risk a second use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the approval record store failed: {0}")]
pub struct RecordStoreError(pub String);

/// A boxed future returned by an [`ApprovalStore`].
pub type RecordFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, RecordStoreError>> + Send + 'a>>;

/// Why a decision on the page was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecideRefused {
    /// No such record, or it has expired.
    #[error("there is no such question, or it has expired")]
    Unknown,
    /// The record was already approved, declined or spent.
    #[error("this question was already answered")]
    AlreadyDecided,
}

/// Why a new record was not stored: its principal has as many questions waiting for an answer
/// as a store keeps open for one principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{limit} questions are waiting for this person's answer already, the most kept open at once"
)]
pub struct TooManyPending {
    /// The bound that was reached.
    pub limit: usize,
}

/// Keeps approval records. Replicas that answer each other's questions share one store.
///
/// Every state change is atomic in the store: two pages cannot both decide a record, and two
/// calls cannot both spend it.
pub trait ApprovalStore: Send + Sync + 'static {
    /// Stores a new pending record, unless its principal holds `max_pending` pending records
    /// unexpired at `now` already: then it is refused, and nothing is stored. (Across
    /// processes sharing one directory, the file store can overshoot the bound by their
    /// number.)
    fn create<'a>(
        &'a self,
        record: &'a ApprovalRecord,
        max_pending: usize,
        now: u64,
    ) -> RecordFuture<'a, Result<(), TooManyPending>>;

    /// How many unexpired pending records `principal` holds.
    fn count_pending<'a>(&'a self, principal: &'a str, now: u64) -> RecordFuture<'a, usize>;

    /// The record named `id`, unless it expired before `now`.
    fn get<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, Option<ApprovalRecord>>;

    /// Decides a pending record: approved when `approve`, else declined.
    fn decide<'a>(
        &'a self,
        id: &'a RecordId,
        approve: bool,
        now: u64,
    ) -> RecordFuture<'a, Result<(), DecideRefused>>;

    /// Spends an approved record: `true` the one time it moves from approved to spent, `false`
    /// otherwise (pending, declined, spent already, expired, unknown).
    fn spend<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool>;

    /// Spends a declined record once its caller was told of the decline: `true` the one time
    /// it moves from declined to spent, `false` otherwise. The next identical call asks afresh.
    fn spend_declined<'a>(&'a self, id: &'a RecordId, now: u64) -> RecordFuture<'a, bool>;

    /// Every unexpired record about exactly this call (same principal, operation, binding and
    /// question shown) that is not spent: pending, approved, or declined and not yet told. An
    /// identical retry without a `requestState` is answered from them (an approved one
    /// first, whichever credential of the principal asked later). In no particular order.
    fn find_open<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
        now: u64,
    ) -> RecordFuture<'a, Vec<ApprovalRecord>>;

    /// When an approved record about exactly this call was last spent, Unix milliseconds, for a
    /// store shared by replicas: an identical call made before then, on any replica, is told
    /// that its twin used the approval instead of asking the person afresh. Default: `None`
    /// (the guard then knows only its own process's spends).
    fn last_spent<'a>(
        &'a self,
        principal: &'a str,
        operation: &'a str,
        target: &'a Fingerprint,
        shown: &'a Fingerprint,
    ) -> RecordFuture<'a, Option<u64>> {
        let _ = (principal, operation, target, shown);
        Box::pin(std::future::ready(Ok(None)))
    }
}

/// The approval page as the guard sees it: where a record is shown, and whether approving
/// there needs the person (a passkey enrolled).
pub trait ApprovalPages: Send + Sync + 'static {
    /// The page's URL for `id` (`<base>/approve/<id>`: the HTTP server's public origin, or
    /// `http://localhost:PORT` of a listener opened on first need); an error says why no page
    /// can be shown.
    fn url<'a>(
        &'a self,
        id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

    /// Whether at least one passkey is enrolled, so that approving on the page needs the
    /// person.
    fn ready(&self) -> bool;

    /// Whether `principal` can approve on the page: a passkey enrolled for them, or a login
    /// that applies to every principal. The guard offers the page only to a principal it is
    /// ready for; others get the next of the operator's routes. By default [`ready`](Self::ready).
    fn ready_for(&self, principal: &str) -> bool {
        let _ = principal;
        self.ready()
    }

    /// Waits until the record `id` may have changed (decided on the page), or briefly; the
    /// guard reads the record again after it returns.
    fn changed<'a>(&'a self, id: &'a RecordId) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

    /// What approving on the page takes, as the guard's texts say it: a passkey unless the
    /// page says otherwise.
    fn proof(&self) -> crate::PageProof {
        crate::PageProof::Passkey
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_refuse_other_text() {
        let id = RecordId::random();
        assert_eq!(RecordId::parse(&id.to_string()), Some(id));
        assert_ne!(RecordId::random(), id);
        for bad in ["", "short", "!!!!!!!!!!!!!!!!!!!!!!", &"A".repeat(23)] {
            assert_eq!(RecordId::parse(bad), None, "{bad}");
        }
    }

    crate::wording!(struct Q = "q";);

    #[test]
    fn records_round_trip_through_json() {
        let fp = Fingerprint::of_question(&crate::question::Question::new::<Q>([]));
        let record =
            ApprovalRecord::pending("local", "local", "t", "op", &fp, &fp, "Q <b>".into(), 9);
        assert_eq!(
            ApprovalRecord::from_json(&record.to_json()),
            Some(record.clone())
        );
        assert!(record.is_for("local", "op", &fp, &fp));
        assert!(!record.is_for("other", "op", &fp, &fp));
        let mut ciba = record.clone();
        ciba.route = "ciba".into();
        ciba.auth_req_id = Some("req-1".into());
        ciba.binding_code = Some("K7QF2M".into());
        ciba.request_expires_at = Some(7);
        assert_eq!(ApprovalRecord::from_json(&ciba.to_json()), Some(ciba));
        let mut broken = record.to_json();
        broken["state"] = "maybe".into();
        assert_eq!(ApprovalRecord::from_json(&broken), None);
    }

    #[test]
    fn evidence_round_trips_and_old_records_read_without_it() {
        use crate::evidence::{Evidence, EvidenceItem};
        let fp = Fingerprint::of_question(&crate::question::Question::new::<Q>([]));
        let mut record =
            ApprovalRecord::pending("local", "local", "t", "op", &fp, &fp, "Q".into(), 9);
        // Without evidence nothing is written: a record reads as it did before.
        assert!(record.to_json().get("evidence").is_none());
        record.evidence = Evidence::new()
            .group(
                "Files deleted",
                [EvidenceItem::new("</pre><script>", b"x\n")],
            )
            .group(
                "Files that become readable",
                [
                    EvidenceItem::readable("a.txt", "line\r\nnext\u{202E}".as_bytes()),
                    EvidenceItem::readable("b.bin", &[0xff, 0xfe, 0]),
                ],
            );
        let json = record.to_json();
        assert!(json.get("evidence").is_some());
        assert_eq!(ApprovalRecord::from_json(&json), Some(record.clone()));
        // Through text, as the file and Redis stores keep it.
        let text = json.to_string();
        let read: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(ApprovalRecord::from_json(&read), Some(record.clone()));
        // An old record (no `evidence` key) reads with none; a damaged one does not read.
        let mut old = json.clone();
        old.as_object_mut().expect("object").remove("evidence");
        assert!(
            ApprovalRecord::from_json(&old)
                .expect("reads")
                .evidence
                .is_empty()
        );
        let mut damaged = json;
        damaged["evidence"]["groups"][0]["items"][0]["size"] = "ten".into();
        assert_eq!(ApprovalRecord::from_json(&damaged), None);
    }
}
