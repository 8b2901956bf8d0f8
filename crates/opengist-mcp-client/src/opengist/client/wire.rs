//! What the client's requests share below the methods: URLs and their escaping, paging
//! headers, windows over raw files, and how a transport failure is classified.

use super::*;

/// Whether `slug` names this gist. `slug_url` is the gist's custom URL, or its uuid when it
/// has none; Opengist matches custom URLs regardless of case.
/// Whether Opengist's lookup of a link's last part `name` matches `gist` (one of the link
/// user's gists): its uuid starts with `name` (a SQL `LIKE 'name%'`, where `_` stands for any
/// one character), or its custom URL is `name`, case aside. The custom URL is the last part of
/// its web address (`slug_url`, or `html_url` from an answer without it).
pub(super) fn link_matches(gist: &GistSummary, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let id = gist.id.as_str();
    let prefix = id.len() >= lower.len()
        && id
            .bytes()
            .zip(lower.bytes())
            .all(|(have, want)| want == b'_' || have == want);
    prefix
        || gist.slug_url.eq_ignore_ascii_case(name)
        || gist
            .html_url
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .is_some_and(|last| last.eq_ignore_ascii_case(name))
}

pub(super) fn check_username(name: &str) -> Result<(), OpengistError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c.is_control() || c == '/');
    if ok {
        Ok(())
    } else {
        Err(OpengistError::InvalidArgument {
            message: "`username` must be an Opengist username (letters, digits and dashes)".into(),
        })
    }
}

pub(super) fn page_params(page: u32, per_page: u32) -> (u32, u32) {
    (page.max(1), per_page.clamp(1, MAX_PER_PAGE))
}

pub(super) fn add_paging(url: &mut Url, page: u32, per_page: u32) {
    url.query_pairs_mut()
        .append_pair("page", &page.to_string())
        .append_pair("per_page", &per_page.to_string());
}

/// `base` + segments, each percent-encoded as a single path segment (`/`, `?`, `#`, `%`,
/// spaces and non-ASCII included).
pub(crate) fn build_url(base: &Url, segments: &[&str]) -> Result<Url, OpengistError> {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    {
        let mut path = url
            .path_segments_mut()
            .map_err(|()| OpengistError::ClientInit {
                detail: "the Opengist URL cannot have paths appended".into(),
            })?;
        path.pop_if_empty();
        path.extend(segments);
    }
    Ok(url)
}

/// The filename as the last segment of `GET /api/gists/:uuid/files/:sha/:filename`.
///
/// Two decodings stand between this segment and the name Opengist looks up. Its router hands
/// the handler the *decoded* segment when the request path is exactly Go's canonical
/// encoding of itself (Go then leaves `URL.RawPath` empty), and the raw, still-encoded segment
/// otherwise; the handler then query-unescapes the name once more (`%XX`, and `+` as a space)
/// before asking git. So:
/// - a name with neither `%` nor `+` goes in Go's canonical path encoding: the router decodes
///   it and the second unescape finds nothing to change;
/// - a name with `%` or `+` goes fully percent-encoded, in a form Go's canonical encoding
///   would not produce (`+` as `%2B`, or one letter or digit escaped), so the router passes
///   it through raw and the one unescape restores it exactly.
pub(super) fn raw_filename_segment(name: &str) -> String {
    fn escape(out: &mut String, byte: u8) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        out.push('%');
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
    let mut out = String::with_capacity(name.len() * 3);
    if name.contains(['%', '+']) {
        // `+` escaped is enough to make the path non-canonical; without one, escape the
        // first letter or digit too. (A name with `%` but no letter or digit has no `%XX` in
        // it, which the second unescape would turn into something else.)
        let mut marked = name.contains('+');
        for &byte in name.as_bytes() {
            if unreserved(byte) && (marked || !byte.is_ascii_alphanumeric()) {
                out.push(char::from(byte));
            } else {
                marked |= byte.is_ascii_alphanumeric();
                escape(&mut out, byte);
            }
        }
    } else {
        // Go's path encoding: these stay literal, everything else is escaped.
        for &byte in name.as_bytes() {
            if unreserved(byte) || matches!(byte, b'$' | b'&' | b',' | b':' | b';' | b'=' | b'@') {
                out.push(char::from(byte));
            } else {
                escape(&mut out, byte);
            }
        }
    }
    out
}

