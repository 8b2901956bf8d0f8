//! The writing tools: create, update, delete files, delete, fork, like.
//!
//! Four are guarded. Each guarded handler takes the approval (or clearance) the guard made for
//! its exact target and hands it, by value, to the Opengist client, whose write methods accept
//! nothing else. Arguments and server-side facts are checked while resolving the target, so an
//! input error costs no question.

use mcp_guard::{Approved, ApprovedBy, Clearance, Rejection, Resolve, guarded};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Parameters;
use super::common::GistIdArg;
use super::outcome;
use super::preflight;
use crate::opengist::requests::{
    ExpirePreset, FileChange, GistPatch, NewGist, Visibility, parse_expiry,
};
use crate::opengist::{Change, ForkOutcome, GistDetail, GistSummary, LikeChange};
use crate::state::{OpengistServer, ToolResult, opengist_failure, rejection};
use crate::targets::{CreateGist, DeleteGist, DeleteGistFiles, GistFacts, UpdateGist, near_match};

/// How a guarded call was allowed to run.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Clearing {
    /// A person approved it in a dialog.
    Dialog,
    /// The same call was made twice with a confirmation token; no person was asked.
    ConfirmToken,
    /// No question was needed (e.g. the gist is and stays private).
    NotNeeded,
}

impl Clearing {
    fn of(by: Option<ApprovedBy>) -> Self {
        match by {
            Some(ApprovedBy::Dialog) => Self::Dialog,
            Some(_) => Self::ConfirmToken,
            None => Self::NotNeeded,
        }
    }
}

/// The facts of a gist the guard shows and binds, read from Opengist.
pub fn facts_of(detail: &GistDetail) -> GistFacts {
    GistFacts {
        visibility: detail.summary.visibility,
        files: detail
            .files
            .iter()
            .map(|(name, file)| (name.clone(), file.size))
            .collect(),
        fork_count: detail.summary.fork_count,
        like_count: detail.summary.like_count,
        created_at: detail.summary.created_at.map_or(0, |d| d.timestamp()),
        updated_at: detail.summary.updated_at.map_or(0, |d| d.timestamp()),
        revision: detail.head_sha().map(str::to_owned),
        topics: None,
    }
}

/// The gist's topics for the facts of a change that drops them: `None` when they cannot be
/// read (Opengist's single-gist answer never carries them; see `opengist/topics.rs`).
async fn topics_of(server: &OpengistServer, detail: &GistDetail) -> Option<Vec<String>> {
    let client = server.client().ok()?;
    crate::cache::gist_topics(&server.shared.cache, client, &detail.summary)
        .await
        .ok()
        .flatten()
}

/// Opengist lists at most 50 files of a gist; beyond that, names cannot be checked, so file
/// operations are refused rather than guessed at.
fn refuse_partial_file_list(detail: &GistDetail) -> Result<(), Rejection> {
    if detail.truncated {
        return Err(Rejection::new(
            "Opengist listed only part of this gist's files (it shows at most 50), so the filenames cannot be checked and nothing was changed. Use Opengist's web interface for gists with more than 50 files.",
        ));
    }
    Ok(())
}

async fn resolve_gist(
    server: &OpengistServer,
    gist_id: &str,
) -> Result<(crate::opengist::requests::GistId, GistDetail), Rejection> {
    let client = server.client().map_err(rejection)?;
    let id = server.gist_id(gist_id).await.map_err(rejection)?;
    let detail = client
        .get_gist(&id)
        .await
        .map_err(|e| rejection(opengist_failure(e)))?;
    Ok((id, detail))
}

/// A short summary of a gist in write results.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GistRef {
    /// The gist's id.
    pub id: String,
    /// Its web page.
    pub html_url: String,
    /// Who can see it.
    pub visibility: Visibility,
}

impl From<&GistSummary> for GistRef {
    fn from(summary: &GistSummary) -> Self {
        Self {
            id: summary.id.to_string(),
            html_url: summary.html_url.clone(),
            visibility: summary.visibility,
        }
    }
}

// ---- create_gist -------------------------------------------------------------------------

/// One file of a new gist.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFileArg {
    /// A plain filename such as `notes.md` (no `/`).
    pub filename: String,
    /// The file's content; must not be empty.
    pub content: String,
}

