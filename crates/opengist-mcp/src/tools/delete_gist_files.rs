//! `delete_gist_files`: delete 1 to 50 files of a gist, keeping at least one; always asked
//! about, the approval bound to exactly that set of filenames.
//!
//! Its arguments, the checks made before asking (its `Resolve`), its handler, its result,
//! and its read-back after a lost answer. Its Opengist operation (request body, guard target,
//! question, client method) is `opengist/delete_gist_files.rs`.

use ask_first::{Approved, InputError, Resolve, guarded};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Parameters;
use super::common::existing_gist::{
    refuse_partial_file_list, reread_gist, resolve_gist, topics_of,
};
use super::common::preflight::{self, NOTHING_CHANGED};
use super::common::write_answer::{ClearedBy, WrittenGist, filenames};
use super::common::write_outcome::{self, Seen};
use crate::opengist::delete_gist_files::DeleteGistFiles;
use crate::opengist::gist_facts::GistFacts;
use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult, rejection};

/// Arguments of `delete_gist_files`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteGistFilesArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// 1 to 50 exact filenames to delete. At least one file must remain (else use delete_gist).
    pub filenames: Vec<String>,
    /// Only if a previous call returned one: the confirmation token, quoted exactly.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

impl Resolve<OpengistServer, DeleteGistFilesArgs> for DeleteGistFiles {
    async fn resolve(
        server: &OpengistServer,
        args: &DeleteGistFilesArgs,
    ) -> Result<Self, InputError> {
        if args.filenames.is_empty() {
            return Err(InputError::new(
                "`filenames` is empty: name at least one file of the gist. Nothing was changed.",
            ));
        }
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        let target = target_of(server, args, id.clone(), &detail).await?;
        let client = &server.client().map_err(rejection)?;
        preflight::before_asking(client.check_can_delete_files(&id).await, NOTHING_CHANGED)?;
        Ok(target)
    }

    /// After a yes, only what the question showed is read again: the gist's files and topics,
    /// by the id already resolved (no link lookup, no scope probe).
    async fn recheck(
        server: &OpengistServer,
        args: &DeleteGistFilesArgs,
        shown: Self,
    ) -> Result<Self, InputError> {
        let id = shown.gist_id().clone();
        let detail = reread_gist(server, &id).await?;
        target_of(server, args, id, &detail).await
    }
}

/// The target for `args` on the gist `detail` (read just now), with its topics.
async fn target_of(
    server: &OpengistServer,
    args: &DeleteGistFilesArgs,
    id: GistId,
    detail: &GistDetail,
) -> Result<DeleteGistFiles, InputError> {
    refuse_partial_file_list(detail)?;
    let client = server.client().map_err(rejection)?;
    let mut facts = GistFacts::of(client.site(), detail);
    facts.topics = topics_of(server, detail).await;
    DeleteGistFiles::new(id, &args.filenames, facts).map_err(|e| InputError::new(e.to_string()))
}

/// Result of `delete_gist_files`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct FilesDeleted {
    /// The gist.
    pub gist: WrittenGist,
    /// The deleted filenames.
    pub deleted: Vec<String>,
    /// The filenames that remain.
    pub remaining: Vec<String>,
    /// The revision before the deletion: `get_gist` with this `sha` still shows the files.
    pub previous_revision: Option<String>,
    /// The topics Opengist's API dropped with this change, when it had any (or could not tell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topics_removed: Option<String>,
    /// How the call was cleared.
    pub cleared_by: ClearedBy,
}

#[tool_router(router = delete_gist_files_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Deletes files from a gist, always after the person approves the exact set.
    #[guarded(always)]
    #[tool(
        name = "delete_gist_files",
        description = "Delete 1-50 files from a gist, keeping at least one. Always asks the person first; the approval covers exactly this set of filenames. Unknown filenames are refused before anyone is asked. Opengist's API clears the gist's topics on this change too.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<FilesDeleted>()
    )]
    async fn delete_gist_files(
        &self,
        Parameters(_args): Parameters<DeleteGistFilesArgs>,
        approved: Approved<DeleteGistFiles>,
    ) -> ToolResult<FilesDeleted> {
        let client = &self.client()?;
        let cleared_by = ClearedBy::of(Some(approved.approved_by()));
        let deleted: Vec<String> = approved
            .target()
            .deletion()
            .names()
            .iter()
            .cloned()
            .collect();
        let previous_revision = approved.target().previous_revision().map(str::to_owned);
        let cache = self.cache();
        let _forget = cache.forget_after(approved.target().gist_id());
        let topics_removed = approved.target().topics_note();
        let read_back = DeleteFilesReadBack::before(approved.target());
        let detail = match client.delete_gist_files(approved).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(FilesDeleted {
            gist: WrittenGist::from(&detail.summary),
            deleted,
            remaining: filenames(&detail),
            previous_revision,
            topics_removed,
            cleared_by,
        }))
    }
}

/// What a lost `delete_gist_files` is recognised by: the files gone, or all still there.
struct DeleteFilesReadBack {
    id: GistId,
    names: Vec<String>,
}

impl DeleteFilesReadBack {
    /// Remembers which files were to go.
    fn before(target: &DeleteGistFiles) -> Self {
        Self {
            id: target.gist_id().clone(),
            names: target.deletion().names().iter().cloned().collect(),
        }
    }

    async fn look(&self, client: &OpengistClient) -> Result<Seen<GistDetail>, OpengistError> {
        let detail = client.get_gist(&self.id).await?;
        let remaining = self
            .names
            .iter()
            .filter(|name| detail.files.contains_key(*name))
            .count();
        Ok(if remaining == 0 {
            Seen::Applied(detail)
        } else if remaining == self.names.len() {
            Seen::NotApplied
        } else {
            Seen::Mixed(format!(
                "{remaining} of the {} files still in the gist",
                self.names.len()
            ))
        })
    }

    /// The gist after the deletion, if reading back shows it; otherwise the tool's error.
    async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        let check = format!("Check which files remain with get_gist {}.", self.id);
        write_outcome::find_out(
            "delete_gist_files",
            error,
            || self.look(client),
            "every one of the files still in the gist",
            &check,
        )
        .await
    }
}
