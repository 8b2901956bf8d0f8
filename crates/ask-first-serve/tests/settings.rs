//! The serving settings' parsers, tested once, here: every value `ServeSettings::from_lookup`
//! accepts or refuses, and the rule that no message echoes a value that might be secret. A
//! server (opengist-mcp) tests only what is its own: which flags feed these settings and the
//! names its messages use.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use ask_first_serve::http::HttpLimits;
use ask_first_serve::http::limits::HttpBounds;
use ask_first_serve::settings::{
    AllowedHost, AllowedOrigin, AuditLog, AuthMode, OriginPort, Secret, ServeSettings,
    SettingError, SettingNames,
};

/// A value no message may contain.
const CANARY: &str = "CANARYsecret";

fn load(vars: &[(&str, &str)]) -> Result<ServeSettings, SettingError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ServeSettings::from_lookup(SettingNames::with_prefix("NOTES"), |name| {
        map.get(name).cloned()
    })
}

fn ok(vars: &[(&str, &str)]) -> ServeSettings {
    load(vars).expect("settings are valid")
}

fn err(vars: &[(&str, &str)]) -> SettingError {
    load(vars).expect_err("settings are refused")
}

#[test]
fn defaults_with_nothing_set() {
    let settings = ok(&[]);
    assert!(settings.elicitation);
    assert!(settings.seal_key.is_none());
    assert!(settings.http_addr.is_none() && settings.http_token.is_none());
    assert!(settings.allowed_hosts.is_empty() && settings.allowed_origins.is_empty());
    assert!(settings.redis_url.is_none() && settings.audit_log.is_none());
    assert!(settings.replica_id.is_none() && settings.state_dir.is_none());
    assert!(!settings.http_no_auth);
    assert_eq!(settings.auth.mode, AuthMode::Secret);
    assert!(settings.warnings().is_empty());
}

#[test]
fn elicitation_is_strict_and_names_both_values() {
    assert!(ok(&[("ELICITATION", "true")]).elicitation);
    assert!(!ok(&[("ELICITATION", "false")]).elicitation);
    for bad in [
        "", "1", "0", "off", "on", "yes", "no", "TRUE", "False", " true", CANARY,
    ] {
        let error = err(&[("ELICITATION", bad)]);
        assert!(matches!(error, SettingError::Elicitation(_)), "{bad:?}");
        let message = error.to_string();
        assert!(
            message.contains("`true`") && message.contains("`false`"),
            "{message}"
        );
        assert!(message.contains("ELICITATION"));
        assert!(!message.contains(CANARY));
    }
}

#[test]
fn seal_key_accepts_hex_and_base64() {
    use base64::Engine as _;
    let engines = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let mut encodings: Vec<String> = engines.iter().map(|e| e.encode([0xfbu8; 48])).collect();
    encodings.push("07".repeat(32));
    encodings.push("AB".repeat(40));
    encodings.push(base64::engine::general_purpose::STANDARD.encode([7u8; 32]));
    for key in encodings {
        let settings = ok(&[("NOTES_SEAL_KEY", &key)]);
        assert!(settings.seal_key.is_some(), "{key}");
        assert!(!format!("{settings:?}").contains(&key));
    }
}

#[test]
fn seal_key_refusals() {
    let setting = "NOTES_SEAL_KEY".to_owned();
    let error = err(&[("NOTES_SEAL_KEY", &"ab".repeat(31))]);
    assert_eq!(
        error,
        SettingError::SealKeyTooShort {
            setting: setting.clone(),
            bytes: 31
        }
    );
    assert!(error.to_string().contains("openssl rand -hex 32"));
    for bad in [format!("{CANARY}!!"), format!("zz{CANARY}")] {
        let error = err(&[("NOTES_SEAL_KEY", &bad)]);
        assert_eq!(
            error,
            SettingError::SealKeyEncoding {
                setting: setting.clone()
            },
            "{bad}"
        );
        assert!(!error.to_string().contains(CANARY));
    }
    // base64 of 24 bytes (not hex: `Q` is no hex digit): decodes, too short.
    let error = err(&[("NOTES_SEAL_KEY", &"QQ".repeat(16))]);
    assert_eq!(error, SettingError::SealKeyTooShort { setting, bytes: 24 });
}

