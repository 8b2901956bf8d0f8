//! Serving a team (`OPENGIST_MCP_HTTP_AUTH=opengist`): each person connects with their own
//! Opengist access token as the HTTP bearer, and acts as their own Opengist account.
//!
//! The HTTP gate calls [`TeamAuthenticator`] for every request (after its Host and Origin
//! checks, before any route). It checks the bearer with Opengist by one cheap authenticated
//! request, `GET /api/user`:
//!
//! | Opengist answers | the request | principal |
//! |---|---|---|
//! | 200, the account | goes on | `opengist:<username>#<id>` |
//! | 403, scope missing (a token without `user:read`) | `401 invalid_token`, naming the `user:read` scope | |
//! | 401 (unknown, revoked or expired token) | `401 invalid_token`, naming the fix | |
//!
//! Every token must name its account (`user:read`), so the principal is always the person:
//! the per-person caps (sessions, dialogs, streams) count people, not tokens. Within the
//! person, each token is its own credential (a digest of it, [`Identity::with_credential`]): a
//! session, a pending dialog, a sealed `requestState` or a confirmation token opened with one
//! token cannot be answered, used or replayed with another token of the same account.
//! | no answer, or an answer that is not Opengist's | `503`, naming the Opengist address | |
//!
//! No `Authorization` header at all is a `401` saying what to send. A good answer is kept for
//! [`CREDENTIAL_TTL`] in a table of at most [`MAX_CREDENTIALS`] entries keyed by a digest of
//! the token (never the token; the oldest entry goes first when it is full), so a person's
//! next requests cost no request to Opengist. An entry is dropped as soon as Opengist answers
//! any request made with its token with 401, so a revoked token is refused from the next
//! request on, and at the latest [`CREDENTIAL_TTL`] after it was revoked, on every route: an
//! answer to a dialog is a request like any other, so it re-checks its token too. At most
//! [`MAX_CHECKS_IN_FLIGHT`] checks go to Opengist at once (one waiting longer than
//! [`CHECK_QUEUE_WAIT`] is a `503`), so made-up tokens cannot take every turn of the caps on
//! requests to Opengist from the people's own calls.
//!
//! A `GET` or `subscriptions/listen` stream passes the gate once, when it opens: the framework
//! asks about the token of every open stream again every [`CREDENTIAL_TTL`], once per token
//! however many streams it holds ([`Authenticate::recheck_open_streams`]). A token Opengist
//! revoked ends its streams and closes its sessions (their pending dialogs with them); a
//! check Opengist could not answer keeps them.
//!
//! The checked credential ([`PersonCredential`]: the principal, and an Opengist client acting
//! with the person's token, sharing the server's connection pool and request caps) goes into
//! the request's extensions, where the server finds it for each handler ([`crate::account`]).
//! The token is never logged, and no message echoes it.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use ask_first_serve::http::{AuthFuture, Authenticate, Identity, Refusal, bearer_of};
use sha2::{Digest, Sha256};

use crate::account::PersonCredential;
use crate::cache::CacheOwner;
use crate::opengist::{OpengistClient, OpengistError, as_principal};

/// How long a checked token is trusted without asking Opengist again: a token revoked in
/// Opengist is refused at the latest this long after.
pub(crate) const CREDENTIAL_TTL: Duration = Duration::from_secs(5);
/// Checked tokens remembered at most.
pub(crate) const MAX_CREDENTIALS: usize = 1024;
/// Token checks sent to Opengist at once: a flood of made-up tokens (anyone who can reach the
/// port can send them) takes at most these turns of the caps on requests to Opengist
/// (`OPENGIST_MCP_OPENGIST_MAX_REQUESTS`), and the rest stay for the people's own calls.
pub(crate) const MAX_CHECKS_IN_FLIGHT: usize = 4;
/// How long a token check waits for one of those turns before the request is refused with
/// `503`.
pub(crate) const CHECK_QUEUE_WAIT: Duration = Duration::from_secs(10);

