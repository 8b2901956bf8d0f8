//! `resources/list`: the token owner's gists, newest first, each of their files one resource.
//!
//! One page of the protocol is (part of) one page of Opengist's own list
//! ([`GISTS_PER_PAGE`] gists, like `list_gists`' default), with each gist's files read in
//! full (from the cache when the listed `updated_at` matches a kept read, as searches do). A
//! page is held to the result-size ceiling: when the resources of the next gist would not fit,
//! the page ends before it and the cursor resumes there. The cursor is opaque to clients:
//! `p<page>s<skip>a<gist id>`, Opengist's page, the gists of it already listed, and the last
//! gist listed. Opengist pages by number, so a gist created (or deleted) while a client pages
//! shifts the next page: the next page starts right after that last gist wherever the shift put
//! it, so no gist is listed twice or passed over; the count is the fallback when that gist is
//! no longer on the page.

use rmcp::model::{Annotations, MetaObject, Resource};
use serde_json::json;

use super::mime::mime_type;
use super::uri::FileUri;
use crate::opengist::requests::GistId;
use crate::opengist::{GistDetail, GistFile, GistSummary};
use crate::result_budget::json_len;
use crate::text::{LIST_DESCRIPTION_CHARS, rfc3339};

/// Gists per Opengist page read for one `resources/list` page.
pub(crate) const GISTS_PER_PAGE: u32 = 30;
/// Highest Opengist page a cursor may name.
pub(crate) const MAX_PAGE: u32 = 100_000;
/// Bytes of a list answer besides its resources (cursor, `_meta`, envelope).
pub(crate) const LIST_OVERHEAD: usize = 2048;

/// Where a `resources/list` page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// Opengist's page, 1-based.
    pub page: u32,
    /// Gists of that page already listed.
    pub skip: usize,
    /// The last gist listed: the page resumes right after it when it is still on the page.
    pub after: Option<GistId>,
}

/// A cursor this server did not hand out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the cursor is not one this server handed out: pass the `nextCursor` of the previous resources/list answer unchanged, or leave the cursor out to start at the newest gist"
)]
pub(crate) struct CursorError;

impl Cursor {
    /// The first page.
    pub(crate) const START: Self = Self {
        page: 1,
        skip: 0,
        after: None,
    };

    /// Parses a cursor; `None` is the first page.
    pub(crate) fn parse(cursor: Option<&str>) -> Result<Self, CursorError> {
        let Some(text) = cursor else {
            return Ok(Self::START);
        };
        let (position, after) = match text.split_once('a') {
            Some((position, id)) => (position, Some(GistId::parse(id).map_err(|_| CursorError)?)),
            None => (text, None),
        };
        let (page, skip) = position
            .strip_prefix('p')
            .and_then(|rest| rest.split_once('s'))
            .ok_or(CursorError)?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(page) || !digits(skip) {
            return Err(CursorError);
        }
        let page: u32 = page.parse().map_err(|_| CursorError)?;
        let skip: usize = skip.parse().map_err(|_| CursorError)?;
        if page == 0 || page > MAX_PAGE || skip >= GISTS_PER_PAGE as usize {
            return Err(CursorError);
        }
        Ok(Self { page, skip, after })
    }

    /// The text handed to the client.
    pub(crate) fn encode(&self) -> String {
        match &self.after {
            Some(id) => format!("p{}s{}a{}", self.page, self.skip, id.as_str()),
            None => format!("p{}s{}", self.page, self.skip),
        }
    }

    /// Where on `items` (this cursor's page as Opengist lists it now) the page starts: right
    /// after the last gist listed when it is still there, else after `skip` gists.
    pub(crate) fn start_on(&self, items: &[GistSummary]) -> usize {
        self.after
            .as_ref()
            .and_then(|after| items.iter().position(|g| &g.id == after))
            .map_or(self.skip, |at| at + 1)
    }

    /// This cursor with the last gist listed before it, read from `items` (the page at
    /// `page` as listed): the gist just before `skip` on the same page, else the page's last.
    pub(crate) fn after_listed(mut self, page: u32, items: &[GistSummary]) -> Self {
        let last = if self.page == page {
            self.skip.checked_sub(1).and_then(|i| items.get(i))
        } else {
            items.last()
        };
        self.after = last.map(|g| g.id.clone());
        self
    }
}

/// The title of a file's resource, built from what `get_gist` shows of it: the gist's title
/// and the file's name (just the name when the title is empty or the name itself, as
/// Opengist titles a gist without a title).
pub(crate) fn title_of(gist_title: &str, filename: &str) -> String {
    let title = gist_title.trim();
    if title.is_empty() || title == filename {
        filename.to_owned()
    } else {
        format!("{title}: {filename}")
    }
}

/// The provenance every resource and every read carries in `_meta`, as tool results carry it
/// in their fields.
pub(crate) fn provenance_meta() -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert("untrusted".into(), json!(true));
    meta.insert("source".into(), json!("opengist"));
    meta
}

/// The filename Opengist lists a file under.
pub(crate) fn file_name<'a>(key: &'a str, file: &'a GistFile) -> &'a str {
    if file.filename.is_empty() {
        key
    } else {
        &file.filename
    }
}