/// Arguments of `create_gist`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGistArgs {
    /// 1 to 50 files.
    pub files: Vec<NewFileArg>,
    /// Who can see it: `private`, `unlisted` or `public`. Required: never implicit. A gist that
    /// is not private is published only after the person at the client approves.
    pub visibility: Visibility,
    /// A title (Opengist defaults it to the alphabetically first filename).
    #[serde(default)]
    pub title: Option<String>,
    /// A description.
    #[serde(default)]
    pub description: Option<String>,
    /// A preset expiry: never, 1hour, 12hours, 1day, 7days, 15days. Not with `expires_at`.
    #[serde(default)]
    pub expire: Option<ExpirePreset>,
    /// An exact expiry, RFC 3339 (e.g. `2027-01-31T12:00:00Z`). Not with `expire`.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Only if a previous call returned one: the confirmation token, quoted exactly.
    #[serde(default)]
    pub confirm_token: Option<String>,
}

impl Resolve<OpengistServer, CreateGistArgs> for CreateGist {
    async fn resolve(server: &OpengistServer, args: &CreateGistArgs) -> Result<Self, Rejection> {
        server.client().map_err(rejection)?;
        let expiry = parse_expiry(args.expire, args.expires_at.as_deref(), chrono::Utc::now())
            .map_err(|e| Rejection::new(format!("{e}. Nothing was created.")))?;
        let files = args
            .files
            .iter()
            .map(|f| (f.filename.clone(), f.content.clone()))
            .collect();
        let new = NewGist::new(
            args.title.clone(),
            args.description.clone(),
            args.visibility,
            expiry,
            files,
        )
        .map_err(|e| Rejection::new(format!("{e}. Nothing was created.")))?;
        preflight::can_create(server).await?;
        Ok(CreateGist::new(new))
    }
}

/// Result of `create_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Created {
    /// The new gist.
    pub gist: GistRef,
    /// Its filenames, as Opengist stored them.
    pub files: Vec<String>,
    /// How the call was cleared.
    pub cleared_by: Clearing,
}

// ---- update_gist -------------------------------------------------------------------------

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
    async fn resolve(server: &OpengistServer, args: &UpdateGistArgs) -> Result<Self, Rejection> {
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        if !args.file_ops.is_empty() {
            refuse_partial_file_list(&detail)?;
        }
        let mut facts = facts_of(&detail);
        facts.topics = topics_of(server, &detail).await;
        let changes = file_changes(args, &facts)
            .map_err(|e| Rejection::new(format!("{e} Nothing was changed.")))?;
        let patch = GistPatch::new(
            args.title.clone(),
            args.description.clone(),
            args.visibility,
            changes,
        )
        .map_err(|e| Rejection::new(format!("{e}. Nothing was changed.")))?;
        preflight::can_change(server, &id, Change::Update).await?;
        Ok(UpdateGist::new(id, patch, facts))
    }
}

/// Result of `update_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Updated {
    /// The gist after the change.
    pub gist: GistRef,
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
    pub cleared_by: Clearing,
}

// ---- delete_gist_files -------------------------------------------------------------------

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
    ) -> Result<Self, Rejection> {
        if args.filenames.is_empty() {
            return Err(Rejection::new(
                "`filenames` is empty: name at least one file of the gist. Nothing was changed.",
            ));
        }
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        refuse_partial_file_list(&detail)?;
        let mut facts = facts_of(&detail);
        facts.topics = topics_of(server, &detail).await;
        let target = DeleteGistFiles::new(id.clone(), &args.filenames, facts)
            .map_err(|e| Rejection::new(e.to_string()))?;
        preflight::can_change(server, &id, Change::DeleteFiles).await?;
        Ok(target)
    }
}

/// Result of `delete_gist_files`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FilesDeleted {
    /// The gist.
    pub gist: GistRef,
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
    pub cleared_by: Clearing,
}

// ---- delete_gist -------------------------------------------------------------------------

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
    async fn resolve(server: &OpengistServer, args: &DeleteGistArgs) -> Result<Self, Rejection> {
        let (id, detail) = resolve_gist(server, &args.gist_id).await?;
        preflight::can_change(server, &id, Change::Delete).await?;
        Ok(DeleteGist::new(id, facts_of(&detail)))
    }
}

/// Result of `delete_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GistDeleted {
    /// The deleted gist's id.
    pub gist_id: String,
    /// Always true when the call succeeds.
    pub deleted: bool,
    /// How the call was cleared.
    pub cleared_by: Clearing,
}

// ---- fork_gist, set_gist_like --------------------------------------------------------------

