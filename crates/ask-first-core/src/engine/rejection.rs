//! What a guarded call answers instead of running: an input error found while resolving the
//! target ([`InputError`]), or why it did not run yet ([`Interruption`]).

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};

use super::token_reply;

/// An input error found while resolving a target: the call is reported as failed, with this
/// message, and nothing is asked or changed.
///
/// [`Resolve::resolve`](super::Resolve::resolve) returns one for a call that cannot succeed;
/// `#[guarded]` answers it as an `isError` tool result whose text is the message, so the model
/// reads it and can correct the call.
#[derive(Debug, Clone)]
pub struct InputError {
    result: CallToolResult,
}

impl InputError {
    /// An input error with a message that names the problem and its fix.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            result: CallToolResult::error(vec![ContentBlock::text(message.into())]),
        }
    }

    /// An input error carrying a complete error result.
    pub fn from_result(mut result: CallToolResult) -> Self {
        result.is_error = Some(true);
        Self { result }
    }

    /// The message text(s), joined.
    pub fn message(&self) -> String {
        self.result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The error result sent back to the client.
    pub fn into_response(self) -> CallToolResponse {
        self.result.into()
    }
}

/// Why a guarded call did not run (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InterruptionKind {
    /// 2026-07-28: a question was returned as `input_required`; the client retries with the answer.
    InputRequired,
    /// No dialog could be shown: a confirmation token was issued.
    TokenIssued,
    /// A quoted token was refused (spent, expired, other arguments, altered); a fresh one was issued.
    TokenRefused,
    /// The person declined, or accepted without ticking the box.
    Declined,
    /// The person cancelled the dialog.
    Cancelled,
    /// No answer came within the dialog timeout.
    TimedOut,
    /// The question could not be delivered.
    NotAsked,
    /// The spent-nonce store failed, so the answer could not be checked for reuse.
    StoreFailed,
    /// The client cancelled the call (`notifications/cancelled`) before it could run; a
    /// pushed dialog still open was withdrawn and its answer, should one come, is ignored.
    CallCancelled,
    /// A retry's `requestState` did not open and the guard answers that with an error
    /// ([`AlteredState::JsonRpcError`](super::AlteredState::JsonRpcError)).
    StateRejected,
    /// After a yes, the target read again no longer matched what the person was shown and
    /// kept changing through [`MAX_ASK_ROUNDS`](super::MAX_ASK_ROUNDS) questions, or could
    /// not be read again at all (its [`InputError`] is the message).
    TargetChanged,
    /// The tool needs a person's approval (`#[guarded(..., person_required)]`) and no dialog
    /// could be shown: it never falls back to the two-call token.
    PersonRequired,
    /// The question waits on the approval page: the result carries its link, and the call
    /// runs on a retry once the person approved it there.
    ApprovalPending,
    /// The tool runs only after a yes a model cannot give (`#[guarded(always, verified)]`, or
    /// the server's list of verified tools), and no such route is configured.
    VerifiedUnavailable,
}

/// The answer to send instead of running the operation.
#[derive(Debug)]
pub struct Interruption {
    pub(super) kind: InterruptionKind,
    pub(super) response: Box<CallToolResponse>,
    /// Set when the answer is a JSON-RPC error rather than a tool result.
    pub(super) error: Option<Box<rmcp::ErrorData>>,
}

impl Interruption {
    pub(super) fn text(kind: InterruptionKind, text: String) -> Self {
        Self {
            kind,
            response: Box::new(CallToolResult::error(vec![ContentBlock::text(text)]).into()),
            error: None,
        }
    }

    /// After a yes, the target could not be read again: the re-read's rejection, said to be
    /// one, and nothing runs.
    pub(super) fn recheck_failed(rejection: InputError) -> Self {
        Self::text(
            InterruptionKind::TargetChanged,
            format!(
                "Nothing was changed: after the approval the target was read again, right before running, and it can no longer be acted on as shown: {}",
                rejection.message()
            ),
        )
    }

    /// The client cancelled the call (`notifications/cancelled`): nothing runs. rmcp sends
    /// no response for a cancelled request, so this text is for logs and direct callers.
    pub(super) fn cancelled_call() -> Self {
        Self::text(
            InterruptionKind::CallCancelled,
            "The client cancelled this call: it was not run and nothing was changed.".to_owned(),
        )
    }

    /// Why the call did not run.
    pub fn kind(&self) -> InterruptionKind {
        self.kind
    }

    /// The response for the client as a tool result (an interruption that is a JSON-RPC
    /// error gives its message as an error result).
    pub fn into_response(self) -> CallToolResponse {
        *self.response
    }

    /// For a tool that declares an `outputSchema`: the token reply's facts move from
    /// `structuredContent` to the result's `_meta` under [`token_reply::META_KEY`]. Clients
    /// such as the TypeScript SDK 1.x validate `structuredContent` against the output schema
    /// even on an error result, and would turn the token reply into an exception the model
    /// never reads. `#[guarded]` calls this for handlers that return `Json<T>`.
    pub(crate) fn for_output_schema(mut self) -> Self {
        if let CallToolResponse::Complete(result) = self.response.as_mut()
            && let Some(facts) = result.structured_content.take()
        {
            let mut meta = result.meta.take().unwrap_or_default();
            meta.0.insert(token_reply::META_KEY.to_owned(), facts);
            result.meta = Some(meta);
        }
        self
    }

    /// The answer for the client: a tool result, or a JSON-RPC error where the guard was set
    /// to answer one ([`AlteredState::JsonRpcError`](super::AlteredState::JsonRpcError)). What
    /// `#[guarded]` handlers return, and what a hand-written handler that returns
    /// `Result<CallToolResponse, ErrorData>` should ([`Interruption::into_response`] turns that
    /// error into an error result).
    pub fn into_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        match self.error {
            Some(error) => Err(*error),
            None => Ok(*self.response),
        }
    }
}