#[test]
fn http_addresses() {
    for (raw, expected) in [
        ("127.0.0.1:8080", "127.0.0.1:8080"),
        ("[::1]:9000", "[::1]:9000"),
        ("localhost:8081", "127.0.0.1:8081"),
        ("8082", "127.0.0.1:8082"),
        (" 8083 ", "127.0.0.1:8083"),
        ("[::ffff:127.0.0.1]:8084", "[::ffff:127.0.0.1]:8084"),
    ] {
        let expected: SocketAddr = expected.parse().expect("test address");
        assert_eq!(
            ok(&[("NOTES_HTTP_ADDR", raw)]).http_addr,
            Some(expected),
            "{raw}"
        );
    }
    for bad in [
        "nope",
        "127.0.0.1",
        "localhost",
        "70000",
        "example.com:80",
        CANARY,
    ] {
        let error = err(&[("NOTES_HTTP_ADDR", bad)]);
        assert!(matches!(error, SettingError::HttpAddr { .. }), "{bad}");
        assert!(!error.to_string().contains(CANARY));
    }
}

#[test]
fn non_loopback_needs_a_bearer_secret() {
    for addr in ["0.0.0.0:8080", "[::]:8080", "192.0.2.1:8080"] {
        let error = err(&[("NOTES_HTTP_ADDR", addr)]);
        assert!(
            matches!(error, SettingError::HttpTokenRequired { .. }),
            "{addr}"
        );
        assert!(error.to_string().contains("NOTES_HTTP_TOKEN"));
        // Positive control: with a secret it serves.
        let settings = ok(&[
            ("NOTES_HTTP_ADDR", addr),
            ("NOTES_HTTP_TOKEN", "0123456789abcdef"),
        ]);
        assert_eq!(
            settings.http_token.as_ref().map(Secret::expose),
            Some("0123456789abcdef")
        );
        assert!(!format!("{settings:?}").contains("0123456789abcdef"));
    }
}

#[test]
fn http_token_shape() {
    for bad in [
        "short",
        "fifteen-chars-x",
        &format!("{CANARY} with space"),
        &format!("{CANARY}\u{e9}xxxxxxxx"),
    ] {
        let error = err(&[("NOTES_HTTP_TOKEN", bad)]);
        assert!(matches!(error, SettingError::HttpToken { .. }), "{bad}");
        assert!(!error.to_string().contains(CANARY));
        assert!(!error.to_string().contains(bad));
    }
}

#[test]
fn http_limits() {
    assert_eq!(ok(&[]).limits, HttpLimits::default());
    let defaults = HttpLimits::default();
    assert_eq!(defaults.header_timeout, Duration::from_secs(10));
    assert_eq!(defaults.body_timeout, Duration::from_secs(30));
    assert_eq!(defaults.max_connections, 256);
    assert_eq!(defaults.max_sessions, 512);
    assert_eq!(defaults.session_idle, Duration::from_secs(300));

    let header = "NOTES_HTTP_HEADER_TIMEOUT_SECS";
    let body = "NOTES_HTTP_BODY_TIMEOUT_SECS";
    let connections = "NOTES_HTTP_MAX_CONNECTIONS";
    let sessions = "NOTES_HTTP_MAX_SESSIONS";
    let idle = "NOTES_HTTP_SESSION_IDLE_SECS";
    let limits = ok(&[
        (header, "1"),
        (body, "3600"),
        (connections, "65536"),
        (sessions, "1"),
        (idle, "86400"),
    ])
    .limits;
    assert_eq!(
        limits,
        HttpLimits {
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(3600),
            max_connections: 65_536,
            max_sessions: 1,
            session_idle: Duration::from_secs(86_400),
            ..HttpLimits::default()
        }
    );
    for (var, bad) in [
        (header, "0"),
        (header, "3601"),
        (body, "0"),
        (body, "1.5"),
        (connections, "0"),
        (connections, "65537"),
        (sessions, "0"),
        (sessions, "many"),
        (idle, "0"),
        (idle, "86401"),
    ] {
        let error = err(&[(var, bad)]);
        assert!(error.to_string().contains(var), "{error}");
    }
}

