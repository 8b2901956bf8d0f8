//! What happened to a write whose answer was lost.
//!
//! When a write request may have reached Opengist but its answer did not come back (a timeout,
//! a connection closed after sending, a gateway giving up: [`OpengistError::write_may_have_applied`]),
//! the write tools do not report a failure and never say "try again": following that advice
//! made duplicate public gists. They read back instead, a few times over a few seconds:
//!
//! - `create_gist`: a gist of the token's owner, updated since shortly before the call, with
//!   exactly these files (names and contents) and this title;
//! - `update_gist`: every requested change visible in the gist (title, description,
//!   visibility, written and renamed files), and none of them visible;
//! - `delete_gist_files`: the files gone, or all still there;
//! - `delete_gist`: the gist gone (404), or still there;
//! - `fork_gist`: a fork of the gist owned by the token's owner;
//! - `set_gist_like`: the like state.
//!
//! Applied: the tool returns its normal result, built from what was read back. Not applied (as
//! far as Opengist shows after the last read): an error that says so and how to check before
//! doing anything again. Mixed, or the read-back itself failed: an error that says plainly that
//! the outcome is unknown and how to check.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rmcp::model::CallToolResult;

use super::audit_outcome::{mark_unknown, write_failure};
use crate::opengist::requests::{FileChange, GistId, NewGist};
use crate::opengist::{
    ForkOutcome, GistDetail, GistFile, LikeChange, LikeState, ListScope, OpengistClient,
    OpengistError,
};
use crate::state::failure;
use crate::targets::{CreateGist, DeleteGist, DeleteGistFiles, UpdateGist};

