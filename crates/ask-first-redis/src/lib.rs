//! A Redis [`NonceStore`] for [`ask-first`](https://docs.rs/ask-first): replicas of one MCP
//! server that share a seal key and this store accept every approval exactly once, across
//! every replica and every restart.
//!
//! Every single-use thing the guard hands out (a sealed `requestState`, which a declined answer
//! spends as surely as an accepted one, and a confirmation token) carries a random nonce. The
//! guard spends that nonce here before it acts on the answer: `SET <prefix><nonce> 1 NX PX
//! <remaining lifetime>`. Redis answers `OK` to exactly one writer, so the first replica to
//! spend wins and every later spend, anywhere, is refused; the key expires when the seal does,
//! so the store never holds more than the answers of the last few minutes.
//!
//! When Redis cannot be reached, [`NonceStore::spend`] fails, and the guard refuses the answer
//! (fail closed): nothing guarded runs until Redis is back. The connection is made lazily and
//! re-made automatically, so a server starts while Redis is down and recovers without a
//! restart.
//!
//! A server served by the facade's `Serving` gets this store from its `<PREFIX>_REDIS_URL`
//! setting (feature `redis` of `ask-first`); replicas, the seal key they share and the gateway
//! in front are in the guide,
//! [Serving, safely by default](https://docs.rs/ask-first/latest/ask_first/struct.Serving.html)
//! (also the repository's `crates/ask-first-serve/SERVING.md`). By hand, on a guard builder:
//!
//! ```no_run
//! # async fn demo() -> Result<(), ask_first_redis::RedisStoreError> {
//! use std::sync::Arc;
//! use ask_first_core::Guard;
//! use ask_first_redis::RedisNonceStore;
//!
//! let store = RedisNonceStore::open("redis://127.0.0.1:6379/0")?;
//! let guard = Guard::builder("notes").nonce_store(Arc::new(store)).build();
//! # let _ = guard; Ok(()) }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::fmt;
use std::time::Duration;

use ask_first_core::Nonce;
use ask_first_core::{NonceStore, NonceStoreError, SpendFuture};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

mod approval;

/// The key prefix used unless [`RedisNonceStoreBuilder::key_prefix`] says otherwise.
pub const DEFAULT_KEY_PREFIX: &str = "ask-first:spent:";
/// How long connecting to Redis may take before a spend fails. Default of
/// [`RedisNonceStoreBuilder::connect_timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one command may wait for Redis's answer before a spend fails. Default of
/// [`RedisNonceStoreBuilder::response_timeout`].
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The Redis store could not be set up. The messages never contain the URL's password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// The URL is not a Redis URL.
    #[error(
        "{setting} is not a Redis URL (the value is not shown: it may hold a password); expected redis://[user:password@]host[:port][/db] or rediss://... for TLS"
    )]
    NotARedisUrl {
        /// The setting that held the URL, for the message.
        setting: String,
    },
    /// The client rejected the URL (for example a TLS URL it cannot serve).
    #[error("{setting} cannot be used: {detail} (the value is not shown)")]
    Unusable {
        /// The setting that held the URL.
        setting: String,
        /// What the Redis client said, without the URL.
        detail: String,
    },
}

/// A [`NonceStore`] on Redis: atomic first-writer-wins spends with the seal's remaining
/// lifetime as expiry. Cheap to clone; clones share one connection.
#[derive(Clone)]
pub struct RedisNonceStore {
    manager: ConnectionManager,
    prefix: String,
    /// Where the store is, for messages: `host:port`, never credentials.
    address: String,
    /// Which setting configured it, for messages that name the fix.
    setting: String,
}

