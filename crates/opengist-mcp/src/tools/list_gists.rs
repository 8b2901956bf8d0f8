//! `list_gists`: a page of gist summaries (no file contents) from one of the token owner's
//! lists, a user's, or the instance's public gists.
//!
//! What may be missing from a list is said in its `note` (a token without `gist:read`,
//! Opengist's liked lists leaving out unlisted gists, cut descriptions), and `next_call`
//! names the call for the next page. Opengist pages by number, so a gist created or updated
//! while a client pages shifts the next page down: `next_call` also names the last gist listed
//! (`after`), and the next page starts right after it wherever the shift put it, so no gist
//! is listed twice.

use chrono::{DateTime, Utc};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::Parameters;
use super::common::arguments::check_username;
use super::common::gist_shapes::GistSummaryOut;
use super::common::list_scope::{ListScopeArg, list_scope, parse_since};
use super::common::paging::check_paging;
use crate::opengist::requests::GistId;
use crate::opengist::{GistSummary, Grant, ListScope, Page};
use crate::state::{OpengistServer, Provenance, ToolResult, failure, opengist_failure};
use crate::text::call_text;
use crate::text::{GIST_READ_NOTE, LIST_DESCRIPTION_CHARS};

/// Arguments of `list_gists`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListGistsArgs {
    /// Which list: `mine` (default), `public`, `liked` or `forked`.
    #[serde(default)]
    pub scope: ListScopeArg,
    /// Another user's list instead of the token owner's: with scope `mine` that user's gists
    /// (public ones, unless it is you with gist:read), with `liked`/`forked` their likes/forks.
    /// Not with scope `public`.
    #[serde(default)]
    pub username: Option<String>,
    /// Only gists updated at or after this RFC 3339 date-time (e.g. `2025-01-31T00:00:00Z`).
    #[serde(default)]
    pub since: Option<String>,
    /// Page number, 1-based. Default 1.
    #[serde(default)]
    pub page: Option<u32>,
    /// Gists per page, 1 to 100. Default 30.
    #[serde(default)]
    pub per_page: Option<u32>,
    /// The last gist the previous page listed, as `next_call` names it: the page starts right
    /// after it, so gists changed meanwhile are not listed twice.
    #[serde(default)]
    pub after: Option<String>,
}

/// A validated `list_gists` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListRequest {
    /// The client's list.
    pub scope: ListScope,
    /// The scope as given.
    pub scope_arg: ListScopeArg,
    /// The username as given (trimmed).
    pub username: Option<String>,
    /// The `since` filter.
    pub since: Option<DateTime<Utc>>,
    /// The `since` text as given (trimmed), for the next call.
    pub since_text: Option<String>,
    /// Page.
    pub page: u32,
    /// Per page.
    pub per_page: u32,
    /// The last gist the previous page listed.
    pub after: Option<GistId>,
}

impl ListGistsArgs {
    /// Validates the arguments; the error names the problem and the fix.
    pub(crate) fn validate(&self) -> Result<ListRequest, String> {
        let username = check_username(self.username.as_deref())?;
        let scope = list_scope(self.scope, username.clone())?;
        let since = parse_since(self.since.as_deref())?;
        let (page, per_page) = check_paging(self.page, self.per_page)?;
        let after = match self.after.as_deref().map(str::trim) {
            Some(id) => Some(GistId::parse(id).map_err(|_| {
                "after: not a gist id: pass the `after` of the previous page's next_call unchanged, or leave it out".to_owned()
            })?),
            None => None,
        };
        Ok(ListRequest {
            scope,
            scope_arg: self.scope,
            username,
            since,
            since_text: self.since.as_deref().map(|s| s.trim().to_owned()),
            page,
            per_page,
            after,
        })
    }
}

/// Pages past the requested one searched for the last gist listed, when gists changed
/// meanwhile shifted it down by more than a page.
const MAX_SHIFT_PAGES: u32 = 3;