/// Pauses before each read-back: the first at once, then later ones in case Opengist is
/// still working on the request.
const READ_BACK_PAUSES: [Duration; 3] = [
    Duration::ZERO,
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// How far before the call a created gist's `updated_at` may lie (clock skew between this
/// machine and Opengist's).
const CLOCK_SLACK: chrono::Duration = chrono::Duration::seconds(120);

/// What one read-back saw.
enum Seen<T> {
    /// The write is there: this is the result.
    Applied(T),
    /// Nothing of the write is there.
    NotApplied,
    /// Part of it, or something else changed: say what.
    Mixed(String),
}

/// Reads back with `read` until it sees the write applied or the pauses run out. `Err` is a
/// read that failed.
async fn read_back<T, F, Fut>(mut read: F) -> Result<Seen<T>, OpengistError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Seen<T>, OpengistError>>,
{
    let mut last = Seen::NotApplied;
    for pause in READ_BACK_PAUSES {
        tokio::time::sleep(pause).await;
        match read().await? {
            Seen::Applied(value) => return Ok(Seen::Applied(value)),
            other => last = other,
        }
    }
    Ok(last)
}

fn reads_said() -> String {
    let total: u64 = READ_BACK_PAUSES.iter().map(Duration::as_secs).sum();
    format!("{} read-backs over {total} seconds", READ_BACK_PAUSES.len())
}

/// The tool's answer for a failed write: the error itself when the write cannot have reached
/// Opengist; otherwise what reading back with `look` shows ([`settle`]).
async fn find_out<T, F, Fut>(
    tool: &str,
    lost: OpengistError,
    look: F,
    not_applied: &str,
    how_to_check: &str,
) -> Result<T, CallToolResult>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Seen<T>, OpengistError>>,
{
    if !lost.write_may_have_applied() {
        return Err(write_failure(lost));
    }
    let seen = read_back(look).await;
    settle(tool, &lost, seen, not_applied, how_to_check)
}

/// The tool's answer for a lost write, from what the read-back saw. `not_applied` says what
/// it saw when nothing of the write is there; `how_to_check` tells the person how to see for
/// themselves.
fn settle<T>(
    tool: &str,
    lost: &OpengistError,
    seen: Result<Seen<T>, OpengistError>,
    not_applied: &str,
    how_to_check: &str,
) -> Result<T, CallToolResult> {
    match seen {
        Ok(Seen::Applied(value)) => {
            tracing::info!(
                tool,
                "a write's answer was lost; reading back showed it was applied"
            );
            Ok(value)
        }
        Ok(Seen::NotApplied) => Err(failure(format!(
            "{lost}. {} show {not_applied}: the change was NOT applied, as far as Opengist shows now. {how_to_check}",
            capitalise(&reads_said()),
        ))),
        Ok(Seen::Mixed(what)) => Err(mark_unknown(failure(format!(
            "{lost}. The outcome is UNKNOWN: reading back shows {what}. {how_to_check}"
        )))),
        Err(read_error) => Err(mark_unknown(failure(format!(
            "{lost}. The outcome is UNKNOWN: reading back failed too ({read_error}). {how_to_check}"
        )))),
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn same_content(file: &GistFile, expected: &str) -> bool {
    if file.truncated {
        return file.size == expected.len() as u64;
    }
    let trim = |text: &str| text.trim_end_matches(['\r', '\n']).to_owned();
    file.content == expected || trim(&file.content) == trim(expected)
}

// ---- create_gist --------------------------------------------------------------------------

/// The facts a lost `create_gist` is recognised by, taken before the request.
pub struct CreateReadBack {
    new: NewGist,
    since: DateTime<Utc>,
}

impl CreateReadBack {
    /// Remembers what is being created, and when.
    pub fn before(target: &CreateGist) -> Self {
        Self {
            new: target.new_gist().clone(),
            since: Utc::now() - CLOCK_SLACK,
        }
    }

    fn matches(&self, detail: &GistDetail) -> bool {
        let files = self.new.files();
        let title_ok = match self.new.title() {
            Some(title) => detail.summary.title == title,
            None => true,
        };
        title_ok
            && detail.summary.visibility == self.new.visibility()
            && detail.files.len() == files.len()
            && files.iter().all(|file| {
                detail
                    .files
                    .get(file.filename())
                    .is_some_and(|held| same_content(held, file.content()))
            })
    }

    async fn look(&self, client: &OpengistClient) -> Result<Seen<GistDetail>, OpengistError> {
        let page = client
            .list_gists(ListScope::Mine, 1, 100, Some(self.since))
            .await?;
        let mut found = Vec::new();
        for summary in page.items {
            let named = self.new.title().is_none_or(|title| summary.title == title);
            if !named || summary.visibility != self.new.visibility() {
                continue;
            }
            let detail = client.get_gist(&summary.id).await?;
            if self.matches(&detail) {
                found.push(detail);
            }
        }
        Ok(match found.len() {
            0 => Seen::NotApplied,
            1 => Seen::Applied(found.remove(0)),
            _ => Seen::Mixed(format!(
                "{} gists with exactly these files and this title, made since shortly before the call ({}), so which one this call made cannot be told",
                found.len(),
                found
                    .iter()
                    .map(|d| d.id().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        })
    }

    /// The created gist, if reading back finds it; otherwise the tool's error.
    pub async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        find_out(
            "create_gist",
            error,
            || self.look(client),
            "no gist of yours with these files and this title",
            "Check with list_gists (newest first) before creating it again, so it is not made twice.",
        )
        .await
    }
}

// ---- update_gist --------------------------------------------------------------------------

/// What a lost `update_gist` is recognised by.
pub struct UpdateReadBack {
    id: GistId,
    title: Option<String>,
    description: Option<String>,
    visibility: Option<crate::opengist::requests::Visibility>,
    files: Vec<FileChange>,
    revision: Option<String>,
}

impl UpdateReadBack {
    /// Remembers the requested change and the revision before it.
    pub fn before(target: &UpdateGist) -> Self {
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
    pub async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        let check = format!(
            "Check with get_gist {} (its revisions show every change) before changing it again.",
            self.id
        );
        find_out(
            "update_gist",
            error,
            || self.look(client),
            "none of the requested changes and the same head revision",
            &check,
        )
        .await
    }
}

// ---- delete_gist_files --------------------------------------------------------------------

/// What a lost `delete_gist_files` is recognised by.
pub struct DeleteFilesReadBack {
    id: GistId,
    names: Vec<String>,
}

impl DeleteFilesReadBack {
    /// Remembers which files were to go.
    pub fn before(target: &DeleteGistFiles) -> Self {
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
    pub async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<GistDetail, CallToolResult> {
        let check = format!("Check which files remain with get_gist {}.", self.id);
        find_out(
            "delete_gist_files",
            error,
            || self.look(client),
            "every one of the files still in the gist",
            &check,
        )
        .await
    }
}

// ---- delete_gist --------------------------------------------------------------------------

/// What a lost `delete_gist` is recognised by.
pub struct DeleteReadBack {
    id: GistId,
}

impl DeleteReadBack {
    /// Remembers which gist was to go.
    pub fn before(target: &DeleteGist) -> Self {
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
    pub async fn find_out(
        &self,
        client: &OpengistClient,
        error: OpengistError,
    ) -> Result<(), CallToolResult> {
        let check = format!(
            "Check with get_gist {}: \"does not exist\" means it is gone.",
            self.id
        );
        find_out(
            "delete_gist",
            error,
            || self.look(client),
            "the gist still there",
            &check,
        )
        .await
    }
}

// ---- fork_gist ----------------------------------------------------------------------------

/// The fork, if reading back finds one of `id` owned by the token's owner; otherwise the
/// tool's error.
pub async fn fork_lost(
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
    find_out(
        "fork_gist",
        error,
        look,
        "no fork of the gist owned by you",
        &check,
    )
    .await
}

// ---- set_gist_like ------------------------------------------------------------------------

/// The like change, if reading back shows the wanted state; otherwise the tool's error.
pub async fn like_lost(
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
    find_out(
        "set_gist_like",
        error,
        look,
        "the like state unchanged",
        &check,
    )
    .await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::opengist::requests::Visibility;

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

    #[test]
    fn an_unknown_outcome_says_so_and_never_try_again() {
        let lost = OpengistError::AnswerLost {
            operation: "delete a gist",
            cause: "the connection was closed before the answer arrived".to_owned(),
        };
        for seen in [
            Ok(Seen::<()>::NotApplied),
            Ok(Seen::Mixed("2 of the 3 files still in the gist".to_owned())),
            Err(OpengistError::CreatedWithoutId),
        ] {
            let result = settle(
                "t",
                &lost,
                seen,
                "the gist still there",
                "Check with get_gist x.",
            )
            .expect_err("not applied or unknown is an error result");
            let text: String = result
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                .collect();
            assert!(text.contains("Check with get_gist x."), "{text}");
            assert!(!text.to_lowercase().contains("try again"), "{text}");
            assert!(
                text.contains("NOT applied") || text.contains("UNKNOWN"),
                "{text}"
            );
        }
    }
}
