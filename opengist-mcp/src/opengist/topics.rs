//! A gist's topics, which Opengist's single-gist answers never carry.
//!
//! Opengist 1.15.1 loads a gist for `GET /api/gists/:uuid` (and `/:sha`) without its topics,
//! so `topics` is always `[]` there; its lists load them. The gist is found cheaply in its
//! owner's list filtered by `since` = its own `updated_at`: the list holds only gists updated
//! at or after that second, newest first, so the gist is on the last page of a short list
//! (one request, two when more than 100 of the owner's gists were updated since).

use super::client::OpengistClient;
use super::error::OpengistError;
use super::responses::{GistSummary, Page};
use super::{ListScope, MAX_PER_PAGE};

fn find<'a>(page: &'a Page<GistSummary>, wanted: &GistSummary) -> Option<&'a GistSummary> {
    page.items.iter().find(|g| g.id == wanted.id)
}

impl OpengistClient {
    /// The topics of the gist `summary` describes, from its owner's gist list; `None` when
    /// no list this token can read shows the gist (another user's unlisted or private gist,
    /// or the token's own non-public gist without `gist:read`).
    pub async fn gist_topics(
        &self,
        summary: &GistSummary,
    ) -> Result<Option<Vec<String>>, OpengistError> {
        let Some(updated) = summary.updated_at else {
            return Ok(None);
        };
        let scope = ListScope::User(summary.owner.name().to_owned());
        let first = self
            .list_gists(scope.clone(), 1, MAX_PER_PAGE, Some(updated))
            .await?;
        if let Some(found) = find(&first, summary) {
            return Ok(Some(found.topics.clone()));
        }
        match first.total_pages {
            Some(last) if last > 1 => {
                let page = self
                    .list_gists(scope, last, MAX_PER_PAGE, Some(updated))
                    .await?;
                Ok(find(&page, summary).map(|g| g.topics.clone()))
            }
            _ => Ok(None),
        }
    }
}
