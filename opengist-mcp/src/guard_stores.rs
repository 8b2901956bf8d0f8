//! What the guard keeps and records outside this process: spent answers in the Redis that
//! replicas share, and its decisions in the audit log.
//!
//! Replicas behind one gateway share `OPENGIST_MCP_SEAL_KEY` (so each can open the others'
//! questions and tokens) and `OPENGIST_MCP_REDIS_URL` (so each answer is spent once, wherever
//! it lands and across restarts). `OPENGIST_MCP_AUDIT_LOG` records every guard decision and
//! every guarded call's outcome as one JSON line, tagged with the replica's id. The pieces are
//! the guard framework's (`ask_first_serve`); this module wires them to this server's
//! configuration and names.

use std::sync::Arc;

use ask_first::audit::AuditSink;
use ask_first_core::FileNonceStore;
use ask_first_redis::{RedisNonceStore, RedisStoreError};
pub use ask_first_serve::audit::JsonLinesAudit;
pub use ask_first_serve::redis::{nonce_store, report_redis};
pub use ask_first_serve::settings::default_replica_id;

use crate::config::{Config, var};

/// The prefix of this server's keys in Redis.
pub(crate) const REDIS_KEY_PREFIX: &str = "opengist-mcp:spent:";

/// The directory under the XDG state directory that holds this server's spent-answer log.
pub(crate) const STATE_DIR_NAME: &str = "opengist-mcp";

/// Why the guard's Redis store or audit log could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum GuardStoreError {
    /// The Redis URL cannot be used.
    #[error(transparent)]
    Redis(#[from] RedisStoreError),
    /// The spent-answer log cannot be used.
    #[error(transparent)]
    SpentLog(#[from] ask_first_core::FileNonceStoreError),
    /// A fixed seal key without Redis, and nowhere to keep spent answers.
    #[error(
        "OPENGIST_MCP_SEAL_KEY is set without OPENGIST_MCP_REDIS_URL, so spent answers must \
         outlive this process, but there is no state directory to keep them in (neither \
         XDG_STATE_HOME nor HOME is set): set OPENGIST_MCP_STATE_DIR to a directory for this \
         server, or set OPENGIST_MCP_REDIS_URL to share spent answers in Redis"
    )]
    NoStateDir,
    /// The audit log file cannot be opened for appending.
    #[error(transparent)]
    AuditLog(#[from] ask_first_serve::audit::AuditLogError),
}

/// The Redis store when `OPENGIST_MCP_REDIS_URL` is set. Does not connect yet (it connects on
/// the first spend and reconnects by itself), so a replica starts while Redis is down. Call
/// inside the tokio runtime.
pub fn redis_store(config: &Config) -> Result<Option<RedisNonceStore>, GuardStoreError> {
    let Some(url) = &config.redis_url else {
        return Ok(None);
    };
    let store =
        ask_first_serve::redis::redis_store(url, var::OPENGIST_MCP_REDIS_URL, REDIS_KEY_PREFIX)?;
    Ok(Some(store))
}

/// The durable spent-answer store a fixed `OPENGIST_MCP_SEAL_KEY` without
/// `OPENGIST_MCP_REDIS_URL` calls for (answers sealed before a restart still open after it):
/// the log in `OPENGIST_MCP_STATE_DIR`, else `$XDG_STATE_HOME/opengist-mcp` or
/// `~/.local/state/opengist-mcp`, locked to this process. `None` otherwise.
pub(crate) fn spent_log(config: &Config) -> Result<Option<FileNonceStore>, GuardStoreError> {
    if !config.seal_key_configured || config.redis_url.is_some() {
        return Ok(None);
    }
    let dir = config
        .state_dir
        .clone()
        .or_else(|| ask_first_serve::settings::default_state_dir(STATE_DIR_NAME))
        .ok_or(GuardStoreError::NoStateDir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let store = FileNonceStore::open(&dir, var::OPENGIST_MCP_STATE_DIR, now)?;
    tracing::info!(
        path = %store.path().display(),
        "approvals are spent in a file that outlives this process (a fixed seal key without Redis)"
    );
    Ok(Some(store))
}

/// The audit sink `OPENGIST_MCP_AUDIT_LOG` asks for, if any.
pub(crate) fn audit_sink(config: &Config) -> Result<Option<Arc<dyn AuditSink>>, GuardStoreError> {
    let Some(log) = &config.audit_log else {
        return Ok(None);
    };
    let replica = config.replica_id.clone().unwrap_or_else(default_replica_id);
    let setting = crate::http::setting_names().audit_log;
    Ok(Some(ask_first_serve::audit::audit_sink(
        log, &replica, &setting,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::SERVER_NAME;

    #[test]
    fn the_redis_keys_are_the_servers_own() {
        assert_eq!(REDIS_KEY_PREFIX, format!("{SERVER_NAME}:spent:"));
        assert_eq!(STATE_DIR_NAME, SERVER_NAME);
    }

    #[test]
    fn the_default_replica_id_names_host_and_process() {
        let id = default_replica_id();
        assert!(id.ends_with(&format!(":{}", std::process::id())), "{id}");
    }
}