/// Drops from `page` the gists up to and including `after` (the last gist the previous page
/// listed), when it is on this page: gists changed since then shifted it down, and everything
/// before it was listed already or is newer than the walk. `None` when it is not on the page.
fn resume_after(page: &mut Page<GistSummary>, after: &GistId) -> Option<()> {
    let at = page.items.iter().position(|g| &g.id == after)?;
    page.items.drain(..=at);
    Some(())
}

/// Result of `list_gists`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct GistList {
    /// The gists, most recently updated first. No file contents: use `get_gist`.
    pub gists: Vec<GistSummaryOut>,
    /// This page.
    pub page: u32,
    /// Gists per page.
    pub per_page: u32,
    /// Gists across all pages, when Opengist says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more pages follow.
    pub has_more: bool,
    /// The exact call for the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<String>,
    /// What may be missing from this list and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Marks gist text as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// What Opengist's liked lists leave out.
pub(crate) const LIKED_NOTE: &str = "Opengist's liked lists leave out liked gists that are unlisted: such a gist is read with get_gist by its id.";

/// Shapes a page of gists; `gist_read` is what is known of the token's `gist:read` scope,
/// which decides whether the list may silently lack private and unlisted gists.
pub(crate) fn shape_list_knowing(
    request: &ListRequest,
    page: &Page<GistSummary>,
    gist_read: Grant,
) -> GistList {
    let gists: Vec<GistSummaryOut> = page
        .items
        .iter()
        .map(GistSummaryOut::from_summary)
        .collect();
    let next_call = page.has_next.then(|| {
        let mut args: Vec<(&str, Value)> = Vec::new();
        if request.scope_arg != ListScopeArg::Mine {
            args.push(("scope", json!(request.scope_arg.as_str())));
        }
        if let Some(name) = &request.username {
            args.push(("username", json!(name)));
        }
        if let Some(since) = &request.since_text {
            args.push(("since", json!(since)));
        }
        args.push(("page", json!(page.page.saturating_add(1))));
        args.push(("per_page", json!(page.per_page)));
        if let Some(last) = page.items.last() {
            args.push(("after", json!(last.id.as_str())));
        }
        call_text("list_gists", &args)
    });
    let mut notes: Vec<String> = Vec::new();
    if request.scope_arg == ListScopeArg::Mine && gist_read != Grant::Present {
        notes.push(GIST_READ_NOTE.to_owned());
    }
    if request.scope_arg == ListScopeArg::Liked {
        notes.push(LIKED_NOTE.to_owned());
    }
    if gists.iter().any(|g| g.description_cut) {
        notes.push(format!(
            "Descriptions longer than {LIST_DESCRIPTION_CHARS} characters are cut (description_cut): get_gist shows the whole."
        ));
    }
    GistList {
        gists,
        page: page.page,
        per_page: page.per_page,
        total: page.total,
        has_more: page.has_next,
        next_call,
        note: (!notes.is_empty()).then(|| notes.join(" ")),
        provenance: Provenance::OPENGIST,
    }
}

