//! Check before asking: what a guarded tool can know before it asks a person is checked
//! while its target resolves, so no one is asked to approve a call that cannot succeed and
//! no confirmation token is handed out for one.
//!
//! Each check is a request Opengist refuses before changing anything (see
//! [`crate::opengist::access`]): it passes exactly the checks the real call would meet (the
//! token, its `gist:write` scope, whether Opengist answers at all, and for an existing gist
//! its visibility, owner and archive state). Its failure is an input error: the tool answers
//! it at once, asking no one.

use mcp_guard::Rejection;

use crate::opengist::Change;
use crate::opengist::error::OpengistError;
use crate::opengist::requests::GistId;

use crate::state::{OpengistServer, rejection};

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

fn checked(outcome: Result<(), OpengistError>, nothing: &str) -> Result<(), Rejection> {
    match outcome {
        // The check itself could not be made: its text says so, that nothing was changed and
        // what to do. It must not say the call cannot succeed (that is not known), nor that
        // Opengist may have applied anything (the check writes nothing).
        Err(error @ OpengistError::CheckAnswerLost { .. }) => {
            Err(Rejection::new(format!("{error}. No one was asked.")))
        }
        Err(error) if settles(&error) => Err(Rejection::new(format!(
            "{error}. {nothing}, and no one was asked: this call cannot succeed as it stands."
        ))),
        _ => Ok(()),
    }
}

/// `create_gist` can succeed now.
pub(super) async fn can_create(server: &OpengistServer) -> Result<(), Rejection> {
    let client = server.client().map_err(rejection)?;
    checked(client.check_can_create().await, "Nothing was created")
}

/// `change` of gist `id` can succeed now.
pub(super) async fn can_change(
    server: &OpengistServer,
    id: &GistId,
    change: Change,
) -> Result<(), Rejection> {
    let client = server.client().map_err(rejection)?;
    checked(
        client.check_can_change(id, change).await,
        "Nothing was changed",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_definite_refusal_stops_the_question() {
        let refused = checked(
            Err(OpengistError::NotOwner {
                resource: "gist g".into(),
                operation: "delete a gist",
            }),
            "Nothing was changed",
        )
        .expect_err("refused");
        let text = refused.message();
        assert!(
            text.contains("belongs to another account") && text.contains("no one was asked"),
            "{text}"
        );
        let unsure = checked(
            Err(OpengistError::Server {
                status: 500,
                operation: "delete a gist",
                message: None,
            }),
            "Nothing was changed",
        );
        assert!(unsure.is_ok(), "a 500 tells nothing certain: ask as before");
        assert!(checked(Ok(()), "Nothing was changed").is_ok());
    }

    #[test]
    fn a_check_whose_answer_was_lost_says_only_that_it_could_not_be_made() {
        for (operation, nothing) in [
            ("create a gist", "Nothing was created"),
            ("delete a gist", "Nothing was changed"),
        ] {
            let lost = checked(
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
