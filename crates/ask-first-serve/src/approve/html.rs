//! The approval and enrolment pages: one small document each, no external resource, its script
//! and style allowed by a per-response nonce, served with headers that forbid framing,
//! caching, sniffing and referrers.

use ask_first_core::Evidence;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The script of the approval page: a passkey ceremony for the decision the person clicked.
const APPROVE_SCRIPT: &str = r#"const d=document.body.dataset,out=document.getElementById('out');
async function post(path,body){const r=await fetch(location.pathname+path,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)});const t=await r.text();if(!r.ok)throw new Error(t);return t}
async function go(decision){out.dataset.state='busy';out.textContent='Waiting for your passkey...';
try{const o=JSON.parse(await post('/begin',{token:d.token,decision}));
const c=await navigator.credentials.get({publicKey:PublicKeyCredential.parseRequestOptionsFromJSON(o.publicKey||o)});
out.textContent=await post('/finish',{token:d.token,credential:c.toJSON()});out.dataset.state='done';
for(const b of document.querySelectorAll('button'))b.disabled=true}
catch(e){const n=document.getElementById('enrol');out.dataset.state='refused';
if(e.name==='NotAllowedError'&&n){out.textContent='No passkey answered: this browser has none for this page, or the request was cancelled or timed out. Nothing was recorded.';n.hidden=false}
else out.textContent='Not recorded: '+e.message}}
for(const b of document.querySelectorAll('button'))b.addEventListener('click',()=>go(b.value));"#;

/// The script of the page shown after a login: the decision the person clicked, posted with the
/// page's token.
const DECIDE_SCRIPT: &str = r#"const d=document.body.dataset,out=document.getElementById('out');
async function go(decision){out.dataset.state='busy';out.textContent='Recording...';
try{const r=await fetch('/approve/'+document.getElementById('question').dataset.record+'/decide',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({token:d.token,decision})});
const t=await r.text();if(!r.ok)throw new Error(t);out.textContent=t;out.dataset.state='done';
for(const b of document.querySelectorAll('button'))b.disabled=true}
catch(e){out.textContent='Not recorded: '+e.message;out.dataset.state='refused'}}
for(const b of document.querySelectorAll('button'))b.addEventListener('click',()=>go(b.value));"#;

/// The script of the enrolment page.
const ENROL_SCRIPT: &str = r#"const d=document.body.dataset,out=document.getElementById('out');
async function post(path,body){const r=await fetch(location.pathname+path,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)});const t=await r.text();if(!r.ok)throw new Error(t);return t}
document.getElementById('enrol').addEventListener('click',async()=>{out.dataset.state='busy';
try{const o=JSON.parse(await post('/begin',{token:d.token}));
const c=await navigator.credentials.create({publicKey:PublicKeyCredential.parseCreationOptionsFromJSON(o.publicKey||o)});
out.textContent=await post('/finish',{token:d.token,credential:c.toJSON()});out.dataset.state='done'}
catch(e){out.textContent='Not enrolled: '+e.message;out.dataset.state='refused'}});"#;

const STYLE: &str = "body{font:16px system-ui,sans-serif;max-width:44em;margin:2em auto;padding:0 1em}pre{white-space:pre-wrap;border:1px solid #999;padding:1em;background:#f6f6f6}button{font-size:1em;margin-right:1em;padding:.5em 1.5em}";

/// Escapes text for an HTML element's content or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub(super) fn document(title: &str, nonce: &str, token: &str, body: &str, script: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{title}</title><style nonce=\"{nonce}\">{STYLE}</style></head><body data-token=\"{token}\">{body}<p id=\"out\" role=\"status\"></p>{script}</body></html>",
        title = escape(title),
        token = escape(token),
        script = if script.is_empty() {
            String::new()
        } else {
            format!("<script nonce=\"{nonce}\">{script}</script>")
        },
    )
}

/// How the page lets the person approve: with a passkey, and with a login at the identity
/// provider started at this relative link.
pub(crate) struct Ways<'a> {
    pub(crate) passkey: bool,
    pub(crate) login: Option<&'a str>,
    /// Which principal's passkey the page needs and how one is enrolled, shown at once when
    /// `unenrolled` (the server knows none is), else when the browser finds none.
    pub(crate) enrol: &'a str,
    pub(crate) unenrolled: bool,
}

