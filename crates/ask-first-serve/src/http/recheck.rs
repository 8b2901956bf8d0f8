//! Credentials of open long-lived streams, asked again while the streams stay open.
//!
//! A `GET` stream or a `subscriptions/listen` stream passes the gate once, when it opens, and
//! may then stay open for hours. An authenticator that can learn of a revocation only by asking
//! its backend (opengist-mcp's team mode asks Opengist) says how often to ask
//! ([`Authenticate::recheck_open_streams`]). Every such period, [`CredentialWatch`] calls
//! [`Authenticate::authenticate`] again with the head of the request that opened the streams,
//! **once per distinct credential** (the gate's [`Identity`] and the `Authorization` header),
//! however many streams it holds, at most [`CHECKS_AT_ONCE`] at a time. When the answer is a
//! refusal of `401` or `403`, or another identity, every stream of that credential ends and
//! the hook given at start closes its sessions (their pending dialogs with them). A `503` (the
//! backend could not be asked) keeps them: an outage does not end everyone's streams.
//!
//! The table holds one entry per credential with streams open (bounded by the stream caps) and
//! forgets it with its last stream; the heads it keeps live in memory only, as the requests did.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use ask_first_core::Identity;
use futures::StreamExt as _;
use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode, Uri, header};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::Authenticate;

/// Credentials asked about at once in one round.
pub(crate) const CHECKS_AT_ONCE: usize = 4;

/// What happens to a credential found revoked besides its streams ending (its sessions closed).
pub(crate) type OnRevoked = Box<dyn Fn(Identity) -> BoxFuture<'static, ()> + Send + Sync>;

/// One credential: the gate's identity and a digest of the `Authorization` header it came with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    identity: Identity,
    authorization: [u8; 32],
}

/// A credential with streams open.
struct Watched {
    /// Tells this entry from a later one of the same credential.
    generation: u64,
    uri: Uri,
    headers: HeaderMap,
    streams: usize,
    revoked: CancellationToken,
}

#[derive(Default)]
struct Table {
    next_generation: u64,
    entries: HashMap<Key, Watched>,
}

/// The credentials of open long-lived streams, asked again every period (see the
/// [module](self)).
pub(crate) struct CredentialWatch {
    auth: Arc<dyn Authenticate>,
    table: Mutex<Table>,
    on_revoked: OnRevoked,
}

/// A stream's hold on its credential's entry: dropped with the stream.
pub(crate) struct Watch {
    watch: Arc<CredentialWatch>,
    key: Key,
    generation: u64,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut table = self.watch.table();
        if let Some(entry) = table.entries.get_mut(&self.key)
            && entry.generation == self.generation
        {
            entry.streams = entry.streams.saturating_sub(1);
            if entry.streams == 0 {
                table.entries.remove(&self.key);
            }
        }
    }
}

impl CredentialWatch {
    /// A watch asking `auth` again every [`Authenticate::recheck_open_streams`] period, or
    /// `None` when it asks for no rechecks. Starts the task that asks (it ends with the watch).
    pub(crate) fn start(auth: Arc<dyn Authenticate>, on_revoked: OnRevoked) -> Option<Arc<Self>> {
        let every = auth.recheck_open_streams()?;
        let watch = Arc::new(Self {
            auth,
            table: Mutex::new(Table::default()),
            on_revoked,
        });
        spawn_rechecks(Arc::downgrade(&watch), every);
        Some(watch)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches the credential of the stream that `parts` opens: its hold on the entry, and the
    /// token cancelled when the credential is found revoked. `None` for a request without a
    /// proven identity (nothing to revoke).
    pub(crate) fn watch(
        self: &Arc<Self>,
        parts: &http::request::Parts,
    ) -> Option<(Watch, CancellationToken)> {
        let identity = Identity::from_parts(parts).filter(|identity| identity.is_proven())?;
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .map_or(&b""[..], |value| value.as_bytes());
        let key = Key {
            identity: identity.clone(),
            authorization: Sha256::digest(authorization).into(),
        };
        let mut table = self.table();
        let generation = table.next_generation;
        let entry = table.entries.entry(key.clone()).or_insert_with(|| Watched {
            generation,
            uri: parts.uri.clone(),
            headers: parts.headers.clone(),
            streams: 0,
            revoked: CancellationToken::new(),
        });
        entry.streams += 1;
        let (generation_held, revoked) = (entry.generation, entry.revoked.clone());
        if generation_held == generation {
            table.next_generation += 1;
        }
        drop(table);
        Some((
            Watch {
                watch: self.clone(),
                key,
                generation: generation_held,
            },
            revoked,
        ))
    }

    /// Asks about every watched credential once; ends the streams and closes the sessions of
    /// those found revoked.
    pub(crate) async fn recheck(&self) {
        let due: Vec<(Key, Uri, HeaderMap)> = self
            .table()
            .entries
            .iter()
            .map(|(key, entry)| (key.clone(), entry.uri.clone(), entry.headers.clone()))
            .collect();
        let revoked: Vec<Key> = futures::stream::iter(due)
            .map(|(key, uri, headers)| async move {
                let still = self.still_good(&key.identity, uri, headers).await;
                (!still).then_some(key)
            })
            .buffer_unordered(CHECKS_AT_ONCE)
            .filter_map(std::future::ready)
            .collect()
            .await;
        for key in revoked {
            let removed = self.table().entries.remove(&key);
            if let Some(entry) = removed {
                tracing::info!(
                    streams = entry.streams,
                    "ended the long-lived streams of a credential the server no longer accepts"
                );
                entry.revoked.cancel();
            }
            (self.on_revoked)(key.identity).await;
        }
    }

    /// Whether the request head that opened streams as `identity` still passes the gate as
    /// the same identity; `true` when the authenticator cannot tell now (`5xx`).
    async fn still_good(&self, identity: &Identity, uri: Uri, headers: HeaderMap) -> bool {
        let mut request = http::Request::new(());
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let (mut parts, ()) = request.into_parts();
        match self.auth.authenticate(&mut parts).await {
            Ok(now) => now == *identity,
            Err(refusal) => !matches!(
                refusal.status(),
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
            ),
        }
    }

    #[cfg(test)]
    fn watched(&self) -> usize {
        self.table().entries.len()
    }
}

fn spawn_rechecks(watch: Weak<CredentialWatch>, every: Duration) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once: nothing is watched yet.
        ticks.tick().await;
        loop {
            ticks.tick().await;
            let Some(watch) = watch.upgrade() else {
                return;
            };
            watch.recheck().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::http::{AuthFuture, Refusal};

    /// Accepts `Bearer good-*` tokens as `token:<rest>`; refuses the others `401`, and
    /// `Bearer down` with `503`. Counts the calls.
    struct Tokens {
        calls: AtomicUsize,
        revoked: Mutex<Vec<String>>,
    }

    impl Authenticate for Tokens {
        fn authenticate<'a>(&'a self, parts: &'a mut http::request::Parts) -> AuthFuture<'a> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let token = crate::http::auth::bearer_token(&parts.headers)
                .unwrap_or("")
                .to_owned();
            let revoked = self
                .revoked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&token);
            Box::pin(async move {
                if token == "down" {
                    return Err(Refusal::unavailable("down"));
                }
                match token.strip_prefix("good-") {
                    Some(name) if !revoked => Ok(Identity::new(format!("token:{name}"))),
                    _ => Err(Refusal::invalid_token("revoked")),
                }
            })
        }

