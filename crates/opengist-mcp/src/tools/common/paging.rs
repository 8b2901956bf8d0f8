//! Paged lists: the `page`/`per_page` arguments and their checks, and the call for the next
//! page of a per-gist list (`list_gist_commits`, `list_gist_forks`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::opengist::MAX_PER_PAGE;
use crate::opengist::requests::GistId;
use crate::text::call_text;

/// Default `per_page` of the paged lists.
pub(crate) const DEFAULT_PER_PAGE: u32 = 30;

/// Checks `page` (1-based) and `per_page` (1..=100).
pub(crate) fn check_paging(page: Option<u32>, per_page: Option<u32>) -> Result<(u32, u32), String> {
    let page = page.unwrap_or(1);
    if page == 0 {
        return Err("`page` is 1-based: the first page is page=1.".into());
    }
    let per_page = per_page.unwrap_or(DEFAULT_PER_PAGE);
    if per_page == 0 || per_page > MAX_PER_PAGE {
        return Err(format!(
            "`per_page` must be 1 to {MAX_PER_PAGE} (Opengist's maximum); the default is {DEFAULT_PER_PAGE}."
        ));
    }
    Ok((page, per_page))
}

/// Arguments of the paged per-gist lists.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GistPageArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// Page number, 1-based. Default 1.
    #[serde(default)]
    pub page: Option<u32>,
    /// Items per page, 1 to 100. Default 30.
    #[serde(default)]
    pub per_page: Option<u32>,
}

/// The call for the page after `page` of a per-gist list.
pub(crate) fn next_page_call(tool: &str, gist_id: &GistId, page: u32, per_page: u32) -> String {
    call_text(
        tool,
        &[
            ("gist_id", json!(gist_id.as_str())),
            ("page", json!(page.saturating_add(1))),
            ("per_page", json!(per_page)),
        ],
    )
}
