//! `list_gist_commits`: a gist's commits (revisions), newest first, paged.
//!
//! Opengist's commit list leaves out commits that touch 11 or more files; on the first page
//! the gist's real head, as its git repository names it, is reported when the list does not
//! start at it ([`note_unlisted_head`]).

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::common::Parameters;
use super::common::gist_shapes::CommitOut;
use super::common::paging::{GistPageArgs, check_paging, next_page_call};
use crate::opengist::requests::GistId;
use crate::opengist::{Commit, Page};
use crate::state::{OpengistServer, Provenance, ToolResult, failure, opengist_failure};
use crate::text::call_text;

/// Result of `list_gist_commits`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct CommitList {
    /// The commits, newest first.
    pub commits: Vec<CommitOut>,
    /// This page.
    pub page: u32,
    /// Commits per page.
    pub per_page: u32,
    /// Whether older commits follow.
    pub has_more: bool,
    /// The exact call for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<String>,
    /// On the first page, when Opengist's list does not start at the gist's newest revision:
    /// that revision, as git names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_revision: Option<String>,
    /// What may be missing from this list and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Marks author names as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// On the first page: names the gist's newest revision `head` (as git advertises it) when
/// Opengist's list does not start with it, which happens when commits touched 11 or more
/// files (Opengist's API lists none of those).
pub(crate) fn note_unlisted_head(list: &mut CommitList, gist_id: &GistId, head: Option<&str>) {
    let Some(head) = head else { return };
    if list.page != 1 || list.commits.first().is_some_and(|c| c.version == head) {
        return;
    }
    list.head_revision = Some(head.to_owned());
    list.note = Some(format!(
        "Opengist's commit list leaves out commits that touch 11 or more files, so it does not start at this gist's newest revision {head} (named by the gist's git repository); read that revision with {}",
        call_text(
            "get_gist",
            &[("gist_id", json!(gist_id.as_str())), ("sha", json!(head))]
        )
    ));
}

/// Shapes a page of commits.
pub(crate) fn shape_commits(gist_id: &GistId, page: &Page<Commit>) -> CommitList {
    CommitList {
        commits: page.items.iter().map(CommitOut::from_commit).collect(),
        page: page.page,
        per_page: page.per_page,
        has_more: page.has_next,
        next_call: page
            .has_next
            .then(|| next_page_call("list_gist_commits", gist_id, page.page, page.per_page)),
        head_revision: None,
        note: None,
        provenance: Provenance::OPENGIST,
    }
}

#[tool_router(router = list_gist_commits_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Lists a gist's commits, newest first.
    #[tool(
        name = "list_gist_commits",
        description = "List a gist's commits (revisions), newest first, paged (page, per_page 1-100, default 30). Each `version` can be passed as `sha` to get_gist or get_gist_file.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<CommitList>()
    )]
    async fn list_gist_commits(
        &self,
        Parameters(args): Parameters<GistPageArgs>,
    ) -> ToolResult<CommitList> {
        let (page, per_page) = check_paging(args.page, args.per_page).map_err(failure)?;
        let client = &self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let list = client
            .list_commits(&id, page, per_page)
            .await
            .map_err(opengist_failure)?;
        let mut out = shape_commits(&id, &list);
        if page == 1 {
            // One more read: the gist, whose head git names when the list may not start at it.
            if let Ok(detail) = client.get_gist(&id).await {
                note_unlisted_head(&mut out, &id, detail.head_sha());
            }
        }
        Ok(self.output(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::common::fixtures::*;

    #[test]
    fn an_unlisted_head_is_named_on_the_first_page_only() {
        let head = "28572ddb10d93c9639389d86f49c773976fdf8c7";
        let listed: Commit = serde_json::from_value(commit_json("aaaa")).expect("commit");
        let mut empty = shape_commits(&id(), &page(vec![], 1, 30, false));
        note_unlisted_head(&mut empty, &id(), Some(head));
        assert_eq!(empty.head_revision.as_deref(), Some(head));
        let note = empty.note.as_deref().unwrap_or_default();
        assert!(
            note.contains("11 or more files") && note.contains(&format!("sha=\"{head}\"")),
            "{note}"
        );
        let mut same = shape_commits(&id(), &page(vec![listed.clone()], 1, 30, false));
        note_unlisted_head(&mut same, &id(), Some("aaaa"));
        assert!(same.head_revision.is_none() && same.note.is_none());
        let mut later = shape_commits(&id(), &page(vec![listed], 2, 30, false));
        note_unlisted_head(&mut later, &id(), Some(head));
        assert!(later.head_revision.is_none());
    }

    #[test]
    fn commit_pages_name_the_next_call() {
        let commits: Vec<Commit> = (0..2)
            .map(|i| serde_json::from_value(commit_json(&format!("{i:040x}"))).expect("commit"))
            .collect();
        let out = shape_commits(&id(), &page(commits, 1, 2, true));
        assert_eq!(out.commits.len(), 2);
        assert_eq!(
            out.next_call.as_deref(),
            Some(&*format!(
                r#"list_gist_commits with gist_id="{ID}", page=2, per_page=2"#
            ))
        );
    }
}
