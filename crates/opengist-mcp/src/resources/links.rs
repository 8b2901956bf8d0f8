//! `resource_link` content blocks for tool results: one for each file a result names, so a
//! client can attach what a tool found. They are added after the result's text block; its
//! `structuredContent` and text stay exactly as they were.
//!
//! `get_gist` names every file of the gist (at the revision it shows when `sha` was given,
//! else at head): [`OpengistServer::gist_links`]; `search_gists` names the files its content
//! snippets come from, with the same [`links`] (its own file says which).
//! `list_gists` names no file (Opengist's lists carry none), so it carries no link. The links
//! of one result are held to [`links_budget`] bytes: beyond it, the rest are left out (the
//! result itself names every file anyway).

use rmcp::model::{ContentBlock, Resource};
use serde_json::json;

use super::list::{provenance_meta, title_of};
use super::mime::mime_type;
use super::uri::FileUri;
use crate::opengist::{GistDetail, Sha};
use crate::result_budget::serialized_len;
use crate::state::OpengistServer;

/// One file a result names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedFile<'a> {
    /// The gist's id.
    pub gist_id: &'a str,
    /// The gist's title.
    pub gist_title: &'a str,
    /// The revision the result shows, when it is pinned to one.
    pub revision: Option<&'a str>,
    /// The file's exact name.
    pub filename: &'a str,
    /// Its size, when known.
    pub size: Option<u64>,
    /// Whether it is binary.
    pub binary: bool,
}

/// Bytes the links of one result may take, for a ceiling of `ceiling` bytes.
pub(crate) fn links_budget(ceiling: usize) -> usize {
    ceiling / 16
}

/// The link to one file.
pub(crate) fn link(file: &NamedFile<'_>) -> ContentBlock {
    let uri = FileUri::format(file.gist_id, file.revision, file.filename);
    let mut resource = Resource::new(uri, file.filename)
        .with_title(title_of(file.gist_title, file.filename))
        .with_mime_type(mime_type(file.filename, file.binary));
    if let Some(size) = file.size {
        resource = resource.with_size(size);
    }
    let mut meta = provenance_meta();
    meta.insert("gist_id".into(), json!(file.gist_id));
    resource = resource.with_meta(meta);
    ContentBlock::resource_link(resource)
}

/// Links to `files`, in order, at most `budget` bytes of them.
pub(crate) fn links<'a>(
    files: impl IntoIterator<Item = NamedFile<'a>>,
    budget: usize,
) -> Vec<ContentBlock> {
    let mut out = Vec::new();
    let mut used = 0usize;
    for file in files {
        let block = link(&file);
        let size = serialized_len(&block) + 1;
        if used + size > budget {
            break;
        }
        used += size;
        out.push(block);
    }
    out
}

impl OpengistServer {
    /// Links to every file of `detail`, at `sha` when the result is pinned to it; none when
    /// resources are off.
    pub fn gist_links(&self, detail: &GistDetail, sha: Option<&Sha>) -> Vec<ContentBlock> {
        if !self.resources_enabled() {
            return Vec::new();
        }
        let summary = &detail.summary;
        let files = detail.files.iter().map(|(key, file)| NamedFile {
            gist_id: summary.id.as_str(),
            gist_title: &summary.title,
            revision: sha.map(Sha::as_str),
            filename: super::list::file_name(key, file),
            size: Some(file.size),
            binary: file.is_base64(),
        });
        links(files, links_budget(self.max_result_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

    fn named(name: &str, revision: Option<&'static str>) -> NamedFile<'static> {
        NamedFile {
            gist_id: ID,
            gist_title: "T",
            revision,
            filename: Box::leak(name.to_owned().into_boxed_str()),
            size: Some(3),
            binary: false,
        }
    }

    #[test]
    fn links_point_at_head_or_the_revision_shown() {
        let out = links(
            [named("a b.txt", None), named("c.rs", Some("beef"))],
            10_000,
        );
        let uris: Vec<String> = out
            .iter()
            .filter_map(|b| b.as_resource_link().map(|r| r.uri.clone()))
            .collect();
        assert_eq!(
            uris,
            [
                format!("opengist://gists/{ID}/a%20b.txt"),
                format!("opengist://gists/{ID}/beef/c.rs")
            ]
        );
        let first = out[0].as_resource_link().expect("link");
        assert_eq!(first.title.as_deref(), Some("T: a b.txt"));
        assert_eq!(first.size, Some(3));
        assert_eq!(
            first.meta.as_ref().and_then(|m| m.get("untrusted")),
            Some(&json!(true))
        );
    }

    #[test]
    fn links_are_bounded() {
        let many: Vec<NamedFile<'static>> =
            (0..200).map(|i| named(&format!("{i}.txt"), None)).collect();
        let out = links(many, 2000);
        assert!(!out.is_empty() && out.len() < 200);
        assert!(serialized_len(&out) <= 2000 + out.len());
        assert_eq!(links_budget(262_144), 16_384);
    }
}