#[test]
fn http_bounds() {
    assert_eq!(ok(&[]).limits.bounds, HttpBounds::default());
    let bounds = ok(&[
        ("NOTES_HTTP_DIALOGS_PER_SESSION", "2"),
        ("NOTES_HTTP_MAX_STREAMS", "10"),
        ("NOTES_HTTP_STREAM_IDLE_SECS", "9"),
    ])
    .limits
    .bounds;
    assert_eq!(bounds.dialogs_per_session, 2);
    assert_eq!(bounds.max_streams, Some(10));
    assert_eq!(bounds.stream_idle, Duration::from_secs(9));
    let error = err(&[("NOTES_HTTP_MAX_DIALOGS", "0")]);
    assert!(
        error.to_string().contains("NOTES_HTTP_MAX_DIALOGS"),
        "{error}"
    );
    let error = err(&[
        ("NOTES_HTTP_MAX_CONNECTIONS", "8"),
        ("NOTES_HTTP_MAX_STREAMS", "8"),
    ]);
    let text = error.to_string();
    assert!(
        text.contains("NOTES_HTTP_MAX_STREAMS") && text.contains("NOTES_HTTP_MAX_CONNECTIONS"),
        "{text}"
    );
}

#[test]
fn allowed_hosts() {
    let hosts = ok(&[
        ("NOTES_HTTP_ADDR", "127.0.0.1:8080"),
        (
            "NOTES_ALLOWED_HOSTS",
            "MCP.example.com, mcp.example.com:8443,,[::1]:9,10.0.0.1",
        ),
    ])
    .allowed_hosts;
    let host = |host: &str, port| AllowedHost {
        host: host.into(),
        port,
    };
    assert_eq!(
        hosts,
        [
            host("mcp.example.com", None),
            host("mcp.example.com", Some(8443)),
            host("::1", Some(9)),
            host("10.0.0.1", None),
        ]
    );
    assert_eq!(hosts[2].to_string(), "[::1]:9");
    for (list, position) in [
        ("https://mcp.example.com", 1),
        ("ok.example.com, bad host", 2),
        ("ok.example.com,user@host", 2),
        ("host:", 1),
        ("host:99999", 1),
        ("host:8x", 1),
        ("[::1]:", 1),
        ("host/path", 1),
    ] {
        let error = err(&[("NOTES_ALLOWED_HOSTS", list)]);
        assert_eq!(
            error,
            SettingError::AllowedHost {
                setting: "NOTES_ALLOWED_HOSTS".into(),
                position
            },
            "{list}"
        );
        assert!(error.to_string().contains(&format!("entry #{position}")));
    }
}

#[test]
fn allowed_origins() {
    let origins = ok(&[
        ("NOTES_HTTP_ADDR", "127.0.0.1:8080"),
        (
            "NOTES_ALLOWED_ORIGINS",
            "https://App.example.com, http://app.example.com, https://x.example:*, null, http://[::1]:3000/",
        ),
    ])
    .allowed_origins;
    let tuple = |scheme: &str, host: &str, port| AllowedOrigin::Tuple {
        scheme: scheme.into(),
        host: host.into(),
        port,
    };
    assert_eq!(
        origins,
        [
            tuple("https", "app.example.com", OriginPort::Exact(443)),
            tuple("http", "app.example.com", OriginPort::Exact(80)),
            tuple("https", "x.example", OriginPort::Any),
            AllowedOrigin::Null,
            tuple("http", "::1", OriginPort::Exact(3000)),
        ]
    );
    let shown: Vec<String> = origins.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "https://app.example.com:443",
            "http://app.example.com:80",
            "https://x.example:*",
            "null",
            "http://[::1]:3000",
        ]
    );
    for (list, position) in [
        ("ftp://x.example", 1),
        ("app.example.com", 1),
        ("https://ok.example, https://x.example:443:*", 2),
        ("https://x.example/path", 1),
        ("https://user@x.example", 1),
    ] {
        let error = err(&[("NOTES_ALLOWED_ORIGINS", list)]);
        assert_eq!(
            error,
            SettingError::AllowedOrigin {
                setting: "NOTES_ALLOWED_ORIGINS".into(),
                position
            },
            "{list}"
        );
    }
}

