//! `update_gist`: change a gist's title, description, visibility, and write or rename its
//! files (never delete one), asked about when the gist ends up not private and the call
//! widens visibility or writes anything a reader sees.
//!
//! Its arguments and how they become file changes, the checks made before asking (its
//! `Resolve`), its handler, its result, and its read-back after a lost answer. Its Opengist
//! operation (request body, guard target, question, condition, client method) is
//! `opengist/update_gist.rs`.

use ask_first::{Clearance, InputError, Resolve, guarded};
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
use super::common::write_outcome::{self, Seen, same_content};
use crate::opengist::gist_facts::{GistFacts, near_match};
use crate::opengist::requests::{GistId, Visibility};
use crate::opengist::update_gist::{FileChange, GistPatch, UpdateGist};
use crate::opengist::{GistDetail, OpengistClient, OpengistError};
use crate::state::{OpengistServer, ToolResult, rejection};

/// What a file operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileOpKind {
    /// Replace a file's content (or create it, with `allow_create`).
    Write,
    /// Rename a file, optionally replacing its content.
    Rename,
}

/// One file operation of `update_gist`. There is no delete: use `delete_gist_files`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileOpArg {
    /// `write` or `rename`.
    pub op: FileOpKind,
    /// The file as it is named now.
    pub filename: String,
    /// For `rename`: the new name.
    #[serde(default)]
    pub new_filename: Option<String>,
    /// For `write`: the full new content (required, non-empty). For `rename`: optional new content.
    #[serde(default)]
    pub content: Option<String>,
}

/// Arguments of `update_gist`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGistArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// A new title.
    #[serde(default)]
    pub title: Option<String>,
    /// A new description.
    #[serde(default)]
    pub description: Option<String>,
    /// A new visibility: `private`, `unlisted` or `public`.
    #[serde(default)]
    pub visibility: Option<Visibility>,
    /// File writes and renames. Never deletes a file.
    #[serde(default)]
    pub file_ops: Vec<FileOpArg>,
    /// Allow `write` to create a file that does not exist yet. Default false, so a typo in a
    /// filename is caught instead of adding a file.
    #[serde(default)]
    pub allow_create: bool,
    /// Only if a previous call returned one: the confirmation token, quoted exactly.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

fn file_changes(args: &UpdateGistArgs, facts: &GistFacts) -> Result<Vec<FileChange>, String> {
    let mut changes = Vec::with_capacity(args.file_ops.len());
    for (i, op) in args.file_ops.iter().enumerate() {
        let index = i + 1;
        let exists = facts.files.contains_key(&op.filename);
        let near = || {
            near_match(&op.filename, facts.files.keys())
                .map(|m| format!(" Did you mean {m:?}?"))
                .unwrap_or_default()
        };
        match op.op {
            FileOpKind::Write => {
                let Some(content) = op.content.clone() else {
                    return Err(format!(
                        "file operation #{index} is a write without `content`: give the full new content of the file."
                    ));
                };
                if op.new_filename.is_some() {
                    return Err(format!(
                        "file operation #{index} is a write with `new_filename`: use `op: \"rename\"` to rename."
                    ));
                }
                if !exists && !args.allow_create {
                    return Err(format!(
                        "file operation #{index} writes {:?}, which is not in the gist.{} To add a new file, set `allow_create: true`.",
                        op.filename,
                        near()
                    ));
                }
                changes.push(FileChange::Write {
                    filename: op.filename.clone(),
                    content,
                });
            }
            FileOpKind::Rename => {
                let Some(new_filename) = op.new_filename.clone() else {
                    return Err(format!(
                        "file operation #{index} is a rename without `new_filename`: give the new name."
                    ));
                };
                if !exists {
                    return Err(format!(
                        "file operation #{index} renames {:?}, which is not in the gist.{}",
                        op.filename,
                        near()
                    ));
                }
                if new_filename == op.filename {
                    // A rename onto its own name renames nothing: with content it is a write.
                    let Some(content) = op.content.clone() else {
                        return Err(format!(
                            "file operation #{index} renames {:?} to its own name, which changes nothing: give a different `new_filename`, or use `op: \"write\"` with `content` to change the file.",
                            op.filename
                        ));
                    };
                    changes.push(FileChange::Write {
                        filename: op.filename.clone(),
                        content,
                    });
                    continue;
                }
                if facts.files.contains_key(&new_filename) {
                    return Err(format!(
                        "file operation #{index} renames onto {new_filename:?}, which already exists in the gist: renaming would overwrite it."
                    ));
                }
                changes.push(FileChange::Rename {
                    filename: op.filename.clone(),
                    new_filename,
                    content: op.content.clone(),
                });
            }
        }
    }
    Ok(changes)
}

impl Resolve<OpengistServer, UpdateGistArgs> for UpdateGist {
    async fn resolve(server: &OpengistServer, args: &UpdateGistArgs) -> Result<Self, InputError> {
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        let target = target_of(server, args, id.clone(), &detail).await?;
        let client = &server.client().map_err(rejection)?;
        preflight::before_asking(client.check_can_update(&id).await, NOTHING_CHANGED)?;
        Ok(target)
    }

