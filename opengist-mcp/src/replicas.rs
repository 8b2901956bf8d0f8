//! Running several replicas: the shared spent-answer store on Redis and the audit log.
//!
//! Replicas behind one gateway share `OPENGIST_MCP_SEAL_KEY` (so each can open the others'
//! questions and tokens) and `OPENGIST_MCP_REDIS_URL` (so each answer is spent once, wherever
//! it lands and across restarts). `OPENGIST_MCP_AUDIT_LOG` records every guard decision and
//! every guarded call's outcome as one JSON line, tagged with the replica's id.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mcp_guard::{AuditEvent, AuditSink, NonceStore};
use mcp_guard_redis::{RedisNonceStore, RedisStoreError};

use crate::config::{AuditLog, Config, var};

/// The prefix of this server's keys in Redis.
pub const REDIS_KEY_PREFIX: &str = "opengist-mcp:spent:";

/// Why the replica set-up could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaSetupError {
    /// The Redis URL cannot be used.
    #[error(transparent)]
    Redis(#[from] RedisStoreError),
    /// The audit log file cannot be opened for appending.
    #[error(
        "OPENGIST_MCP_AUDIT_LOG (--audit-log): {path} cannot be opened for appending ({reason}); make its directory exist and be writable, or set it to `stderr`"
    )]
    AuditLog {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
}

/// The Redis store when `OPENGIST_MCP_REDIS_URL` is set. Does not connect yet (it connects on
/// the first spend and reconnects by itself), so a replica starts while Redis is down. Call
/// inside the tokio runtime.
pub fn redis_store(config: &Config) -> Result<Option<RedisNonceStore>, ReplicaSetupError> {
    let Some(url) = &config.redis_url else {
        return Ok(None);
    };
    let store = RedisNonceStore::builder(url.expose())
        .setting_name(var::OPENGIST_MCP_REDIS_URL)
        .key_prefix(REDIS_KEY_PREFIX)
        .build()?;
    Ok(Some(store))
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

/// `hostname:pid`, the replica id when `OPENGIST_MCP_REPLICA_ID` is not set.
pub fn default_replica_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}:{}", std::process::id())
}

/// The audit sink `OPENGIST_MCP_AUDIT_LOG` asks for, if any.
pub fn audit_sink(config: &Config) -> Result<Option<Arc<dyn AuditSink>>, ReplicaSetupError> {
    let Some(log) = &config.audit_log else {
        return Ok(None);
    };
    let replica = config.replica_id.clone().unwrap_or_else(default_replica_id);
    let target = match log {
        AuditLog::Stderr => Target::Stderr,
        AuditLog::File(path) => Target::File(open_append(path)?),
    };
    Ok(Some(Arc::new(JsonLinesAudit::new(replica, target))))
}

fn open_append(path: &Path) -> Result<Mutex<File>, ReplicaSetupError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(Mutex::new)
        .map_err(|error| ReplicaSetupError::AuditLog {
            path: path.display().to_string(),
            reason: error.kind().to_string(),
        })
}

/// Where the lines go.
enum Target {
    Stderr,
    File(Mutex<File>),
}

/// The audit log: one JSON object per line, written whole with one `write` (a file is opened
/// for appending, so lines of replicas that share it do not interleave).
pub struct JsonLinesAudit {
    replica: String,
    target: Target,
    /// Whether a failed write has been reported (once, not on every call).
    reported: AtomicBool,
}

impl JsonLinesAudit {
    fn new(replica: String, target: Target) -> Self {
        Self {
            replica,
            target,
            reported: AtomicBool::new(false),
        }
    }

    /// The line for `event`, with its newline.
    pub fn line(replica: &str, event: &AuditEvent) -> String {
        let time = chrono::DateTime::<chrono::Utc>::from(event.time)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut line = serde_json::json!({
            "time": time,
            "replica": replica,
            "principal": event.principal,
            "tool": event.tool,
            "operation": event.operation,
            "target": event.target,
            "route": event.route.as_str(),
            "outcome": event.outcome.as_str(),
        })
        .to_string();
        line.push('\n');
        line
    }
}

impl AuditSink for JsonLinesAudit {
    fn record(&self, event: &AuditEvent) {
        let line = Self::line(&self.replica, event);
        let written = match &self.target {
            Target::Stderr => std::io::stderr().lock().write_all(line.as_bytes()),
            Target::File(file) => match file.lock() {
                Ok(mut file) => file.write_all(line.as_bytes()),
                Err(poisoned) => poisoned.into_inner().write_all(line.as_bytes()),
            },
        };
        if let Err(error) = written
            && !self.reported.swap(true, Ordering::Relaxed)
        {
            tracing::error!(%error, "the audit log could not be written; later failures are not reported");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_guard::{AuditOutcome, Route};
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_line_has_exactly_the_audit_fields() {
        let event = AuditEvent {
            time: UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            principal: "0123456789abcdef".to_owned(),
            tool: "delete_gist".to_owned(),
            operation: "delete_gist",
            target: "fedcba9876543210".to_owned(),
            route: Route::InputRequired,
            outcome: AuditOutcome::ReplayRefused,
        };
        let line = JsonLinesAudit::line("web-1", &event);
        assert!(line.ends_with('\n'));
        let value: serde_json::Value = serde_json::from_str(&line).expect("json");
        let object = value.as_object().expect("object");
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "operation",
                "outcome",
                "principal",
                "replica",
                "route",
                "target",
                "time",
                "tool"
            ]
        );
        assert_eq!(value["time"], "2023-11-14T22:13:20.123Z");
        assert_eq!(value["route"], "input_required");
        assert_eq!(value["outcome"], "replay_refused");
        assert_eq!(value["replica"], "web-1");
    }

    #[test]
    fn the_default_replica_id_names_host_and_process() {
        let id = default_replica_id();
        assert!(id.ends_with(&format!(":{}", std::process::id())), "{id}");
    }
}