pub(super) fn header_number<T: std::str::FromStr>(headers: &HeaderMap, name: &str) -> Option<T> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Opengist's version, when a header carries it (`X-Opengist-Version`, or a `Server` header
/// naming Opengist).
pub(super) fn version_header(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers
        .get("x-opengist-version")
        .and_then(|v| v.to_str().ok())
    {
        let v = v.trim();
        if !v.is_empty() && v.len() <= 64 {
            return Some(v.to_owned());
        }
    }
    let server = headers.get(header::SERVER)?.to_str().ok()?;
    let rest = server.trim().strip_prefix("Opengist/")?;
    let version = rest.split_whitespace().next()?;
    (!version.is_empty() && version.len() <= 64).then(|| version.to_owned())
}

/// The pagination headers of a list answer.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct PageHeaders {
    pub(super) page: Option<u32>,
    pub(super) per_page: Option<u32>,
    pub(super) total: Option<u64>,
    pub(super) total_pages: Option<u32>,
    /// `Some(has rel=next)` when a `Link` header is present.
    pub(super) link_next: Option<bool>,
}

impl PageHeaders {
    pub(super) fn parse(headers: &HeaderMap) -> Self {
        let links: Vec<&str> = headers
            .get_all(header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        Self {
            page: header_number(headers, "x-page"),
            per_page: header_number(headers, "x-per-page"),
            total: header_number(headers, "x-total"),
            total_pages: header_number(headers, "x-total-pages"),
            link_next: (!links.is_empty()).then(|| links.iter().any(|l| link_has_next(l))),
        }
    }

    pub(super) fn into_page<T>(self, items: Vec<T>, page: u32, per_page: u32) -> Page<T> {
        let page = self.page.unwrap_or(page);
        let per_page = self.per_page.unwrap_or(per_page);
        let by_totals = self.total_pages.map(|pages| page < pages);
        // Opengist always sends X-Page, and a Link only when there is a next or previous
        // page: X-Page without a next link means this is the last page.
        let has_next = match (self.link_next, by_totals, self.page) {
            (Some(next), totals, _) => next || totals.unwrap_or(false),
            (None, Some(totals), _) => totals,
            (None, None, Some(_)) => false,
            (None, None, None) => items.len() as u64 >= u64::from(per_page),
        };
        Page {
            items,
            page,
            per_page,
            total: self.total,
            total_pages: self.total_pages,
            has_next,
        }
    }
}

/// Whether an RFC 8288 `Link` header value has a `rel="next"` link.
pub(super) fn link_has_next(value: &str) -> bool {
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let after_open = &rest[open + 1..];
        let Some(close) = after_open.find('>') else {
            return false;
        };
        let params_and_more = &after_open[close + 1..];
        let end = params_and_more.find('<').unwrap_or(params_and_more.len());
        let params = &params_and_more[..end];
        let is_next = params.split([';', ',']).any(|param| {
            param.split_once('=').is_some_and(|(key, value)| {
                key.trim().eq_ignore_ascii_case("rel")
                    && value
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|rel| rel.eq_ignore_ascii_case("next"))
            })
        });
        if is_next {
            return true;
        }
        rest = &params_and_more[end..];
    }
    false
}

