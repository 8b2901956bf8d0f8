//! Configuration of replicas: the Redis URL, the audit log and the replica id, every bad value,
//! and the rule that no message echoes a value that might be secret.

mod loading;
use loading::{load, load_with};

use clap::Parser;
use opengist_mcp::OpengistServer;
use opengist_mcp::cli::CliArgs;
use opengist_mcp::config::{AuditLog, ConfigError, Secret};

/// A value no message may contain.
const CANARY: &str = "CANARYsecret";
const SEAL_KEY: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";

fn cli(args: &[&str]) -> CliArgs {
    CliArgs::try_parse_from(std::iter::once("opengist-mcp").chain(args.iter().copied()))
        .expect("arguments parse")
}

#[test]
fn nothing_set_means_in_memory_no_audit_and_the_default_replica_id() {
    let loaded = load(&[]).expect("valid");
    assert!(loaded.config.redis_url.is_none());
    assert!(loaded.config.audit_log.is_none());
    assert!(loaded.config.replica_id.is_none());
    let blank = load(&[
        ("OPENGIST_MCP_REDIS_URL", "  "),
        ("OPENGIST_MCP_AUDIT_LOG", ""),
        ("OPENGIST_MCP_REPLICA_ID", ""),
    ])
    .expect("blank is unset");
    assert!(blank.config.redis_url.is_none() && blank.config.audit_log.is_none());
}

#[test]
fn redis_urls_with_tls_and_a_password_are_kept_secret() {
    for url in [
        "redis://127.0.0.1:6379/0",
        "rediss://cache.example.com:6380",
        &format!("redis://:{CANARY}@127.0.0.1:6379/2"),
        &format!("redis://user:{CANARY}@[::1]:6379"),
    ] {
        let loaded = load(&[
            ("OPENGIST_MCP_REDIS_URL", url),
            ("OPENGIST_MCP_SEAL_KEY", SEAL_KEY),
        ])
        .expect("valid");
        let kept = loaded.config.redis_url.as_ref().expect("set");
        assert_eq!(kept.expose(), url);
        assert!(!format!("{:?}", loaded.config).contains(CANARY));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    }
}

#[test]
fn a_bad_redis_url_is_refused_without_echoing_it() {
    for url in [
        format!("http://{CANARY}@example.com"),
        CANARY.to_owned(),
        format!("redis:///{CANARY}"),
        format!("unix:///tmp/{CANARY}.sock"),
    ] {
        let error = load(&[("OPENGIST_MCP_REDIS_URL", &url)]).expect_err("refused");
        assert_eq!(error, ConfigError::RedisUrl);
        let text = error.to_string();
        assert!(
            text.contains("OPENGIST_MCP_REDIS_URL (--redis-url)"),
            "{text}"
        );
        assert!(text.contains("redis://"), "{text}");
        assert!(!text.contains(CANARY), "{text}");
    }
}

#[test]
fn the_flag_wins_and_is_warned_about_without_its_value() {
    let args = cli(&[
        "--redis-url",
        &format!("redis://:{CANARY}@127.0.0.1:1/0"),
        "--audit-log",
        "stderr",
        "--replica-id",
        "web-2",
    ]);
    let loaded = load_with(
        &args,
        &[
            ("OPENGIST_MCP_REDIS_URL", "redis://other:6379"),
            ("OPENGIST_MCP_AUDIT_LOG", "/tmp/x.jsonl"),
            ("OPENGIST_MCP_REPLICA_ID", "web-9"),
            ("OPENGIST_MCP_SEAL_KEY", SEAL_KEY),
        ],
    )
    .expect("valid");
    let config = &loaded.config;
    assert!(
        config
            .redis_url
            .as_ref()
            .map(Secret::expose)
            .is_some_and(|u| u.contains("127.0.0.1:1"))
    );
    assert_eq!(config.audit_log, Some(AuditLog::Stderr));
    assert_eq!(config.replica_id.as_deref(), Some("web-2"));
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("--redis-url is visible"));
    assert!(!loaded.warnings[0].contains(CANARY));
}

#[test]
fn redis_without_a_shared_seal_key_is_warned_about() {
    let loaded = load(&[("OPENGIST_MCP_REDIS_URL", "redis://127.0.0.1:6379")]).expect("valid");
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("OPENGIST_MCP_SEAL_KEY"));
}

#[test]
fn the_audit_log_is_stderr_or_a_file() {
    for (raw, expected) in [
        ("stderr", AuditLog::Stderr),
        (" STDERR ", AuditLog::Stderr),
        (
            "/var/log/audit.jsonl",
            AuditLog::File("/var/log/audit.jsonl".into()),
        ),
        ("audit.jsonl", AuditLog::File("audit.jsonl".into())),
    ] {
        let loaded = load(&[("OPENGIST_MCP_AUDIT_LOG", raw)]).expect("valid");
        assert_eq!(loaded.config.audit_log, Some(expected));
    }
    for raw in ["/var/log/", ".", ".."] {
        let error = load(&[("OPENGIST_MCP_AUDIT_LOG", raw)]).expect_err("refused");
        assert_eq!(error, ConfigError::AuditLog);
        assert!(error.to_string().contains("`stderr` or the path of a file"));
    }
}

#[test]
fn replica_ids_are_short_names() {
    for id in ["r1", "web-2", "host1:8081", "a.b_c", &"x".repeat(64)] {
        let loaded = load(&[("OPENGIST_MCP_REPLICA_ID", id)]).expect("valid");
        assert_eq!(loaded.config.replica_id.as_deref(), Some(id));
    }
    for id in ["a b", "é", "r1/2", &"x".repeat(65), "a\"b"] {
        let error = load(&[("OPENGIST_MCP_REPLICA_ID", id)]).expect_err("refused");
        assert_eq!(error, ConfigError::ReplicaId);
        assert!(
            error
                .to_string()
                .contains("OPENGIST_MCP_REPLICA_ID (--replica-id)")
        );
    }
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
