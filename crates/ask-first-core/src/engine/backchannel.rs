//! CIBA as the guard sees it: an identity provider that asks the person on their own device
//! (OpenID Connect Client-Initiated Backchannel Authentication, poll mode, with RFC 9396
//! `authorization_details`). The guard keeps the question as an [`ApprovalRecord`]; a
//! [`Backchannel`] sends it to the provider and, on the identical retry, polls for the answer
//! and checks the token that comes back against the record before anything runs.

use std::future::Future;
use std::pin::Pin;

use super::Caller;
use crate::approval_record::ApprovalRecord;

/// The `authorization_details` type (RFC 9396) the guard's requests carry: one object naming
/// the server, the tool, the operation, the target's and the question's fingerprints, and the
/// question.
pub const AUTHORIZATION_DETAILS_TYPE: &str = "ask_first_approval";

/// A boxed future returned by a [`Backchannel`].
pub type BackchannelFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the provider said when asked to start a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelStarted {
    /// The provider's `auth_req_id`, polled on the retry.
    pub auth_req_id: String,
    /// How long the provider keeps the request open, seconds (`expires_in`).
    pub expires_in: u64,
}

/// Where a request stands when polled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackchannelPoll {
    /// The person has not answered yet (`authorization_pending`, `slow_down`).
    Pending,
    /// The provider issued a token and it passed every check against the record (issuer,
    /// audience, signature, subject, `authorization_details`): the person approved exactly
    /// this record on their device.
    Approved,
    /// The person declined on their device (`access_denied`).
    Declined,
    /// The request expired before the person answered (`expired_token`).
    Expired,
    /// The provider no longer holds the request open (`invalid_grant`): most often it gave
    /// its token to an earlier poll (an identical call's, on this replica or another). Not a
    /// refusal: the guard reads the record again, which the poll that got the token decides,
    /// and never closes the record on it.
    Consumed,
    /// The provider answered with something that must not let the call run: a token that
    /// fails a check, a request already used, an error. The text says why, for the caller.
    Refused(String),
}

/// An identity provider that asks the person on their device. `ask-first-serve` implements it
/// for an OpenID provider with CIBA; the guard takes it through
/// [`GuardBuilder::backchannel`](crate::GuardBuilder::backchannel).
pub trait Backchannel: Send + Sync + 'static {
    /// The caller's subject at the provider (its `login_hint`), when the request proves one
    /// (OAuth mode); `None` otherwise, and then the route is not available for this call.
    fn subject(&self, caller: &Caller<'_>) -> Option<String>;

    /// Starts a request asking `subject` about `record` (pending, its fingerprints set), with
    /// `binding_code` shown on the device; an error says why the provider could not be asked.
    fn start<'a>(
        &'a self,
        subject: &'a str,
        record: &'a ApprovalRecord,
        binding_code: &'a str,
    ) -> BackchannelFuture<'a, Result<BackchannelStarted, String>>;

    /// Polls the request behind `record` (its `auth_req_id`) once; a token is checked against
    /// `record` and `subject` before [`BackchannelPoll::Approved`] is answered.
    fn poll<'a>(
        &'a self,
        subject: &'a str,
        record: &'a ApprovalRecord,
    ) -> BackchannelFuture<'a, BackchannelPoll>;
}
