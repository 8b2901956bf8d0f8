//! What a person may paste to name a gist or a revision: a 32-hex id, or a link to a gist on
//! the configured instance; and a commit sha.
//!
//! Links to any other host are refused, and the refusal names the configured base URL, never
//! the pasted text (which may be anything, a token included).

use std::fmt;

use url::Url;

use super::error::display_base;
use super::requests::GistId;

/// A gist named by its id or by a link to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GistRef {
    /// A bare uuid.
    Id(GistId),
    /// A link `<base>/<user>/<name>`, where `name` is a uuid, a prefix of one, or a custom URL.
    /// Opengist finds the gist by the user and the name together (the user's gist whose uuid
    /// starts with the name or whose custom URL is the name), so a link whose name is another
    /// gist's uuid may still show a gist of `user`; resolve it with
    /// [`OpengistClient::resolve`](super::OpengistClient::resolve), which asks Opengist.
    Link {
        /// The username the link names.
        user: String,
        /// The last part of the link, without a `.git`, `.js` or `.json` ending.
        name: String,
    },
}

/// Why a gist reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GistRefError {
    /// Neither an id nor a URL.
    #[error(
        "not a gist id or link: give the gist's 32-character hex id (as in get_gist results) or a link to it on {base}, such as {base}/<user>/<id>"
    )]
    NotAGistRef {
        /// The configured base URL.
        base: String,
    },
    /// A URL of another instance or site.
    #[error(
        "only links to this Opengist instance ({base}) are accepted; for a gist elsewhere, give its 32-character hex id if it lives on {base}"
    )]
    OtherInstance {
        /// The configured base URL.
        base: String,
    },
    /// A URL of this instance that is not a gist page.
    #[error(
        "this link points into {base} but not at a gist: a gist link looks like {base}/<user>/<id>"
    )]
    NotAGistPage {
        /// The configured base URL.
        base: String,
    },
}

/// First path segments of Opengist's own pages, which are never usernames.
const RESERVED: &[&str] = &[
    "-",
    "api",
    "all",
    "topics",
    "search",
    "assets",
    "healthcheck",
    "metrics",
    "admin-panel",
    "settings",
    "login",
    "logout",
    "register",
    "oauth",
    "mfa",
    "webauthn",
    "embed",
    "init",
    "upload",
];

impl GistRef {
    /// Parses what a person pasted, against the configured instance `base`.
    ///
    /// Accepted: a 32-hex id in any case; `<base>/<user>/<id-or-slug>` with anything after it
    /// (`/rev/<sha>`, `/raw/...`, `/archive/...`, a trailing `/`, `?query`, `#fragment`), and
    /// the `.git` clone, `.js` embed and `.json` forms of the last part. A link is always a
    /// [`GistRef::Link`], even when its last part is a uuid: only Opengist can say which gist
    /// of that user it shows.
    pub fn parse(input: &str, base: &Url) -> Result<GistRef, GistRefError> {
        let input = input.trim();
        let shown = display_base(base);
        if let Ok(id) = GistId::parse(input) {
            return Ok(GistRef::Id(id));
        }
        let Ok(url) = Url::parse(input) else {
            return Err(GistRefError::NotAGistRef { base: shown });
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Err(GistRefError::NotAGistRef { base: shown });
        }
        let same_instance = url.scheme() == base.scheme()
            && url.host() == base.host()
            && url.port_or_known_default() == base.port_or_known_default();
        if !same_instance {
            return Err(GistRefError::OtherInstance { base: shown });
        }
        let base_segments: Vec<&str> = segments(base);
        let url_segments: Vec<&str> = segments(&url);
        let Some(rest) = url_segments.strip_prefix(base_segments.as_slice()) else {
            return Err(GistRefError::OtherInstance { base: shown });
        };
        let not_a_gist = || GistRefError::NotAGistPage {
            base: shown.clone(),
        };
        let [user, last, ..] = rest else {
            return Err(not_a_gist());
        };
        if RESERVED.contains(user) || !is_name(user) {
            return Err(not_a_gist());
        }
        // Opengist's page handler strips exactly one of these endings (Go's filepath.Ext).
        let last = last
            .strip_suffix(".git")
            .or_else(|| last.strip_suffix(".json"))
            .or_else(|| last.strip_suffix(".js"))
            .unwrap_or(last);
        if !is_name(last) {
            return Err(not_a_gist());
        }
        Ok(GistRef::Link {
            user: (*user).to_owned(),
            name: last.to_owned(),
        })
    }
}

/// Non-empty path segments.
fn segments(url: &Url) -> Vec<&str> {
    url.path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

/// Usernames and custom URLs: letters, digits, `-`, `_`, `.`; not `.`/`..`; bounded.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 255
        && text != "."
        && text != ".."
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A commit sha (4 to 40 hex digits), as Opengist accepts in revision paths.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Sha(String);

/// Why a revision was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShaError {
    /// `HEAD`, which Opengist answers with 400.
    #[error(
        "`HEAD` is not accepted as a revision: use the newest commit's sha, `commits[0].version` in get_gist's result, or leave `sha` out to read the latest revision"
    )]
    Head,
    /// Not 4 to 40 hex digits.
    #[error("a revision must be a commit sha of 4 to 40 hex digits, as in a commit's `version`")]
    Invalid,
}

