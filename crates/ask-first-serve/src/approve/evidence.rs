//! The evidence below the question on the approval page: what exactly changes, as data. Every
//! string is HTML-escaped; the section says the names and contents in it are the caller's
//! (whoever wrote the gist, the note, the call), not the server's; names sit in a monospace
//! box with their size and digest; excerpts are bounded; a link is a real link only for an
//! `http(s)` URL. The section is bounded too: past its budget the items left are counted, and
//! the digest of all of it (always shown) still tells two evidences apart.

use ask_first_core::{Evidence, EvidenceItem, Fact};

use super::html::escape;

/// The most bytes of HTML the evidence adds to a page, so the page stays small whatever the
/// names and contents are.
const BUDGET: usize = 24 * 1024;

/// The section's own style: a page without evidence carries none of it.
const STYLE: &str = "#evidence{border-left:4px solid #c60;padding-left:1em}code.name{border:1px solid #999;padding:0 .2em;word-break:break-all}";

/// The evidence section (its style allowed by the page's `nonce`), or nothing without
/// evidence.
pub(crate) fn section(evidence: &Evidence, nonce: &str) -> String {
    if evidence.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<section id=\"evidence\"><style nonce=\"{}\">{STYLE}</style><h2>What exactly changes</h2><p><strong>Supplied by the caller \u{2014} not written by this server.</strong> The names and contents below are data written by someone else; check that they are what you expect to approve.</p>",
        escape(nonce)
    );
    let mut left_out = 0usize;
    for group in evidence.groups() {
        if left_out > 0 {
            left_out += group.items().len();
            continue;
        }
        out.push_str(&format!("<h3>{}</h3><ul>", escape(group.heading())));
        for (index, item) in group.items().iter().enumerate() {
            let shown = item_html(item);
            if out.len() + shown.len() > BUDGET {
                left_out = group.items().len() - index;
                break;
            }
            out.push_str(&shown);
        }
        if let Some((count, digest)) = group.omitted() {
            out.push_str(&format!(
                "<li>and {count} more, not listed (their digest: <code>{}</code>)</li>",
                escape(digest)
            ));
        }
        out.push_str("</ul>");
    }
    if left_out > 0 {
        out.push_str(&format!(
            "<p id=\"evidence-more\">{left_out} more item(s) not shown on this page; the digest below covers them.</p>"
        ));
    }
    if let Some(link) = evidence.link() {
        out.push_str(&format!("<p>Where it is: {}</p>", link_html(link)));
    }
    out.push_str(&format!(
        "<p>Digest of all of it: <code id=\"evidence-digest\">{}</code></p></section>",
        escape(&evidence.digest())
    ));
    out
}

/// One item: its name in a monospace box, its size and digest, and its excerpt if any.
fn item_html(item: &EvidenceItem) -> String {
    let mut out = format!(
        "<li><code class=\"name\">{}</code> {}, SHA-256 <code class=\"digest\">{}</code>",
        escape(item.name()),
        Fact::bytes(item.size()),
        escape(item.digest()),
    );
    if let Some(part) = item.digest_covers_part() {
        out.push_str(&format!(" of its first {}", Fact::bytes(part)));
    }
    if let Some(excerpt) = item.excerpt() {
        match excerpt.text() {
            Some(text) => out.push_str(&format!("<pre class=\"excerpt\">{}</pre>", escape(text))),
            None if excerpt.is_binary() => out.push_str("<br>(not text: its content is not shown)"),
            None => out.push_str(
                "<br>(its content is not shown: this page shows at most 8 KiB of content)",
            ),
        }
        if excerpt.more() > 0 && excerpt.text().is_some() {
            out.push_str(&format!(
                "\u{2026} and {} more, not shown",
                Fact::bytes(excerpt.more())
            ));
        }
    }
    out.push_str("</li>");
    out
}

/// A link: a real one for an `http(s)` URL (opened in a new tab, without a referrer), text
/// otherwise.
fn link_html(link: &str) -> String {
    let lower = link.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        format!(
            "<a href=\"{0}\" rel=\"noopener noreferrer\" target=\"_blank\">{0}</a>",
            escape(link)
        )
    } else {
        format!("<code>{}</code>", escape(link))
    }
}