/// One file of `detail` as a resource at the gist's newest revision.
pub(crate) fn file_resource(detail: &GistDetail, key: &str, file: &GistFile) -> Resource {
    let summary = &detail.summary;
    let filename = file_name(key, file);
    let uri = FileUri::format(summary.id.as_str(), None, filename);
    let mut resource = Resource::new(uri, filename)
        .with_title(title_of(&summary.title, filename))
        .with_mime_type(mime_type(filename, file.is_base64()))
        .with_size(file.size);
    let description: String = summary
        .description
        .chars()
        .take(LIST_DESCRIPTION_CHARS)
        .collect();
    if !description.trim().is_empty() {
        resource = resource.with_description(description);
    }
    let mut meta = provenance_meta();
    meta.insert("gist_id".into(), json!(summary.id.as_str()));
    meta.insert("visibility".into(), json!(summary.visibility));
    meta.insert("owner".into(), json!(summary.owner.name()));
    resource = resource.with_meta(meta);
    if let Some(updated) = rfc3339(summary.updated_at) {
        let mut annotations = Annotations::default();
        annotations.last_modified = Some(updated);
        resource = resource.with_annotations(annotations);
    }
    resource
}

/// Every file of `detail` as resources, in filename order.
pub(crate) fn gist_resources(detail: &GistDetail) -> Vec<Resource> {
    detail
        .files
        .iter()
        .map(|(key, file)| file_resource(detail, key, file))
        .collect()
}

/// One page's resources and where the next page starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListPage {
    /// The resources, gist by gist (newest first), each gist's files in filename order.
    pub resources: Vec<Resource>,
    /// The next page, when there is one.
    pub next: Option<Cursor>,
    /// Gists whose file list Opengist cut at 50 files.
    pub cut_gists: Vec<String>,
}

