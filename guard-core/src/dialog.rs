//! Pushing one approval dialog (2025-11-25 era) that is abandoned when its call is cancelled.
//!
//! rmcp cancels a request's [`RequestContext::ct`] when the client sends
//! `notifications/cancelled` for it, but it does not stop the handler: a guard waiting on a
//! dialog would go on waiting, and a late "approve" would run an operation whose call no
//! longer exists. [`push`] waits for the answer *or* the cancellation, whichever comes first;
//! on cancellation it tells the client the dialog is withdrawn (`notifications/cancelled` for
//! the `elicitation/create` request, which also forgets the pending answer in rmcp, so a late
//! one is dropped) and reports [`Pushed::CallCancelled`].

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};

/// The reason sent with the withdrawal of an abandoned dialog.
pub(crate) const WITHDRAWN_REASON: &str =
    "the tool call this dialog was asking about was cancelled";

/// How a pushed dialog ended.
pub(crate) enum Pushed {
    /// The client answered.
    Answered(ElicitResult),
    /// The call was cancelled before an answer came; the dialog was withdrawn.
    CallCancelled,
    /// The dialog could not be delivered, timed out, or the client answered with an error.
    Failed(ServiceError),
}

/// Sends `elicitation/create` for `params` and waits up to `timeout` for the answer, giving up
/// as soon as the call that `context` belongs to is cancelled.
pub(crate) async fn push(
    context: &RequestContext<RoleServer>,
    params: ElicitRequestParams,
    timeout: Duration,
) -> Pushed {
    if context.ct.is_cancelled() {
        return Pushed::CallCancelled;
    }
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let options = PeerRequestOptions::with_timeout(timeout);
    let handle = match context
        .peer
        .send_request_with_option(request, options)
        .await
    {
        Ok(handle) => handle,
        Err(error) => return Pushed::Failed(error),
    };
    let id = handle.id.clone();
    tokio::select! {
        biased;
        () = context.ct.cancelled() => {
            let withdrawal =
                CancelledNotificationParam::new(Some(id), Some(WITHDRAWN_REASON.to_owned()));
            if let Err(error) = context.peer.notify_cancelled(withdrawal).await {
                tracing::debug!(%error, "could not withdraw the abandoned dialog");
            }
            Pushed::CallCancelled
        }
        answer = handle.await_response() => match answer {
            Ok(ClientResult::ElicitResult(result)) => Pushed::Answered(result),
            Ok(_) => Pushed::Failed(ServiceError::UnexpectedResponse),
            Err(error) => Pushed::Failed(error),
        },
    }
}