/// Why a request's bearer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TeamRefusal {
    /// No `Authorization: Bearer` header.
    #[error(
        "this opengist-mcp server serves a team (OPENGIST_MCP_HTTP_AUTH=opengist): send your own Opengist access token as the bearer token (Authorization: Bearer <token>). Make one in Opengist at {settings_url} (Settings -> Access Tokens; scopes: gist read+write, user read+write for likes and to be named by your username)"
    )]
    Missing {
        /// Where tokens are made on the instance.
        settings_url: String,
    },
    /// Opengist did not accept the token (401), or it cannot be sent on.
    #[error(
        "Opengist did not accept the bearer token (unknown, revoked or expired): this server (OPENGIST_MCP_HTTP_AUTH=opengist) takes your own Opengist access token as the bearer. Make a new one at {settings_url} (Settings -> Access Tokens) and connect with it"
    )]
    Rejected {
        /// Where tokens are made on the instance.
        settings_url: String,
    },
    /// The token is good but cannot name its account (no `user:read`).
    #[error(
        "this Opengist token lacks the `user:read` scope: this server (OPENGIST_MCP_HTTP_AUTH=opengist) needs every token to name its account, so that each person is one caller whatever tokens they hold. Make a token with user:read (and gist read+write) at {settings_url} (Settings -> Access Tokens) and connect with it"
    )]
    NoUserRead {
        /// Where tokens are made on the instance.
        settings_url: String,
    },
    /// Opengist could not be asked, or did not answer as Opengist.
    #[error(
        "the bearer token could not be checked, because Opengist could not be asked ({detail}); nothing was run. Try again shortly; if it persists, the operator should check that Opengist is running at OPENGIST_URL"
    )]
    Unavailable {
        /// What went wrong, in words (never the token).
        detail: String,
    },
}

/// Checks each request's bearer with Opengist and remembers good ones briefly.
pub struct TeamAuthenticator {
    /// A client without a token: each person's is made from it ([`OpengistClient::with_token`]),
    /// sharing its connection pool and request caps.
    base: OpengistClient,
    /// The instance's URL, for the people's cache owners (as [`CacheOwner::of`] takes it).
    base_url: String,
    checked: CredentialTable,
    /// Turns for token checks ([`MAX_CHECKS_IN_FLIGHT`]).
    checks: tokio::sync::Semaphore,
}

impl std::fmt::Debug for TeamAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamAuthenticator")
            .field("base", &self.base)
            .field("remembered", &self.checked.len())
            .finish()
    }
}

impl TeamAuthenticator {
    /// An authenticator for the instance `base` talks to (`base` needs no token; any token it
    /// has is not used). `cache_base_url` is the configured `OPENGIST_URL` as the gist cache
    /// names owners with it.
    pub fn new(base: OpengistClient, cache_base_url: &str) -> Self {
        Self::with_bounds(base, cache_base_url, CREDENTIAL_TTL, MAX_CREDENTIALS)
    }

    /// [`TeamAuthenticator::new`] with another lifetime and size of the table of checked
    /// tokens (tests).
    pub fn with_bounds(
        base: OpengistClient,
        cache_base_url: &str,
        ttl: Duration,
        max: usize,
    ) -> Self {
        Self {
            base,
            base_url: cache_base_url.to_owned(),
            checked: CredentialTable::new(ttl, max),
            checks: tokio::sync::Semaphore::new(MAX_CHECKS_IN_FLIGHT),
        }
    }

    /// Checked tokens remembered now.
    pub fn remembered(&self) -> usize {
        self.checked.len()
    }

    /// Who the bearer of a request's `Authorization` header value is (`None`: no header).
    pub async fn check_header(
        &self,
        authorization: Option<&http::HeaderValue>,
    ) -> Result<PersonCredential, TeamRefusal> {
        let token = bearer_of(authorization);
        match token {
            Some(token) => self.check(token).await,
            None => Err(TeamRefusal::Missing {
                settings_url: settings_url(&self.base),
            }),
        }
    }

    /// Who `token` acts as: remembered, or asked of Opengist.
    pub async fn check(&self, token: &str) -> Result<PersonCredential, TeamRefusal> {
        let key = token_key(token);
        if let Some(known) = self.checked.get(&key) {
            return Ok(known);
        }
        let client = self
            .base
            .with_token(token)
            .map_err(|_| TeamRefusal::Rejected {
                settings_url: settings_url(&self.base),
            })?;
        // At most MAX_CHECKS_IN_FLIGHT at once, each counted against the token's own share of
        // the caps on requests to Opengist: a flood of made-up tokens cannot take every turn.
        let turn = tokio::time::timeout(CHECK_QUEUE_WAIT, self.checks.acquire()).await;
        let Ok(Ok(_turn)) = turn else {
            tracing::warn!("refused an HTTP request: too many Opengist token checks at once");
            return Err(TeamRefusal::Unavailable {
                detail: format!(
                    "{MAX_CHECKS_IN_FLIGHT} token checks were already under way for {}s",
                    CHECK_QUEUE_WAIT.as_secs()
                ),
            });
        };
        let asked = as_principal(format!("check:{}", short_hex(&key)), client.get_user_me()).await;
        let principal = match asked {
            Ok(user) => format!("opengist:{}#{}", user.name(), user.profile.id),
            // The token is good (Opengist checks it before the scope), but cannot name its
            // account: its holder could be anyone, and each such token would count as a person.
            Err(OpengistError::MissingScope { .. }) => {
                tracing::warn!("refused an HTTP request whose Opengist token lacks user:read");
                return Err(TeamRefusal::NoUserRead {
                    settings_url: settings_url(&self.base),
                });
            }
            Err(OpengistError::BadToken { .. } | OpengistError::TokenRequired { .. }) => {
                tracing::warn!("refused an HTTP request whose Opengist token Opengist rejected");
                return Err(TeamRefusal::Rejected {
                    settings_url: settings_url(&self.base),
                });
            }
            Err(error) => {
                tracing::warn!(
                    "could not check an HTTP request's Opengist token: Opengist did not answer as expected"
                );
                return Err(TeamRefusal::Unavailable {
                    detail: unavailable_detail(&error),
                });
            }
        };
        let credential = PersonCredential::new(
            principal,
            short_hex(&credential_digest(token)),
            client,
            CacheOwner::of(&self.base_url, Some(token)),
        );
        self.checked.insert(key, credential.clone());
        Ok(credential)
    }
}