/// Builds the page starting at `cursor` from the gists read for it (`gists`: the page's gists
/// from `cursor.skip` on, in list order; `None` for a gist that went away since it was listed)
/// within `budget` bytes of JSON. The first gist is always listed, whatever its size (one gist
/// of 50 files fits any ceiling this server accepts); a later one only if it fits.
pub(crate) fn build_page(
    cursor: Cursor,
    gists: &[Option<&GistDetail>],
    more_pages: bool,
    budget: usize,
) -> ListPage {
    let mut resources: Vec<Resource> = Vec::new();
    let mut used = 0usize;
    let mut cut_gists = Vec::new();
    for (index, detail) in gists.iter().enumerate() {
        let Some(detail) = detail else { continue };
        let these = gist_resources(detail);
        let size: usize = these.iter().map(|r| json_len(&json!(r)) + 1).sum();
        if !resources.is_empty() && used + size > budget {
            return ListPage {
                resources,
                next: Some(Cursor {
                    page: cursor.page,
                    skip: cursor.skip + index,
                    after: None,
                }),
                cut_gists,
            };
        }
        if detail.truncated {
            cut_gists.push(detail.summary.id.to_string());
        }
        used += size;
        resources.extend(these);
    }
    ListPage {
        resources,
        next: more_pages.then_some(Cursor {
            page: cursor.page.saturating_add(1),
            skip: 0,
            after: None,
        }),
        cut_gists,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    pub(crate) fn detail(id: &str, title: &str, files: &[(&str, &str, &str)]) -> GistDetail {
        let files: serde_json::Map<String, Value> = files
            .iter()
            .map(|(name, content, encoding)| {
                (
                    (*name).to_owned(),
                    json!({"filename": name, "size": content.len(), "content": content, "encoding": encoding}),
                )
            })
            .collect();
        serde_json::from_value(json!({
            "id": id,
            "title": title,
            "description": "d".repeat(400),
            "visibility": "private",
            "owner": {"username": "alice"},
            "updated_at": "2026-01-02T03:04:05Z",
            "files": files,
        }))
        .expect("detail")
    }

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        assert_eq!(Cursor::parse(None), Ok(Cursor::START));
        let c = Cursor {
            page: 3,
            skip: 7,
            after: None,
        };
        assert_eq!(Cursor::parse(Some(&c.encode())), Ok(c));
        for bad in [
            "",
            "p",
            "p1",
            "s1",
            "p0s0",
            "p1s30",
            "p-1s0",
            "p1s1x",
            "x1s0",
            "p9999999s0",
            "p1 s0",
        ] {
            assert_eq!(Cursor::parse(Some(bad)), Err(CursorError), "{bad:?}");
        }
        assert!(CursorError.to_string().contains("nextCursor"));
        let anchored = Cursor {
            page: 2,
            skip: 4,
            after: Some(GistId::parse(A).expect("id")),
        };
        assert_eq!(anchored.encode(), format!("p2s4a{A}"));
        assert_eq!(Cursor::parse(Some(&anchored.encode())), Ok(anchored));
        for bad in ["p2s4a", "p2s4axyz", &format!("p2s4a{A}0"), &format!("a{A}")] {
            assert_eq!(Cursor::parse(Some(bad)), Err(CursorError), "{bad:?}");
        }
    }

    fn summaries(ids: &[&str]) -> Vec<GistSummary> {
        ids.iter()
            .map(|id| {
                serde_json::from_value(json!({"id": id, "title": "t", "visibility": "private"}))
                    .expect("summary")
            })
            .collect()
    }

    #[test]
    fn a_page_shifted_by_gists_made_or_deleted_meanwhile_resumes_after_the_last_listed() {
        const C: &str = "cccccccccccccccccccccccccccccccc";
        const N: &str = "dddddddddddddddddddddddddddddddd";
        // Page 1 ended after A (its second gist): the cursor names A.
        let listed = summaries(&[B, A, C]);
        let next = Cursor {
            page: 1,
            skip: 2,
            after: None,
        }
        .after_listed(1, &listed);
        assert_eq!(next.after.as_ref().map(GistId::as_str), Some(A));
        // A gist made since: A moved one down; the page resumes after it, at C, not at A again.
        assert_eq!(next.start_on(&summaries(&[N, B, A, C])), 3);
        // B deleted since: A moved up; C is not passed over.
        assert_eq!(next.start_on(&summaries(&[A, C])), 1);
        // A itself gone: the count is the fallback.
        assert_eq!(next.start_on(&summaries(&[B, C, N])), 2);
        // A page that ended at the end of Opengist's page names that page's last gist.
        let next = Cursor {
            page: 2,
            skip: 0,
            after: None,
        }
        .after_listed(1, &listed);
        assert_eq!(next.after.as_ref().map(GistId::as_str), Some(C));
        // Two gists made since: C is now second on page 2; the page resumes after it.
        assert_eq!(next.start_on(&summaries(&[B, C, N])), 2);
    }

    #[test]
    fn each_file_is_a_resource_with_type_size_title_and_provenance() {
        let d = detail(
            A,
            "My snippets",
            &[
                ("main.rs", "fn main() {}", "utf-8"),
                ("logo.png", "iVBO", "base64"),
            ],
        );
        let rs = gist_resources(&d);
        assert_eq!(rs.len(), 2);
        let png = &rs[0];
        assert_eq!(png.uri, format!("opengist://gists/{A}/logo.png"));
        assert_eq!(png.mime_type.as_deref(), Some("image/png"));
        let rust = &rs[1];
        assert_eq!(rust.name, "main.rs");
        assert_eq!(rust.title.as_deref(), Some("My snippets: main.rs"));
        assert_eq!(rust.mime_type.as_deref(), Some("text/x-rust"));
        assert_eq!(rust.size, Some(12));
        assert_eq!(
            rust.description.as_deref().map(|d| d.chars().count()),
            Some(LIST_DESCRIPTION_CHARS)
        );
        let meta = rust.meta.as_ref().expect("meta");
        assert_eq!(meta.get("untrusted"), Some(&json!(true)));
        assert_eq!(meta.get("source"), Some(&json!("opengist")));
        assert_eq!(meta.get("gist_id"), Some(&json!(A)));
        assert_eq!(
            rust.annotations
                .as_ref()
                .and_then(|a| a.last_modified.as_deref()),
            Some("2026-01-02T03:04:05Z")
        );
        assert_eq!(title_of("main.rs", "main.rs"), "main.rs");
        assert_eq!(title_of("  ", "x"), "x");
    }

    #[test]
    fn pages_end_before_the_gist_that_does_not_fit() {
        let big: Vec<(String, String)> = (0..20)
            .map(|i| (format!("f{i:02}.txt"), "x".into()))
            .collect();
        let files: Vec<(&str, &str, &str)> = big
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str(), "utf-8"))
            .collect();
        let a = detail(A, "a", &files);
        let b = detail(B, "b", &files);
        let one = json_len(&json!(gist_resources(&a)));
        // Room for one gist only: the page ends at the second, and resumes there.
        let page = build_page(
            Cursor {
                page: 2,
                skip: 5,
                after: None,
            },
            &[Some(&a), Some(&b)],
            true,
            one + 10,
        );
        assert_eq!(page.resources.len(), 20);
        assert_eq!(
            page.next,
            Some(Cursor {
                page: 2,
                skip: 6,
                after: None,
            })
        );
        // Room for both: the next page is Opengist's next page.
        let page = build_page(
            Cursor {
                page: 2,
                skip: 5,
                after: None,
            },
            &[Some(&a), Some(&b)],
            true,
            10 * one,
        );
        assert_eq!(page.resources.len(), 40);
        assert_eq!(
            page.next,
            Some(Cursor {
                page: 3,
                skip: 0,
                after: None,
            })
        );
        // The last page has no next; a gist gone since it was listed is passed over.
        let page = build_page(Cursor::START, &[None, Some(&b)], false, 10 * one);
        assert_eq!(page.resources.len(), 20);
        assert_eq!(page.next, None);
        // The first gist is listed even when it alone is over the budget.
        let page = build_page(Cursor::START, &[Some(&a), Some(&b)], false, 10);
        assert_eq!(page.resources.len(), 20);
        assert_eq!(
            page.next,
            Some(Cursor {
                page: 1,
                skip: 1,
                after: None,
            })
        );
    }
}