#[cfg(test)]
mod tests {
    use ask_first_core::{Configured, Id, Link};

    use super::*;

    fn section_of(evidence: &Evidence) -> String {
        section(evidence, "N")
    }

    fn delete(gone: &str, stays: &str) -> Evidence {
        Evidence::new()
            .group("Files deleted", [EvidenceItem::new(gone, b"0123456789")])
            .group("Files that stay", [EvidenceItem::new(stays, b"abcdefghij")])
    }

    #[test]
    fn hostile_names_and_contents_are_escaped_data() {
        let evidence = Evidence::new().group(
            "Files that become readable",
            [EvidenceItem::readable(
                "</pre><script>alert(1)</script>",
                b"</pre><script>alert(2)</script>&amp; \"q\" 'a'",
            )],
        );
        let html = section_of(&evidence);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;&amp;amp;"));
        // The name is framed and escaped before it is HTML-escaped.
        assert!(
            html.contains("<code class=\"name\">«&lt;U+003C&gt;/pre"),
            "{html}"
        );
        assert!(html.contains("Supplied by the caller \u{2014} not written by this server."));
        // Positive control: the same page without the hostile bytes shows them as they are.
        let plain =
            section_of(&Evidence::new().group("F", [EvidenceItem::readable("a.txt", b"hi")]));
        assert!(plain.contains("<pre class=\"excerpt\">hi</pre>"), "{plain}");
    }

    #[test]
    fn look_alike_operations_render_apart() {
        let scratch = section_of(&delete("scratch.txt", "keep.txt"));
        let keep = section_of(&delete("keep.txt", "scratch.txt"));
        assert_ne!(scratch, keep);
        let deleted = |html: &str| {
            let start = html.find("<h3>Files deleted</h3>").expect("group");
            let end = html.find("<h3>Files that stay</h3>").expect("group");
            html[start..end].to_owned()
        };
        assert!(deleted(&scratch).contains("«scratch.txt»") && !deleted(&scratch).contains("keep"));
        assert!(deleted(&keep).contains("«keep.txt»") && !deleted(&keep).contains("scratch"));
        assert_eq!(section_of(&Evidence::new()), "");
    }

    #[test]
    fn only_http_links_are_links() {
        let link = Link::new(
            Configured::fixed("https://gist.example.org"),
            [Id::new("alice").expect("id"), Id::new("3f2a").expect("id")],
        );
        let html = section_of(&delete("a", "b").with_link(link));
        assert!(
            html.contains(
                "<a href=\"https://gist.example.org/alice/3f2a\" rel=\"noopener noreferrer\""
            ),
            "{html}"
        );
        let other = Link::new(
            Configured::fixed("javascript:alert(1)//"),
            [Id::new("x").expect("id")],
        );
        let html = section_of(&delete("a", "b").with_link(other));
        assert!(!html.contains("<a "), "{html}");
        assert!(
            html.contains("<code>javascript:alert(1)/x</code>"),
            "{html}"
        );
    }

    #[test]
    fn the_section_stays_within_its_budget() {
        let name = "\u{202E}".repeat(200);
        let content = "<".repeat(4000);
        let items: Vec<EvidenceItem> = (0..60)
            .map(|i| EvidenceItem::readable(format!("{i}{name}"), content.as_bytes()))
            .collect();
        let evidence = Evidence::new().group("Files", items);
        let html = section_of(&evidence);
        assert!(html.len() <= BUDGET + 1024, "{}", html.len());
        assert!(
            html.contains("more item(s) not shown on this page"),
            "{html}"
        );
        assert!(html.contains(&evidence.digest()));
        // Withheld and binary excerpts say so.
        assert!(
            html.contains("this page shows at most 8 KiB of content")
                || html.contains("not shown on this page")
        );
        let binary =
            section_of(&Evidence::new().group("F", [EvidenceItem::readable("b", &[0xff, 0])]));
        assert!(
            binary.contains("(not text: its content is not shown)"),
            "{binary}"
        );
    }
}