    /// After a yes, only what the question showed is read again: the gist's facts and topics,
    /// by the id already resolved (no link lookup, no scope probe).
    async fn recheck(
        server: &OpengistServer,
        args: &UpdateGistArgs,
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
    args: &UpdateGistArgs,
    id: GistId,
    detail: &GistDetail,
) -> Result<UpdateGist, InputError> {
    if !args.file_ops.is_empty() {
        refuse_partial_file_list(detail)?;
    }
    let client = server.client().map_err(rejection)?;
    let mut facts = GistFacts::of(client.site(), detail);
    facts.topics = topics_of(server, detail).await;
    let changes = file_changes(args, &facts)
        .map_err(|e| InputError::new(format!("{e} Nothing was changed.")))?;
    let patch = GistPatch::new(
        args.title.clone(),
        args.description.clone(),
        args.visibility,
        changes,
    )
    .map_err(|e| InputError::new(format!("{e}. Nothing was changed.")))?;
    Ok(UpdateGist::new(id, patch, facts))
}

/// Result of `update_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Updated {
    /// The gist after the change.
    pub gist: WrittenGist,
    /// The revision before the change: `get_gist` with this `sha` shows the previous state.
    pub previous_revision: Option<String>,
    /// The newest revision after the change.
    pub revision: Option<String>,
    /// Its filenames after the change.
    pub files: Vec<String>,
    /// The topics Opengist's API dropped with this change, when it had any (or could not tell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topics_removed: Option<String>,
    /// How the call was cleared.
    pub cleared_by: ClearedBy,
}

#[tool_router(router = update_gist_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Updates a gist. Asks the person first when the gist ends up not private and the call
    /// widens visibility or writes anything a reader sees.
    #[guarded(when = "exposes_content")]
    #[tool(
        name = "update_gist",
        description = "Change a gist's title, description, visibility, or write and rename files (never deletes a file; use delete_gist_files). Writing to a filename that does not exist is refused unless allow_create is true. Asks the person first when the gist ends up not private and the call widens visibility or changes what readers see. The result names previous_revision, readable with get_gist(sha). Opengist's API clears the gist's topics on every update (re-add them in its web UI).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<Updated>()
    )]
    async fn update_gist(
        &self,
        Parameters(_args): Parameters<UpdateGistArgs>,
        clearance: Clearance<UpdateGist>,
    ) -> ToolResult<Updated> {
        let client = &self.client()?;
        let cleared_by = ClearedBy::of(clearance.approved_by());
        let previous_revision = clearance.target().previous_revision().map(str::to_owned);
        let cache = self.cache();
        let _forget = cache.forget_after(clearance.target().gist_id());
        let topics_removed = clearance.target().topics_note();
        let read_back = UpdateReadBack::before(clearance.target());
        let detail = match client.update_gist(clearance).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(Updated {
            gist: WrittenGist::from(&detail.summary),
            previous_revision,
            revision: detail.head_sha().map(str::to_owned),
            files: filenames(&detail),
            topics_removed,
            cleared_by,
        }))
    }
}

/// What a lost `update_gist` is recognised by: every requested change visible in the gist
/// (title, description, visibility, written and renamed files), or none of them.
struct UpdateReadBack {
    id: GistId,
    title: Option<String>,
    description: Option<String>,
    visibility: Option<Visibility>,
    files: Vec<FileChange>,
    revision: Option<String>,
}

impl UpdateReadBack {
    /// Remembers the requested change and the revision before it.
    fn before(target: &UpdateGist) -> Self {
        let patch = target.patch();
        Self {
            id: target.gist_id().clone(),
            title: patch.title().map(str::to_owned),
            description: patch.description().map(str::to_owned),
            visibility: patch.visibility(),
            files: patch.files().to_vec(),
            revision: target.previous_revision().map(str::to_owned),
        }
    }

    /// For each requested change: whether the gist shows it.
    fn changes_seen(&self, detail: &GistDetail) -> Vec<bool> {
        let mut seen = Vec::new();
        if let Some(title) = &self.title {
            seen.push(detail.summary.title == *title);
        }
        if let Some(description) = &self.description {
            seen.push(detail.summary.description == *description);
        }
        if let Some(visibility) = self.visibility {
            seen.push(detail.summary.visibility == visibility);
        }
        for change in &self.files {
            seen.push(match change {
                FileChange::Write { filename, content } => detail
                    .files
                    .get(filename)
                    .is_some_and(|file| same_content(file, content)),
                FileChange::Rename {
                    filename,
                    new_filename,
                    content,
                } => {
                    !detail.files.contains_key(filename)
                        && detail.files.get(new_filename).is_some_and(|file| {
                            content.as_deref().is_none_or(|c| same_content(file, c))
                        })
                }
            });
        }
        seen
    }

    async fn look(&self, client: &OpengistClient) -> Result<Seen<GistDetail>, OpengistError> {
        Ok(self.judge(client.get_gist(&self.id).await?))
    }

    /// With files: Opengist commits whenever files are sent, so the head revision decides
    /// (unmoved: not applied; moved and every change shows: applied). Metadata only: every
    /// change shows: applied; none: not applied. Anything else is mixed.
    fn judge(&self, detail: GistDetail) -> Seen<GistDetail> {
        let seen = self.changes_seen(&detail);
        let moved = detail.head_sha() != self.revision.as_deref();
        let shown = seen.iter().filter(|s| **s).count();
        let all = shown == seen.len();
        let applied = if self.files.is_empty() {
            all
        } else {
            all && moved
        };
        let not_applied = if self.files.is_empty() {
            shown == 0
        } else {
            !moved
        };
        if applied {
            Seen::Applied(detail)
        } else if not_applied {
            Seen::NotApplied
        } else {
            Seen::Mixed(format!(
                "{shown} of the {} requested changes, and the head revision {}",
                seen.len(),
                if moved {
                    "changed"
                } else {
                    "is the one before the call"
                }
            ))
        }
    }

    /// The gist after the update, if reading back shows it applied; otherwise the tool's error.
    async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        let check = format!(
            "Check with get_gist {} (its revisions show every change) before changing it again.",
            self.id
        );
        write_outcome::find_out(
            "update_gist",
            error,
            || self.look(client),
            "none of the requested changes and the same head revision",
            &check,
        )
        .await
    }
}

#[cfg(test)]
mod tests;
