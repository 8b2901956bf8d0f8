//! What became of a write: applied, not applied, or unknown; found out by reading back when
//! its answer was lost, and told both to the caller and to the guard's audit log.
//!
//! **A lost answer.** When a write request may have reached Opengist but its answer did not
//! come back (a timeout, a connection closed after sending, a gateway giving up:
//! [`OpengistError::write_may_have_applied`]), the write tools do not report a failure and
//! never say "try again": following that advice made duplicate public gists. They read back
//! instead ([`find_out`]), a few times over a few seconds, each tool with its own look at
//! what its write would have left (its read-back, in the tool's own file: e.g. a created gist
//! is recognised by its owner, files and title; a deleted one by a 404).
//!
//! Applied: the tool returns its normal result, built from what was read back. Not applied (as
//! far as Opengist shows after the last read): an error that says so and how to check before
//! doing anything again. Mixed, or the read-back itself failed: an error that says plainly that
//! the outcome is unknown and how to check.
//!
//! **The audit log.** A guarded tool's error result says in `_meta` (key
//! [`ask_first::audit::OUTCOME_META_KEY`]) when the error does not mean "nothing happened":
//! `unknown` when the request reached Opengist (or may have) and no answer says whether it
//! took effect, `executed` when it took effect and only reading the result back failed. The
//! audit log then records `outcome_unknown` or `executed` instead of `failed`.

use std::time::Duration;

use ask_first::audit::OUTCOME_META_KEY;
use rmcp::model::CallToolResult;

use crate::opengist::GistFile;
use crate::opengist::error::{OpengistError, TimeoutPhase};
use crate::state::{failure, opengist_failure};

/// Pauses before each read-back: the first at once, then later ones in case Opengist is
/// still working on the request.
const READ_BACK_PAUSES: [Duration; 3] = [
    Duration::ZERO,
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// How far before the call a created gist's `updated_at` (or a fork's `created_at`) may lie
/// (clock skew between this machine and Opengist's).
pub(crate) const CLOCK_SLACK: chrono::Duration = chrono::Duration::seconds(120);

/// What one read-back saw of a write whose answer was lost.
pub(crate) enum Seen<T> {
    /// The write is there: this is the result.
    Applied(T),
    /// Nothing of the write is there.
    NotApplied,
    /// Part of it, or something else changed: say what.
    Mixed(String),
}

/// What an error of a write says about the write, for the audit log: a write that may have
/// taken effect is not recorded as a plain failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuditOutcome {
    /// The request reached Opengist, or may have; nothing says whether it took effect.
    Unknown,
    /// It took effect; only reading the result back failed.
    Executed,
}

impl AuditOutcome {
    /// The outcome `error` leaves, when it is not "nothing happened".
    fn of(error: &OpengistError) -> Option<Self> {
        match error {
            OpengistError::Timeout {
                phase: TimeoutPhase::Request,
                ..
            }
            | OpengistError::Connection { .. }
            | OpengistError::Server { .. }
            | OpengistError::UnexpectedResponse { .. }
            | OpengistError::ResponseTooLarge { .. }
            | OpengistError::AnswerLost { .. } => Some(Self::Unknown),
            OpengistError::WrittenButUnread { .. } | OpengistError::CreatedWithoutId => {
                Some(Self::Executed)
            }
            _ => None,
        }
    }

    /// The word the guard's audit log reads from `_meta`.
    fn word(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Executed => "executed",
        }
    }

    /// `result` with this outcome in its `_meta`.
    fn mark(self, mut result: CallToolResult) -> CallToolResult {
        let mut meta = result.meta.take().unwrap_or_default();
        meta.0
            .insert(OUTCOME_META_KEY.to_owned(), self.word().into());
        result.meta = Some(meta);
        result
    }
}

/// The error result of a failed write: [`opengist_failure`], with the outcome in `_meta`
/// when the error leaves it open or the write went through.
fn write_failure(error: OpengistError) -> CallToolResult {
    let outcome = AuditOutcome::of(&error);
    let result = opengist_failure(error);
    match outcome {
        Some(outcome) => outcome.mark(result),
        None => result,
    }
}

