//! The `search_gists` tool: the arguments checked, the list pages and full reads done through
//! the cache, the result with its `resource_link`s.

use rmcp::{tool, tool_router};

use super::args::SearchGistsArgs;
use super::scan::{SearchOut, run_search};
use crate::cache::ListedGistReads;
use crate::opengist::{Grant, MAX_PER_PAGE};
use crate::state::{OpengistServer, ToolResult, failure, opengist_failure};
use crate::text::GIST_READ_NOTE;
use crate::tools::common::Parameters;

#[tool_router(router = search_gists_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Searches gists by paging through a list.
    #[tool(
        name = "search_gists",
        description = "Find gists (Opengist has no search endpoint: this pages through a gist list, 100 per page, up to max_pages). Case-insensitive; matches the whole query or every word. fields: title, description, topics, owner, filenames (default: these five), content (file text, within a 2 MiB byte budget). Metadata is matched without extra requests; filenames/content read non-matching gists 4 at a time. Stops at `limit` matches; reports what it scanned, whether it stopped early and why, and the next_call that resumes.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<SearchOut>()
    )]
    async fn search_gists(
        &self,
        Parameters(args): Parameters<SearchGistsArgs>,
    ) -> ToolResult<SearchOut> {
        let plan = args.validate().map_err(failure)?;
        let client = &self.client()?;
        let view = &self.cache();
        // Each gist is read at most once per search, and not at all when the cache holds its
        // files at the `updated_at` the list shows.
        let reads = ListedGistReads::new(view, client);
        let (reads, plan) = (&reads, &plan);
        let mut out = run_search(
            plan,
            |page| async move {
                let (listed, read) = client
                    .list_gists_timed(plan.scope.clone(), page, MAX_PER_PAGE, plan.since)
                    .await?;
                reads.note_page(&listed, read);
                Ok(listed)
            },
            |id| reads.detail(id),
        )
        .await
        .map_err(opengist_failure)?;
        // As list_gists: no gist:read note when the token is known to hold that scope.
        let gist_read = client
            .token_access()
            .await
            .map_or(Grant::Unknown, |access| access.gist_read);
        if gist_read == Grant::Present {
            out.notes.retain(|note| note != GIST_READ_NOTE);
        }
        let links = self.search_links(&out);
        Ok(self.output(out).with_links(links))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_input_is_refused_before_the_setup_check() {
        let server = OpengistServer::unconfigured();
        let err = server
            .search_gists(Parameters(SearchGistsArgs {
                query: String::new(),
                ..SearchGistsArgs::default()
            }))
            .await
            .err()
            .expect("error");
        let text = serde_json::to_string(&err).expect("json");
        assert!(text.contains("`query`"), "{text}");
        let err = server
            .search_gists(Parameters(SearchGistsArgs {
                query: "x".into(),
                ..SearchGistsArgs::default()
            }))
            .await
            .err()
            .expect("unconfigured");
        assert!(
            serde_json::to_string(&err)
                .expect("json")
                .contains("OPENGIST_URL")
        );
    }
}
