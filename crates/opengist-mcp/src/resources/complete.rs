//! `completion/complete` for the two templates' variables: pure ranking of candidates.
//!
//! - `gist_id`: the token owner's gists (at most [`GIST_SCAN_PAGES`] pages of 100, newest
//!   first). Ids starting with what was typed come first, then gists whose title has, for
//!   every typed word, a word starting with it (case-insensitive); newest first within each.
//! - `filename`: the files of the gist named by the `gist_id` already given (at the `revision`
//!   given, if any): names starting with what was typed, then names containing it
//!   (case-insensitive), in filename order.
//! - `revision`: the gist's commits (the newest 100), newest first, whose sha starts with
//!   what was typed.
//!
//! At most [`MAX_VALUES`] values are returned; `total` and `hasMore` say how many matched.

use rmcp::model::CompletionInfo;

use crate::opengist::GistSummary;

/// Most values one completion answer carries.
pub(crate) const MAX_VALUES: usize = 30;
/// Pages of 100 gists a `gist_id` completion reads, at most.
pub(crate) const GIST_SCAN_PAGES: u32 = 3;
/// Commits a `revision` completion reads, at most (Opengist's largest page).
pub(crate) const COMMIT_SCAN: u32 = 100;
/// Longest value completed; anything longer matches nothing.
pub(crate) const MAX_TYPED: usize = 256;

/// The words of `text`: runs of letters and digits, lower-cased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether every word of `typed` starts some word of `title`.
pub(crate) fn title_matches(title: &str, typed: &str) -> bool {
    let wanted = words(typed);
    if wanted.is_empty() {
        return false;
    }
    let have = words(title);
    wanted
        .iter()
        .all(|w| have.iter().any(|h| h.starts_with(w.as_str())))
}

/// Ranks the owner's gists (`gists` newest first) for a typed `gist_id`: id prefix matches,
/// then title matches; everything when nothing is typed.
pub(crate) fn rank_gists(gists: &[GistSummary], typed: &str) -> (Vec<String>, usize) {
    let typed = typed.trim();
    if typed.len() > MAX_TYPED {
        return (Vec::new(), 0);
    }
    let lower = typed.to_ascii_lowercase();
    let mut by_id: Vec<String> = Vec::new();
    let mut by_title: Vec<String> = Vec::new();
    for gist in gists {
        let id = gist.id.as_str();
        if by_id.iter().chain(by_title.iter()).any(|seen| seen == id) {
            continue;
        }
        if id.starts_with(&lower) {
            by_id.push(id.to_owned());
        } else if title_matches(&gist.title, typed) {
            by_title.push(id.to_owned());
        }
    }
    let total = by_id.len() + by_title.len();
    by_id.extend(by_title);
    by_id.truncate(MAX_VALUES);
    (by_id, total)
}

/// Ranks filenames (in filename order) for a typed `filename`.
pub(crate) fn rank_names(names: &[String], typed: &str) -> (Vec<String>, usize) {
    if typed.len() > MAX_TYPED {
        return (Vec::new(), 0);
    }
    let lower = typed.to_lowercase();
    let (mut starts, contains): (Vec<&String>, Vec<&String>) = names
        .iter()
        .filter(|n| n.to_lowercase().contains(&lower))
        .partition(|n| n.to_lowercase().starts_with(&lower));
    let total = starts.len() + contains.len();
    starts.extend(contains);
    let mut out: Vec<String> = starts.into_iter().cloned().collect();
    out.truncate(MAX_VALUES);
    (out, total)
}

/// Ranks commit shas (newest first) for a typed `revision`.
pub(crate) fn rank_revisions(versions: &[String], typed: &str) -> (Vec<String>, usize) {
    let lower = typed.trim().to_ascii_lowercase();
    if lower.len() > 40 {
        return (Vec::new(), 0);
    }
    let mut out: Vec<String> = Vec::new();
    for v in versions {
        if v.to_ascii_lowercase().starts_with(&lower) && !out.contains(v) {
            out.push(v.clone());
        }
    }
    let total = out.len();
    out.truncate(MAX_VALUES);
    (out, total)
}

/// The protocol's form of a ranking: the values, how many matched, whether more did than are
/// shown (or more candidates might exist than were read: `unread`).
pub(crate) fn completion(values: Vec<String>, total: usize, unread: bool) -> CompletionInfo {
    let has_more = unread || total > values.len();
    let total = u32::try_from(total).unwrap_or(u32::MAX);
    CompletionInfo::with_pagination(values, Some(total), has_more).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gist(id: &str, title: &str) -> GistSummary {
        serde_json::from_value(json!({"id": id, "title": title, "visibility": "private"}))
            .expect("summary")
    }

    fn id(n: u8, prefix: &str) -> String {
        format!("{prefix}{}", format!("{n:x}").repeat(32))[..32].to_owned()
    }

    #[test]
    fn gist_ids_by_prefix_first_then_title_words_newest_first() {
        let gists = vec![
            gist(&id(1, "ab"), "Deploy notes"),
            gist(&id(2, "cd"), "ABC parser"),
            gist(&id(3, "ab"), "other"),
            gist(&id(4, "ef"), "Notes on deployment"),
        ];
        let (values, total) = rank_gists(&gists, "AB");
        // Ids starting "ab" (newest first), then the title word "ABC".
        assert_eq!(values, vec![id(1, "ab"), id(3, "ab"), id(2, "cd")]);
        assert_eq!(total, 3);
        let (values, _) = rank_gists(&gists, "deploy no");
        assert_eq!(
            values,
            vec![id(1, "ab"), id(4, "ef")],
            "every word prefixes a title word"
        );
        let (values, _) = rank_gists(&gists, "notes zzz");
        assert!(values.is_empty());
        let (values, total) = rank_gists(&gists, "");
        assert_eq!(
            (values.len(), total),
            (4, 4),
            "nothing typed: all, newest first"
        );
        assert_eq!(values[0], id(1, "ab"));
    }

    #[test]
    fn completions_are_bounded() {
        let gists: Vec<GistSummary> = (0..50u8)
            .map(|n| gist(&format!("{n:02x}{}", "0".repeat(30)), "same title"))
            .collect();
        let (values, total) = rank_gists(&gists, "same");
        assert_eq!((values.len(), total), (MAX_VALUES, 50));
        let info = completion(values, total, false);
        assert_eq!(info.has_more, Some(true));
        assert_eq!(info.total, Some(50));
        assert!(rank_gists(&gists, &"x".repeat(MAX_TYPED + 1)).0.is_empty());
        let info = completion(vec!["a".into()], 1, true);
        assert_eq!(info.has_more, Some(true), "unread candidates may match too");
    }

    #[test]
    fn filenames_prefix_then_contains_case_insensitively() {
        let names: Vec<String> = ["Makefile", "main.rs", "README.md", "src_main.c", "x.txt"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let (values, total) = rank_names(&names, "MA");
        assert_eq!(values, vec!["Makefile", "main.rs", "src_main.c"]);
        assert_eq!(total, 3);
        assert_eq!(rank_names(&names, "").0.len(), 5);
    }

    #[test]
    fn revisions_by_prefix_newest_first() {
        let versions = vec![
            "beef01".to_owned(),
            "cafe02".to_owned(),
            "BEEF03".to_owned(),
        ];
        assert_eq!(rank_revisions(&versions, "be").0, vec!["beef01", "BEEF03"]);
        assert_eq!(rank_revisions(&versions, "").0.len(), 3);
        assert!(rank_revisions(&versions, &"a".repeat(41)).0.is_empty());
    }
}