/// The approval page for one question: the question exactly as the form dialog shows it, the
/// evidence below it (framed as the caller's), and Approve and Decline, each a passkey
/// ceremony, and/or a link to sign in and approve.
pub(crate) fn approval_page(
    server: &str,
    tool: &str,
    (question, evidence): (&str, &Evidence),
    nonce: &str,
    token: &str,
    ways: &Ways<'_>,
) -> String {
    let how = match (ways.passkey, ways.login.is_some()) {
        (true, true) => "with your passkey, or after signing in",
        (false, true) => "after signing in",
        _ => "with your passkey",
    };
    let buttons = if ways.passkey {
        format!(
            "<p id=\"enrol\"{}>{}</p><p><button id=\"approve\" value=\"approve\">Approve</button><button id=\"decline\" value=\"decline\">Decline</button></p>",
            if ways.unenrolled { "" } else { " hidden" },
            escape(ways.enrol)
        )
    } else {
        String::new()
    };
    let login = ways.login.map_or(String::new(), |link| {
        format!(
            "<p><a id=\"login\" href=\"{}\">Sign in at your identity provider to approve or decline</a></p>",
            escape(link)
        )
    });
    let body = format!(
        "<h1>{server} asks for your approval</h1><p>A call to <code>{tool}</code> is waiting. It runs once, and only if you approve here {how}. Opening this page approves nothing.</p><pre id=\"question\">{question}</pre>{evidence}{buttons}{login}",
        server = escape(server),
        tool = escape(tool),
        question = super::links::question_html(question),
        evidence = super::evidence::section(evidence, nonce),
    );
    document(
        &format!("{server}: approve?"),
        nonce,
        token,
        &body,
        APPROVE_SCRIPT,
    )
}

/// The question (and its evidence) again after a login proved the person who asked, with
/// Approve and Decline.
pub(crate) fn signed_in_page(
    server: &str,
    tool: &str,
    (question, evidence): (&str, &Evidence),
    record: &str,
    nonce: &str,
    token: &str,
) -> String {
    let body = format!(
        "<h1>{server} asks for your approval</h1><p>You are signed in as the person who asked. A call to <code>{tool}</code> is waiting; it runs once, and only if you approve it here.</p><pre id=\"question\" data-record=\"{record}\">{question}</pre>{evidence}<p><button id=\"approve\" value=\"approve\">Approve</button><button id=\"decline\" value=\"decline\">Decline</button></p>",
        server = escape(server),
        tool = escape(tool),
        question = super::links::question_html(question),
        record = escape(record),
        evidence = super::evidence::section(evidence, nonce),
    );
    document(
        &format!("{server}: approve?"),
        nonce,
        token,
        &body,
        DECIDE_SCRIPT,
    )
}

/// A page that only says something (no such question, already decided).
pub(crate) fn notice_page(title: &str, text: &str, nonce: &str) -> String {
    let body = format!(
        "<h1>{}</h1><p id=\"notice\">{}</p>",
        escape(title),
        escape(text)
    );
    document(title, nonce, "", &body, "")
}

/// The enrolment page of `passkeys add`.
pub(crate) fn enrol_page(server: &str, principal: &str, nonce: &str, token: &str) -> String {
    let body = format!(
        "<h1>Enrol a passkey for {server}</h1><p>The passkey will approve the questions of <code>{principal}</code> on {server}'s approval page. This link works once.</p><p><button id=\"enrol\">Enrol a passkey</button></p>",
        server = escape(server),
        principal = escape(principal),
    );
    document(
        &format!("{server}: enrol a passkey"),
        nonce,
        token,
        &body,
        ENROL_SCRIPT,
    )
}