impl Sha {
    /// Accepts 4 to 40 hex digits in any case; stores them lowercase.
    pub fn parse(text: &str) -> Result<Self, ShaError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("head") {
            return Err(ShaError::Head);
        }
        if (4..=40).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(text.to_ascii_lowercase()))
        } else {
            Err(ShaError::Invalid)
        }
    }

    /// The sha, lowercase hex.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c";

    fn base() -> Url {
        Url::parse("https://gist.example.com").expect("url")
    }

    fn sub() -> Url {
        Url::parse("https://example.com/opengist").expect("url")
    }

    fn id() -> GistRef {
        GistRef::Id(GistId::parse(ID).expect("id"))
    }

    fn slug(user: &str, name: &str) -> GistRef {
        GistRef::Link {
            user: user.into(),
            name: name.into(),
        }
    }

    #[test]
    fn bare_ids_in_any_case() {
        assert_eq!(GistRef::parse(ID, &base()), Ok(id()));
        assert_eq!(GistRef::parse(&ID.to_uppercase(), &base()), Ok(id()));
        assert_eq!(GistRef::parse(&format!("  {ID}\n"), &base()), Ok(id()));
    }

    #[test]
    fn links_with_the_uuid_keep_their_user() {
        for link in [
            format!("https://gist.example.com/alice/{ID}"),
            format!("https://gist.example.com/alice/{ID}/"),
            format!("https://gist.example.com/alice/{ID}#file-notes-md"),
            format!("https://gist.example.com/alice/{ID}?tab=revisions"),
            format!("https://gist.example.com/alice/{ID}/rev/0123abcd"),
            format!("https://gist.example.com/alice/{ID}/raw/HEAD/notes.md"),
            format!("https://gist.example.com/alice/{ID}.git"),
            format!("https://gist.example.com/alice/{ID}.js"),
            format!("https://gist.example.com/alice/{ID}.json"),
        ] {
            assert_eq!(
                GistRef::parse(&link, &base()),
                Ok(slug("alice", ID)),
                "{link}"
            );
        }
        assert_eq!(
            GistRef::parse(
                &format!("https://GIST.example.com:443/Alice/{}", ID.to_uppercase()),
                &base()
            ),
            Ok(slug("Alice", &ID.to_uppercase()))
        );
    }

    #[test]
    fn links_with_a_custom_url() {
        assert_eq!(
            GistRef::parse("https://gist.example.com/alice/my-notes", &base()),
            Ok(slug("alice", "my-notes"))
        );
        assert_eq!(
            GistRef::parse(
                "https://gist.example.com/alice/my-notes/rev/abcd1234/",
                &base()
            ),
            Ok(slug("alice", "my-notes"))
        );
        assert_eq!(
            GistRef::parse("https://gist.example.com/alice/my-notes.git", &base()),
            Ok(slug("alice", "my-notes"))
        );
    }

    #[test]
    fn links_under_a_base_path() {
        assert_eq!(
            GistRef::parse(&format!("https://example.com/opengist/bob/{ID}"), &sub()),
            Ok(slug("bob", ID))
        );
        assert_eq!(
            GistRef::parse("https://example.com/opengist/bob/snippet", &sub()),
            Ok(slug("bob", "snippet"))
        );
        // Outside the base path is another site on the same host.
        assert!(matches!(
            GistRef::parse(&format!("https://example.com/bob/{ID}"), &sub()),
            Err(GistRefError::OtherInstance { .. })
        ));
    }

    #[test]
    fn other_hosts_are_refused_naming_the_configured_base() {
        for link in [
            format!("https://evil.example.net/alice/{ID}"),
            format!("http://gist.example.com/alice/{ID}"),
            format!("https://gist.example.com:8443/alice/{ID}"),
            format!("https://og_SECRETTOKEN@evil.example.net/alice/{ID}"),
        ] {
            let err = GistRef::parse(&link, &base()).expect_err("other instance");
            assert!(matches!(err, GistRefError::OtherInstance { .. }), "{link}");
            let text = err.to_string();
            assert!(text.contains("https://gist.example.com"), "{text}");
            assert!(!text.contains("evil") && !text.contains("SECRET"), "{text}");
        }
    }

    #[test]
    fn pages_that_are_not_gists() {
        for link in [
            "https://gist.example.com/",
            "https://gist.example.com/alice",
            "https://gist.example.com/alice/",
            "https://gist.example.com/-/settings",
            "https://gist.example.com/topics/rust",
            "https://gist.example.com/all/x",
            "https://gist.example.com/alice/not%20a%20slug",
            "https://gist.example.com/al%2Fice/x",
        ] {
            assert!(
                matches!(
                    GistRef::parse(link, &base()),
                    Err(GistRefError::NotAGistPage { .. })
                ),
                "{link}"
            );
        }
    }

    #[test]
    fn garbage_is_not_a_ref() {
        for text in [
            "",
            "hello",
            "3f2a",
            "og_0123456789abcdef",
            "ftp://gist.example.com/a/b",
        ] {
            let err = GistRef::parse(text, &base()).expect_err("garbage");
            assert!(matches!(err, GistRefError::NotAGistRef { .. }), "{text}");
            assert!(
                err.to_string()
                    .contains("https://gist.example.com/<user>/<id>")
            );
        }
    }

    #[test]
    fn shas() {
        assert_eq!(
            Sha::parse("ABCD").map(|s| s.to_string()),
            Ok("abcd".to_owned())
        );
        assert!(Sha::parse(&"a".repeat(40)).is_ok());
        assert_eq!(Sha::parse("HEAD"), Err(ShaError::Head));
        assert_eq!(Sha::parse("head"), Err(ShaError::Head));
        assert!(ShaError::Head.to_string().contains("commits[0].version"));
        assert_eq!(Sha::parse("abc"), Err(ShaError::Invalid));
        assert_eq!(Sha::parse(&"a".repeat(41)), Err(ShaError::Invalid));
        assert_eq!(Sha::parse("abcg"), Err(ShaError::Invalid));
        assert_eq!(Sha::parse("--output"), Err(ShaError::Invalid));
    }
}
