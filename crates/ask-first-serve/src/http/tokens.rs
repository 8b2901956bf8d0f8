//! Per-person tokens (`<PREFIX>_HTTP_AUTH=tokens`): a file lists each person's name and the
//! SHA-256 of their token, never the token itself; a request's bearer token is hashed and
//! compared in constant time with the listed hashes that share its first 8 bytes (an index,
//! so the cost does not grow with the file); the principal is `token:<name>`, and the
//! credential within it is the listed hash (a session, a pending dialog, a seal or a
//! confirmation token opened with one of a person's tokens is that token's alone).
//!
//! # The file (`<PREFIX>_HTTP_TOKENS_FILE`)
//!
//! One person per line, `NAME SHA256-HEX`; blank lines and lines starting with `#` are
//! ignored:
//!
//! ```text
//! # people who may use the notes server
//! alice 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
//! bob   fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9
//! ```
//!
//! - `NAME`: 1 to 64 letters, digits or `.`, `_`, `-`, `@`. A name may appear on several lines
//!   (one token per device): all of them are the same principal (one person for the caps),
//!   each its own credential.
//! - `SHA256-HEX`: the 64 hex digits of the SHA-256 of the token's bytes (e.g.
//!   `printf %s "$TOKEN" | sha256sum`). A hash listed twice is refused: two people would be one.
//!
//! [`add_token`] mints a token (32 random bytes as 64 hex digits, so its hash cannot be
//! searched for), appends its line, creating the file (mode `0600`) if needed, and returns the
//! token to print once: a server exposes it as a command (`notes tokens add NAME --file
//! PATH`). Revoking is deleting the line.
//!
//! # Reloading
//!
//! The file is read at start (a missing or malformed file refuses to start, naming the setting
//! and the line) and checked again at most once every [`RELOAD_CHECK`] while requests come in
//! (and by the ticks that watch open streams and sessions, [`Authenticate::is_current`]): the
//! file is read and its SHA-256 compared with the version in force, so any change of content is
//! seen, a same-length rewrite with the old modification time (`cp -p`, `touch -r`, `rsync
//! -t`) included. A changed version is acted on once it has settled ([`SETTLE`]: the same
//! content and metadata twice, not written to while read), so a file rewritten in place,
//! empty or half-written for a moment, never refuses a token it lists before and after. Then a
//! token that is no longer listed is refused, and its open `GET` and `listen` streams end and
//! its legacy sessions close at once (the streams' credentials are asked again every
//! [`SETTLE`]). A settled version that is unreadable or malformed refuses every request with
//! `503` naming the setting (failing closed: a revocation written with a typo must not leave
//! the revoked token working) until it is fixed. The file is read whole and is at most
//! [`MAX_FILE_BYTES`].

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ask_first_core::Identity;
use sha2::{Digest, Sha256};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use super::auth::{AuthFuture, Authenticate, Refusal, bearer_token};
use crate::settings::{Secret, decode_hex};

mod reload;

pub use reload::SETTLE;
use reload::{Loaded, read};

/// How often, at most, the file's content is read and its digest compared.
pub const RELOAD_CHECK: Duration = Duration::from_secs(1);
/// The largest token file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The longest person's name.
pub const MAX_NAME_LEN: usize = 64;

/// A person's name in the token file: 1 to 64 letters, digits or `.`, `_`, `-`, `@`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TokenName(String);

