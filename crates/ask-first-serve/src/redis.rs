//! The Redis spent-answer store's wiring: built from the server's own setting name, so every
//! message while Redis is down names it.

use std::sync::Arc;

use ask_first_core::NonceStore;
pub use ask_first_redis::{RedisNonceStore, RedisStoreError};

use crate::settings::Secret;

/// The store at `url` (`setting` is the name of the setting it came from, for messages), its
/// keys prefixed by `key_prefix`. Does not connect yet (it connects on the first spend and
/// reconnects by itself), so a replica starts while Redis is down. Call inside the tokio
/// runtime.
pub fn redis_store(
    url: &Secret,
    setting: &str,
    key_prefix: &str,
) -> Result<RedisNonceStore, RedisStoreError> {
    RedisNonceStore::builder(url.expose())
        .setting_name(setting)
        .key_prefix(key_prefix)
        .build()
}

/// The store as the guard takes it.
pub fn nonce_store(store: &RedisNonceStore) -> Arc<dyn NonceStore> {
    Arc::new(store.clone())
}

/// Logs whether Redis answers now. Never fails: a replica serves reading tools without Redis,
/// and guarded calls recover by themselves once Redis answers.
pub async fn report_redis(store: &RedisNonceStore) {
    match store.ping().await {
        Ok(()) => tracing::info!(
            address = store.address(),
            "approvals are spent in Redis, shared with every replica"
        ),
        Err(error) => tracing::warn!(
            "{error}. Until it answers, guarded calls refuse to run; reading tools work"
        ),
    }
}
