//! `fork_gist`: fork someone else's gist, or find the token owner's existing fork of it (the
//! fork has the parent's visibility). Not guarded: no one is asked.
//!
//! Its result, its handler and its read-back after a lost answer; its client method is
//! [`OpengistClient::fork_gist`].

use chrono::{DateTime, Utc};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

use super::common::GistIdArg;
use super::common::Parameters;
use super::common::write_answer::WrittenGist;
use super::common::write_outcome::{self, CLOCK_SLACK, Seen};
use crate::opengist::requests::GistId;
use crate::opengist::{ForkOutcome, OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult};

/// Result of `fork_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Forked {
    /// True when a new fork was made; false when the token's owner already had one.
    pub created: bool,
    /// The fork.
    pub fork: WrittenGist,
}

#[tool_router(router = fork_gist_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Forks someone else's gist.
    #[tool(
        name = "fork_gist",
        description = "Fork someone else's gist (you cannot fork your own). Says whether a new fork was created or your existing fork was found. The fork has the parent's visibility.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<Forked>()
    )]
    async fn fork_gist(&self, Parameters(args): Parameters<GistIdArg>) -> ToolResult<Forked> {
        let client = &self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let called_at = chrono::Utc::now();
        let outcome = match client.fork_gist(&id).await {
            Ok(outcome) => outcome,
            Err(error) => fork_lost(client, &id, called_at, error).await?,
        };
        let (created, fork) = match &outcome {
            ForkOutcome::Created(fork) => (true, fork),
            ForkOutcome::Existing(fork) => (false, fork),
        };
        self.resources_changed();
        Ok(self.output(Forked {
            created,
            fork: WrittenGist::from(fork),
        }))
    }
}

/// The fork, if reading back finds one of `id` owned by the token's owner; otherwise the
/// tool's error.
async fn fork_lost(
    client: &OpengistClient,
    id: &GistId,
    called_at: DateTime<Utc>,
    error: OpengistError,
) -> Result<ForkOutcome, CallToolResult> {
    let look = || async {
        let me = client.get_user_me().await?;
        let forks = client.list_forks(id, 1, 100).await?;
        Ok(
            match forks
                .items
                .into_iter()
                .find(|fork| fork.owner.username == me.profile.username)
            {
                // The answer that said whether it was new is lost: its age tells.
                Some(fork)
                    if fork
                        .created_at
                        .is_some_and(|at| at < called_at - CLOCK_SLACK) =>
                {
                    Seen::Applied(ForkOutcome::Existing(fork))
                }
                Some(fork) => Seen::Applied(ForkOutcome::Created(fork)),
                None => Seen::NotApplied,
            },
        )
    };
    let check = format!("Check with list_forks {id} before forking again.");
    write_outcome::find_out(
        "fork_gist",
        error,
        look,
        "no fork of the gist owned by you",
        &check,
    )
    .await
}
