//! The `resource_link`s of a search result: one for each file its content snippets come
//! from, built by [`crate::resources::links`].

use rmcp::model::ContentBlock;

use super::scan::SearchOut;
use crate::resources::links::{NamedFile, links, links_budget};
use crate::state::OpengistServer;

impl OpengistServer {
    /// Links to the files a search's snippets come from (each once, in result order); none
    /// when resources are off.
    pub fn search_links(&self, out: &SearchOut) -> Vec<ContentBlock> {
        if !self.resources_enabled() {
            return Vec::new();
        }
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut files = Vec::new();
        for found in &out.matches {
            for snippet in &found.snippets {
                let key = (found.gist.id.as_str(), snippet.filename.as_str());
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                files.push(NamedFile {
                    gist_id: key.0,
                    gist_title: &found.gist.title,
                    revision: None,
                    filename: key.1,
                    size: None,
                    binary: false,
                });
            }
        }
        links(files, links_budget(self.max_result_bytes()))
    }
}
