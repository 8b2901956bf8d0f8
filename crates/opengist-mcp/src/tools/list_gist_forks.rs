//! `list_gist_forks`: the forks of a gist this token can see (public forks plus the token
//! owner's own), paged.

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;

use super::common::Parameters;
use super::common::gist_shapes::GistSummaryOut;
use super::common::paging::{GistPageArgs, check_paging, next_page_call};
use crate::opengist::requests::GistId;
use crate::opengist::{GistSummary, Page};
use crate::state::{OpengistServer, Provenance, ToolResult, failure, opengist_failure};

/// Result of `list_gist_forks`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ForkList {
    /// The forks visible to this token: public ones plus the token owner's own.
    pub forks: Vec<GistSummaryOut>,
    /// This page.
    pub page: u32,
    /// Forks per page.
    pub per_page: u32,
    /// Whether more forks follow.
    pub has_more: bool,
    /// The exact call for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<String>,
    /// Marks gist text as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// Shapes a page of forks.
pub(crate) fn shape_forks(gist_id: &GistId, page: &Page<GistSummary>) -> ForkList {
    ForkList {
        forks: page
            .items
            .iter()
            .map(GistSummaryOut::from_summary)
            .collect(),
        page: page.page,
        per_page: page.per_page,
        has_more: page.has_next,
        next_call: page
            .has_next
            .then(|| next_page_call("list_gist_forks", gist_id, page.page, page.per_page)),
        provenance: Provenance::OPENGIST,
    }
}

#[tool_router(router = list_gist_forks_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Lists a gist's forks.
    #[tool(
        name = "list_gist_forks",
        description = "List the forks of a gist visible to this token (public forks plus your own), paged (page, per_page 1-100, default 30).",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<ForkList>()
    )]
    async fn list_gist_forks(
        &self,
        Parameters(args): Parameters<GistPageArgs>,
    ) -> ToolResult<ForkList> {
        let (page, per_page) = check_paging(args.page, args.per_page).map_err(failure)?;
        let client = &self.client()?;
        let id = self.gist_id(&args.gist_id).await?;
        let list = client
            .list_forks(&id, page, per_page)
            .await
            .map_err(opengist_failure)?;
        Ok(self.output(shape_forks(&id, &list)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::common::fixtures::*;

    #[test]
    fn fork_pages_are_gist_summaries() {
        let forks = shape_forks(&id(), &page(vec![summary(ID2)], 1, 30, false));
        assert_eq!(forks.forks[0].id, ID2);
        assert!(forks.next_call.is_none() && !forks.has_more);
    }
}
