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
mod tests {
    use serde_json::json;

    use super::*;

    fn facts(files: &[&str]) -> GistFacts {
        GistFacts {
            site: ask_first::fact::Configured::fixed("https://gist.example.org"),
            owner: "alice".to_owned(),
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

    const ID: &str = "0123456789abcdef0123456789abcdef";

    fn detail(title: &str, files: &[(&str, &str)], head: &str) -> GistDetail {
        let files: serde_json::Map<String, serde_json::Value> = files
            .iter()
            .map(|(name, content)| {
                (
                    (*name).to_owned(),
                    json!({"filename": name, "size": content.len(), "content": content}),
                )
            })
            .collect();
        serde_json::from_value(json!({
            "id": ID, "title": title, "visibility": "private",
            "files": files, "commits": [{"version": head}],
        }))
        .expect("a gist detail")
    }

    fn update() -> UpdateReadBack {
        UpdateReadBack {
            id: GistId::parse(ID).expect("id"),
            title: Some("new".to_owned()),
            description: None,
            visibility: Some(Visibility::Private),
            files: vec![
                FileChange::Write {
                    filename: "a.txt".to_owned(),
                    content: "new a".to_owned(),
                },
                FileChange::Rename {
                    filename: "b.txt".to_owned(),
                    new_filename: "c.txt".to_owned(),
                    content: None,
                },
            ],
            revision: Some("old-head".to_owned()),
        }
    }

    #[test]
    fn an_update_is_applied_not_applied_or_mixed_by_what_reads_back() {
        let u = update();
        let after = detail("new", &[("a.txt", "new a\n"), ("c.txt", "b")], "new-head");
        assert!(matches!(u.judge(after), Seen::Applied(_)));
        // Visibility was private already, so that change "shows" either way: the unmoved
        // head says the files were not written.
        let before = detail("old", &[("a.txt", "old a"), ("b.txt", "b")], "old-head");
        assert!(matches!(u.judge(before), Seen::NotApplied));
        let half = detail("new", &[("a.txt", "old a"), ("b.txt", "b")], "new-head");
        match u.judge(half) {
            Seen::Mixed(what) => assert!(what.contains("2 of the 4"), "{what}"),
            _ => panic!("a half-applied update is mixed"),
        }
        let metadata = UpdateReadBack {
            files: Vec::new(),
            ..update()
        };
        let same = detail("old", &[("a.txt", "old a")], "old-head");
        assert!(matches!(metadata.judge(same), Seen::Mixed(_)));
        let retitled = detail("new", &[("a.txt", "old a")], "old-head");
        assert!(matches!(metadata.judge(retitled), Seen::Applied(_)));
        let untouched = UpdateReadBack {
            visibility: None,
            ..metadata
        };
        let same = detail("old", &[("a.txt", "old a")], "old-head");
        assert!(matches!(untouched.judge(same), Seen::NotApplied));
    }
}