impl Authenticate for TeamAuthenticator {
    /// Checks the request's bearer (see the module documentation); on success puts the
    /// person's [`PersonCredential`] into the request's extensions and names them.
    fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
        Box::pin(async move {
            let checked = self
                .check_header(parts.headers.get(http::header::AUTHORIZATION))
                .await;
            match checked {
                Ok(person) => {
                    let identity =
                        Identity::new(person.principal()).with_credential(person.credential());
                    parts.extensions.insert(person);
                    Ok(identity)
                }
                Err(refusal) => Err(refusal.into_refusal()),
            }
        })
    }

    /// At the lifetime of a checked token: a token revoked in Opengist ends its open `GET`
    /// and `listen` streams, and closes its sessions, within two lifetimes at most (the
    /// framework asks once per token, and Opengist once per lifetime).
    fn recheck_open_streams(&self) -> Option<Duration> {
        Some(self.checked.ttl)
    }
}

impl TeamRefusal {
    /// The HTTP answer: `401` with `WWW-Authenticate: Bearer` for no bearer, `401
    /// invalid_token` for one Opengist rejected, `503` when Opengist could not be asked.
    pub fn into_refusal(self) -> Refusal {
        let message = self.to_string();
        match self {
            Self::Missing { .. } => Refusal::unauthorized(message),
            Self::Rejected { .. } | Self::NoUserRead { .. } => Refusal::invalid_token(message),
            Self::Unavailable { .. } => Refusal::unavailable(message),
        }
    }
}

/// What to say of an Opengist failure while checking a token: the error's own words, which
/// name the instance and never the token.
fn unavailable_detail(error: &OpengistError) -> String {
    let text = error.to_string();
    // Opengist's own error texts tell the operator to set OPENGIST_TOKEN, which a team
    // server does not use; keep the part before that advice.
    match text.find(". Make") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

fn settings_url(client: &OpengistClient) -> String {
    format!(
        "{}/-/settings/access-tokens",
        client.base_url().as_str().trim_end_matches('/')
    )
}

/// The table's key for a token: a digest, never the token.
fn token_key(token: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"opengist-mcp team credential\0");
    hasher.update(token.trim().as_bytes());
    hasher.finalize().into()
}

/// The digest a token is named by as its person's credential (another domain than the
/// table's key).
fn credential_digest(token: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"opengist-mcp team credential id\0");
    hasher.update(token.trim().as_bytes());
    hasher.finalize().into()
}

