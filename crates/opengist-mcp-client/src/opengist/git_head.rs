//! A gist's head revision from git itself, for when Opengist's API does not name it.
//!
//! Opengist's API lists no commit that touches 11 or more files (1.15.1: the gist detail's
//! `commits` and `GET /api/gists/:uuid/commits` both leave it out), so a gist created with
//! 11+ files has no listed commit at all, and one whose newest commit touched 11+ files lists
//! an older commit first. Every gist is also a git repository served over smart HTTP at
//! `<base>/<owner>/<uuid>.git` (`internal/web/handlers/git/http.go`): its ref advertisement,
//! `GET .../info/refs?service=git-upload-pack`, starts with the sha of `HEAD`. It changes
//! nothing (unlike the dumb-protocol `info/refs`, which makes Opengist rewrite server info).
//! Opengist serves it only to a `git/` user agent; a private gist's needs the owner's name
//! and a token with `gist:read` as Basic credentials.

use super::client::OpengistClient;
use super::responses::GistDetail;

/// The `HEAD` sha in a smart-HTTP ref advertisement (pkt-lines: the `# service=` line, a
/// flush, then `<sha> HEAD\0<capabilities>` when the repository has a head). `None` when the
/// text is not one, or has no head.
pub fn head_from_advertisement(bytes: &[u8]) -> Option<String> {
    let mut rest = bytes;
    while rest.len() >= 4 {
        let len = std::str::from_utf8(rest.get(..4)?)
            .ok()
            .and_then(|hex| usize::from_str_radix(hex, 16).ok())?;
        if len == 0 {
            rest = rest.get(4..)?;
            continue;
        }
        let line = rest.get(4..len)?;
        rest = rest.get(len..)?;
        let text = line.split(|b| *b == 0).next().unwrap_or_default();
        let text = std::str::from_utf8(text).ok()?.trim_end();
        if let Some((sha, name)) = text.split_once(' ')
            && name == "HEAD"
            && sha.len() == 40
            && sha.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Some(sha.to_ascii_lowercase());
        }
    }
    None
}

/// Whether the API's commit list may not start at the head: it lists none, or its newest
/// commit is older than the gist's last update (which a commit Opengist leaves out would
/// explain; a metadata-only change also does, and then git simply confirms the same sha).
pub fn head_may_be_unlisted(detail: &GistDetail) -> bool {
    match detail.commits.first() {
        None => true,
        Some(commit) => match (commit.committed_at, detail.summary.updated_at) {
            (Some(committed), Some(updated)) => committed < updated,
            _ => false,
        },
    }
}

impl OpengistClient {
    /// The gist's head sha as git advertises it, or `None` when git over HTTP is off, the
    /// gist's repository cannot be read this way, or the answer has no head.
    pub async fn git_head(&self, detail: &GistDetail) -> Option<String> {
        let summary = &detail.summary;
        let private = summary.visibility == super::requests::Visibility::Private;
        let advertisement = self
            .git_ref_advertisement(summary.owner.name(), &summary.id, private)
            .await
            .ok()?;
        head_from_advertisement(&advertisement)
    }

    /// Makes [`GistDetail::head_sha`] name the real head when the API's commit list may not
    /// start at it. Best effort: when git cannot tell, the detail is left as it was.
    pub(super) async fn complete_head(&self, detail: &mut GistDetail) {
        if head_may_be_unlisted(detail) {
            detail.git_head = self.git_head(detail).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "28572ddb10d93c9639389d86f49c773976fdf8c7";

    fn pkt(text: &str) -> String {
        format!("{:04x}{text}", text.len() + 4)
    }

    #[test]
    fn the_head_is_read_from_the_advertisement() {
        let body = format!(
            "{}0000{}{}0000",
            pkt("# service=git-upload-pack\n"),
            pkt(&format!(
                "{SHA} HEAD\0multi_ack thin-pack symref=HEAD:refs/heads/master\n"
            )),
            pkt(&format!("{SHA} refs/heads/master\n")),
        );
        assert_eq!(
            head_from_advertisement(body.as_bytes()).as_deref(),
            Some(SHA)
        );
    }

    #[test]
    fn anything_else_has_no_head() {
        assert_eq!(head_from_advertisement(b""), None);
        assert_eq!(head_from_advertisement(b"Check your credentials"), None);
        assert_eq!(
            head_from_advertisement(b"001e# service=git-upload-pack\n0000"),
            None
        );
        let short = pkt("abc HEAD\0caps\n");
        assert_eq!(head_from_advertisement(short.as_bytes()), None);
        // A length running past the end stops the parse instead of panicking.
        assert_eq!(head_from_advertisement(b"00ff0123"), None);
        assert_eq!(head_from_advertisement(b"0002"), None);
    }
}
