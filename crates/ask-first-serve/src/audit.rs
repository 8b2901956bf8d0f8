//! The JSON-lines audit sink: every guard decision and every guarded call's outcome as one
//! JSON object per line, tagged with the replica's id.
//!
//! A line holds exactly `time` (RFC 3339, milliseconds, UTC), `replica`, `principal` (a salted
//! hash, never the credential), `tool`, `operation`, `target` (a prefix of the target's
//! fingerprint, never its content), `route` and `outcome`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ask_first_core::{AuditEvent, AuditSink};

use crate::settings::AuditLog;

/// The audit log file cannot be opened for appending.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{setting}: {path} cannot be opened for appending ({reason}); make its directory exist and be writable, or set it to `stderr`"
)]
pub struct AuditLogError {
    /// The setting, as the server calls it.
    pub setting: String,
    /// The file.
    pub path: String,
    /// What the system said.
    pub reason: String,
}

/// The sink `log` asks for, its lines tagged with `replica`. `setting` names the audit-log
/// setting in the error.
pub fn audit_sink(
    log: &AuditLog,
    replica: &str,
    setting: &str,
) -> Result<Arc<dyn AuditSink>, AuditLogError> {
    let target = match log {
        AuditLog::Stderr => Target::Stderr,
        AuditLog::File(path) => Target::File(open_append(path, setting)?),
    };
    Ok(Arc::new(JsonLinesAudit {
        replica: replica.to_owned(),
        target,
        reported: AtomicBool::new(false),
    }))
}

fn open_append(path: &Path, setting: &str) -> Result<Mutex<File>, AuditLogError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(Mutex::new)
        .map_err(|error| AuditLogError {
            setting: setting.to_owned(),
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
    use ask_first_core::{AuditOutcome, Route};
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
    fn an_unwritable_file_names_the_setting() {
        let log = AuditLog::File("/nonexistent-dir/for-sure/audit.jsonl".into());
        let error = audit_sink(&log, "r", "NOTES_AUDIT_LOG")
            .err()
            .expect("fails");
        assert!(
            error.to_string().starts_with("NOTES_AUDIT_LOG: "),
            "{error}"
        );
    }
}
