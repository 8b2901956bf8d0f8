//! The question on the page as HTML: escaped text, with each `http`/`https` URL the server
//! vouches for as a link (`<a href>`), so the person can open, say, the gist a delete is about.
//!
//! Only URLs outside the question's frames are links. Everything a caller supplied reaches a
//! question inside `«…»` (a `«` or `»` within it escaped as `<U+00AB>` / `<U+00BB>`), so a name
//! such as `«Approve https://evil.example»` stays text: a link is only what the server itself
//! wrote there (a `Link` fact on the operator's configured site, operator configuration). An
//! unclosed frame keeps the rest as text (less linking, never more). A URL ends at whitespace,
//! a frame or a character no URL holds unescaped (`<`, `>`, `"`, `'`, `` ` ``), without the
//! sentence's trailing punctuation; it must parse as an absolute `http` or `https` URL, and its
//! `href` and its text are escaped.

use super::html::escape;

/// Where a caller-supplied frame opens and closes in a rendered question.
const FRAME_OPEN: char = '«';
const FRAME_CLOSE: char = '»';

/// `question` as the content of the page's `<pre>`: escaped, its server-written URLs linked.
pub(crate) fn question_html(question: &str) -> String {
    let mut out = String::with_capacity(question.len() + 64);
    let mut framed = false;
    let mut rest = question;
    while let Some(c) = rest.chars().next() {
        if framed || !(rest.starts_with("http://") || rest.starts_with("https://")) {
            framed = match c {
                FRAME_OPEN => true,
                FRAME_CLOSE => false,
                _ => framed,
            };
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let end = rest.find(ends_url).unwrap_or(rest.len());
        let url = rest[..end].trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
        match url::Url::parse(url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {
                out.push_str(&format!(
                    "<a href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer\">{}</a>",
                    escape(parsed.as_str()),
                    escape(url)
                ));
            }
            _ => out.push_str(&escape(url)),
        }
        rest = &rest[url.len()..];
    }
    out
}

/// Whether `c` ends a URL in a question.
fn ends_url(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, FRAME_OPEN | FRAME_CLOSE | '<' | '>' | '"' | '\'' | '`')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_urls_are_links_and_a_callers_never() {
        let question = "This will delete gist 3f2a (public).\nIts page on this Opengist: https://gist.example.org/alice/3f2a (open it to see which gist this is).";
        let html = question_html(question);
        assert!(
            html.contains("Opengist: <a href=\"https://gist.example.org/alice/3f2a\" target=\"_blank\" rel=\"noopener noreferrer\">https://gist.example.org/alice/3f2a</a> (open it"),
            "{html}"
        );
        // At a sentence's end, the full stop is the sentence's.
        let html = question_html("See http://localhost:8080/x/y.");
        assert!(html.ends_with(">http://localhost:8080/x/y</a>."), "{html}");
        // Inside a frame (a caller-supplied name, path or address): text, escaped.
        for framed in [
            "This will delete caller-supplied name «Approve https://evil.example/x».",
            "This will move caller-supplied path «https:»/«»/«evil.example» there.",
            "caller-supplied names «a https://evil.example» and «https://evil.example/b»",
            "caller-supplied name «unclosed https://evil.example",
        ] {
            let html = question_html(framed);
            assert!(!html.contains("<a "), "{html}");
            assert!(html.contains("evil.example"), "{html}");
        }
        // Escaped, in the text and the href; only http and https.
        let html = question_html(
            "At https://h.example/a&b?q=\"x\" and javascript:alert(1) and ftp://h.example/",
        );
        assert!(
            html.contains("<a href=\"https://h.example/a&amp;b?q=\" target=")
                && html.contains(">https://h.example/a&amp;b?q=</a>&quot;x&quot;"),
            "{html}"
        );
        assert_eq!(html.matches("<a ").count(), 1, "{html}");
        assert!(!html.contains("href=\"javascript") && !html.contains("href=\"ftp"));
        // No markup gets through from the question itself.
        let html = question_html("<script>alert(1)</script> «<b>» https://x.example/<i>");
        assert!(
            !html.contains("<script") && !html.contains("<b>") && !html.contains("<i>"),
            "{html}"
        );
        assert!(html.contains(">https://x.example/</a>&lt;i&gt;"), "{html}");
        // A question without a URL is its escaped text.
        assert_eq!(question_html("a < b & «c»"), escape("a < b & «c»"));
    }
}
