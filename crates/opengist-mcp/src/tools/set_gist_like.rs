//! `set_gist_like`: like or unlike a gist, idempotently (Opengist's own endpoint toggles, so
//! the client reads the state first). Not guarded.
//!
//! Its arguments, its result, its handler and its read-back after a lost answer; its client
//! method is [`OpengistClient::set_like`].

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Parameters;
use super::common::write_outcome::{self, Seen};
use crate::opengist::requests::GistId;
use crate::opengist::{LikeChange, LikeState, OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult};

/// Arguments of `set_gist_like`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetLikeArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// `true` to like, `false` to unlike. Idempotent.
    pub liked: bool,
}

/// Result of `set_gist_like`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct LikeSet {
    /// The gist's id.
    pub gist_id: String,
    /// The state now.
    pub liked: bool,
    /// Whether this call changed it.
    pub changed: bool,
}

#[tool_router(router = set_gist_like_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Likes or unlikes a gist, idempotently.
    #[tool(
        name = "set_gist_like",
        description = "Like (liked=true) or unlike (liked=false) a gist. Idempotent: reads the current state first, because Opengist's own endpoint toggles.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<LikeSet>()
    )]
    async fn set_gist_like(
        &self,
        Parameters(args): Parameters<SetLikeArgs>,
    ) -> ToolResult<LikeSet> {
        let client = &self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let change = match client.set_like(&id, args.liked).await {
            Ok(change) => change,
            Err(error) => like_lost(client, &id, args.liked, error).await?,
        };
        let changed = matches!(change, LikeChange::Liked | LikeChange::Unliked);
        Ok(self.output(LikeSet {
            gist_id: id.to_string(),
            liked: args.liked,
            changed,
        }))
    }
}

/// The like change, if reading back shows the wanted state; otherwise the tool's error.
async fn like_lost(
    client: &OpengistClient,
    id: &GistId,
    liked: bool,
    error: OpengistError,
) -> Result<LikeChange, CallToolResult> {
    let look = || async {
        let now = client.is_liked(id).await? == LikeState::Liked;
        Ok(if now == liked {
            Seen::Applied(if liked {
                LikeChange::Liked
            } else {
                LikeChange::Unliked
            })
        } else {
            Seen::NotApplied
        })
    };
    let check = format!(
        "Check with check_gist_like {id} before setting it again (Opengist's own endpoint toggles, so a blind repeat could undo it)."
    );
    write_outcome::find_out(
        "set_gist_like",
        error,
        look,
        "the like state unchanged",
        &check,
    )
    .await
}