/// Streams a window of a body: skips `offset` bytes, keeps at most `max_bytes`.
pub(super) async fn read_window(
    mut response: Response,
    offset: u64,
    max_bytes: u64,
    total_bytes: Option<u64>,
    call: &CallInfo,
    client: &OpengistClient,
) -> Result<RawFile, OpengistError> {
    if total_bytes.is_some_and(|total| offset >= total) {
        // Past the end: nothing to read, and no reason to read through the file.
        return Ok(RawFile {
            bytes: Vec::new(),
            offset,
            total_bytes,
            truncated: false,
            is_utf8: true,
        });
    }
    let end = offset.saturating_add(max_bytes);
    let mut seen: u64 = 0;
    let mut out: Vec<u8> = Vec::with_capacity(max_bytes.min(1024 * 1024) as usize);
    let mut truncated = false;
    let failed = |e: reqwest::Error| client.transport_error(&e, call);
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        let start = seen;
        seen = seen.saturating_add(chunk.len() as u64);
        if seen <= offset {
            continue;
        }
        let from = offset.saturating_sub(start) as usize;
        let to = seen.min(end).saturating_sub(start) as usize;
        out.extend_from_slice(chunk.get(from..to).unwrap_or_default());
        if seen > end {
            truncated = true;
            break;
        }
        if seen == end {
            truncated = match total_bytes {
                Some(total) => total > end,
                None => loop {
                    match response.chunk().await.map_err(failed)? {
                        Some(more) if more.is_empty() => continue,
                        Some(_) => break true,
                        None => break false,
                    }
                },
            };
            break;
        }
    }
    // Dropping the response here closes the connection: the rest is never read.
    drop(response);
    let is_utf8 = utf8_window(&out, offset > 0, truncated);
    Ok(RawFile {
        bytes: out,
        offset,
        total_bytes,
        truncated,
        is_utf8,
    })
}

/// Whether `bytes` are UTF-8, forgiving a character cut at the start (when the window does
/// not start at 0) or at the end (when the file goes on).
pub(crate) fn utf8_window(bytes: &[u8], cut_start: bool, cut_end: bool) -> bool {
    let mut slice = bytes;
    if cut_start {
        let skip = slice
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        slice = slice.get(skip..).unwrap_or_default();
    }
    match std::str::from_utf8(slice) {
        Ok(_) => true,
        Err(e) => cut_end && e.error_len().is_none(),
    }
}

pub(super) fn sources(
    e: &reqwest::Error,
) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(e.source(), |s: &&(dyn std::error::Error + 'static)| {
        (*s).source()
    })
}

pub(super) fn has_io_kind(e: &reqwest::Error, kinds: &[std::io::ErrorKind]) -> bool {
    sources(e).any(|s| {
        s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| kinds.contains(&io.kind()))
    })
}

/// A connection that was open and then dropped before a complete answer: safe to retry for
/// reads (never retried for writes, which may have taken effect).
pub(super) fn was_dropped(e: &reqwest::Error) -> bool {
    use std::io::ErrorKind;
    if e.is_timeout() {
        return false;
    }
    has_io_kind(
        e,
        &[
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::BrokenPipe,
            ErrorKind::UnexpectedEof,
        ],
    ) || sources(e).any(|s| {
        // hyper's "incomplete message" has no public kind to match through reqwest.
        let text = s.to_string();
        text.contains("connection closed before message completed")
            || text.contains("connection reset")
    })
}

pub(super) fn is_tls_problem(e: &reqwest::Error) -> bool {
    sources(e).any(|s| {
        let text = s.to_string().to_lowercase();
        text.contains("certificate") || text.contains("tls") || text.contains("handshake")
    })
}

/// A word for the logs; no URL, no body.
/// How a write's answer was lost, when the failure came after the connection was open (so the
/// request may have been delivered); `None` when it certainly was not sent (connect phase).
pub(super) fn answer_lost(e: &reqwest::Error, request_timeout: Duration) -> Option<String> {
    if e.is_connect()
        || e.is_builder()
        || e.is_redirect()
        || has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused])
    {
        return None;
    }
    Some(if e.is_timeout() {
        format!(
            "no answer within the request timeout of {}s, OPENGIST_MCP_REQUEST_TIMEOUT_SECS",
            request_timeout.as_secs()
        )
    } else if was_dropped(e) {
        "the connection was closed before the answer arrived".to_owned()
    } else {
        "the answer could not be read".to_owned()
    })
}

pub(super) fn failure_kind(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timeout"
    } else if has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused]) {
        "refused"
    } else if was_dropped(e) {
        "dropped"
    } else if e.is_connect() {
        "connect"
    } else if e.is_body() {
        "body"
    } else {
        "request"
    }
}
