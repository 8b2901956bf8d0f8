//! Pushing one approval dialog (2025-11-25 era) that is abandoned when its call is cancelled,
//! when the stream carrying it is gone, and that is never pushed past the transport's caps.
//!
//! rmcp cancels a request's [`RequestContext::ct`] when the client sends
//! `notifications/cancelled` for it, but it does not stop the handler: a guard waiting on a
//! dialog would go on waiting, and a late "approve" would run an operation whose call no
//! longer exists. [`push`] waits for the answer *or* the cancellation, whichever comes first;
//! on cancellation it tells the client the dialog is withdrawn (`notifications/cancelled` for
//! the `elicitation/create` request, which also forgets the pending answer in rmcp, so a late
//! one is dropped) and reports [`Pushed::CallCancelled`].
//!
//! A transport may attach a [`DialogCarrier`] to the request (HTTP serving does, in the
//! extensions of the request's `http::request::Parts`). Then [`push`] first asks it for a
//! slot ([`DialogCarrier::admit`]: caps on dialogs waiting per session, per principal and in
//! all), holds the slot until the dialog ends, and treats the end of the carrying stream
//! ([`DialogCarrier::gone`]: the client dropped the connection its answer would come back on)
//! as a cancellation of the call. Without a carrier nothing is capped (stdio: one client on its
//! own pipe, whose dialogs end with it).

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use tokio_util::sync::CancellationToken;

/// The reason sent with the withdrawal of an abandoned dialog.
pub(crate) const WITHDRAWN_REASON: &str =
    "the tool call this dialog was asking about was cancelled";

/// How a pushed dialog ended.
pub(crate) enum Pushed {
    /// The client answered.
    Answered(ElicitResult),
    /// The call was cancelled, or the stream carrying it closed, before an answer came; the
    /// dialog was withdrawn.
    CallCancelled,
    /// The transport's caps refused the dialog: no one was asked. The text says which cap
    /// and when to retry.
    Refused(String),
    /// The dialog could not be delivered, timed out, or the client answered with an error.
    Failed(ServiceError),
}

/// The admission rule of a [`DialogCarrier`]: given how long the dialog may wait, a slot to hold
/// while it waits, or the refusal to answer the call with.
type Admission = dyn Fn(Duration) -> Result<DialogSlot, String> + Send + Sync;

/// What a transport attaches to one request so that a dialog the guard pushes for it is bounded:
/// an admission rule (caps on dialogs in flight) and a token cancelled when the stream that
/// carries the dialog and the call's answer is gone.
///
/// Put it in the request's `http::request::Parts` extensions (rmcp's streamable HTTP server
/// hands those to the handler) or directly in the request's extensions.
#[derive(Clone)]
pub struct DialogCarrier {
    admission: Option<Arc<Admission>>,
    gone: CancellationToken,
}

impl std::fmt::Debug for DialogCarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DialogCarrier")
            .field("capped", &self.admission.is_some())
            .field("gone", &self.gone.is_cancelled())
            .finish()
    }
}

impl DialogCarrier {
    /// A carrier whose stream is gone once `gone` is cancelled; no caps.
    pub fn new(gone: CancellationToken) -> Self {
        Self {
            admission: None,
            gone,
        }
    }

    /// Adds the admission rule: called right before a dialog is pushed, with the longest the
    /// dialog may wait for its answer. `Ok`: the slot, held until the dialog ends (answered,
    /// withdrawn, timed out or failed). `Err`: the call's answer (an error result: which cap
    /// was reached and when to retry); no one is asked.
    pub fn with_admission(
        mut self,
        admit: impl Fn(Duration) -> Result<DialogSlot, String> + Send + Sync + 'static,
    ) -> Self {
        self.admission = Some(Arc::new(admit));
        self
    }

    /// Asks the admission rule for a slot (always granted without one).
    pub fn admit(&self, timeout: Duration) -> Result<DialogSlot, String> {
        match &self.admission {
            Some(admit) => admit(timeout),
            None => Ok(DialogSlot::free()),
        }
    }

    /// The token cancelled when the carrying stream is gone.
    pub fn gone(&self) -> &CancellationToken {
        &self.gone
    }

    /// The carrier attached to the request `context` belongs to, if any.
    fn of(context: &RequestContext<RoleServer>) -> Option<&Self> {
        context.extensions.get::<Self>().or_else(|| {
            context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Self>())
        })
    }
}

/// A place among the dialogs in flight, released when dropped.
pub struct DialogSlot {
    _held: Option<Box<dyn Send + Sync>>,
}

impl std::fmt::Debug for DialogSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DialogSlot")
    }
}

impl DialogSlot {
    /// A slot that releases what it holds (a counter's guard) when dropped.
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        Self {
            _held: Some(Box::new(held)),
        }
    }

    /// A slot that holds nothing.
    pub fn free() -> Self {
        Self { _held: None }
    }
}

/// Sends `elicitation/create` for `params` and waits up to `timeout` for the answer, giving up
/// as soon as the call that `context` belongs to is cancelled or its carrying stream is gone.
pub(crate) async fn push(
    context: &RequestContext<RoleServer>,
    params: ElicitRequestParams,
    timeout: Duration,
) -> Pushed {
    if context.ct.is_cancelled() {
        return Pushed::CallCancelled;
    }
    let carrier = DialogCarrier::of(context);
    let gone = carrier.map_or_else(CancellationToken::new, |carrier| carrier.gone().clone());
    if gone.is_cancelled() {
        return Pushed::CallCancelled;
    }
    // Held until this function returns: the dialog's place among those in flight.
    let _slot = match carrier.map(|carrier| carrier.admit(timeout)) {
        Some(Err(refusal)) => return Pushed::Refused(refusal),
        Some(Ok(slot)) => slot,
        None => DialogSlot::free(),
    };
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
        () = context.ct.cancelled() => withdraw(context, id).await,
        () = gone.cancelled() => {
            tracing::info!("the stream carrying an approval dialog closed: the call is cancelled");
            withdraw(context, id).await
        }
        answer = handle.await_response() => match answer {
            Ok(ClientResult::ElicitResult(result)) => Pushed::Answered(result),
            Ok(_) => Pushed::Failed(ServiceError::UnexpectedResponse),
            Err(error) => Pushed::Failed(error),
        },
    }
}

/// Tells the client the dialog `id` is withdrawn (rmcp then drops a late answer).
async fn withdraw(context: &RequestContext<RoleServer>, id: rmcp::model::RequestId) -> Pushed {
    let withdrawal = CancelledNotificationParam::new(Some(id), Some(WITHDRAWN_REASON.to_owned()));
    if let Err(error) = context.peer.notify_cancelled(withdrawal).await {
        tracing::debug!(%error, "could not withdraw the abandoned dialog");
    }
    Pushed::CallCancelled
}