#[tool_router(router = list_gists_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Lists gists: summaries only.
    #[tool(
        name = "list_gists",
        description = "List gist summaries (no file contents), most recently updated first. scope: mine (default), public, liked, forked; `username` reads another user's list. Paged: page (1-based), per_page (1-100, default 30); `next_call` names the call for the next page. Without the gist:read scope Opengist silently returns public gists only.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<GistList>()
    )]
    async fn list_gists(
        &self,
        Parameters(args): Parameters<ListGistsArgs>,
    ) -> ToolResult<GistList> {
        let request = args.validate().map_err(failure)?;
        let client = &self.client()?;
        let list = |number: u32| {
            client.list_gists_timed(
                request.scope.clone(),
                number,
                request.per_page,
                request.since,
            )
        };
        let (mut page, mut read) = list(request.page).await.map_err(opengist_failure)?;
        if let Some(after) = &request.after {
            // Where the last gist listed is now: on the requested page, or a few pages on when
            // gists changed meanwhile; nowhere near (deleted, or changed itself): the page as
            // numbered.
            let mut probe = (page.clone(), read);
            for _ in 0..=MAX_SHIFT_PAGES {
                if resume_after(&mut probe.0, after).is_some() {
                    (page, read) = probe;
                    if page.items.is_empty() && page.has_next {
                        (page, read) = list(page.page.saturating_add(1))
                            .await
                            .map_err(opengist_failure)?;
                    }
                    break;
                }
                if !probe.0.has_next {
                    break;
                }
                probe = list(probe.0.page.saturating_add(1))
                    .await
                    .map_err(opengist_failure)?;
            }
        }
        // The topics a list shows are the ones get_gist cannot read from the gist itself.
        self.cache().keep_listed(&page, read);
        // Learned once per token (requests that change nothing), then remembered.
        let gist_read = client
            .token_access()
            .await
            .map_or(Grant::Unknown, |access| access.gist_read);
        Ok(self.output(shape_list_knowing(&request, &page, gist_read)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::common::fixtures::*;

    /// Shapes a page of gists, not knowing whether the token holds `gist:read`.
    fn shape_list(request: &ListRequest, page: &Page<GistSummary>) -> GistList {
        shape_list_knowing(request, page, Grant::Unknown)
    }

    #[test]
    fn list_arguments_are_validated_before_anything_is_sent() {
        let ok = ListGistsArgs::default().validate().expect("defaults");
        assert_eq!(
            (ok.scope.clone(), ok.page, ok.per_page),
            (ListScope::Mine, 1, 30)
        );
        let with = |f: fn(&mut ListGistsArgs)| {
            let mut a = ListGistsArgs::default();
            f(&mut a);
            a.validate()
        };
        assert_eq!(
            with(|a| a.username = Some(" bob ".into())).map(|r| r.scope),
            Ok(ListScope::User("bob".into()))
        );
        assert_eq!(
            with(|a| {
                a.scope = ListScopeArg::Liked;
                a.username = Some("bob".into());
            })
            .map(|r| r.scope),
            Ok(ListScope::UserLiked("bob".into()))
        );
        let err = with(|a| {
            a.scope = ListScopeArg::Public;
            a.username = Some("bob".into());
        })
        .expect_err("public+username");
        assert!(err.contains("scope=mine"), "{err}");
        assert!(
            with(|a| a.page = Some(0))
                .expect_err("page 0")
                .contains("page=1")
        );
        assert!(
            with(|a| a.per_page = Some(101))
                .expect_err("101")
                .contains("1 to 100")
        );
        assert!(with(|a| a.per_page = Some(0)).is_err());
        let err = with(|a| a.since = Some("yesterday".into())).expect_err("since");
        assert!(err.contains("RFC 3339"), "{err}");
        assert!(with(|a| a.since = Some("2025-01-31T00:00:00+02:00".into())).is_ok());
        assert!(with(|a| a.username = Some("a/b".into())).is_err());
        assert!(with(|a| a.username = Some("  ".into())).is_err());
    }

    #[test]
    fn list_pages_name_the_next_call_and_the_gist_read_note() {
        let request = ListGistsArgs {
            scope: ListScopeArg::Mine,
            username: None,
            since: Some("2025-01-01T00:00:00Z".into()),
            page: Some(2),
            per_page: Some(30),
            after: None,
        }
        .validate()
        .expect("valid");
        let out = shape_list(
            &request,
            &page(vec![summary(ID), summary(ID2)], 2, 30, true),
        );
        assert_eq!(out.gists.len(), 2);
        assert_eq!(out.gists[0].owner, "alice");
        assert_eq!(
            out.gists[0].updated_at.as_deref(),
            Some("2024-05-02T11:00:00Z")
        );
        assert_eq!(out.total, Some(75));
        assert!(out.has_more);
        assert_eq!(
            out.next_call.as_deref(),
            Some(
                r#"list_gists with since="2025-01-01T00:00:00Z", page=3, per_page=30, after="aaaabbbbccccddddeeeeffff00001111""#
            )
        );
        assert!(out.note.as_deref().is_some_and(|n| n.contains("gist:read")));
        let value = serde_json::to_value(&out).expect("json");
        assert_eq!(value["untrusted"], json!(true));
        assert_eq!(value["source"], json!("opengist"));
        assert!(value["gists"][0].get("description_cut").is_none());
        assert!(value["gists"][0].get("files").is_none());

        let liked = ListGistsArgs {
            scope: ListScopeArg::Liked,
            ..ListGistsArgs::default()
        }
        .validate()
        .expect("valid");
        let out = shape_list(&liked, &page(vec![summary(ID)], 1, 30, false));
        assert!(out.next_call.is_none() && !out.has_more);
        assert_eq!(out.note.as_deref(), Some(LIKED_NOTE));
        // A token known to hold gist:read gets no gist:read note.
        let known = shape_list_knowing(
            &request,
            &page(vec![summary(ID)], 1, 30, false),
            Grant::Present,
        );
        assert!(known.note.is_none(), "{:?}", known.note);
    }

    #[test]
    fn a_page_shifted_by_gists_changed_meanwhile_resumes_after_the_last_listed() {
        let listed = GistId::parse(ID).expect("id");
        // Two gists changed since the previous page: the last gist it listed moved down to
        // the second place of this page; only what follows it is shown.
        let third = "0123456789abcdef0123456789abcdef";
        let mut shifted = page(vec![summary(ID2), summary(ID), summary(third)], 2, 3, true);
        assert_eq!(resume_after(&mut shifted, &listed), Some(()));
        let ids: Vec<&str> = shifted.items.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, [third]);
        // Not on the page (shifted further, or deleted): the page is left as it is.
        let mut other = page(vec![summary(ID2), summary(third)], 2, 3, true);
        assert_eq!(resume_after(&mut other, &listed), None);
        assert_eq!(other.items.len(), 2);
        // The last one on the page: nothing of it is left to show.
        let mut emptied = page(vec![summary(ID2), summary(ID)], 2, 2, true);
        assert_eq!(resume_after(&mut emptied, &listed), Some(()));
        assert!(emptied.items.is_empty());
        assert!(
            ListGistsArgs {
                after: Some("nope".into()),
                ..ListGistsArgs::default()
            }
            .validate()
            .expect_err("after")
            .contains("next_call")
        );
    }

    #[test]
    fn long_descriptions_are_cut_in_lists() {
        let mut v = summary_json(ID, "unlisted");
        v["description"] = json!("é".repeat(1000));
        let s: GistSummary = serde_json::from_value(v).expect("summary");
        let out = GistSummaryOut::from_summary(&s);
        assert!(out.description_cut);
        assert_eq!(out.description.chars().count(), LIST_DESCRIPTION_CHARS + 1);
        let request = ListGistsArgs::default().validate().expect("valid");
        let list = shape_list(&request, &page(vec![s], 1, 30, false));
        assert!(
            list.note
                .as_deref()
                .is_some_and(|n| n.contains("description_cut"))
        );
    }

    // -- the handler: input errors and the unconfigured server make no request --

    #[tokio::test]
    async fn bad_input_is_refused_before_the_setup_check() {
        let server = OpengistServer::unconfigured();
        let err = server
            .list_gists(Parameters(ListGistsArgs {
                per_page: Some(500),
                ..ListGistsArgs::default()
            }))
            .await
            .err()
            .expect("error");
        assert!(text_of(&err).contains("per_page"), "{}", text_of(&err));
        let err = server
            .list_gists(Parameters(ListGistsArgs::default()))
            .await
            .err()
            .expect("unconfigured");
        assert!(text_of(&err).contains("OPENGIST_URL"));
    }
}
