//! No dialog possible: the two-call `confirm_token`. The first call returns a single-use
//! token bound to the call; the same call quoting it runs. It proves only that the same call
//! was made twice, and its text says so.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use super::{Caller, Guard, Interruption, InterruptionKind, now_unix, refusal_outcome};
use crate::approval::ApprovedBy;
use crate::audit::{AuditOutcome, Route};
use crate::call::{CONFIRM_TOKEN_ARG, GuardCall};
use crate::seal::{self, SealKind};
use crate::target::{Approval, Target};

/// Why the token path was taken; the token's text says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NoDialog {
    SwitchedOff,
    NotDeclared,
    /// A pushed dialog failed because the client could not show it; says how.
    DialogFailed(String),
}

/// The keys of a token reply's `structuredContent` (or, for a tool with an `outputSchema`, of
/// the object under [`META_KEY`](token_reply::META_KEY) in its `_meta`), so a program can read
/// the token without parsing the text.
pub mod token_reply {
    /// Where a tool with an `outputSchema` carries the token reply's facts: `_meta[META_KEY]`
    /// (`#[guarded]` moves them there for a handler that returns `Json<T>`).
    pub const META_KEY: &str = "ask-first/token_reply";
    /// `"confirmation_required"`, or `"token_refused"` when a quoted token was not accepted
    /// (a fresh token comes with it), or `"person_required"` when the tool runs only after a
    /// person's yes in a dialog and none could be shown (no token comes with it).
    pub const STATUS: &str = "status";
    /// The token to quote.
    pub const CONFIRM_TOKEN: &str = "confirm_token";
    /// The tool to call again, with the same arguments plus the token.
    pub const TOOL: &str = "tool";
    /// Seconds the token stays valid.
    pub const EXPIRES_IN_SECONDS: &str = "expires_in_seconds";
    /// Why no person was asked.
    pub const WHY_NO_DIALOG: &str = "why_no_dialog";
    /// Why a quoted token was refused, when one was.
    pub const REFUSED_BECAUSE: &str = "refused_because";
}

/// A bound in time as a person reads it: `30 seconds`, `15 minutes`, `250 milliseconds`.
pub(super) fn minutes(d: Duration) -> String {
    let secs = d.as_secs();
    if d.subsec_nanos() != 0 {
        // A bound that is not whole seconds would read "within 0 seconds" when truncated.
        let ms = d.as_millis();
        format!("{ms} millisecond{}", if ms == 1 { "" } else { "s" })
    } else if secs >= 60 && secs.is_multiple_of(60) {
        let m = secs / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{secs} second{}", if secs == 1 { "" } else { "s" })
    }
}

impl NoDialog {
    /// Why no person could be asked, as the end of a sentence.
    fn reason(&self) -> String {
        match self {
            Self::SwitchedOff => "dialogs are switched off on this server (ELICITATION=false)".to_owned(),
            Self::NotDeclared => "this request did not declare the elicitation capability, or its connection cannot carry a dialog".to_owned(),
            Self::DialogFailed(how) => format!("the approval dialog failed: {how}"),
        }
    }
}

