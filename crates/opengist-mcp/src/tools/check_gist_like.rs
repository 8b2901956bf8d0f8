//! `check_gist_like`: whether the token owner likes a gist, told apart from "not visible to
//! this token" (Opengist answers both with the same 404).

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

use super::common::{GistIdArg, Parameters};
use crate::opengist::LikeState;
use crate::opengist::requests::GistId;
use crate::state::{OpengistServer, ToolResult, failure, opengist_failure};

/// Result of `check_gist_like`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct LikeCheck {
    /// The gist's id.
    pub gist_id: String,
    /// Whether the token owner likes it.
    pub liked: bool,
    /// Whether this token can see the gist (always true in a result: a gist it cannot see is
    /// an error saying so).
    pub visible: bool,
}

/// Decides the like state from the like endpoint and, after its ambiguous 404, whether the
/// gist is visible. `None` means "not visible": an error, never "not liked".
pub(crate) fn like_check(gist_id: &GistId, state: LikeState, visible: bool) -> Option<LikeCheck> {
    match (state, visible) {
        (LikeState::Liked, _) => Some(LikeCheck {
            gist_id: gist_id.to_string(),
            liked: true,
            visible: true,
        }),
        (LikeState::NotLikedOrNotVisible, true) => Some(LikeCheck {
            gist_id: gist_id.to_string(),
            liked: false,
            visible: true,
        }),
        (LikeState::NotLikedOrNotVisible, false) => None,
    }
}

#[tool_router(router = check_gist_like_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Whether the token owner likes a gist.
    #[tool(
        name = "check_gist_like",
        description = "Whether the token owner likes a gist. Tells 'not liked' apart from 'not visible to this token' (Opengist answers both with the same 404): a gist this token cannot see is an error saying so.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<LikeCheck>()
    )]
    async fn check_gist_like(
        &self,
        Parameters(args): Parameters<GistIdArg>,
    ) -> ToolResult<LikeCheck> {
        let client = &self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let state = client.is_liked(&id).await.map_err(opengist_failure)?;
        let visible = match state {
            LikeState::Liked => true,
            // The cheapest read of the gist: one commit. A 404 there is the answer.
            LikeState::NotLikedOrNotVisible => match client.list_commits(&id, 1, 1).await {
                Ok(_) => true,
                Err(e) if e.is_not_found() => false,
                Err(e) => return Err(opengist_failure(e)),
            },
        };
        like_check(&id, state, visible)
            .map(|check| self.output(check))
            .ok_or_else(|| {
                failure(format!(
                    "gist {id} does not exist or is not visible to this token, so whether it is liked cannot be told."
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::common::fixtures::*;

    #[test]
    fn likes_tell_not_liked_from_not_visible() {
        let liked = like_check(&id(), LikeState::Liked, true).expect("liked");
        assert!(liked.liked && liked.visible);
        let not = like_check(&id(), LikeState::NotLikedOrNotVisible, true).expect("visible");
        assert!(!not.liked && not.visible);
        assert_eq!(
            like_check(&id(), LikeState::NotLikedOrNotVisible, false),
            None
        );
    }

    // -- the handler: the unconfigured server makes no request --

    #[tokio::test]
    async fn an_unconfigured_server_says_what_to_set() {
        let server = OpengistServer::unconfigured();
        let err = server
            .check_gist_like(Parameters(GistIdArg { gist_id: ID.into() }))
            .await
            .err()
            .expect("unconfigured");
        assert!(text_of(&err).contains("OPENGIST_TOKEN"));
    }
}