#[test]
fn the_no_authentication_switch_is_strict_and_off_by_default() {
    let settings = ok(&[
        ("NOTES_HTTP_NO_AUTH", "true"),
        ("NOTES_STATE_DIR", "/var/lib/notes"),
    ]);
    assert!(settings.http_no_auth);
    assert_eq!(
        settings.state_dir.as_deref(),
        Some(std::path::Path::new("/var/lib/notes"))
    );
    for bad in ["1", "yes", "TRUE"] {
        let error = err(&[("NOTES_HTTP_NO_AUTH", bad)]);
        assert!(error.to_string().contains("NOTES_HTTP_NO_AUTH"), "{bad:?}");
    }
}

#[test]
fn redis_urls_with_tls_and_a_password_are_kept_secret() {
    for url in [
        "redis://127.0.0.1:6379/0",
        "rediss://cache.example.com:6380",
        &format!("redis://:{CANARY}@127.0.0.1:6379/2"),
        &format!("redis://user:{CANARY}@[::1]:6379"),
    ] {
        let settings = ok(&[
            ("NOTES_REDIS_URL", url),
            ("NOTES_SEAL_KEY", &"0a".repeat(32)),
        ]);
        assert_eq!(settings.redis_url.as_ref().map(Secret::expose), Some(url));
        assert!(!format!("{settings:?}").contains(CANARY));
        assert!(settings.warnings().is_empty(), "{:?}", settings.warnings());
    }
    // Without a shared seal key, replicas cannot open each other's questions: said so.
    let warnings = ok(&[("NOTES_REDIS_URL", "redis://127.0.0.1:6379")]).warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("NOTES_SEAL_KEY"));
}

#[test]
fn a_bad_redis_url_is_refused_without_echoing_it() {
    for url in [
        format!("http://{CANARY}@example.com"),
        CANARY.to_owned(),
        format!("redis:///{CANARY}"),
        format!("unix:///tmp/{CANARY}.sock"),
    ] {
        let error = err(&[("NOTES_REDIS_URL", &url)]);
        assert!(matches!(error, SettingError::RedisUrl { .. }), "{url}");
        let text = error.to_string();
        assert!(
            text.contains("NOTES_REDIS_URL") && text.contains("redis://"),
            "{text}"
        );
        assert!(!text.contains(CANARY), "{text}");
    }
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
        assert_eq!(ok(&[("NOTES_AUDIT_LOG", raw)]).audit_log, Some(expected));
    }
    for raw in ["/var/log/", ".", ".."] {
        let error = err(&[("NOTES_AUDIT_LOG", raw)]);
        assert!(matches!(error, SettingError::AuditLog { .. }), "{raw}");
        assert!(error.to_string().contains("`stderr` or the path of a file"));
    }
}

#[test]
fn replica_ids_are_short_names() {
    for id in ["r1", "web-2", "host1:8081", "a.b_c", &"x".repeat(64)] {
        assert_eq!(
            ok(&[("NOTES_REPLICA_ID", id)]).replica_id.as_deref(),
            Some(id)
        );
    }
    for id in ["a b", "é", "r1/2", &"x".repeat(65), "a\"b"] {
        let error = err(&[("NOTES_REPLICA_ID", id)]);
        assert!(matches!(error, SettingError::ReplicaId { .. }), "{id}");
        assert!(error.to_string().contains("NOTES_REPLICA_ID"));
    }
}

