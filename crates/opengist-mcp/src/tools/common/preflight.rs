//! Check before asking: what a guarded tool can know before it asks a person is checked
//! while its target resolves, so no one is asked to approve a call that cannot succeed and
//! no confirmation token is handed out for one.
//!
//! Each check is a request Opengist refuses before changing anything (see
//! [`crate::opengist::probes`]; each operation's own check, e.g.
//! [`OpengistClient::check_can_update`](crate::opengist::OpengistClient::check_can_update),
//! sits in its operation's file): it passes exactly the checks the real call would meet (the
//! token, its `gist:write` scope, whether Opengist answers at all, and for an existing gist
//! its visibility, owner and archive state). Its failure is an input error: the tool answers
//! it at once, asking no one.

use ask_first::InputError;

use crate::opengist::error::OpengistError;

/// What a write that did not run says it left alone: "Nothing was changed".
pub(crate) const NOTHING_CHANGED: &str = "Nothing was changed";
/// What `create_gist` says when it did not run: "Nothing was created".
pub(crate) const NOTHING_CREATED: &str = "Nothing was created";

/// Whether a failed check settles that the call cannot succeed. A server error (5xx) or an
/// answer that is not Opengist's tells nothing certain about the real call: the question is
/// asked as before, and the call itself then reports what Opengist says.
fn settles(error: &OpengistError) -> bool {
    !matches!(
        error,
        OpengistError::Server { .. }
            | OpengistError::UnexpectedStatus { .. }
            | OpengistError::UnexpectedResponse { .. }
            | OpengistError::ResponseTooLarge { .. }
    )
}

/// The verdict of a pre-ask check (`outcome`, from a `check_can_...` of the client): `Err`
/// stops the call before anyone is asked; `nothing` says what was left alone
/// ([`NOTHING_CHANGED`] or [`NOTHING_CREATED`]).
pub(crate) fn before_asking(
    outcome: Result<(), OpengistError>,
    nothing: &str,
) -> Result<(), InputError> {
    match outcome {
        // The check itself could not be made: its text says so, that nothing was changed and
        // what to do. It must not say the call cannot succeed (that is not known), nor that
        // Opengist may have applied anything (the check writes nothing).
        Err(error @ OpengistError::CheckAnswerLost { .. }) => {
            Err(InputError::new(format!("{error}. No one was asked.")))
        }
        Err(error) if settles(&error) => Err(InputError::new(format!(
            "{error}. {nothing}, and no one was asked: this call cannot succeed as it stands."
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_definite_refusal_stops_the_question() {
        let refused = before_asking(
            Err(OpengistError::NotOwner {
                resource: "gist g".into(),
                operation: "delete a gist",
            }),
            NOTHING_CHANGED,
        )
        .expect_err("refused");
        let text = refused.message();
        assert!(
            text.contains("belongs to another account") && text.contains("no one was asked"),
            "{text}"
        );
        let unsure = before_asking(
            Err(OpengistError::Server {
                status: 500,
                operation: "delete a gist",
                message: None,
            }),
            NOTHING_CHANGED,
        );
        assert!(unsure.is_ok(), "a 500 tells nothing certain: ask as before");
        assert!(before_asking(Ok(()), NOTHING_CHANGED).is_ok());
    }

    #[test]
    fn a_check_whose_answer_was_lost_says_only_that_it_could_not_be_made() {
        for (operation, nothing) in [
            ("create a gist", NOTHING_CREATED),
            ("delete a gist", NOTHING_CHANGED),
        ] {
            let lost = before_asking(
                Err(OpengistError::CheckAnswerLost {
                    operation,
                    cause: "the connection was closed before the answer arrived".into(),
                    base: "http://127.0.0.1:1".into(),
                }),
                nothing,
            )
            .expect_err("a check that could not be made stops the question");
            let text = lost.message();
            for must in [
                "could not be made",
                "nothing was changed",
                "No one was asked",
                "opengist-mcp doctor",
                "make the call again",
                operation,
            ] {
                assert!(text.contains(must), "{must:?} not in: {text}");
            }
            for never in ["may or may not", "applied", "cannot succeed", "was sent"] {
                assert!(!text.contains(never), "{never:?} in: {text}");
            }
        }
    }
}
