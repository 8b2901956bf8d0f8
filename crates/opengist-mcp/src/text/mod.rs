//! What tools and resources both say: the exact call that continues a result, cuts that
//! fall on character boundaries, dates as RFC 3339, the note about a token without
//! `gist:read`, how long a listed description may be, and the refusal for a filename a gist
//! does not have ([`unknown_file`]). It sits below both, so neither imports the other for it.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

pub(crate) mod unknown_file;

/// What Opengist silently does to a token without `gist:read`.
pub(crate) const GIST_READ_NOTE: &str = "A token without the gist:read scope makes Opengist silently return public gists only: if private or unlisted gists you expect are missing, the token needs gist:read (Settings -> Access Tokens).";

/// Descriptions longer than this (in characters) are cut in list results.
pub(crate) const LIST_DESCRIPTION_CHARS: usize = 300;

/// A date as RFC 3339 (UTC, seconds).
pub(crate) fn rfc3339(at: Option<DateTime<Utc>>) -> Option<String> {
    at.map(|d| d.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// The exact call that continues a result: `tool with a=1, b="x"`. Values are JSON, so a
/// filename with commas or quotes stays unambiguous.
pub(crate) fn call_text(tool: &str, args: &[(&str, Value)]) -> String {
    let parts: Vec<String> = args.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{tool} with {}", parts.join(", "))
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

/// At most `max` characters of `text`, and whether anything was cut.
pub(crate) fn cut_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (format!("{}…", text.get(..end).unwrap_or_default()), true),
        None => (text.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_name_exact_json_values() {
        assert_eq!(
            call_text(
                "get_gist_file",
                &[("filename", json!("a, \"b\".txt")), ("offset", json!(5))]
            ),
            r#"get_gist_file with filename="a, \"b\".txt", offset=5"#
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut_at_char("héllo", 2), "h");
        assert_eq!(cut_at_char("héllo", 3), "hé");
        assert_eq!(cut_at_char("abc", 10), "abc");
        assert_eq!(cut_at_char("✓", 2), "");
        assert_eq!(cut_chars("ééé", 2), ("éé…".to_owned(), true));
        assert_eq!(cut_chars("éé", 2), ("éé".to_owned(), false));
    }
}