impl fmt::Debug for RedisNonceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisNonceStore")
            .field("address", &self.address)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RedisNonceStore`].
#[derive(Debug, Clone)]
pub struct RedisNonceStoreBuilder {
    url: String,
    prefix: String,
    setting: String,
    connect_timeout: Duration,
    response_timeout: Duration,
}

impl RedisNonceStoreBuilder {
    /// The prefix of every key this store writes. Default: [`DEFAULT_KEY_PREFIX`]. Servers
    /// that share one Redis but must not share approvals use different prefixes.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The name of the setting the URL came from (e.g. `MY_SERVER_REDIS_URL`), so that error
    /// messages name the fix. Default: `the Redis URL`.
    pub fn setting_name(mut self, setting: impl Into<String>) -> Self {
        self.setting = setting.into();
        self
    }

    /// How long connecting may take. Default: [`DEFAULT_CONNECT_TIMEOUT`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one command may wait for its answer. Default: [`DEFAULT_RESPONSE_TIMEOUT`].
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// The store. Does not connect: the connection is made on the first spend and re-made
    /// whenever it breaks, so this works while Redis is down. Must be called inside a tokio
    /// runtime.
    pub fn build(self) -> Result<RedisNonceStore, RedisStoreError> {
        let parsed = url::Url::parse(&self.url).map_err(|_| RedisStoreError::NotARedisUrl {
            setting: self.setting.clone(),
        })?;
        if !matches!(parsed.scheme(), "redis" | "rediss") || parsed.host_str().is_none() {
            return Err(RedisStoreError::NotARedisUrl {
                setting: self.setting,
            });
        }
        let address = match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{}://{host}:{port}", parsed.scheme()),
            (Some(host), None) => format!("{}://{host}", parsed.scheme()),
            (None, _) => "Redis".to_owned(),
        };
        if parsed.scheme() == "rediss" {
            // TLS (rustls, certificates verified against the system's roots) with the `ring`
            // crypto provider, made the process default unless the program chose one: without
            // a default, rustls picks one only when exactly one is compiled in.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let client =
            redis::Client::open(self.url.as_str()).map_err(|error| RedisStoreError::Unusable {
                setting: self.setting.clone(),
                detail: error.kind_description(),
            })?;
        // Few, quick retries: a spend waits on them, and a person is waiting on the spend.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.response_timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(200));
        let manager = ConnectionManager::new_lazy_with_config(client, config).map_err(|error| {
            RedisStoreError::Unusable {
                setting: self.setting.clone(),
                detail: error.kind_description(),
            }
        })?;
        Ok(RedisNonceStore {
            manager,
            prefix: self.prefix,
            address,
            setting: self.setting,
        })
    }
}

/// A short, credential-free description of a Redis error.
trait Describe {
    fn kind_description(&self) -> String;
}

impl Describe for redis::RedisError {
    fn kind_description(&self) -> String {
        if self.is_timeout() {
            "no answer in time".to_owned()
        } else if self.is_connection_refusal() {
            "connection refused".to_owned()
        } else if self.is_connection_dropped() || self.is_unrecoverable_error() {
            "the connection broke".to_owned()
        } else {
            match self.kind() {
                redis::ErrorKind::AuthenticationFailed => "authentication failed".to_owned(),
                redis::ErrorKind::InvalidClientConfig => "invalid client configuration".to_owned(),
                redis::ErrorKind::Io => "network error".to_owned(),
                kind => format!("{kind:?}"),
            }
        }
    }
}

impl RedisNonceStore {
    /// A store at `url` (`redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS)
    /// with the default settings. See [`RedisNonceStoreBuilder::build`].
    pub fn open(url: &str) -> Result<Self, RedisStoreError> {
        Self::builder(url).build()
    }

    /// Starts building a store at `url`.
    pub fn builder(url: impl Into<String>) -> RedisNonceStoreBuilder {
        RedisNonceStoreBuilder {
            url: url.into(),
            prefix: DEFAULT_KEY_PREFIX.to_owned(),
            setting: "the Redis URL".to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
        }
    }

    /// Where the store is (`redis://host:port`), for messages; never credentials.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Asks Redis for `PING`; `Ok` when it answered. For start-up notices and health checks.
    pub async fn ping(&self) -> Result<(), NonceStoreError> {
        let mut connection = self.manager.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .map(|_| ())
            .map_err(|error| self.failure(&error))
    }

    fn key(&self, nonce: &Nonce) -> String {
        let mut key = String::with_capacity(self.prefix.len() + 32);
        key.push_str(&self.prefix);
        for byte in nonce {
            key.push_str(&format!("{byte:02x}"));
        }
        key
    }

    fn failure(&self, error: &redis::RedisError) -> NonceStoreError {
        NonceStoreError(format!(
            "Redis at {} could not be used ({}); check that Redis is running and reachable there, and that {} is right",
            self.address,
            error.kind_description(),
            self.setting
        ))
    }

    async fn spend_once(
        &self,
        nonce: &Nonce,
        expires_at: u64,
        now: u64,
    ) -> Result<bool, NonceStoreError> {
        // The seal opened, so it is still valid: at least a second remains. Keep the key as
        // long as the seal lives, and never ask Redis for a zero expiry (an error).
        let remaining_ms = expires_at.saturating_sub(now).saturating_mul(1000).max(1);
        let command = {
            let mut command = redis::cmd("SET");
            command
                .arg(self.key(nonce))
                .arg(1u8)
                .arg("NX")
                .arg("PX")
                .arg(remaining_ms);
            command
        };
        // A connection that broke while Redis was away fails its next command and is then
        // re-made; one more try on the new connection makes recovery invisible. A retry can
        // only err on the safe side: if the first SET did land, the second finds the key and
        // the answer counts as spent (asked afresh), never as fresh twice.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut connection = self.manager.clone();
            match command.query_async::<Option<String>>(&mut connection).await {
                Ok(answer) => return Ok(answer.is_some()),
                Err(error)
                    if attempt < 2 && (error.is_io_error() || error.is_connection_dropped()) =>
                {
                    tracing::debug!(address = %self.address, reason = %error.kind_description(), "Redis connection broke; retrying once");
                }
                Err(error) => {
                    tracing::warn!(address = %self.address, reason = %error.kind_description(), "Redis spend failed");
                    return Err(self.failure(&error));
                }
            }
        }
    }
}

