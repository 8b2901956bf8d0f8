//! `delete_gist`: delete a gist with all its revisions; always asked about.
//!
//! Its arguments, the checks made before asking (its `Resolve`), its handler, its result,
//! and its read-back after a lost answer. Its Opengist operation (guard target, question,
//! client method) is `opengist/delete_gist.rs`.

use ask_first::{Approved, InputError, Resolve, guarded};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Parameters;
use super::common::existing_gist::{reread_gist, resolve_gist};
use super::common::preflight::{self, NOTHING_CHANGED};
use super::common::write_answer::ClearedBy;
use super::common::write_outcome::{self, Seen};
use crate::opengist::delete_gist::DeleteGist;
use crate::opengist::gist_facts::GistFacts;
use crate::opengist::requests::GistId;
use crate::opengist::{OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult, rejection};

/// Arguments of `delete_gist`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteGistArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// Only if a previous call returned one: the confirmation token, quoted exactly.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

impl Resolve<OpengistServer, DeleteGistArgs> for DeleteGist {
    async fn resolve(server: &OpengistServer, args: &DeleteGistArgs) -> Result<Self, InputError> {
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        let client = &server.client().map_err(rejection)?;
        preflight::before_asking(client.check_can_delete(&id).await, NOTHING_CHANGED)?;
        Ok(DeleteGist::new(id, GistFacts::of(client.site(), &detail)))
    }

    /// After a yes, only what the question showed is read again: the gist's facts, by the id
    /// already resolved (no link lookup, no scope probe: those did not change what was shown).
    async fn recheck(
        server: &OpengistServer,
        _args: &DeleteGistArgs,
        shown: Self,
    ) -> Result<Self, InputError> {
        let id = shown.gist_id().clone();
        let detail = reread_gist(server, &id).await?;
        let client = server.client().map_err(rejection)?;
        Ok(DeleteGist::new(id, GistFacts::of(client.site(), &detail)))
    }
}

/// Result of `delete_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct GistDeleted {
    /// The deleted gist's id.
    pub gist_id: String,
    /// Always true when the call succeeds.
    pub deleted: bool,
    /// How the call was cleared.
    pub cleared_by: ClearedBy,
}

#[tool_router(router = delete_gist_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Deletes a gist with all its revisions, always after the person approves.
    #[guarded(always)]
    #[tool(
        name = "delete_gist",
        description = "Delete a gist with all its revisions. Always asks the person first, showing its current visibility, file count, size, forks, likes and dates.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<GistDeleted>()
    )]
    async fn delete_gist(
        &self,
        Parameters(_args): Parameters<DeleteGistArgs>,
        approved: Approved<DeleteGist>,
    ) -> ToolResult<GistDeleted> {
        let client = &self.client()?;
        let cleared_by = ClearedBy::of(Some(approved.approved_by()));
        let gist_id = approved.target().gist_id().to_string();
        let cache = self.cache();
        let _forget = cache.forget_after(approved.target().gist_id());
        let read_back = DeleteReadBack::before(approved.target());
        if let Err(error) = client.delete_gist(approved).await {
            read_back.find_out(client, error).await?;
        }
        self.resources_changed();
        Ok(self.output(GistDeleted {
            gist_id,
            deleted: true,
            cleared_by,
        }))
    }
}

/// What a lost `delete_gist` is recognised by: the gist gone (404), or still there.
struct DeleteReadBack {
    id: GistId,
}

impl DeleteReadBack {
    /// Remembers which gist was to go.
    fn before(target: &DeleteGist) -> Self {
        Self {
            id: target.gist_id().clone(),
        }
    }

    async fn look(&self, client: &OpengistClient) -> Result<Seen<()>, OpengistError> {
        match client.get_gist(&self.id).await {
            Ok(_) => Ok(Seen::NotApplied),
            Err(error) if error.is_not_found() => Ok(Seen::Applied(())),
            Err(error) => Err(error),
        }
    }

    /// `Ok` if reading back shows the gist gone; otherwise the tool's error.
    async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<(), CallToolResult> {
        let check = format!(
            "Check with get_gist {}: \"does not exist\" means it is gone.",
            self.id
        );
        write_outcome::find_out(
            "delete_gist",
            error,
            || self.look(client),
            "the gist still there",
            &check,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_arguments_are_refused_by_the_schema() {
        let parsed: Result<DeleteGistArgs, _> =
            serde_json::from_value(serde_json::json!({"gist_id": "x", "confirm": true}));
        assert!(
            parsed.is_err(),
            "a made-up `confirm: true` is not silently ignored"
        );
    }
}