/// Reads back with `read` until it sees the write applied or the pauses run out. `Err` is a
/// read that failed.
async fn read_back<T, F, Fut>(mut read: F) -> Result<Seen<T>, OpengistError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Seen<T>, OpengistError>>,
{
    let mut last = Seen::NotApplied;
    for pause in READ_BACK_PAUSES {
        tokio::time::sleep(pause).await;
        match read().await? {
            Seen::Applied(value) => return Ok(Seen::Applied(value)),
            other => last = other,
        }
    }
    Ok(last)
}

fn reads_said() -> String {
    let total: u64 = READ_BACK_PAUSES.iter().map(Duration::as_secs).sum();
    format!("{} read-backs over {total} seconds", READ_BACK_PAUSES.len())
}

/// The tool's answer for a failed write: the error itself when the write cannot have reached
/// Opengist; otherwise what reading back with `look` shows ([`settle`]).
pub(crate) async fn find_out<T, F, Fut>(
    tool: &str,
    lost: OpengistError,
    look: F,
    not_applied: &str,
    how_to_check: &str,
) -> Result<T, CallToolResult>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Seen<T>, OpengistError>>,
{
    if !lost.write_may_have_applied() {
        return Err(write_failure(lost));
    }
    let seen = read_back(look).await;
    settle(tool, &lost, seen, not_applied, how_to_check)
}

/// The tool's answer for a lost write, from what the read-back saw. `not_applied` says what
/// it saw when nothing of the write is there; `how_to_check` tells the person how to see for
/// themselves.
fn settle<T>(
    tool: &str,
    lost: &OpengistError,
    seen: Result<Seen<T>, OpengistError>,
    not_applied: &str,
    how_to_check: &str,
) -> Result<T, CallToolResult> {
    match seen {
        Ok(Seen::Applied(value)) => {
            tracing::info!(
                tool,
                "a write's answer was lost; reading back showed it was applied"
            );
            Ok(value)
        }
        Ok(Seen::NotApplied) => Err(failure(format!(
            "{lost}. {} show {not_applied}: the change was NOT applied, as far as Opengist shows now. {how_to_check}",
            capitalise(&reads_said()),
        ))),
        Ok(Seen::Mixed(what)) => Err(AuditOutcome::Unknown.mark(failure(format!(
            "{lost}. The outcome is UNKNOWN: reading back shows {what}. {how_to_check}"
        )))),
        Err(read_error) => Err(AuditOutcome::Unknown.mark(failure(format!(
            "{lost}. The outcome is UNKNOWN: reading back failed too ({read_error}). {how_to_check}"
        )))),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether a file read back holds `expected` (a cut file by its size; trailing newlines
/// aside, which Opengist may add).
pub(crate) fn same_content(file: &GistFile, expected: &str) -> bool {
    if file.truncated {
        return file.size == expected.len() as u64;
    }
    let trim = |text: &str| text.trim_end_matches(['\r', '\n']).to_owned();
    file.content == expected || trim(&file.content) == trim(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_outcome_says_so_and_never_try_again() {
        let lost = OpengistError::AnswerLost {
            operation: "delete a gist",
            cause: "the connection was closed before the answer arrived".to_owned(),
        };
        for seen in [
            Ok(Seen::<()>::NotApplied),
            Ok(Seen::Mixed("2 of the 3 files still in the gist".to_owned())),
            Err(OpengistError::CreatedWithoutId),
        ] {
            let result = settle(
                "t",
                &lost,
                seen,
                "the gist still there",
                "Check with get_gist x.",
            )
            .expect_err("not applied or unknown is an error result");
            let text: String = result
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                .collect();
            assert!(text.contains("Check with get_gist x."), "{text}");
            assert!(!text.to_lowercase().contains("try again"), "{text}");
            assert!(
                text.contains("NOT applied") || text.contains("UNKNOWN"),
                "{text}"
            );
        }
    }

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
