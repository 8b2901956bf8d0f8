//! A gist's topics, which Opengist's single-gist answers never carry.
//!
//! Opengist 1.15.1 loads a gist for `GET /api/gists/:uuid` (and `/:sha`) without its topics,
//! so `topics` is always `[]` there; its lists load them. The gist is found cheaply in its
//! owner's list filtered by `since` = its own `updated_at`: the list holds only gists updated
//! at or after that second, newest first, so the gist is on the last page of a short list
//! (one request, two when more than 100 of the owner's gists were updated since).
//!
//! `get_gist` asks the cache first (`cache::gist_topics`, one layer up): topics seen in any
//! list at the `updated_at` the gist still has cost no request.

use chrono::{DateTime, Utc};

use super::client::OpengistClient;
use super::error::OpengistError;
use super::read_time::ReadTime;
use super::responses::{GistSummary, Page};
use super::{ListScope, MAX_PER_PAGE};

/// A gist's topics as a list showed them, with the `updated_at` the list showed beside them
/// (later than the one asked about when the gist changed in between) and when Opengist began
/// answering that list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTopics {
    /// The topics, in Opengist's order.
    pub topics: Vec<String>,
    /// The gist's `updated_at` in that list.
    pub updated_at: Option<DateTime<Utc>>,
    /// When the list that showed them began to be answered, at the earliest.
    pub read: Option<ReadTime>,
}

fn find(
    page: &Page<GistSummary>,
    wanted: &GistSummary,
    read: Option<ReadTime>,
) -> Option<ListedTopics> {
    page.items
        .iter()
        .find(|g| g.id == wanted.id)
        .map(|g| ListedTopics {
            topics: g.topics.clone(),
            updated_at: g.updated_at,
            read,
        })
}

impl OpengistClient {
    /// The topics of the gist `summary` describes, from its owner's gist list; `None` when
    /// no list this token can read shows the gist (another user's unlisted or private gist,
    /// or the token's own non-public gist without `gist:read`).
    pub async fn gist_topics(
        &self,
        summary: &GistSummary,
    ) -> Result<Option<ListedTopics>, OpengistError> {
        let Some(updated) = summary.updated_at else {
            return Ok(None);
        };
        let scope = ListScope::User(summary.owner.name().to_owned());
        let (first, read) = self
            .list_gists_timed(scope.clone(), 1, MAX_PER_PAGE, Some(updated))
            .await?;
        if let Some(found) = find(&first, summary, read) {
            return Ok(Some(found));
        }
        match first.total_pages {
            Some(last) if last > 1 => {
                let (page, read) = self
                    .list_gists_timed(scope, last, MAX_PER_PAGE, Some(updated))
                    .await?;
                Ok(find(&page, summary, read))
            }
            _ => Ok(None),
        }
    }
}
