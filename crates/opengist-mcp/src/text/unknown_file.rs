//! The refusal for a filename a gist does not have (`get_gist_file`, `resources/read`): it
//! names the gist's files and a near match.

use crate::opengist::GistDetail;
use crate::opengist::gist_facts::near_match;
use crate::opengist::requests::GistId;

/// The refusal for a filename that is not in the gist, with a near match when one exists.
pub(crate) fn unknown_file_message(
    filename: &str,
    gist_id: &GistId,
    detail: &GistDetail,
) -> String {
    let names: Vec<String> = detail
        .files
        .iter()
        .map(|(key, f)| {
            if f.filename.is_empty() {
                key.clone()
            } else {
                f.filename.clone()
            }
        })
        .collect();
    let hint = near_match(filename, names.iter())
        .map(|m| format!(" Did you mean {m:?} (filenames are case-sensitive)?"))
        .unwrap_or_default();
    let shown: Vec<String> = names.iter().take(20).map(|n| format!("{n:?}")).collect();
    let more = if names.len() > 20 {
        format!(" and {} more", names.len() - 20)
    } else {
        String::new()
    };
    format!(
        "gist {gist_id} has no file named {filename:?}.{hint} Its files: {}{more}. Nothing was read.",
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::common::fixtures::*;

    #[test]
    fn unknown_files_get_a_near_match() {
        let d = detail(vec![
            file_json("README.md", "x", 1, false, "utf-8"),
            file_json("main.rs", "y", 1, false, "utf-8"),
        ]);
        let text = unknown_file_message("readme.md", &id(), &d);
        assert!(text.contains(r#"Did you mean "README.md""#), "{text}");
        assert!(text.contains(r#""main.rs""#));
        let text = unknown_file_message("nope", &id(), &d);
        assert!(!text.contains("Did you mean"), "{text}");
    }
}
