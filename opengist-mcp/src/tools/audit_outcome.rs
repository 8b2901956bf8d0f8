//! What became of a guarded write that failed, told to the guard's audit log.
//!
//! A guarded tool's error result says in `_meta` (key [`mcp_guard::OUTCOME_META_KEY`]) when
//! the error does not mean "nothing happened": `unknown` when the request reached Opengist
//! (or may have) and no answer says whether it took effect, `executed` when it took effect
//! and only reading the result back failed. The audit log then records `outcome_unknown` or
//! `executed` instead of `failed`.

use mcp_guard::OUTCOME_META_KEY;
use rmcp::model::CallToolResult;

use crate::opengist::error::{OpengistError, TimeoutPhase};
use crate::state::opengist_failure;

/// What an error of a write says about the write.
fn outcome_word(error: &OpengistError) -> Option<&'static str> {
    match error {
        OpengistError::Timeout {
            phase: TimeoutPhase::Request,
            ..
        }
        | OpengistError::Connection { .. }
        | OpengistError::Server { .. }
        | OpengistError::UnexpectedResponse { .. }
        | OpengistError::ResponseTooLarge { .. }
        | OpengistError::AnswerLost { .. } => Some("unknown"),
        OpengistError::WrittenButUnread { .. } | OpengistError::CreatedWithoutId => {
            Some("executed")
        }
        _ => None,
    }
}

/// `map_err` helper for a guarded write: [`opengist_failure`], with the outcome in `_meta`
/// when the error leaves it open or the write went through.
pub fn write_failure(error: OpengistError) -> CallToolResult {
    let word = outcome_word(&error);
    let result = opengist_failure(error);
    match word {
        Some(word) => with_outcome(result, word),
        None => result,
    }
}

/// Marks a write's error result as "outcome unknown" for the audit log (a lost answer that
/// reading back could not settle).
pub fn mark_unknown(result: CallToolResult) -> CallToolResult {
    with_outcome(result, "unknown")
}

fn with_outcome(mut result: CallToolResult, word: &'static str) -> CallToolResult {
    let mut meta = result.meta.take().unwrap_or_default();
    meta.0.insert(OUTCOME_META_KEY.to_owned(), word.into());
    result.meta = Some(meta);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_request_timeout_leaves_the_outcome_open_and_a_refusal_does_not() {
        let timeout = write_failure(OpengistError::Timeout {
            phase: TimeoutPhase::Request,
            after: Duration::from_secs(1),
            host: "h".to_owned(),
            operation: "delete a gist",
        });
        let meta = timeout.meta.expect("meta");
        assert_eq!(meta.0[OUTCOME_META_KEY], "unknown");
        let refused = write_failure(OpengistError::NotFound {
            resource: "gist x".to_owned(),
        });
        assert!(refused.meta.is_none());
        assert_eq!(refused.is_error, Some(true));
    }
}
