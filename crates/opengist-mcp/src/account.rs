//! Whom a request acts as at Opengist: an [`Account`] is an Opengist client with its token and
//! that token's view of the gist cache.
//!
//! A server with one configured token (`OPENGIST_TOKEN`) has one account, for everyone. A
//! server for a team (`OPENGIST_MCP_HTTP_AUTH=opengist`) has none of its own: each HTTP
//! request carries the person's own Opengist token as its bearer, the authenticator
//! ([`crate::team`]) checks it with Opengist and puts a [`PersonCredential`] into the
//! request's extensions, and the server runs the request's handler inside [`acting_as`] with
//! that person's account. Everything that reads Opengist or the cache for a request takes the
//! account from there ([`current`]), so nothing one person's request reads or keeps is used
//! for another's: no client, no cache entry, no remembered token access crosses between
//! accounts. A request without an account on a team server is refused, never served with
//! another's.

use std::future::Future;
use std::sync::Arc;

use crate::cache::{CacheOwner, GistCache};
use crate::opengist::OpengistClient;

tokio::task_local! {
    static ACCOUNT: Account;
}

/// An Opengist client with its token and that token's view of the gist cache. Cheap to
/// clone.
#[derive(Clone, Debug)]
pub struct Account {
    client: OpengistClient,
    cache: GistCache,
}

impl Account {
    /// `client`, reading and keeping through `cache` (which must be the view of `client`'s
    /// token, [`CacheOwner::of`] its instance and token).
    pub fn new(client: OpengistClient, cache: GistCache) -> Self {
        Self { client, cache }
    }

    /// The Opengist client, acting with this account's token.
    pub fn client(&self) -> &OpengistClient {
        &self.client
    }

    /// This account's view of the gist cache.
    pub fn cache(&self) -> &GistCache {
        &self.cache
    }

    /// Who is told about this account's changes (see [`crate::notify`]): the
    /// cache owner, a digest of the instance and the token.
    pub fn audience(&self) -> [u8; 16] {
        self.cache.owner().bytes()
    }
}

/// Runs `future` acting as `account` (when given): every [`current`] inside it answers it.
pub(crate) async fn acting_as<F: Future>(account: Option<Account>, future: F) -> F::Output {
    match account {
        Some(account) => ACCOUNT.scope(account, future).await,
        None => future.await,
    }
}

/// The account of the request being handled, when one was given with [`acting_as`].
pub(crate) fn current() -> Option<Account> {
    ACCOUNT.try_with(Clone::clone).ok()
}

/// A person checked by the team authenticator: the account their own Opengist token acts as.
/// The authenticator inserts it into the HTTP request's extensions
/// (`http::request::Parts::extensions`); rmcp hands those parts to every handler in
/// `RequestContext::extensions`. Holds the token (inside its client); never logged.
#[derive(Clone)]
pub struct PersonCredential {
    inner: Arc<Person>,
}

struct Person {
    principal: String,
    credential: String,
    client: OpengistClient,
    cache_owner: CacheOwner,
}

impl std::fmt::Debug for PersonCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersonCredential")
            .field("principal", &self.inner.principal)
            .finish_non_exhaustive()
    }
}

impl PersonCredential {
    /// The person whose token `client` acts with, known as `principal`, that token being
    /// known as `credential` (a digest, never the token); their cache entries are
    /// `cache_owner`'s.
    pub fn new(
        principal: String,
        credential: String,
        client: OpengistClient,
        cache_owner: CacheOwner,
    ) -> Self {
        Self {
            inner: Arc::new(Person {
                principal,
                credential,
                client,
                cache_owner,
            }),
        }
    }

    /// Who the person is, as the per-person caps count them (`opengist:<username>#<id>`).
    pub fn principal(&self) -> &str {
        &self.inner.principal
    }

    /// Which of the person's tokens this is (a digest of it): what sessions, dialogs, seals
    /// and confirmation tokens are bound to besides the principal.
    pub fn credential(&self) -> &str {
        &self.inner.credential
    }

    /// The client acting with the person's token.
    pub fn client(&self) -> &OpengistClient {
        &self.inner.client
    }

    /// The owner of the person's cache entries.
    pub fn cache_owner(&self) -> CacheOwner {
        self.inner.cache_owner
    }

    /// The person's account: their client, and their view of `store`.
    pub fn account(&self, store: &GistCache) -> Account {
        Account::new(
            self.inner.client.clone(),
            store.for_owner(self.inner.cache_owner),
        )
    }

    /// The credential the authenticator put into a request's HTTP head, if any.
    pub fn of(parts: Option<&http::request::Parts>) -> Option<&Self> {
        parts?.extensions.get::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opengist::{ClientOptions, RequestLimits};

    fn client(token: &str) -> OpengistClient {
        OpengistClient::new(ClientOptions {
            base_url: url::Url::parse("http://127.0.0.1:1").expect("url"),
            token: Some(token.to_owned()),
            insecure_tls: false,
            request_timeout: std::time::Duration::from_secs(5),
            user_agent: "test".into(),
            limits: RequestLimits::default(),
        })
        .expect("client")
    }

    #[tokio::test]
    async fn the_account_is_the_one_given_and_only_inside() {
        let store = GistCache::new(CacheOwner::of("http://127.0.0.1:1", None), 1 << 20);
        let a = PersonCredential::new(
            "opengist:a#1".into(),
            "a".into(),
            client("og_a"),
            CacheOwner::of("http://127.0.0.1:1", Some("og_a")),
        );
        let b = PersonCredential::new(
            "opengist:b#2".into(),
            "b".into(),
            client("og_b"),
            CacheOwner::of("http://127.0.0.1:1", Some("og_b")),
        );
        assert!(current().is_none());
        let seen = acting_as(Some(a.account(&store)), async {
            let inner = acting_as(Some(b.account(&store)), async {
                current().map(|acc| acc.audience())
            })
            .await;
            (current().map(|acc| acc.audience()), inner)
        })
        .await;
        assert_eq!(seen.0, Some(a.cache_owner().bytes()));
        assert_eq!(seen.1, Some(b.cache_owner().bytes()));
        assert_ne!(seen.0, seen.1);
        assert!(current().is_none());
        assert!(!format!("{a:?}").contains("og_a"), "never the token");
    }
}