fn short_hex(digest: &[u8; 32]) -> String {
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// Checked tokens, bounded in number and age.
struct CredentialTable {
    ttl: Duration,
    max: usize,
    entries: Mutex<HashMap<[u8; 32], (Instant, PersonCredential)>>,
}

impl CredentialTable {
    fn new(ttl: Duration, max: usize) -> Self {
        Self {
            ttl,
            max: max.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The credential checked for `key` within the lifetime, unless Opengist has since
    /// rejected its token.
    fn get(&self, key: &[u8; 32]) -> Option<PersonCredential> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (checked_at, credential) = entries.get(key)?;
        if checked_at.elapsed() < self.ttl && !credential.client().token_rejected() {
            return Some(credential.clone());
        }
        entries.remove(key);
        None
    }

    fn insert(&self, key: [u8; 32], credential: PersonCredential) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= self.max && !entries.contains_key(&key) {
            let ttl = self.ttl;
            entries.retain(|_, (at, c)| at.elapsed() < ttl && !c.client().token_rejected());
            while entries.len() >= self.max {
                let oldest = entries
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(key, _)| *key);
                match oldest {
                    Some(oldest) => entries.remove(&oldest),
                    None => break,
                };
            }
        }
        entries.insert(key, (Instant::now(), credential));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opengist::{ClientOptions, RequestLimits};

    fn base() -> OpengistClient {
        OpengistClient::new(ClientOptions {
            base_url: url::Url::parse("http://127.0.0.1:1").expect("url"),
            token: None,
            insecure_tls: false,
            request_timeout: Duration::from_secs(2),
            user_agent: "test".into(),
            limits: RequestLimits::default(),
        })
        .expect("client")
    }

    fn credential(token: &str) -> PersonCredential {
        PersonCredential::new(
            format!("opengist:{token}#1"),
            token.to_owned(),
            base().with_token(token).expect("client"),
            CacheOwner::of("http://127.0.0.1:1", Some(token)),
        )
    }

    #[test]
    fn the_table_holds_at_most_its_bound_and_drops_the_oldest_first() {
        let table = CredentialTable::new(Duration::from_secs(60), 3);
        for n in 0..3 {
            table.insert(
                token_key(&format!("og_{n}")),
                credential(&format!("og_{n}")),
            );
        }
        assert_eq!(table.len(), 3);
        // Positive control: all three are served.
        for n in 0..3 {
            assert!(table.get(&token_key(&format!("og_{n}"))).is_some(), "{n}");
        }
        table.insert(token_key("og_3"), credential("og_3"));
        assert_eq!(table.len(), 3, "bounded");
        assert!(table.get(&token_key("og_0")).is_none(), "the oldest went");
        assert!(table.get(&token_key("og_3")).is_some());
        assert!(table.get(&token_key("og_1")).is_some());
        // Storing a key again replaces it without evicting another.
        table.insert(token_key("og_3"), credential("og_3"));
        assert_eq!(table.len(), 3);
        assert!(table.get(&token_key("og_2")).is_some());
    }

    #[test]
    fn entries_expire() {
        let table = CredentialTable::new(Duration::ZERO, 8);
        table.insert(token_key("og_a"), credential("og_a"));
        assert!(table.get(&token_key("og_a")).is_none(), "expired at once");
        assert_eq!(table.len(), 0, "and dropped");
        let table = CredentialTable::new(Duration::from_secs(60), 8);
        table.insert(token_key("og_a"), credential("og_a"));
        assert!(table.get(&token_key("og_a")).is_some(), "positive control");
    }

    #[test]
    fn keys_and_principals_are_digests_never_the_token() {
        let token = "og_0123456789abcdef";
        let key = token_key(token);
        assert_ne!(key, token_key("og_other"));
        assert_eq!(key, token_key(&format!(" {token} ")), "trimmed as sent");
        assert_ne!(key, credential_digest(token), "separate domains");
        let hex = short_hex(&credential_digest(token));
        assert_eq!(hex.len(), 24);
        assert!(!hex.contains("0123456789abcdef"));
    }

    #[tokio::test]
    async fn a_missing_or_malformed_bearer_is_refused_without_asking_opengist() {
        let auth = TeamAuthenticator::new(base(), "http://127.0.0.1:1");
        let missing = auth.check_header(None).await.expect_err("no header");
        assert!(matches!(missing, TeamRefusal::Missing { .. }));
        assert!(missing.to_string().contains("Authorization: Bearer"));
        assert!(
            missing
                .to_string()
                .contains("OPENGIST_MCP_HTTP_AUTH=opengist")
        );
        let basic = http::HeaderValue::from_static("Basic dXNlcjpwYXNz");
        assert!(matches!(
            auth.check_header(Some(&basic)).await,
            Err(TeamRefusal::Missing { .. })
        ));
        let empty = http::HeaderValue::from_static("Bearer   ");
        assert!(matches!(
            auth.check_header(Some(&empty)).await,
            Err(TeamRefusal::Missing { .. })
        ));
    }

    #[test]
    fn a_token_without_user_read_is_a_401_naming_the_scope() {
        let refusal = TeamRefusal::NoUserRead {
            settings_url: "http://127.0.0.1:1/-/settings/access-tokens".into(),
        }
        .into_refusal();
        assert_eq!(refusal.status(), http::StatusCode::UNAUTHORIZED);
        assert_eq!(refusal.code(), "invalid_token");
        assert!(
            refusal.message().contains("`user:read`"),
            "{}",
            refusal.message()
        );
        assert!(refusal.message().contains("/-/settings/access-tokens"));
    }

    #[tokio::test]
    async fn opengist_unreachable_is_unavailable_and_nothing_is_remembered() {
        // Port 1 on loopback: nothing listens.
        let auth = TeamAuthenticator::new(base(), "http://127.0.0.1:1");
        let bearer = http::HeaderValue::from_static("Bearer og_secret_token_value");
        let refused = auth.check_header(Some(&bearer)).await.expect_err("down");
        assert!(
            matches!(refused, TeamRefusal::Unavailable { .. }),
            "{refused:?}"
        );
        let text = refused.to_string();
        assert!(text.contains("127.0.0.1:1"), "{text}");
        assert!(!text.contains("og_secret_token_value"));
        assert_eq!(auth.remembered(), 0);
    }
}
