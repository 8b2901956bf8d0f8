//! Redaction of every log line before it reaches stderr.
//!
//! What must never be logged but can hide in a formatted protocol message (rmcp's `Debug`
//! output, JSON, escaped JSON inside a string): seals (`requestState` and confirm tokens, both
//! `v1.` + base64url), the value of any `confirm_token` / `requestState` field whatever its
//! shape, a dialog's answer (`approve: true`, `action: accept`), and session ids (UUIDs, and the
//! value of `Mcp-Session-Id`).

use std::io::{self, Write};
use std::sync::LazyLock;

use regex::Regex;
use tracing_subscriber::fmt::MakeWriter;

/// What stands in for a redacted value.
const REDACTED: &str = "<redacted>";

/// Separators between a key and its value in `Debug`, JSON and escaped JSON: quotes,
/// backslashes, `:`/`=`, spaces, and the `Some(`/`String(`/`Bool(` wrappers.
const SEPARATOR: &str = r#"(?:[\\"':=\s]|Some\(|String\(|Bool\()*"#;

struct Rule {
    pattern: Regex,
    replacement: &'static str,
}

fn rule(pattern: &str, replacement: &'static str) -> Option<Rule> {
    match Regex::new(pattern) {
        Ok(pattern) => Some(Rule {
            pattern,
            replacement,
        }),
        Err(error) => {
            // A pattern of this file failed to compile: a bug caught by the unit tests.
            eprintln!("log redaction rule {pattern:?} does not compile: {error}");
            None
        }
    }
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    [
        // Keyed values first, so the key survives and says what was there.
        rule(
            &format!(
                r#"(?i)((?:confirm_token|request_?state|mcp-session-id|session_id){SEPARATOR})[^\s"\\,;)}}\]]+"#
            ),
            "${1}<redacted>",
        ),
        rule(
            &format!(r#"(?i)((?:approve|action){SEPARATOR})(?:true|false|accept|decline|cancel)\b"#),
            "${1}<redacted>",
        ),
        // A seal anywhere (a token quoted in a tool result's text, a state in a retry).
        rule(r"\bv1\.[A-Za-z0-9_-]{16,}", "v1.<redacted>"),
        // A session id anywhere.
        rule(
            r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            REDACTED,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// `line` with seals, tokens, answers and session ids blanked out.
pub(crate) fn redact(line: &str) -> String {
    let mut text = line.to_owned();
    for rule in RULES.iter() {
        if rule.pattern.is_match(&text) {
            text = rule
                .pattern
                .replace_all(&text, rule.replacement)
                .into_owned();
        }
    }
    text
}

/// Stderr, through [`redact`]. The formatter writes each event in one `write` call, so each
/// call is redacted whole.
pub(crate) struct RedactingStderr;

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = RedactingWriter;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter
    }
}

/// One event's writer.
pub(crate) struct RedactingWriter;

impl Write for RedactingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let line = String::from_utf8_lossy(buf);
        io::stderr().lock().write_all(redact(&line).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEAL: &str = "v1.AQEAAAAAZ2m3hQx7YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXpBQkNERUZH";

    #[test]
    fn every_rule_compiles() {
        assert_eq!(RULES.len(), 4);
    }

    #[test]
    fn seals_tokens_answers_and_session_ids_are_blanked_in_every_shape() {
        let lines = [
            format!(r#"request_state: Some("{SEAL}"), input_responses: None"#),
            format!(r#"{{"requestState":"{SEAL}"}}"#),
            format!(r#"arguments: {{"confirm_token": String("{SEAL}")}}"#),
            r#"arguments: {"confirm_token": String("not-a-seal-garbage")}"#.to_owned(),
            format!(r#"text: "confirm_token: {SEAL}\n\nThis token""#),
            r#"content: Some(Object {"approve": Bool(true)}), action: Accept"#.to_owned(),
            r#"{\"action\":\"accept\",\"content\":{\"approve\":true}}"#.to_owned(),
            "session_id=3f2b8a1e-4c5d-4e6f-8a9b-0c1d2e3f4a5b create new session".to_owned(),
            "mcp-session-id: 3F2B8A1E-4C5D-4E6F-8A9B-0C1D2E3F4A5B".to_owned(),
        ];
        for line in &lines {
            let redacted = redact(line);
            for secret in [
                "AQEAAAAAZ2m3",
                "not-a-seal-garbage",
                "Bool(true)",
                "Accept",
                "accept",
                "approve\\\":true",
                "3f2b8a1e",
                "3F2B8A1E",
            ] {
                assert!(
                    !redacted.contains(secret),
                    "{secret:?} survives in {redacted:?} (from {line:?})"
                );
            }
            assert!(redacted.contains(REDACTED), "{redacted:?}");
        }
    }

    /// The patterns stay Unicode-aware with the regex crate's Unicode tables trimmed to
    /// `unicode-perl` and `unicode-case`: a no-break or em space is a separator,
    /// and a key in another case still matches.
    #[test]
    fn unicode_spaces_and_case_still_match() {
        for line in [
            "confirm_token:\u{a0}not-a-seal-garbage",
            "CONFIRM_TOKEN\u{2003}not-a-seal-garbage",
        ] {
            let redacted = redact(line);
            assert!(!redacted.contains("not-a-seal-garbage"), "{redacted:?}");
            assert!(redacted.contains(REDACTED), "{redacted:?}");
        }
    }

    #[test]
    fn ordinary_lines_are_left_alone() {
        for line in [
            "opengist request method=GET path=/api/gists/0123456789abcdef0123456789abcdef status=200",
            "serving MCP over streamable HTTP address=127.0.0.1:8080",
            "tool=delete_gist refused",
        ] {
            assert_eq!(redact(line), line);
        }
    }
}