impl Guard {
    /// No dialog possible: the two-call token, or, for a tool that requires a person, a
    /// refusal saying why and what would let it run.
    pub(super) async fn no_dialog<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        why: NoDialog,
    ) -> Result<ApprovedBy, Interruption> {
        if call.person_required {
            return Err(self.person_required(call, &why));
        }
        self.token_path(call, target, why).await
    }

    /// The refusal of a tool that runs only after a person's yes, when no dialog can be shown.
    fn person_required(&self, call: &GuardCall, why: &NoDialog) -> Interruption {
        let server = &self.inner.server;
        let tool = &call.tool;
        let reason = why.reason();
        tracing::info!(tool = %tool, "no dialog can be shown and the tool requires a person: refusing");
        let fix = match why {
            NoDialog::SwitchedOff => format!(
                "the operator of {server} must switch dialogs on (ELICITATION=true), and the call must come from a client that shows approval dialogs (one that declares the elicitation capability)"
            ),
            _ => "call it from a client that shows approval dialogs: one that declares the elicitation capability, over a connection that can carry the dialog (a stdio connection, or an HTTP session)".to_owned(),
        };
        let text = format!(
            "Nothing was changed: {server} runs `{tool}` only after a person approves it in a dialog, and no person could be asked: {reason}. This tool never accepts a {CONFIRM_TOKEN_ARG} instead of a person. To run it, {fix}."
        );
        let mut structured = serde_json::Map::new();
        structured.insert(
            token_reply::STATUS.to_owned(),
            Value::from("person_required"),
        );
        structured.insert(token_reply::TOOL.to_owned(), Value::from(tool.to_string()));
        structured.insert(token_reply::WHY_NO_DIALOG.to_owned(), Value::from(reason));
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(Value::Object(structured));
        Interruption {
            kind: InterruptionKind::PersonRequired,
            response: Box::new(result.into()),
            error: None,
        }
    }

    /// No dialog possible: the two-call token.
    async fn token_path<T: Target>(
        &self,
        call: &GuardCall,
        target: &T,
        why: NoDialog,
    ) -> Result<ApprovedBy, Interruption> {
        let approval = Approval::of(target);
        let holder = self.holder_of(&Caller::of(&call.context));
        let scope = self.scope::<T>(&approval, &holder);
        let now = now_unix();
        let refusal = match call.confirm_token.as_deref() {
            None => None,
            Some(token) => {
                match seal::open(&self.inner.key, SealKind::ConfirmToken, &scope, token, now) {
                    Ok(opened) => {
                        if self.spend(&opened.nonce, opened.expires_at).await? {
                            return Ok(ApprovedBy::Token);
                        }
                        self.note::<T>(call, &scope, Route::Token, AuditOutcome::ReplayRefused);
                        Some("it has already been used; a token works once".to_owned())
                    }
                    Err(reason) => {
                        self.note::<T>(call, &scope, Route::Token, refusal_outcome(reason));
                        Some(reason.to_string())
                    }
                }
            }
        };
        let expires_at = now.saturating_add(self.inner.token_ttl.as_secs());
        let token = seal::seal(
            &self.inner.key,
            SealKind::ConfirmToken,
            &scope,
            0,
            expires_at,
        );
        let server = &self.inner.server;
        let tool = &call.tool;
        let why_text = match &why {
            NoDialog::SwitchedOff => format!(
                "{server} did not ask a person: dialogs are switched off on this server (ELICITATION=false), so guarded tools use a two-call token instead."
            ),
            NoDialog::NotDeclared => format!(
                "{server} did not ask a person: this request did not declare the elicitation capability, or its connection cannot carry a dialog, so guarded tools use a two-call token instead."
            ),
            NoDialog::DialogFailed(how) => format!(
                "{server} tried to ask a person, but the approval dialog failed: {how}. No one saw the question, so guarded tools use a two-call token instead."
            ),
        };
        let mut text = String::new();
        let mut structured = serde_json::Map::new();
        structured.insert(
            token_reply::STATUS.to_owned(),
            Value::from(if refusal.is_some() {
                "token_refused"
            } else {
                "confirmation_required"
            }),
        );
        structured.insert(
            token_reply::CONFIRM_TOKEN.to_owned(),
            Value::from(token.clone()),
        );
        structured.insert(token_reply::TOOL.to_owned(), Value::from(tool.clone()));
        structured.insert(
            token_reply::EXPIRES_IN_SECONDS.to_owned(),
            Value::from(self.inner.token_ttl.as_secs()),
        );
        structured.insert(
            token_reply::WHY_NO_DIALOG.to_owned(),
            Value::from(why_text.clone()),
        );
        if let Some(reason) = &refusal {
            structured.insert(
                token_reply::REFUSED_BECAUSE.to_owned(),
                Value::from(reason.clone()),
            );
        }
        let kind = match refusal {
            Some(reason) => {
                text.push_str(&format!(
                    "The confirm_token was not accepted: {reason}. Nothing was changed.\n\n"
                ));
                InterruptionKind::TokenRefused
            }
            None => {
                text.push_str("Nothing was changed yet.\n\n");
                InterruptionKind::TokenIssued
            }
        };
        text.push_str(&format!(
            "What this call would do:\n{question}\n\n{why_text}\n\nTo go ahead, first show the person what this call would do (above, in your own words) and ask them; only once they say yes, call `{tool}` again with exactly the same arguments plus `{CONFIRM_TOKEN_ARG}`:\n{CONFIRM_TOKEN_ARG}: {token}\n\nThis token proves only that the same call was made twice, nothing more: it is not a person's approval, so do not repeat the call without their yes. It works once, for these exact arguments, within {ttl}.",
            question = Self::message(target),
            ttl = minutes(self.inner.token_ttl),
        ));
        // The text for people and models; the same facts as structured content for programs.
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(Value::Object(structured));
        Err(Interruption {
            kind,
            response: Box::new(result.into()),
            error: None,
        })
    }
}