impl TokenName {
    /// The name, if it has the accepted shape.
    pub fn parse(name: &str) -> Option<Self> {
        let ok = !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
        ok.then(|| Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The principal of this person's requests: `token:<name>`.
    pub fn principal(&self) -> String {
        format!("token:{}", self.0)
    }
}

impl fmt::Display for TokenName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why the token file cannot be used. Messages name the setting and the line, never a line's
/// text (someone may have pasted a token instead of its hash).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenFileError {
    /// The file cannot be read.
    #[error(
        "{setting} ({path}) cannot be read: {source}; create it by adding a person with the \
         server's `tokens add NAME --file {path}`, or point {setting} at the token file"
    )]
    Read {
        /// The file's setting.
        setting: String,
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{setting} ({path}) is larger than 1 MiB; it should list one short line per person")]
    TooLarge {
        /// The file's setting.
        setting: String,
        /// The file.
        path: PathBuf,
    },
    /// A line is not `NAME SHA256-HEX`.
    #[error(
        "{setting} ({path}), line {line}: expected `NAME SHA256-HEX` (a name of 1 to 64 \
         letters, digits or `.`, `_`, `-`, `@`, a space, then the 64 hex digits of the SHA-256 \
         of the person's token, never the token itself; the line is not shown)"
    )]
    Malformed {
        /// The file's setting.
        setting: String,
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// Two lines list the same hash: two people would share one token.
    #[error(
        "{setting} ({path}), line {line}: the same token hash as line {first}; every token \
         must be one person's: mint another with `tokens add`"
    )]
    DuplicateHash {
        /// The file's setting.
        setting: String,
        /// The file.
        path: PathBuf,
        /// 1-based line number of the second listing.
        line: usize,
        /// 1-based line number of the first.
        first: usize,
    },
    /// A name given to [`add_token`] has not the accepted shape.
    #[error("the name must be 1 to 64 letters, digits or `.`, `_`, `-`, `@`, such as alice")]
    Name,
    /// The file could not be written.
    #[error("cannot append to the token file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// One listed token.
struct Entry {
    digest: [u8; 32],
    identity: Identity,
}

/// Parses a token file's text; `setting` and `path` name it in errors.
fn parse(text: &str, setting: &str, path: &Path) -> Result<Vec<Entry>, TokenFileError> {
    let mut entries: Vec<Entry> = Vec::new();
    // Each hash's first line. Not a path an attacker drives: the operator's file.
    let mut lines: HashMap<[u8; 32], usize> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let malformed = || TokenFileError::Malformed {
            setting: setting.to_owned(),
            path: path.to_owned(),
            line: number,
        };
        let mut fields = line.split_whitespace();
        let (Some(name), Some(hash), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(malformed());
        };
        let name = TokenName::parse(name).ok_or_else(malformed)?;
        let digest: [u8; 32] = (hash.len() == 64)
            .then(|| decode_hex(hash))
            .flatten()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(malformed)?;
        if let Some(first) = lines.insert(digest, number) {
            return Err(TokenFileError::DuplicateHash {
                setting: setting.to_owned(),
                path: path.to_owned(),
                line: number,
                first,
            });
        }
        entries.push(Entry {
            digest,
            identity: Identity::new(name.principal())
                .with_credential(super::auth::short_hex(&digest)),
        });
    }
    Ok(entries)
}

/// The listed tokens, indexed by the first 8 bytes of their hash so that a check compares the
/// presented token's hash with the few entries that share that prefix (in practice one), not
/// with every entry: constant per request however many people are listed.
///
/// What the index's timing can tell a caller is whether the hash of a token *they chose*
/// shares its first 8 bytes with a listed hash. That says nothing useful about any listed
/// token: learning a hash, even whole, does not give a token that hashes to it (SHA-256 is
/// preimage resistant and tokens are 256 random bits). The full 32-byte comparison with the
/// candidates is constant-time.
struct Entries {
    list: Vec<Entry>,
    by_prefix: HashMap<[u8; 8], Vec<usize>>,
}

impl Entries {
    fn new(list: Vec<Entry>) -> Self {
        let mut by_prefix: HashMap<[u8; 8], Vec<usize>> = HashMap::with_capacity(list.len());
        for (index, entry) in list.iter().enumerate() {
            by_prefix
                .entry(prefix_of(&entry.digest))
                .or_default()
                .push(index);
        }
        Self { list, by_prefix }
    }

    fn len(&self) -> usize {
        self.list.len()
    }
}

fn prefix_of(digest: &[u8; 32]) -> [u8; 8] {
    let mut prefix = [0u8; 8];
    prefix.copy_from_slice(&digest[..8]);
    prefix
}