impl NonceStore for RedisNonceStore {
    fn spend<'a>(&'a self, nonce: &'a Nonce, expires_at: u64, now: u64) -> SpendFuture<'a> {
        Box::pin(self.spend_once(nonce, expires_at, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn urls_that_are_not_redis_urls_are_refused_without_echoing_them() {
        for url in [
            "http://secret@example.com",
            "not a url",
            "redis:///nohost",
            "",
        ] {
            let error = RedisNonceStore::builder(url)
                .setting_name("X_REDIS_URL")
                .build()
                .expect_err("refused");
            let text = error.to_string();
            assert!(text.starts_with("X_REDIS_URL"), "{text}");
            assert!(!text.contains("secret"), "{text}");
        }
    }

    #[tokio::test]
    async fn the_address_shown_has_no_credentials_and_keys_are_hex() {
        let store = RedisNonceStore::builder("redis://user:hunter2@127.0.0.1:1/0")
            .key_prefix("p:")
            .build()
            .expect("builds without connecting");
        assert_eq!(store.address(), "redis://127.0.0.1:1");
        assert!(!format!("{store:?}").contains("hunter2"));
        assert_eq!(store.key(&[0xab; 16]), format!("p:{}", "ab".repeat(16)));
    }

    #[tokio::test]
    async fn an_unreachable_redis_fails_the_spend_and_names_redis_and_the_fix() {
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        let store = RedisNonceStore::builder("redis://127.0.0.1:1")
            .setting_name("X_REDIS_URL")
            .build()
            .expect("builds");
        let error = store
            .spend(&[1; 16], 100, 10)
            .await
            .expect_err("fails closed");
        let text = error.to_string();
        assert!(text.contains("Redis at redis://127.0.0.1:1"), "{text}");
        assert!(text.contains("X_REDIS_URL"), "{text}");
    }
}