/// Result of `fork_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Forked {
    /// True when a new fork was made; false when the token's owner already had one.
    pub created: bool,
    /// The fork.
    pub fork: GistRef,
}

/// Arguments of `set_gist_like`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetLikeArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// `true` to like, `false` to unlike. Idempotent.
    pub liked: bool,
}

/// Result of `set_gist_like`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LikeSet {
    /// The gist's id.
    pub gist_id: String,
    /// The state now.
    pub liked: bool,
    /// Whether this call changed it.
    pub changed: bool,
}

fn filenames(detail: &GistDetail) -> Vec<String> {
    detail.files.keys().cloned().collect()
}

#[tool_router(router = write_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Creates a gist. Asks the person first when it would not be private.
    #[guarded(when = "publishes")]
    #[tool(
        name = "create_gist",
        description = "Create a gist from 1-50 files. `visibility` is required (private, unlisted, public). A gist that is not private is created only after the person at the client approves; without a dialog the call returns a confirm_token to quote in an identical second call.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<Created>()
    )]
    async fn create_gist(
        &self,
        Parameters(_args): Parameters<CreateGistArgs>,
        clearance: Clearance<CreateGist>,
    ) -> ToolResult<Created> {
        let client = self.client()?;
        let cleared_by = Clearing::of(clearance.approved_by());
        let read_back = outcome::CreateReadBack::before(clearance.target());
        let detail = match client.create_gist(clearance).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(Created {
            gist: GistRef::from(&detail.summary),
            files: filenames(&detail),
            cleared_by,
        }))
    }

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
        let client = self.client()?;
        let cleared_by = Clearing::of(clearance.approved_by());
        let previous_revision = clearance.target().previous_revision().map(str::to_owned);
        let _forget = self.shared.cache.forget_after(clearance.target().gist_id());
        let topics_removed = clearance.target().topics_note();
        let read_back = outcome::UpdateReadBack::before(clearance.target());
        let detail = match client.update_gist(clearance).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(Updated {
            gist: GistRef::from(&detail.summary),
            previous_revision,
            revision: detail.head_sha().map(str::to_owned),
            files: filenames(&detail),
            topics_removed,
            cleared_by,
        }))
    }

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
        let client = self.client()?;
        let cleared_by = Clearing::of(Some(approved.approved_by()));
        let deleted: Vec<String> = approved
            .target()
            .deletion()
            .names()
            .iter()
            .cloned()
            .collect();
        let previous_revision = approved.target().previous_revision().map(str::to_owned);
        let _forget = self.shared.cache.forget_after(approved.target().gist_id());
        let topics_removed = approved.target().topics_note();
        let read_back = outcome::DeleteFilesReadBack::before(approved.target());
        let detail = match client.delete_gist_files(approved).await {
            Ok(detail) => detail,
            Err(error) => read_back.find_out(client, error).await?,
        };
        self.resources_changed();
        Ok(self.output(FilesDeleted {
            gist: GistRef::from(&detail.summary),
            deleted,
            remaining: filenames(&detail),
            previous_revision,
            topics_removed,
            cleared_by,
        }))
    }

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
        let client = self.client()?;
        let cleared_by = Clearing::of(Some(approved.approved_by()));
        let gist_id = approved.target().gist_id().to_string();
        let _forget = self.shared.cache.forget_after(approved.target().gist_id());
        let read_back = outcome::DeleteReadBack::before(approved.target());
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

    /// Forks someone else's gist.
    #[tool(
        name = "fork_gist",
        description = "Fork someone else's gist (you cannot fork your own). Says whether a new fork was created or your existing fork was found. The fork has the parent's visibility.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<Forked>()
    )]
    async fn fork_gist(&self, Parameters(args): Parameters<GistIdArg>) -> ToolResult<Forked> {
        let client = self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let called_at = chrono::Utc::now();
        let outcome = match client.fork_gist(&id).await {
            Ok(outcome) => outcome,
            Err(error) => outcome::fork_lost(client, &id, called_at, error).await?,
        };
        let (created, fork) = match &outcome {
            ForkOutcome::Created(fork) => (true, fork),
            ForkOutcome::Existing(fork) => (false, fork),
        };
        self.resources_changed();
        Ok(self.output(Forked {
            created,
            fork: GistRef::from(fork),
        }))
    }

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
        let client = self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let change = match client.set_like(&id, args.liked).await {
            Ok(change) => change,
            Err(error) => outcome::like_lost(client, &id, args.liked, error).await?,
        };
        let changed = matches!(change, LikeChange::Liked | LikeChange::Unliked);
        Ok(self.output(LikeSet {
            gist_id: id.to_string(),
            liked: args.liked,
            changed,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(files: &[&str]) -> GistFacts {
        GistFacts {
            visibility: Visibility::Public,
            files: files.iter().map(|f| ((*f).to_owned(), 1)).collect(),
            fork_count: 0,
            like_count: 0,
            created_at: 0,
            updated_at: 0,
            revision: None,
            topics: None,
        }
    }

    fn args(ops: Vec<FileOpArg>, allow_create: bool) -> UpdateGistArgs {
        UpdateGistArgs {
            gist_id: "0123456789abcdef0123456789abcdef".to_owned(),
            title: None,
            description: None,
            visibility: None,
            file_ops: ops,
            allow_create,
            confirm_token: None,
        }
    }

    fn op(
        op: FileOpKind,
        filename: &str,
        new_filename: Option<&str>,
        content: Option<&str>,
    ) -> FileOpArg {
        FileOpArg {
            op,
            filename: filename.to_owned(),
            new_filename: new_filename.map(str::to_owned),
            content: content.map(str::to_owned),
        }
    }

    #[test]
    fn a_write_to_a_missing_file_is_refused_with_a_near_match_unless_allowed() {
        let f = facts(&["README.md"]);
        let refused = file_changes(
            &args(
                vec![op(FileOpKind::Write, "readme.md", None, Some("x"))],
                false,
            ),
            &f,
        )
        .expect_err("missing file");
        assert!(
            refused.contains("\"readme.md\", which is not in the gist"),
            "{refused}"
        );
        assert!(refused.contains("Did you mean \"README.md\"?"), "{refused}");
        assert!(refused.contains("allow_create: true"), "{refused}");
        let allowed = file_changes(
            &args(vec![op(FileOpKind::Write, "new.md", None, Some("x"))], true),
            &f,
        )
        .expect("allowed");
        assert_eq!(
            allowed,
            vec![FileChange::Write {
                filename: "new.md".to_owned(),
                content: "x".to_owned()
            }]
        );
    }

    #[test]
    fn renames_need_an_existing_source_and_a_free_destination() {
        let f = facts(&["a", "b"]);
        let missing = file_changes(
            &args(vec![op(FileOpKind::Rename, "c", Some("d"), None)], true),
            &f,
        )
        .expect_err("no source");
        assert!(
            missing.contains("renames \"c\", which is not in the gist"),
            "{missing}"
        );
        let clobber = file_changes(
            &args(vec![op(FileOpKind::Rename, "a", Some("b"), None)], true),
            &f,
        )
        .expect_err("destination exists");
        assert!(clobber.contains("already exists"), "{clobber}");
        let itself = file_changes(
            &args(vec![op(FileOpKind::Rename, "a", Some("a"), None)], false),
            &f,
        )
        .expect_err("rename onto itself");
        assert!(
            itself.contains("to its own name") && !itself.contains("overwrite"),
            "{itself}"
        );
        let rewrite = file_changes(
            &args(
                vec![op(FileOpKind::Rename, "a", Some("a"), Some("x"))],
                false,
            ),
            &f,
        )
        .expect("a rename onto itself with content writes it");
        assert_eq!(
            rewrite,
            vec![FileChange::Write {
                filename: "a".to_owned(),
                content: "x".to_owned()
            }]
        );
        let unnamed = file_changes(
            &args(vec![op(FileOpKind::Rename, "a", None, None)], true),
            &f,
        )
        .expect_err("no new name");
        assert!(unnamed.contains("without `new_filename`"), "{unnamed}");
        let ok = file_changes(
            &args(
                vec![op(FileOpKind::Rename, "a", Some("z"), Some("new"))],
                false,
            ),
            &f,
        )
        .expect("valid rename");
        assert_eq!(ok[0].content(), Some("new"));
    }

    #[test]
    fn writes_need_content_and_no_new_name() {
        let f = facts(&["a"]);
        let empty = file_changes(
            &args(vec![op(FileOpKind::Write, "a", None, None)], false),
            &f,
        )
        .expect_err("no content");
        assert!(empty.contains("without `content`"), "{empty}");
        let renaming = file_changes(
            &args(
                vec![op(FileOpKind::Write, "a", Some("b"), Some("x"))],
                false,
            ),
            &f,
        )
        .expect_err("write with new name");
        assert!(renaming.contains("use `op: \"rename\"`"), "{renaming}");
    }

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