/// The per-person token check: the file of [`add_token`]'s lines, re-read when it changes.
pub struct TokenFile {
    path: PathBuf,
    setting: String,
    loaded: Mutex<Loaded>,
    missing: String,
    unknown: String,
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl TokenFile {
    /// Reads the file at `path`, named `setting` in every message (e.g. `NOTES_HTTP_TOKENS_FILE`).
    /// A missing, unreadable or malformed file is an error.
    pub fn load(
        path: impl Into<PathBuf>,
        setting: impl Into<String>,
    ) -> Result<Self, TokenFileError> {
        let path = path.into();
        let setting = setting.into();
        let (stamp, entries) = read(&path, &setting)?;
        Ok(Self {
            missing: format!(
                "this server needs `Authorization: Bearer <token>` with your own token; its \
                 operator lists each person's token (hashed) in {setting} and gives you yours"
            ),
            unknown: format!(
                "this bearer token is not listed in the server's {setting} (mistyped, or \
                 revoked); ask the server's operator for a token"
            ),
            loaded: Mutex::new(Loaded::new(stamp, entries)),
            path,
            setting,
        })
    }

    /// How many tokens the list in force holds (`None`: the file is refused now).
    pub fn token_count(&self) -> Option<usize> {
        self.current().ok().map(|entries| entries.len())
    }

    /// The list in force, after looking at the file again if it is due (see [`reload`]).
    fn current(&self) -> Result<Arc<Entries>, String> {
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .current(&self.path, &self.setting)
    }

    /// Who presents `token`: its hash is compared in constant time with every listed hash
    /// that shares its first 8 bytes (see [`Entries`]), and the time of that comparison does
    /// not depend on which candidate matches, nor on how much of a hash does.
    fn identify(entries: &Entries, token: &str) -> Option<Identity> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let candidates = entries.by_prefix.get(&prefix_of(&digest))?;
        let mut found = Choice::from(0);
        let mut position = 0u64;
        for &index in candidates {
            let equal: Choice = entries.list[index].digest.ct_eq(&digest);
            position.conditional_assign(&(index as u64), equal & !found);
            found |= equal;
        }
        bool::from(found)
            .then(|| entries.list.get(position as usize))
            .flatten()
            .map(|entry| entry.identity.clone())
    }

    /// The verdict on one request's headers.
    pub fn check(&self, headers: &http::HeaderMap) -> Result<Identity, Refusal> {
        let entries = self.current().map_err(|problem| {
            Refusal::unavailable(format!(
                "the server cannot check tokens now: {problem}; its operator must fix it"
            ))
        })?;
        let Some(token) = bearer_token(headers) else {
            tracing::warn!("refused an HTTP request without a bearer token");
            return Err(Refusal::unauthorized(self.missing.clone()));
        };
        Self::identify(&entries, token).ok_or_else(|| {
            tracing::warn!("refused an HTTP request whose bearer token is not in the token file");
            Refusal::invalid_token(self.unknown.clone())
        })
    }
}

impl Authenticate for TokenFile {
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        let verdict = self.check(&parts.headers);
        Box::pin(std::future::ready(verdict))
    }

    /// Whether `identity`'s token is still listed (the file checked again first, at most once
    /// every [`RELOAD_CHECK`]). While the file is refused (unreadable or malformed, every
    /// request refused with `503`), sessions are kept: a half-written edit does not close them.
    fn is_current(&self, identity: &Identity) -> bool {
        match self.current() {
            Ok(entries) => entries.list.iter().any(|entry| entry.identity == *identity),
            Err(_) => true,
        }
    }

    /// Every [`SETTLE`]: a token taken out of the file ends its open streams, and closes its
    /// sessions, as soon as the new version settled (a stateless `subscriptions/listen` stream
    /// has no session to close). Each ask is a hash and a look-up; the file itself is read
    /// at most every [`RELOAD_CHECK`] unless a change is settling.
    fn recheck_open_streams(&self) -> Option<std::time::Duration> {
        Some(SETTLE)
    }
}

/// A token just minted: print [`MintedToken::token`] once, to the person it is for.
#[derive(Debug)]
pub struct MintedToken {
    /// Whose it is.
    pub name: TokenName,
    /// The token (64 hex digits). Shown once; only its hash is kept.
    pub token: Secret,
    /// The line appended to the file.
    pub line: String,
}