        fn recheck_open_streams(&self) -> Option<Duration> {
            Some(Duration::from_secs(3600))
        }
    }

    fn head(token: &str, identity: Identity) -> http::request::Parts {
        let mut parts = http::Request::builder()
            .uri("/mcp")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(())
            .expect("request")
            .into_parts()
            .0;
        parts.extensions.insert(identity);
        parts
    }

    #[tokio::test]
    async fn a_revoked_credentials_streams_end_once_checked_and_the_others_stay() {
        let auth = Arc::new(Tokens {
            calls: AtomicUsize::new(0),
            revoked: Mutex::new(Vec::new()),
        });
        let closed = Arc::new(Mutex::new(Vec::new()));
        let record = closed.clone();
        let watch = CredentialWatch::start(
            auth.clone(),
            Box::new(move |identity| {
                record.lock().expect("lock").push(identity);
                Box::pin(async {})
            }),
        )
        .expect("rechecks asked for");
        let alice = Identity::new("token:alice");
        let bob = Identity::new("token:bob");
        // Three streams of alice's one credential, one of bob's, one of a backend outage.
        let a: Vec<_> = (0..3)
            .map(|_| {
                watch
                    .watch(&head("good-alice", alice.clone()))
                    .expect("watched")
            })
            .collect();
        let (_b, b_revoked) = watch
            .watch(&head("good-bob", bob.clone()))
            .expect("watched");
        let (_d, d_revoked) = watch
            .watch(&head("down", Identity::new("token:down")))
            .expect("watched");
        assert_eq!(watch.watched(), 3);
        // Unproven identities (no authentication) are not watched.
        assert!(
            watch
                .watch(&head("x", Identity::unproven("local")))
                .is_none()
        );

        watch.recheck().await;
        assert_eq!(
            auth.calls.load(Ordering::Relaxed),
            3,
            "one check per credential"
        );
        assert!(a.iter().all(|(_, revoked)| !revoked.is_cancelled()));
        assert!(closed.lock().expect("lock").is_empty());

        auth.revoked
            .lock()
            .expect("lock")
            .push("good-alice".to_owned());
        watch.recheck().await;
        assert!(
            a.iter().all(|(_, revoked)| revoked.is_cancelled()),
            "alice's streams"
        );
        assert_eq!(*closed.lock().expect("lock"), vec![alice.clone()]);
        // The controls: bob's credential, and the one the backend could not check, stay.
        assert!(!b_revoked.is_cancelled());
        assert!(!d_revoked.is_cancelled());
        assert_eq!(watch.watched(), 2);
        // A revoked entry's streams going away do not touch a newer entry of that credential.
        auth.revoked.lock().expect("lock").clear();
        let (_again, again) = watch.watch(&head("good-alice", alice)).expect("watched");
        drop(a);
        assert_eq!(watch.watched(), 3);
        assert!(!again.is_cancelled());
    }

    #[tokio::test]
    async fn the_last_stream_of_a_credential_takes_its_entry() {
        let auth = Arc::new(Tokens {
            calls: AtomicUsize::new(0),
            revoked: Mutex::new(Vec::new()),
        });
        let watch = CredentialWatch::start(auth, Box::new(|_| Box::pin(async {}))).expect("watch");
        let alice = Identity::new("token:alice");
        let one = watch
            .watch(&head("good-alice", alice.clone()))
            .expect("watched");
        let two = watch.watch(&head("good-alice", alice)).expect("watched");
        assert_eq!(watch.watched(), 1);
        drop(one);
        assert_eq!(watch.watched(), 1);
        drop(two);
        assert_eq!(watch.watched(), 0);
    }
}