/// A page response with the headers every page carries.
pub(crate) fn page_response(
    status: StatusCode,
    html: String,
    nonce: &str,
    cookie: Option<String>,
) -> Response {
    let mut headers = HeaderMap::new();
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
        (header::CONTENT_SECURITY_POLICY, csp),
        (header::X_FRAME_OPTIONS, "DENY".to_owned()),
        (header::CACHE_CONTROL, "no-store".to_owned()),
        (header::REFERRER_POLICY, "no-referrer".to_owned()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    (status, headers, html).into_response()
}

/// A plain-text answer to one of the pages' POSTs.
pub(crate) fn text(status: StatusCode, text: impl Into<String>) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    (status, headers, text.into()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_questions_are_escaped_and_the_page_stays_small() {
        let question = "This will delete note <script>alert(1)</script> & \"x\" 'y'.";
        let none = Evidence::new();
        let ways = Ways {
            passkey: true,
            login: None,
            enrol: "needs <x>",
            unenrolled: false,
        };
        let page = approval_page("notes", "delete_note", (question, &none), "N", "T", &ways);
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot; &#39;y&#39;")
        );
        assert!(page.len() <= 30 * 1024, "{}", page.len());
        // Only the nonce'd script and style: nothing loaded from anywhere.
        assert!(!page.contains("src=") && !page.contains("href=") && !page.contains("http"));
        assert_eq!(page.matches("<script nonce=\"N\">").count(), 1);
        // The principal's enrolment hint is there, escaped, hidden until the browser finds no
        // passkey; shown at once when the server knows none is enrolled.
        assert!(
            page.contains("<p id=\"enrol\" hidden>needs &lt;x&gt;</p>"),
            "{page}"
        );
        let unenrolled = Ways {
            unenrolled: true,
            ..ways
        };
        let page = approval_page(
            "notes",
            "delete_note",
            (question, &none),
            "N",
            "T",
            &unenrolled,
        );
        assert!(
            page.contains("<p id=\"enrol\">needs &lt;x&gt;</p>"),
            "{page}"
        );
    }

    #[test]
    fn the_evidence_sits_below_the_question_and_the_page_stays_small() {
        use ask_first_core::EvidenceItem;
        let question = "This will delete 1 file(s) (10 bytes); 1 file(s) will remain.";
        let ways = Ways {
            passkey: true,
            login: None,
            enrol: "",
            unenrolled: false,
        };
        let evidence = |gone: &str, stays: &str| {
            Evidence::new()
                .group("Files deleted", [EvidenceItem::new(gone, b"0123456789")])
                .group("Files that stay", [EvidenceItem::new(stays, b"abcdefghij")])
        };
        let scratch = evidence("scratch.txt", "keep.txt");
        let keep = evidence("keep.txt", "scratch.txt");
        let one = approval_page(
            "og",
            "delete_gist_files",
            (question, &scratch),
            "N",
            "T",
            &ways,
        );
        let two = approval_page(
            "og",
            "delete_gist_files",
            (question, &keep),
            "N",
            "T",
            &ways,
        );
        assert_ne!(one, two);
        // The question line is the same on both, byte for byte; the evidence follows it,
        // before the buttons.
        let line = format!("<pre id=\"question\">{question}</pre><section id=\"evidence\">");
        assert!(one.contains(&line) && two.contains(&line), "{one}");
        assert!(one.find("id=\"evidence\"") < one.find("id=\"approve\""));
        // Positive control: no evidence, no section.
        let bare = approval_page(
            "og",
            "delete_gist_files",
            (question, &Evidence::new()),
            "N",
            "T",
            &ways,
        );
        assert!(!bare.contains("id=\"evidence\""), "{bare}");
        // Whatever the evidence holds, the page stays within 30 KiB, with one script.
        let hostile = "</pre><script>\u{202E}".repeat(40);
        let huge = Evidence::new().group(
            "Files",
            (0..64).map(|i| EvidenceItem::readable(format!("{i}{hostile}"), hostile.as_bytes())),
        );
        let page = approval_page("og", "update_gist", (question, &huge), "N", "T", &ways);
        assert!(page.len() <= 30 * 1024, "{}", page.len());
        assert_eq!(page.matches("<script").count(), 1);
        let signed = signed_in_page("og", "update_gist", (question, &huge), "r", "N", "T");
        assert!(signed.len() <= 30 * 1024 && signed.contains("id=\"evidence\""));
    }

    #[test]
    fn the_login_link_and_the_signed_in_page_escape_and_stay_small() {
        let question = "Delete <b>x</b> & \"y\".";
        let none = Evidence::new();
        let ways = Ways {
            passkey: false,
            login: Some("/approve/a\"b/login"),
            enrol: "",
            unenrolled: false,
        };
        let page = approval_page("notes", "delete_note", (question, &none), "N", "T", &ways);
        assert!(page.contains("href=\"/approve/a&quot;b/login\""), "{page}");
        assert!(
            !page.contains("id=\"approve\""),
            "no passkey buttons: {page}"
        );
        let both = Ways {
            passkey: true,
            login: Some("/approve/r/login"),
            enrol: "",
            unenrolled: true,
        };
        let page = approval_page("notes", "delete_note", (question, &none), "N", "T", &both);
        assert!(page.contains("id=\"approve\"") && page.contains("id=\"login\""));
        let signed = signed_in_page("notes", "delete_note", (question, &none), "r\"1", "N", "T");
        assert!(signed.contains("Delete &lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;."));
        assert!(signed.contains("data-record=\"r&quot;1\""));
        assert!(signed.len() <= 30 * 1024);
        assert!(!signed.contains("src=") && !signed.contains("http"));
        assert_eq!(signed.matches("<script nonce=\"N\">").count(), 1);
    }
}