/// The SHA-256 of `token`, as the 64 lowercase hex digits a token file lists.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Mints a token for `name` and appends `NAME SHA256-HEX` to the file at `path` (created with
/// mode `0600` if absent). The existing file must parse (so a broken file is not grown), and
/// is named `setting` in errors. The caller shows the token once; it is not kept anywhere.
pub fn add_token(path: &Path, name: &str, setting: &str) -> Result<MintedToken, TokenFileError> {
    let name = TokenName::parse(name).ok_or(TokenFileError::Name)?;
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(TokenFileError::Read {
                setting: setting.to_owned(),
                path: path.to_owned(),
                source,
            });
        }
    };
    parse(&existing, setting, path)?;
    let token = super::auth::random_hex();
    let line = format!("{name} {}", token_hash(&token));
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let write_error = |source| TokenFileError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = options.open(path).map_err(write_error)?;
    let separator = if existing.is_empty() || existing.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    file.write_all(format!("{separator}{line}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(write_error)?;
    Ok(MintedToken {
        name,
        token: Secret::new(token),
        line,
    })
}

/// The whole `tokens add` command: mints a token for `name` in the file at `path`
/// ([`add_token`]), then writes the token once to `out` with how to use it, for a person to
/// copy. `setting` is the token file's setting (named in errors and in the instructions).
pub fn run_tokens_add(
    path: &Path,
    name: &str,
    setting: &str,
    out: &mut dyn std::io::Write,
) -> Result<(), TokenFileError> {
    let minted = add_token(path, name, setting)?;
    let text = format!(
        "Added {name} to {path}. Their token (shown only now; the file keeps only its hash):\n\n    \
         {token}\n\nThey send it on every request:\n\n    Authorization: Bearer {token}\n\n\
         The server reads the file when it changes (serve with {setting}={path}); to revoke \
         the token, delete the line `{line}`.\n",
        name = minted.name,
        path = path.display(),
        token = minted.token.expose(),
        line = minted.line,
    );
    out.write_all(text.as_bytes())
        .map_err(|source| TokenFileError::Write {
            path: PathBuf::from("<output>"),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(token: Option<&str>) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        if let Some(token) = token {
            headers.insert(
                http::header::AUTHORIZATION,
                format!("Bearer {token}").parse().expect("header"),
            );
        }
        headers
    }

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ask-first-tokens-{}-{}",
            std::process::id(),
            super::super::auth::random_hex()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    const SETTING: &str = "NOTES_HTTP_TOKENS_FILE";

    /// Makes the next look at the file due now.
    fn due(file: &TokenFile) {
        let mut loaded = file.loaded.lock().expect("lock");
        loaded.checked = loaded
            .checked
            .checked_sub(RELOAD_CHECK)
            .expect("an instant a second ago");
    }

    /// Looks at the file as the next checks would: now, and again once a change settled.
    fn settled(file: &TokenFile) {
        for _ in 0..2 {
            due(file);
            let _ = file.current();
            std::thread::sleep(SETTLE);
        }
        due(file);
    }

    #[test]
    fn the_format_names_the_line_never_its_text() {
        let path = Path::new("/t");
        let hash = token_hash("alice-token");
        let good = format!(
            "# people\n\nalice {hash}\n  bob\t{}  \nalice {}\n",
            token_hash("bob-token"),
            token_hash("alice-phone")
        );
        let entries = parse(&good, SETTING, path).expect("parses");
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].identity.principal(), "token:alice");
        assert_eq!(entries[1].identity.principal(), "token:bob");
        assert_eq!(entries[2].identity.principal(), "token:alice");
        for (bad, line) in [
            ("alice\n".to_owned(), 1),
            (format!("# c\nalice {hash} extra\n"), 2),
            (format!("al ice {hash}\n"), 1),
            (format!("al/ice {hash}\n"), 1),
            ("alice 0123\n".to_owned(), 1),
            (format!("alice {}\n", "zz".repeat(32)), 1),
            (format!("{} {hash}\n", "a".repeat(65)), 1),
            ("alice secret-token-pasted-here\n".to_owned(), 1),
        ] {
            let error = parse(&bad, SETTING, path).err().expect("malformed");
            let text = error.to_string();
            assert!(text.starts_with(SETTING), "{text}");
            assert!(text.contains(&format!("line {line}:")), "{text}");
            assert!(!text.contains("secret-token"), "{text}");
        }
        let error = parse(&format!("alice {hash}\nbob {hash}\n"), SETTING, path)
            .err()
            .expect("duplicate");
        assert!(
            error
                .to_string()
                .contains("line 2: the same token hash as line 1"),
            "{error}"
        );
        // Upper-case hex is the same hash.
        let upper = format!("alice {}\n", hash.to_uppercase());
        assert_eq!(parse(&upper, SETTING, path).expect("upper").len(), 1);
    }

    #[test]
    fn the_constant_time_search_finds_any_position_and_nothing_near() {
        let text: String = (0..100)
            .map(|i| format!("person{i} {}\n", token_hash(&format!("token-{i}"))))
            .collect();
        let entries = Entries::new(parse(&text, SETTING, Path::new("/t")).expect("parses"));
        for i in [0, 1, 50, 99] {
            let found = TokenFile::identify(&entries, &format!("token-{i}")).expect("listed");
            assert_eq!(found.principal(), format!("token:person{i}"));
        }
        for absent in ["token-100", "token-", "", "token-99 ", "TOKEN-1"] {
            assert_eq!(TokenFile::identify(&entries, absent), None, "{absent:?}");
        }
        assert_eq!(
            TokenFile::identify(&Entries::new(Vec::new()), "token-1"),
            None
        );
        // Two hashes sharing a prefix are both found (the candidates of one bucket).
        let mut twins = parse(&text, SETTING, Path::new("/t")).expect("parses");
        let mut near = twins[7].digest;
        near[31] ^= 1;
        twins.push(Entry {
            digest: near,
            identity: Identity::new("token:twin"),
        });
        let twins = Entries::new(twins);
        assert_eq!(twins.by_prefix[&prefix_of(&near)].len(), 2);
        assert_eq!(
            TokenFile::identify(&twins, "token-7").map(|id| id.principal().to_owned()),
            Some("token:person7".to_owned())
        );
    }

    #[test]
    fn tokens_are_told_apart_and_unknown_ones_refused() {
        let dir = dir();
        let path = dir.join("tokens");
        let alice = add_token(&path, "alice", SETTING).expect("alice");
        let bob = add_token(&path, "bob", SETTING).expect("bob");
        assert_ne!(alice.token.expose(), bob.token.expose());
        let text = std::fs::read_to_string(&path).expect("file");
        assert!(
            !text.contains(alice.token.expose()),
            "the file holds no token"
        );
        assert!(text.contains(&token_hash(alice.token.expose())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let file = TokenFile::load(&path, SETTING).expect("loads");
        assert_eq!(
            file.check(&headers(Some(alice.token.expose())))
                .expect("alice")
                .principal(),
            "token:alice"
        );
        assert_eq!(
            file.check(&headers(Some(bob.token.expose())))
                .expect("bob")
                .principal(),
            "token:bob"
        );
        let missing = file.check(&headers(None)).expect_err("no token");
        assert_eq!(missing.status(), http::StatusCode::UNAUTHORIZED);
        assert_eq!(missing.code(), "unauthorized");
        assert!(missing.message().contains(SETTING));
        let unknown = file
            .check(&headers(Some(&alice.token.expose()[1..])))
            .expect_err("unknown");
        assert_eq!(unknown.code(), "invalid_token");
        // A listed hash is not a token.
        let hash = token_hash(alice.token.expose());
        assert!(file.check(&headers(Some(&hash))).is_err());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn the_file_is_read_again_when_it_changes_and_a_broken_one_fails_closed() {
        let dir = dir();
        let path = dir.join("tokens");
        let alice = add_token(&path, "alice", SETTING).expect("alice");
        let file = TokenFile::load(&path, SETTING).expect("loads");
        assert_eq!(file.token_count(), Some(1));
        // Within the check interval nothing is re-read.
        let bob = add_token(&path, "bob", SETTING).expect("bob");
        let force = || settled(&file);
        force();
        assert_eq!(file.token_count(), Some(2));
        assert!(file.check(&headers(Some(bob.token.expose()))).is_ok());
        // Revoking alice: her line goes.
        let kept: String = std::fs::read_to_string(&path)
            .expect("file")
            .lines()
            .filter(|line| !line.starts_with("alice "))
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(&path, kept).expect("rewrite");
        force();
        assert!(file.check(&headers(Some(alice.token.expose()))).is_err());
        assert!(file.check(&headers(Some(bob.token.expose()))).is_ok());
        // A typo refuses everyone, naming the setting and the line, until it is fixed.
        let mut broken = std::fs::read_to_string(&path).expect("file");
        broken.push_str("carol not-a-hash\n");
        std::fs::write(&path, &broken).expect("break");
        force();
        let refusal = file
            .check(&headers(Some(bob.token.expose())))
            .expect_err("fails closed");
        assert_eq!(refusal.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        assert!(refusal.message().contains(SETTING), "{}", refusal.message());
        assert!(
            refusal.message().contains("line 2"),
            "{}",
            refusal.message()
        );
        // Gone entirely: still closed.
        std::fs::remove_file(&path).expect("remove");
        force();
        assert!(file.check(&headers(Some(bob.token.expose()))).is_err());
        let again = add_token(&path, "bob", SETTING).expect("bob again");
        force();
        assert!(file.check(&headers(Some(again.token.expose()))).is_ok());
        assert!(file.check(&headers(Some(bob.token.expose()))).is_err());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_same_length_rewrite_with_the_old_modification_time_takes_effect() {
        let dir = dir();
        let path = dir.join("tokens");
        let alice = add_token(&path, "alice", SETTING).expect("alice");
        let file = TokenFile::load(&path, SETTING).expect("loads");
        let before = std::fs::metadata(&path).expect("meta");
        let alice_identity = file
            .check(&headers(Some(alice.token.expose())))
            .expect("alice");
        assert!(file.is_current(&alice_identity));
        // Mallory's line in place of alice's: the same length, then the old mtime put back
        // (what `cp -p` or `touch -r` leaves).
        let mallory = "0123456789abcdef".repeat(4);
        std::fs::write(&path, format!("alice {}\n", token_hash(&mallory))).expect("rewrite");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|handle| handle.set_modified(before.modified().expect("mtime")))
            .expect("old mtime");
        let after = std::fs::metadata(&path).expect("meta");
        assert_eq!(
            (after.len(), after.modified().ok()),
            (before.len(), before.modified().ok())
        );
        settled(&file);
        assert!(
            !file.is_current(&alice_identity),
            "the revoked token is current"
        );
        assert!(file.check(&headers(Some(alice.token.expose()))).is_err());
        // The positive control: the new token is in force.
        let new = file.check(&headers(Some(&mallory))).expect("the new line");
        assert!(file.is_current(&new));
        // Same name, another token: another credential of one principal.
        assert_eq!(new.principal(), alice_identity.principal());
        assert_ne!(new, alice_identity);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn start_up_errors_name_the_setting() {
        let dir = dir();
        let error = TokenFile::load(dir.join("absent"), SETTING).expect_err("missing");
        let text = error.to_string();
        assert!(
            text.starts_with(SETTING) && text.contains("tokens add"),
            "{text}"
        );
        let path = dir.join("broken");
        std::fs::write(&path, "x\n").expect("write");
        assert!(matches!(
            TokenFile::load(&path, SETTING),
            Err(TokenFileError::Malformed { line: 1, .. })
        ));
        // A broken file is not grown by minting.
        assert!(add_token(&path, "alice", SETTING).is_err());
        assert!(matches!(
            add_token(&dir.join("new"), "not a name", SETTING),
            Err(TokenFileError::Name)
        ));
        let mut out = Vec::new();
        run_tokens_add(&dir.join("cli"), "dana", SETTING, &mut out).expect("cli");
        let out = String::from_utf8(out).expect("utf-8");
        let token = out
            .lines()
            .find_map(|line| line.trim().strip_prefix("Authorization: Bearer "))
            .expect("token shown");
        let file = TokenFile::load(dir.join("cli"), SETTING).expect("loads");
        assert_eq!(
            file.check(&headers(Some(token))).expect("dana").principal(),
            "token:dana"
        );
        std::fs::remove_dir_all(dir).ok();
    }
}
