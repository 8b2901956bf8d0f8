//! Replicas: the spent-answer store and the audit log the framework's serving builds from this
//! server's settings, with this server's names. The Redis URL, audit log and replica id parsers
//! are the framework's, tested in ask-first-serve (tests/settings.rs).

mod loading;
use loading::load;

use opengist_mcp::OpengistServer;

const SEAL_KEY: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";

#[test]
fn nothing_set_means_in_memory_no_audit_and_the_default_replica_id() {
    let loaded = load(&[
        ("OPENGIST_MCP_REDIS_URL", "  "),
        ("OPENGIST_MCP_AUDIT_LOG", ""),
        ("OPENGIST_MCP_REPLICA_ID", ""),
    ])
    .expect("blank is unset");
    let serve = &loaded.config.serve;
    assert!(serve.redis_url.is_none() && serve.audit_log.is_none());
    assert!(serve.replica_id.is_none());
}

#[test]
fn redis_without_a_shared_seal_key_is_warned_about_by_its_names() {
    let loaded = load(&[("OPENGIST_MCP_REDIS_URL", "redis://127.0.0.1:6379")]).expect("valid");
    let warnings = loaded.config.serve.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("OPENGIST_MCP_SEAL_KEY"),
        "{warnings:?}"
    );
    // Positive control: with the key, nothing to say.
    let loaded = load(&[
        ("OPENGIST_MCP_REDIS_URL", "redis://127.0.0.1:6379"),
        ("OPENGIST_MCP_SEAL_KEY", SEAL_KEY),
    ])
    .expect("valid");
    assert!(loaded.config.serve.warnings().is_empty());
}

#[tokio::test]
async fn an_audit_file_that_cannot_be_opened_stops_the_server_with_the_fix() {
    let dir = std::env::temp_dir().join(format!("og-audit-missing-{}", std::process::id()));
    let path = dir.join("no-such-dir").join("audit.jsonl");
    let loaded = load(&[("OPENGIST_MCP_AUDIT_LOG", path.to_str().expect("utf-8"))]).expect("valid");
    let Err(error) = OpengistServer::from_config(&loaded.config) else {
        panic!("a server with an unwritable audit log was built");
    };
    let text = error.to_string();
    assert!(text.contains("cannot be opened for appending"), "{text}");
    assert!(text.contains("audit.jsonl"), "{text}");
    assert!(text.contains("`stderr`"), "{text}");
    assert!(
        text.contains("OPENGIST_MCP_AUDIT_LOG (--audit-log)"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_with_redis_and_an_audit_file_builds_while_redis_is_down() {
    let path = std::env::temp_dir().join(format!("og-audit-{}.jsonl", std::process::id()));
    let loaded = load(&[
        ("OPENGIST_MCP_REDIS_URL", "redis://127.0.0.1:1/0"),
        ("OPENGIST_MCP_SEAL_KEY", SEAL_KEY),
        ("OPENGIST_MCP_AUDIT_LOG", path.to_str().expect("utf-8")),
    ])
    .expect("valid");
    let server = OpengistServer::from_config(&loaded.config).expect("builds without Redis");
    assert_eq!(server.tool_names().len(), 14);
    assert!(path.exists(), "the audit file is created at start");
    let _ = std::fs::remove_file(path);
}
