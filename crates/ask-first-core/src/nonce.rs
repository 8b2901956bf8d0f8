//! The record of spent nonces that makes every seal single-use.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use crate::seal::Nonce;

/// A boxed future returned by [`NonceStore::spend`].
pub type SpendFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, NonceStoreError>> + Send + 'a>>;

/// The store failed; the guard then treats the seal as spent (it refuses rather than risks a
/// second use).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the spent-nonce store failed: {0}")]
pub struct NonceStoreError(pub String);

/// Records spent nonces. Replicas that answer each other's questions share one store.
pub trait NonceStore: Send + Sync + 'static {
    /// Marks `nonce` spent. `Ok(true)` the first time, `Ok(false)` on every later call.
    /// `expires_at` (Unix seconds) is when the seal stops opening anyway, after which the store
    /// may forget the nonce.
    fn spend<'a>(&'a self, nonce: &'a Nonce, expires_at: u64, now: u64) -> SpendFuture<'a>;
}

/// An in-memory store for a single process. Forgets nonces once their seals have expired.
#[derive(Debug, Default)]
pub struct MemoryNonceStore {
    spent: Mutex<HashMap<Nonce, u64>>,
}

impl MemoryNonceStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn spend_now(&self, nonce: &Nonce, expires_at: u64, now: u64) -> bool {
        let mut spent = match self.spent.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        spent.retain(|_, expiry| *expiry > now);
        spent.insert(*nonce, expires_at).is_none()
    }
}

impl NonceStore for MemoryNonceStore {
    fn spend<'a>(&'a self, nonce: &'a Nonce, expires_at: u64, now: u64) -> SpendFuture<'a> {
        let fresh = self.spend_now(nonce, expires_at, now);
        Box::pin(std::future::ready(Ok(fresh)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_spends_once_and_is_forgotten_after_expiry() {
        let store = MemoryNonceStore::new();
        assert!(store.spend_now(&[1; 16], 100, 10));
        assert!(!store.spend_now(&[1; 16], 100, 20));
        assert!(store.spend_now(&[2; 16], 100, 20));
        assert!(store.spend_now(&[3; 16], 300, 150));
        let spent = store.spent.lock().expect("not poisoned");
        assert_eq!(spent.len(), 1, "expired entries are pruned");
    }
}
