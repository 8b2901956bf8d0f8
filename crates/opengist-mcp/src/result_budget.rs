//! The result budget: every tool result fits in the configured result-size ceiling
//! (`OPENGIST_MCP_MAX_RESULT_BYTES`), whatever Opengist returns. (Not to be confused with the
//! framework's HTTP limits on connections, sessions and request bodies, nor with the integer
//! bounds of the tool schemas in `tools::common::tool_schemas`.)
//!
//! Two ways of fitting, in this order:
//! - `fit_within`: a tool builds its result again with less content until it fits, so the
//!   cut falls where the tool says so in a note, with the call that reads the rest.
//! - [`fit_to_budget`], the last line: it measures the structured content as JSON and, while
//!   it is too large, shortens the longest string in it (marking the cut), so the ceiling
//!   holds for every field, including ones no tool thought to cap.

use serde_json::Value;

/// Appended to a string that was shortened to fit the ceiling.
pub(crate) const CUT_MARK: &str = "…[cut to fit the result-size ceiling]";

/// Serialized size of `value` in bytes.
pub(crate) fn json_len(value: &Value) -> usize {
    serialized_len(value)
}

/// Serialized JSON size of anything serializable, in bytes, counted without building the
/// text (or a `Value`) in memory. `usize::MAX` if it cannot be serialized.
pub(crate) fn serialized_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// Shapes a result to `budget` bytes of JSON: builds it with `allowance` content bytes and,
/// while it is larger than `budget`, builds it again with the allowance cut by the excess.
/// Deterministic; ends within a few rounds because each round at least shrinks the allowance.
pub(crate) fn fit_within<T: serde::Serialize>(
    budget: usize,
    mut allowance: usize,
    build: impl Fn(usize) -> T,
) -> T {
    let mut out = build(allowance);
    for _ in 0..8 {
        let size = serialized_len(&out);
        if size <= budget || allowance == 0 {
            break;
        }
        let excess = size - budget;
        allowance = allowance.saturating_sub(excess.saturating_add(256).max(allowance / 8));
        out = build(allowance);
    }
    out
}

/// Shortens the longest strings in `value` until its JSON form is at most `budget` bytes.
/// Returns whether anything was cut. Gives up (returning `true`) only if no string is left to
/// shorten, which a caller must treat as "still too large".
pub(crate) fn fit_to_budget(value: &mut Value, budget: usize) -> bool {
    let mut cut = false;
    // Each round at least halves the longest string, so this ends quickly.
    for _ in 0..256 {
        let size = json_len(value);
        if size <= budget {
            return cut;
        }
        let excess = size - budget;
        let Some(longest) = longest_string(value) else {
            return true;
        };
        let len = longest.len();
        if len <= CUT_MARK.len() + 8 {
            return true;
        }
        // Cut at least the excess (plus the mark), at most half the string per round.
        let keep = len
            .saturating_sub(excess + CUT_MARK.len() + 16)
            .max(len / 2)
            .min(len - 1);
        let boundary = floor_char_boundary(longest, keep);
        longest.truncate(boundary);
        longest.push_str(CUT_MARK);
        cut = true;
    }
    true
}

fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(text) => Some(text),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|text| text.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|text| text.len()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fit_within_shrinks_until_it_fits() {
        let out = fit_within(1000, 5000, |n| "x".repeat(n));
        assert!(out.len() + 2 <= 1000, "{}", out.len());
        // Already small: untouched.
        assert_eq!(fit_within(1000, 10, |n| "x".repeat(n)).len(), 10);
    }

    #[test]
    fn small_values_are_untouched() {
        let mut value = json!({"a": "short", "n": 1});
        assert!(!fit_to_budget(&mut value, 1000));
        assert_eq!(value, json!({"a": "short", "n": 1}));
    }

    #[test]
    fn the_ceiling_holds_for_any_field() {
        let mut value = json!({
            "title": "t".repeat(50_000),
            "files": [{"content": "é".repeat(100_000)}, {"content": "x".repeat(10)}],
            "description": "d".repeat(20_000)
        });
        assert!(fit_to_budget(&mut value, 4096));
        assert!(json_len(&value) <= 4096, "{}", json_len(&value));
        let content = value["files"][0]["content"].as_str().expect("string");
        assert!(content.ends_with(CUT_MARK));
        assert_eq!(value["files"][1]["content"], "x".repeat(10));
    }

    #[test]
    fn reports_when_it_cannot_fit() {
        let mut value = json!((0..1000).collect::<Vec<u32>>());
        assert!(fit_to_budget(&mut value, 100));
        assert!(json_len(&value) > 100);
        assert_eq!(
            json_len(&value),
            serde_json::to_vec(&value).map(|v| v.len()).unwrap_or(0)
        );
    }
}