#[test]
fn no_error_message_echoes_a_value() {
    for var in [
        "ELICITATION",
        "NOTES_HTTP_ADDR",
        "NOTES_SEAL_KEY",
        "NOTES_HTTP_TOKEN",
        "NOTES_ALLOWED_HOSTS",
        "NOTES_ALLOWED_ORIGINS",
        "NOTES_HTTP_HEADER_TIMEOUT_SECS",
        "NOTES_HTTP_BODY_TIMEOUT_SECS",
        "NOTES_HTTP_MAX_CONNECTIONS",
        "NOTES_HTTP_MAX_SESSIONS",
        "NOTES_HTTP_SESSION_IDLE_SECS",
        "NOTES_REDIS_URL",
        "NOTES_REPLICA_ID",
        "NOTES_HTTP_AUTH",
    ] {
        for value in [
            format!("og_{CANARY} x"),
            format!("https://{CANARY}@h/"),
            format!("{CANARY}://x"),
            format!("x {CANARY}"),
        ] {
            match load(&[(var, &value)]) {
                Err(error) => {
                    assert!(!error.to_string().contains(CANARY), "{var}: {error}");
                    assert!(!format!("{error:?}").contains(CANARY), "{var}: {error:?}");
                }
                Ok(settings) => {
                    assert!(!format!("{settings:?}").contains(CANARY), "{var}");
                }
            }
        }
    }
}

#[test]
fn the_runtime_is_single_threaded_for_stdio_and_multi_threaded_for_http() {
    use tokio::runtime::RuntimeFlavor;
    let stdio = ok(&[]).runtime().expect("a runtime");
    assert_eq!(
        stdio.handle().runtime_flavor(),
        RuntimeFlavor::CurrentThread
    );
    let http = ok(&[("NOTES_HTTP_ADDR", "127.0.0.1:0")])
        .runtime()
        .expect("a runtime");
    assert_eq!(http.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
}

#[test]
fn a_server_may_accept_a_mode_of_its_own() {
    let lookup = |name: &str| (name == "NOTES_HTTP_AUTH").then(|| "team".to_owned());
    // Positive control: the framework alone does not know the mode, and names what it knows.
    let error = ServeSettings::from_lookup(SettingNames::with_prefix("NOTES"), lookup)
        .expect_err("an unknown mode");
    assert!(matches!(error, SettingError::AuthMode { .. }), "{error}");
    let settings = ServeSettings::from_lookup_with_modes(
        SettingNames::with_prefix("NOTES"),
        &["team"],
        lookup,
    )
    .expect("the server's own mode");
    assert_eq!(settings.auth.mode, AuthMode::Server("team".into()));
    // Its own mode needs no bearer secret on a public address: its verifier authenticates.
    let lookup = |name: &str| match name {
        "NOTES_HTTP_AUTH" => Some("team".to_owned()),
        "NOTES_HTTP_ADDR" => Some("0.0.0.0:8080".to_owned()),
        _ => None,
    };
    assert!(
        ServeSettings::from_lookup_with_modes(
            SettingNames::with_prefix("NOTES"),
            &["team"],
            lookup
        )
        .is_ok()
    );
}

#[test]
fn a_name_may_show_its_flag_and_the_lookup_gets_the_variable() {
    use ask_first_serve::settings::bare_name;
    let names = SettingNames {
        audit_log: "NOTES_AUDIT_LOG (--audit-log)".to_owned(),
        ..SettingNames::with_prefix("NOTES")
    };
    let lookup = |name: &str| (bare_name(name) == "NOTES_AUDIT_LOG").then(|| "/var/".to_owned());
    let error = ServeSettings::from_lookup(names, lookup).expect_err("a directory");
    assert!(
        error
            .to_string()
            .starts_with("NOTES_AUDIT_LOG (--audit-log) must be"),
        "{error}"
    );
    assert_eq!(
        bare_name("NOTES_AUDIT_LOG (--audit-log)"),
        "NOTES_AUDIT_LOG"
    );
    assert_eq!(bare_name("NOTES_AUDIT_LOG"), "NOTES_AUDIT_LOG");
}
