//! Configuration: every variable and flag of this server's own, every bad value, the flags that
//! feed the framework's serving settings, and the rule that no message echoes a value that
//! might be secret. The serving settings' parsers are the framework's, tested in ask-first-serve.

mod loading;
use loading::{load, load_with};

use std::time::Duration;

use opengist_mcp::catalog;
use opengist_mcp::cli::{CliArgs, Command};
use opengist_mcp::config::{
    Config, ConfigError, FilterError, Loaded, OpengistUrl, Secret, ToolFilter,
};

const GOOD_TOKEN: &str = "og_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// A value no message may contain.
const CANARY: &str = "CANARYsecret";

fn cli(args: &[&str]) -> CliArgs {
    CliArgs::try_parse_from(std::iter::once("opengist-mcp").chain(args.iter().copied()))
        .expect("arguments parse")
}

fn ok(vars: &[(&str, &str)]) -> Loaded {
    load(vars).expect("configuration is valid")
}

fn err(vars: &[(&str, &str)]) -> ConfigError {
    let error = load(vars).expect_err("configuration is refused");
    assert_eq!(error.exit_code(), 1);
    error
}

#[test]
fn defaults_with_nothing_set() {
    let Loaded { config, warnings } = ok(&[]);
    assert!(config.opengist_url.is_none());
    assert!(config.token.is_none());
    assert!(!config.read_only);
    assert!(config.tools.is_unrestricted());
    assert!(!config.insecure_tls);
    assert!(config.serve.elicitation);
    assert!(config.serve.seal_key.is_none());
    assert!(config.serve.http_addr.is_none());
    assert!(config.serve.http_token.is_none());
    assert_eq!(config.max_result_bytes, 262_144);
    assert!(config.serve.allowed_hosts.is_empty());
    assert!(config.serve.allowed_origins.is_empty());
    assert_eq!(config.dialog_timeout, Duration::from_secs(600));
    assert_eq!(config.request_timeout, Duration::from_secs(30));
    assert_eq!(config.opengist_limits.max_in_flight, 8);
    assert_eq!(config.opengist_limits.per_principal, 4);
    assert_eq!(config.opengist_limits.queue_wait, Duration::from_secs(20));
    assert_eq!(config.cache_bytes, 64 * 1024 * 1024);
    assert!(warnings.is_empty(), "{warnings:?}");
}

// ---------------------------------------------------------------- OPENGIST_URL

#[test]
fn url_is_normalised() {
    for (raw, expected) in [
        ("https://gist.example.com", "https://gist.example.com"),
        ("https://gist.example.com/", "https://gist.example.com"),
        ("https://gist.example.com/api", "https://gist.example.com"),
        ("https://gist.example.com/api/", "https://gist.example.com"),
        (
            "https://gist.example.com//api//",
            "https://gist.example.com",
        ),
        (
            "https://example.com/opengist/api",
            "https://example.com/opengist",
        ),
        (
            "https://example.com/opengist/",
            "https://example.com/opengist",
        ),
        (
            "  https://Gist.Example.com:8443/  ",
            "https://gist.example.com:8443",
        ),
        ("http://localhost:6157/api", "http://localhost:6157"),
        ("https://example.com/apis", "https://example.com/apis"),
    ] {
        let loaded = ok(&[("OPENGIST_URL", raw), ("OPENGIST_TOKEN", GOOD_TOKEN)]);
        let url = loaded.config.opengist_url.expect("url");
        assert_eq!(url.as_str(), expected, "{raw}");
        assert_eq!(url.to_string(), expected);
    }
    let url = OpengistUrl::parse("https://gist.example.com/api/").expect("valid");
    assert_eq!(url.api("/gists"), "https://gist.example.com/api/gists");
    assert_eq!(url.url().scheme(), "https");
}

#[test]
fn empty_url_means_unconfigured() {
    let loaded = ok(&[("OPENGIST_URL", "  ")]);
    assert!(loaded.config.opengist_url.is_none());
}

#[test]
fn plain_http_warns_once_off_loopback_only() {
    for loopback in [
        "http://localhost:6157",
        "http://127.0.0.1:6157/",
        "http://127.3.4.5",
        "http://[::1]:6157",
        "https://gist.example.com",
    ] {
        let loaded = ok(&[("OPENGIST_URL", loopback), ("OPENGIST_TOKEN", GOOD_TOKEN)]);
        assert!(
            loaded.warnings.is_empty(),
            "{loopback}: {:?}",
            loaded.warnings
        );
    }
    let loaded = ok(&[
        ("OPENGIST_URL", "http://gist.example.com"),
        ("OPENGIST_TOKEN", GOOD_TOKEN),
    ]);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("plain http"));
    assert!(!loaded.warnings[0].contains("gist.example.com"));
}

#[test]
fn bad_urls_are_refused_without_echoing_them() {
    let hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let cases: Vec<(String, ConfigError)> = vec![
        (format!("og_{hex}"), ConfigError::UrlNotAUrl),
        (CANARY.to_owned(), ConfigError::UrlNotAUrl),
        (format!("gist.{CANARY}.com"), ConfigError::UrlNotAUrl),
        (format!("/{CANARY}"), ConfigError::UrlNotAUrl),
        (
            format!("ftp://{CANARY}.example.com"),
            ConfigError::UrlScheme,
        ),
        (format!("file:///{CANARY}"), ConfigError::UrlScheme),
        (format!("{CANARY}:6157"), ConfigError::UrlScheme),
        (
            format!("https://{CANARY}@gist.example.com"),
            ConfigError::UrlUserinfo,
        ),
        (
            format!("https://user:{CANARY}@gist.example.com"),
            ConfigError::UrlUserinfo,
        ),
        (
            format!("https://gist.example.com/?token={CANARY}"),
            ConfigError::UrlQueryOrFragment,
        ),
        (
            format!("https://gist.example.com/#{CANARY}"),
            ConfigError::UrlQueryOrFragment,
        ),
        ("https://".to_owned(), ConfigError::UrlNotAUrl),
    ];
    for (raw, expected) in cases {
        let error = err(&[("OPENGIST_URL", &raw)]);
        assert_eq!(error, expected, "{raw}");
        let message = error.to_string();
        assert!(!message.contains(CANARY), "{message}");
        assert!(!message.contains(hex), "{message}");
        assert!(message.contains("OPENGIST_URL"), "{message}");
        assert!(
            message.contains("https://"),
            "names the expected shape: {message}"
        );
    }
}

// ---------------------------------------------------------------- OPENGIST_TOKEN

#[test]
fn well_shaped_token_is_kept_and_redacted() {
    let loaded = ok(&[
        ("OPENGIST_URL", "https://gist.example.com"),
        ("OPENGIST_TOKEN", &format!(" {GOOD_TOKEN}\n")),
    ]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let token = loaded.config.token.clone().expect("token");
    assert_eq!(token.expose(), GOOD_TOKEN);
    assert_eq!(format!("{token:?}"), "<redacted>");
    assert_eq!(format!("{token}"), "<redacted>");
    let debug = format!("{:?}", loaded.config);
    assert!(!debug.contains(GOOD_TOKEN), "{debug}");
    assert!(!debug.contains("0123456789abcdef"), "{debug}");
}

#[test]
fn odd_token_shape_warns_without_echoing() {
    for odd in [
        CANARY.to_owned(),
        format!("og_{CANARY}"),
        format!("og_{}", "a".repeat(63)),
        format!("og_{}", "g".repeat(64)),
    ] {
        let loaded = ok(&[
            ("OPENGIST_URL", "https://gist.example.com"),
            ("OPENGIST_TOKEN", &odd),
        ]);
        assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("og_ followed by 64 hex"));
        assert!(!loaded.warnings[0].contains(&odd));
        assert_eq!(loaded.config.token.expect("kept").expose(), odd);
    }
}

#[test]
fn token_a_header_cannot_carry_is_refused_without_echoing() {
    for bad in [
        format!("og_{CANARY} more"),
        format!("og_{CANARY}\u{e9}"),
        format!("og_\t{CANARY}"),
    ] {
        let error = err(&[("OPENGIST_TOKEN", &bad)]);
        assert_eq!(error, ConfigError::TokenNotHeaderSafe);
        assert!(!error.to_string().contains(CANARY));
    }
}

#[test]
fn token_and_url_missing_each_other_warn() {
    let loaded = ok(&[("OPENGIST_TOKEN", GOOD_TOKEN)]);
    assert!(loaded.config.opengist_url.is_none());
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("OPENGIST_URL is not"));
    let loaded = ok(&[("OPENGIST_URL", "https://gist.example.com")]);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("OPENGIST_TOKEN is not"));
    let loaded = ok(&[("OPENGIST_TOKEN", "")]);
    assert!(loaded.config.token.is_none());
}

#[test]
fn secret_never_prints() {
    let secret = Secret::new(CANARY);
    assert_eq!(
        format!("{secret:?} {secret} {secret:#?}"),
        "<redacted> <redacted> <redacted>"
    );
    assert_eq!(secret.expose(), CANARY);
}

// ---------------------------------------------------------------- OPENGIST_READ_ONLY

#[test]
fn read_only_is_generous() {
    for yes in ["true", "1", "yes", "TRUE", "Yes", "yEs", " true "] {
        assert!(ok(&[("OPENGIST_READ_ONLY", yes)]).config.read_only, "{yes}");
    }
    for no in ["false", "0", "no", "FALSE", "No", ""] {
        assert!(!ok(&[("OPENGIST_READ_ONLY", no)]).config.read_only, "{no}");
    }
    for bad in ["on", "off", "2", "y", "n", "truee", CANARY] {
        let error = err(&[("OPENGIST_READ_ONLY", bad)]);
        assert_eq!(error, ConfigError::ReadOnly);
        let message = error.to_string();
        for accepted in ["true", "1", "yes", "false", "0", "no"] {
            assert!(message.contains(accepted), "{message}");
        }
        assert!(!message.contains(CANARY));
    }
}

#[test]
fn read_only_flag_wins_over_the_variable() {
    let args = cli(&["--read-only"]);
    for value in ["false", "garbage"] {
        let loaded = load_with(&args, &[("OPENGIST_READ_ONLY", value)]).expect("flag wins");
        assert!(loaded.config.read_only);
    }
}

// ---------------------------------------------------------------- tool lists

fn filter(
    allow: Option<&str>,
    deny: Option<&str>,
    read_only: bool,
) -> Result<Vec<String>, FilterError> {
    ToolFilter::parse(allow, deny).resolve(read_only)
}

#[test]
fn tool_lists_select() {
    assert_eq!(filter(None, None, false).expect("all").len(), 14);
    assert_eq!(filter(Some(""), Some(" , "), false).expect("all").len(), 14);
    assert_eq!(
        filter(None, None, true).expect("reading"),
        catalog::reading_names().collect::<Vec<_>>()
    );
    assert_eq!(
        filter(Some("essential"), None, false).expect("essential"),
        catalog::essential_names().collect::<Vec<_>>()
    );
    assert_eq!(
        filter(Some("get_*"), None, false).expect("prefix"),
        ["get_gist", "get_gist_file", "get_user"]
    );
    assert_eq!(
        filter(Some(" get_gist , fork_gist "), None, false).expect("exact"),
        ["get_gist", "fork_gist"]
    );
    assert_eq!(filter(Some("*"), None, false).expect("star").len(), 14);
}

#[test]
fn deny_wins_over_allow() {
    let kept = filter(Some("essential"), Some("delete_gist"), false).expect("six");
    assert_eq!(kept.len(), 6);
    assert!(!kept.contains(&"delete_gist".to_owned()));
    let kept = filter(None, Some("delete*"), false).expect("twelve");
    assert_eq!(kept.len(), 12);
    assert!(kept.iter().all(|name| !name.starts_with("delete")));
    let kept = filter(Some("get_gist"), Some("get_*"), false);
    assert!(matches!(kept, Err(FilterError::NothingLeft { .. })));
}

#[test]
fn read_only_keeps_only_reading_tools_even_when_allowed() {
    let kept = filter(Some("essential"), None, true).expect("reading part of essential");
    assert_eq!(
        kept,
        ["list_gists", "search_gists", "get_gist", "get_gist_file"]
    );
    // A deny entry naming a write tool is valid in read-only mode: the tool exists.
    assert_eq!(
        filter(None, Some("delete_gist"), true)
            .expect("eight")
            .len(),
        8
    );
    let error = filter(Some("create_gist"), None, true).expect_err("nothing left");
    assert!(matches!(error, FilterError::NothingLeft { .. }));
    assert!(error.to_string().contains("read-only"));
    assert_eq!(error.exit_code(), 1);
}

#[test]
fn an_entry_that_matches_nothing_is_named_with_the_real_names() {
    for (allow, deny, shown) in [
        (Some("get_gists"), None, "`get_gists`"),
        (Some("list_gists,nope_*"), None, "`nope_*`"),
        (None, Some("delete_everything"), "`delete_everything`"),
        (Some("essential,list_gist"), None, "`list_gist`"),
    ] {
        let error = filter(allow, deny, false).expect_err("no match");
        let message = error.to_string();
        assert!(message.contains(shown), "{message}");
        for name in catalog::names() {
            assert!(message.contains(name), "{message} lacks {name}");
        }
        let list = if allow.is_some() {
            "OPENGIST_ALLOW_TOOLS"
        } else {
            "OPENGIST_DENY_TOOLS"
        };
        assert!(message.contains(list), "{message}");
        assert_eq!(error.exit_code(), 1);
    }
}

#[test]
fn an_entry_that_is_not_name_shaped_is_redacted() {
    for (list, position) in [
        (CANARY.to_owned(), 1),
        (format!("list_gists, og_{CANARY}"), 2),
        (format!("list_gists,,  ,Get_Gist,{CANARY}"), 2),
        ("get-gist".to_owned(), 1),
        ("a".repeat(65), 1),
    ] {
        let error = filter(Some(&list), None, false).expect_err("no match");
        let message = error.to_string();
        assert!(
            message.contains(&format!("<entry #{position}>")),
            "{message}"
        );
        assert!(!message.contains(CANARY), "{message}");
        assert!(!message.contains("Get_Gist"), "{message}");
        let deny_error = filter(None, Some(&list), false).expect_err("no match");
        assert!(!deny_error.to_string().contains(CANARY));
    }
}

#[test]
fn tool_lists_come_from_variables_and_flags() {
    let loaded = ok(&[
        ("OPENGIST_ALLOW_TOOLS", "essential"),
        ("OPENGIST_DENY_TOOLS", "delete_gist"),
    ]);
    assert_eq!(loaded.config.tools.resolve(false).expect("six").len(), 6);
    let args = cli(&["--allow-tools", "get_gist", "--deny-tools", ""]);
    let loaded = load_with(
        &args,
        &[
            ("OPENGIST_ALLOW_TOOLS", "essential"),
            ("OPENGIST_DENY_TOOLS", "get_gist"),
        ],
    )
    .expect("flags win");
    assert_eq!(
        loaded.config.tools.resolve(false).expect("one"),
        ["get_gist"]
    );
}

// ---------------------------------------------------------------- OPENGIST_INSECURE_TLS

#[test]
fn insecure_tls_is_strict() {
    let loaded = ok(&[("OPENGIST_INSECURE_TLS", "true")]);
    assert!(loaded.config.insecure_tls);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        !ok(&[("OPENGIST_INSECURE_TLS", "false")])
            .config
            .insecure_tls
    );
    for bad in ["TRUE", "1", "yes", "", " true", "on", CANARY] {
        let error = err(&[("OPENGIST_INSECURE_TLS", bad)]);
        assert_eq!(error, ConfigError::InsecureTls, "{bad:?}");
        assert!(error.to_string().contains("`true`"));
        assert!(!error.to_string().contains(CANARY));
    }
    let loaded = load_with(
        &cli(&["--insecure-tls"]),
        &[("OPENGIST_INSECURE_TLS", "false")],
    )
    .expect("flag");
    assert!(loaded.config.insecure_tls);
}

// ---------------------------------------------------------------- the framework's settings
// Their parsers are the framework's, tested in ask-first-serve (tests/settings.rs). What is this
// server's own: its flags feed them and win over the variables, its messages name the variable
// and the flag, and a secret given as a flag is warned about without its value.

#[test]
fn every_serving_flag_feeds_its_setting_and_wins_over_the_variable() {
    use opengist_mcp::config::AuditLog;
    use opengist_mcp::http::HttpLimits;
    let pairs = [
        ("--http", "9001", "OPENGIST_MCP_HTTP_ADDR"),
        (
            "--http-token",
            "sixteen-chars-ok",
            "OPENGIST_MCP_HTTP_TOKEN",
        ),
        ("--seal-key", &"0a".repeat(32), "OPENGIST_MCP_SEAL_KEY"),
        ("--allowed-hosts", "a.example", "OPENGIST_MCP_ALLOWED_HOSTS"),
        (
            "--allowed-origins",
            "https://a.example",
            "OPENGIST_MCP_ALLOWED_ORIGINS",
        ),
        (
            "--http-header-timeout-secs",
            "3",
            "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS",
        ),
        (
            "--http-body-timeout-secs",
            "4",
            "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS",
        ),
        (
            "--http-max-connections",
            "5",
            "OPENGIST_MCP_HTTP_MAX_CONNECTIONS",
        ),
        ("--http-max-sessions", "6", "OPENGIST_MCP_HTTP_MAX_SESSIONS"),
        (
            "--http-session-idle-secs",
            "7",
            "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS",
        ),
        (
            "--redis-url",
            "redis://:CANARYsecret@127.0.0.1:1/0",
            "OPENGIST_MCP_REDIS_URL",
        ),
        ("--audit-log", "stderr", "OPENGIST_MCP_AUDIT_LOG"),
        ("--replica-id", "web-2", "OPENGIST_MCP_REPLICA_ID"),
    ];
    let flags: Vec<&str> = pairs
        .iter()
        .flat_map(|(flag, value, _)| [*flag, *value])
        .collect();
    // Every variable holds a value that would be refused: the flags must win.
    let vars: Vec<(&str, &str)> = pairs.iter().map(|(_, _, var)| (*var, "x y")).collect();
    let Loaded { config, warnings } = load_with(&cli(&flags), &vars).expect("flags win");
    let serve = &config.serve;
    assert_eq!(serve.http_addr.map(|a| a.port()), Some(9001));
    assert_eq!(
        serve.http_token.as_ref().map(Secret::expose),
        Some("sixteen-chars-ok")
    );
    assert!(serve.seal_key.is_some());
    assert_eq!(serve.allowed_hosts.len(), 1);
    assert_eq!(serve.allowed_origins.len(), 1);
    assert_eq!(
        serve.limits,
        HttpLimits {
            header_timeout: Duration::from_secs(3),
            body_timeout: Duration::from_secs(4),
            max_connections: 5,
            max_sessions: 6,
            session_idle: Duration::from_secs(7),
            ..HttpLimits::default()
        }
    );
    assert!(
        serve
            .redis_url
            .as_ref()
            .is_some_and(|u| u.expose().contains("127.0.0.1:1"))
    );
    assert_eq!(serve.audit_log, Some(AuditLog::Stderr));
    assert_eq!(serve.replica_id.as_deref(), Some("web-2"));
    // The three secrets given as flags are each warned about, never with their value.
    for flag in ["--seal-key", "--http-token", "--redis-url"] {
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(flag) && w.contains("(ps)")),
            "{flag}: {warnings:?}"
        );
    }
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for secret in ["sixteen-chars-ok", &"0a".repeat(32), CANARY] {
        assert!(!warnings.iter().any(|w| w.contains(secret)), "{warnings:?}");
        assert!(!format!("{config:?}").contains(secret));
    }
    // Positive control: without the flags, the same variables are refused.
    assert!(load(&vars).is_err());
}

#[test]
fn serving_messages_name_the_variable_and_its_flag() {
    for (var, bad, named) in [
        (
            "OPENGIST_MCP_HTTP_ADDR",
            "nope",
            "OPENGIST_MCP_HTTP_ADDR (--http)",
        ),
        (
            "OPENGIST_MCP_SEAL_KEY",
            "zz",
            "OPENGIST_MCP_SEAL_KEY (--seal-key)",
        ),
        (
            "OPENGIST_MCP_HTTP_TOKEN",
            "short",
            "OPENGIST_MCP_HTTP_TOKEN",
        ),
        (
            "OPENGIST_MCP_ALLOWED_HOSTS",
            "bad host",
            "OPENGIST_MCP_ALLOWED_HOSTS (--allowed-hosts)",
        ),
        (
            "OPENGIST_MCP_ALLOWED_ORIGINS",
            "ftp://x",
            "OPENGIST_MCP_ALLOWED_ORIGINS (--allowed-origins)",
        ),
        (
            "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS",
            "0",
            "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS (--http-header-timeout-secs)",
        ),
        (
            "OPENGIST_MCP_REDIS_URL",
            CANARY,
            "OPENGIST_MCP_REDIS_URL (--redis-url)",
        ),
        (
            "OPENGIST_MCP_AUDIT_LOG",
            "/var/log/",
            "OPENGIST_MCP_AUDIT_LOG (--audit-log)",
        ),
        (
            "OPENGIST_MCP_REPLICA_ID",
            "a b",
            "OPENGIST_MCP_REPLICA_ID (--replica-id)",
        ),
        (
            "OPENGIST_MCP_HTTP_MAX_DIALOGS",
            "0",
            "OPENGIST_MCP_HTTP_MAX_DIALOGS",
        ),
        (
            "OPENGIST_MCP_HTTP_NO_AUTH",
            "yes",
            "OPENGIST_MCP_HTTP_NO_AUTH",
        ),
        ("ELICITATION", "yes", "ELICITATION"),
    ] {
        let error = err(&[(var, bad)]);
        assert!(matches!(error, ConfigError::Serving(_)), "{var}: {error:?}");
        let text = error.to_string();
        assert!(
            text.starts_with(named) || text.contains(named),
            "{var}: {text}"
        );
        assert!(!text.contains(CANARY), "{text}");
    }
    // The stream cap's message names the connection cap with its flag.
    let text = err(&[
        ("OPENGIST_MCP_HTTP_MAX_CONNECTIONS", "8"),
        ("OPENGIST_MCP_HTTP_MAX_STREAMS", "8"),
    ])
    .to_string();
    assert!(
        text.contains("OPENGIST_MCP_HTTP_MAX_STREAMS") && text.contains("--http-max-connections"),
        "{text}"
    );
    // A public address needs the bearer secret, before anything starts (`doctor` included).
    let text = err(&[("OPENGIST_MCP_HTTP_ADDR", "0.0.0.0:8080")]).to_string();
    assert!(text.contains("not a loopback address") && text.contains("OPENGIST_MCP_HTTP_TOKEN"));
    // Positive control: every one of those values is this server's variable to read.
    assert!(load(&[("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:1")]).is_ok());
}

// ---------------------------------------------------------------- numbers

#[test]
fn max_result_bytes_range() {
    let v = "OPENGIST_MCP_MAX_RESULT_BYTES";
    assert_eq!(ok(&[(v, "4096")]).config.max_result_bytes, 4096);
    assert_eq!(ok(&[(v, "8388608")]).config.max_result_bytes, 8_388_608);
    assert_eq!(ok(&[(v, " 100000 ")]).config.max_result_bytes, 100_000);
    for (bad, out_of_range) in [
        ("4095", true),
        ("8388609", true),
        ("0", true),
        ("abc", false),
        ("-1", false),
        ("1e6", false),
        ("99999999999999999999999", false),
    ] {
        let error = err(&[(v, bad)]);
        let message = error.to_string();
        assert!(
            message.contains(v) && message.contains("--max-result-bytes"),
            "{message}"
        );
        assert!(
            message.contains("4096") && message.contains("8388608"),
            "{message}"
        );
        assert_eq!(
            matches!(error, ConfigError::OutOfRange { .. }),
            out_of_range,
            "{bad}"
        );
        assert_eq!(
            matches!(error, ConfigError::NotANumber { .. }),
            !out_of_range,
            "{bad}"
        );
    }
    let loaded = load_with(&cli(&["--max-result-bytes", "5000"]), &[(v, "1")]).expect("flag wins");
    assert_eq!(loaded.config.max_result_bytes, 5000);
}

#[test]
fn cache_bytes_range() {
    let v = "OPENGIST_MCP_CACHE_BYTES";
    assert_eq!(
        ok(&[(v, "0")]).config.cache_bytes,
        0,
        "0 turns the cache off"
    );
    assert_eq!(ok(&[(v, " 1048576 ")]).config.cache_bytes, 1_048_576);
    assert_eq!(ok(&[(v, "4294967296")]).config.cache_bytes, 4_294_967_296);
    for (bad, out_of_range) in [("4294967297", true), ("-1", false), ("64MiB", false)] {
        let error = err(&[(v, bad)]);
        let message = error.to_string();
        assert!(
            message.contains(v) && message.contains("--cache-bytes"),
            "{message}"
        );
        assert!(message.contains("4294967296"), "{message}");
        assert_eq!(
            matches!(error, ConfigError::OutOfRange { .. }),
            out_of_range,
            "{bad}"
        );
    }
    let loaded = load_with(&cli(&["--cache-bytes", "5000"]), &[(v, "1")]).expect("flag wins");
    assert_eq!(loaded.config.cache_bytes, 5000);
}

#[test]
fn timeouts() {
    let dialog = "OPENGIST_MCP_DIALOG_TIMEOUT_SECS";
    let request = "OPENGIST_MCP_REQUEST_TIMEOUT_SECS";
    let loaded = ok(&[(dialog, "1"), (request, "3600")]);
    assert_eq!(loaded.config.dialog_timeout, Duration::from_secs(1));
    assert_eq!(loaded.config.request_timeout, Duration::from_secs(3600));
    assert_eq!(
        ok(&[(dialog, "86400")]).config.dialog_timeout,
        Duration::from_secs(86_400)
    );
    for (var, bad) in [
        (dialog, "0"),
        (dialog, "86401"),
        (dialog, "ten"),
        (request, "0"),
        (request, "3601"),
        (request, "1.5"),
    ] {
        let error = err(&[(var, bad)]);
        assert!(error.to_string().contains(var), "{error}");
    }
    let args = cli(&["--dialog-timeout-secs", "5", "--request-timeout-secs", "6"]);
    let loaded = load_with(&args, &[(dialog, "x"), (request, "y")]).expect("flags win");
    assert_eq!(loaded.config.dialog_timeout, Duration::from_secs(5));
    assert_eq!(loaded.config.request_timeout, Duration::from_secs(6));
}

#[test]
fn limits_on_requests_to_opengist() {
    let all = "OPENGIST_MCP_OPENGIST_MAX_REQUESTS";
    let per = "OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL";
    let queue = "OPENGIST_MCP_OPENGIST_QUEUE_SECS";
    let limits = ok(&[(all, "1"), (per, "1024"), (queue, "3600")])
        .config
        .opengist_limits;
    assert_eq!(limits.max_in_flight, 1);
    assert_eq!(limits.per_principal, 1024);
    assert_eq!(limits.queue_wait, Duration::from_secs(3600));
    for (var, bad) in [
        (all, "0"),
        (all, "1025"),
        (per, "0"),
        (per, "many"),
        (queue, "0"),
        (queue, "3601"),
    ] {
        let error = err(&[(var, bad)]);
        assert!(error.to_string().contains(var), "{error}");
    }
    let args = cli(&[
        "--opengist-max-requests",
        "3",
        "--opengist-max-requests-per-principal",
        "2",
        "--opengist-queue-secs",
        "7",
    ]);
    let limits = load_with(&args, &[(all, "x"), (per, "y"), (queue, "z")])
        .expect("flags win")
        .config
        .opengist_limits;
    assert_eq!(
        (
            limits.max_in_flight,
            limits.per_principal,
            limits.queue_wait
        ),
        (3, 2, Duration::from_secs(7))
    );
}

#[test]
fn http_only_settings_on_stdio_warn() {
    let loaded = ok(&[("OPENGIST_MCP_ALLOWED_HOSTS", "a.example")]);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("ignored on stdio"));
}

// ---------------------------------------------------------------- no value is ever echoed

#[test]
fn no_error_message_echoes_a_value() {
    let vars = [
        "OPENGIST_URL",
        "OPENGIST_TOKEN",
        "OPENGIST_READ_ONLY",
        "OPENGIST_INSECURE_TLS",
        "ELICITATION",
        "OPENGIST_MCP_HTTP_ADDR",
        "OPENGIST_MCP_SEAL_KEY",
        "OPENGIST_MCP_HTTP_TOKEN",
        "OPENGIST_MCP_MAX_RESULT_BYTES",
        "OPENGIST_MCP_ALLOWED_HOSTS",
        "OPENGIST_MCP_ALLOWED_ORIGINS",
        "OPENGIST_MCP_DIALOG_TIMEOUT_SECS",
        "OPENGIST_MCP_REQUEST_TIMEOUT_SECS",
        "OPENGIST_MCP_OPENGIST_MAX_REQUESTS",
        "OPENGIST_MCP_OPENGIST_MAX_REQUESTS_PER_PRINCIPAL",
        "OPENGIST_MCP_OPENGIST_QUEUE_SECS",
        "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS",
        "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS",
        "OPENGIST_MCP_HTTP_MAX_CONNECTIONS",
        "OPENGIST_MCP_HTTP_MAX_SESSIONS",
        "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS",
        "OPENGIST_MCP_CACHE_BYTES",
    ];
    for var in vars {
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
                    assert_eq!(error.exit_code(), 1);
                }
                Ok(loaded) => {
                    for warning in &loaded.warnings {
                        assert!(!warning.contains(CANARY), "{var}: {warning}");
                    }
                    let debug = format!("{:?}", loaded.config);
                    // A well-formed URL is shown in Debug (it was accepted); nothing else is.
                    if var != "OPENGIST_URL" {
                        assert!(!debug.contains(CANARY), "{var}: {debug}");
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the command line

#[test]
fn every_flag_parses() {
    let args = cli(&[
        "--http",
        "127.0.0.1:1",
        "--read-only",
        "--allow-tools",
        "a",
        "--deny-tools",
        "b",
        "--insecure-tls",
        "--seal-key",
        "k",
        "--http-token",
        "t",
        "--max-result-bytes",
        "5000",
        "--allowed-hosts",
        "h",
        "--allowed-origins",
        "o",
        "--dialog-timeout-secs",
        "5",
        "--request-timeout-secs",
        "6",
        "--cache-bytes",
        "7",
    ]);
    let flag = |var| args.flags.get(var);
    assert_eq!(flag("OPENGIST_MCP_HTTP_ADDR"), Some("127.0.0.1:1"));
    assert_eq!(flag("OPENGIST_READ_ONLY"), Some("true"));
    assert_eq!(flag("OPENGIST_INSECURE_TLS"), Some("true"));
    assert_eq!(flag("OPENGIST_ALLOW_TOOLS"), Some("a"));
    assert_eq!(flag("OPENGIST_DENY_TOOLS"), Some("b"));
    assert_eq!(flag("OPENGIST_MCP_SEAL_KEY"), Some("k"));
    assert_eq!(flag("OPENGIST_MCP_HTTP_TOKEN"), Some("t"));
    assert_eq!(flag("OPENGIST_MCP_MAX_RESULT_BYTES"), Some("5000"));
    assert_eq!(flag("OPENGIST_MCP_ALLOWED_HOSTS"), Some("h"));
    assert_eq!(flag("OPENGIST_MCP_ALLOWED_ORIGINS"), Some("o"));
    assert_eq!(flag("OPENGIST_MCP_DIALOG_TIMEOUT_SECS"), Some("5"));
    assert_eq!(flag("OPENGIST_MCP_REQUEST_TIMEOUT_SECS"), Some("6"));
    assert_eq!(flag("OPENGIST_MCP_CACHE_BYTES"), Some("7"));
    assert_eq!(args.command, None);
}

#[test]
fn doctor_subcommand_takes_the_same_flags() {
    let args = cli(&["doctor", "--read-only", "--http", "8080"]);
    assert_eq!(args.command, Some(Command::Doctor));
    assert_eq!(args.flags.get("OPENGIST_READ_ONLY"), Some("true"));
    assert_eq!(args.flags.get("OPENGIST_MCP_HTTP_ADDR"), Some("8080"));
    let args = cli(&["--insecure-tls", "doctor"]);
    assert_eq!(args.command, Some(Command::Doctor));
    assert_eq!(args.flags.get("OPENGIST_INSECURE_TLS"), Some("true"));
}

#[test]
fn there_is_no_token_flag() {
    for flag in ["--token", "--opengist-token"] {
        let error =
            CliArgs::try_parse_from(["opengist-mcp", flag, GOOD_TOKEN]).expect_err("no such flag");
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}

#[test]
fn version_and_help() {
    let error = CliArgs::try_parse_from(["opengist-mcp", "--version"]).expect_err("prints");
    assert_eq!(error.kind(), clap::error::ErrorKind::DisplayVersion);
    assert!(error.to_string().contains(env!("CARGO_PKG_VERSION")));

    // The help the binary prints: each flag's `[env: ...]` and `[default: ...]` made from the
    // declaration of its setting.
    let error = CliArgs::command()
        .try_get_matches_from(["opengist-mcp", "--help"])
        .expect_err("prints");
    assert_eq!(error.kind(), clap::error::ErrorKind::DisplayHelp);
    let help = error.to_string();
    // A quick start first, then every declared setting, flag or variable.
    assert!(help.starts_with("Quick start:"), "{help}");
    assert!(
        help.contains("\nMCP server for Opengist, with a confirmation guard"),
        "{help}"
    );
    for setting in opengist_mcp::config::SETTINGS {
        assert!(
            help.contains(setting.var),
            "--help lacks {}:\n{help}",
            setting.var
        );
    }
    for needle in [
        "[default: 67108864 (64 MiB)]",
        "[default: 262144]",
        "[default: 600]",
        "[default: 30]",
        "doctor",
        "client-config",
        // The non-loopback rule, per authentication mode.
        "secret (default)  needs OPENGIST_MCP_HTTP_TOKEN",
        "none              refused: loopback only",
    ] {
        // clap wraps lines at the terminal's width: compare with the whitespace collapsed.
        let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat(&help).contains(&flat(needle)),
            "--help lacks {needle}:\n{help}"
        );
    }
}

// ---------------------------------------------------------------- the real environment

/// Runs in a child process (see below) so that it is the only thread touching the environment.
#[test]
fn child_from_process_removes_the_token() {
    if std::env::var_os("OPENGIST_MCP_TEST_CHILD").is_none() {
        return;
    }
    // SAFETY: this test runs alone in its own process (`--exact`, one test thread), started by
    // `from_process_removes_the_token`; nothing else reads or writes the environment.
    let loaded = unsafe { Config::from_process(&CliArgs::default().flags) }.expect("valid");
    assert_eq!(
        loaded.config.token.as_ref().map(Secret::expose),
        Some(GOOD_TOKEN)
    );
    assert!(
        std::env::var_os("OPENGIST_TOKEN").is_none(),
        "the token is still in the environment"
    );
    assert_eq!(
        loaded.config.opengist_url.as_ref().map(OpengistUrl::as_str),
        Some("https://gist.example.com")
    );
    assert!(!loaded.config.serve.elicitation);
}

#[test]
fn from_process_removes_the_token() {
    let exe = std::env::current_exe().expect("test binary");
    let output = std::process::Command::new(exe)
        .args([
            "--exact",
            "child_from_process_removes_the_token",
            "--test-threads=1",
        ])
        .env("OPENGIST_MCP_TEST_CHILD", "1")
        .env("OPENGIST_TOKEN", GOOD_TOKEN)
        .env("OPENGIST_URL", "https://gist.example.com/api/")
        .env("ELICITATION", "false")
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
fn the_team_mode_needs_the_url_and_no_token_of_its_own() {
    use opengist_mcp::config::AuthMode;
    let url = ("OPENGIST_URL", "https://gist.example.com");
    let team = ("OPENGIST_MCP_HTTP_AUTH", "opengist");
    let http = ("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:8765");
    let Loaded { config, warnings } = ok(&[url, team, http]);
    assert!(config.serves_team());
    assert_eq!(config.serve.auth.mode, AuthMode::Server("opengist".into()));
    assert!(
        warnings.iter().all(|w| !w.contains("OPENGIST_TOKEN")),
        "no OPENGIST_TOKEN is asked for: {warnings:?}"
    );
    // A non-loopback address needs no shared secret in this mode.
    let wide = ("OPENGIST_MCP_HTTP_ADDR", "0.0.0.0:8765");
    assert!(ok(&[url, team, wide]).config.serves_team());
    // Positive control: in the default mode it does.
    assert!(
        err(&[url, wide])
            .to_string()
            .contains("not a loopback address")
    );
    // A configured token is not used, and said so.
    let Loaded { config, warnings } = ok(&[url, team, http, ("OPENGIST_TOKEN", GOOD_TOKEN)]);
    assert!(config.serves_team());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("OPENGIST_TOKEN is set but not used")),
        "{warnings:?}"
    );
    // Without OPENGIST_URL it cannot start, and says what to set.
    let e = err(&[team, http]);
    assert!(matches!(e, ConfigError::TeamNeedsUrl), "{e}");
    assert!(e.to_string().contains("OPENGIST_URL"));
    // A shared secret contradicts it, by name (the framework's parser).
    let e = err(&[
        url,
        team,
        http,
        ("OPENGIST_MCP_HTTP_TOKEN", "0123456789abcdef0123"),
    ]);
    assert!(e.to_string().contains("OPENGIST_MCP_HTTP_TOKEN"), "{e}");
    // On stdio the setting does not apply.
    let Loaded { config, warnings } = ok(&[url, team, ("OPENGIST_TOKEN", GOOD_TOKEN)]);
    assert!(!config.serves_team());
    assert!(
        warnings.iter().any(|w| w.contains("only applies to HTTP")),
        "{warnings:?}"
    );
    // The framework's other modes parse for this server too; an unknown one names them all.
    let tokens = ok(&[
        ("OPENGIST_MCP_HTTP_AUTH", "tokens"),
        ("OPENGIST_MCP_HTTP_TOKENS_FILE", "/etc/opengist-mcp/tokens"),
    ]);
    assert_eq!(tokens.config.serve.auth.mode, AuthMode::Tokens);
    let e = err(&[("OPENGIST_MCP_HTTP_AUTH", "github")]);
    assert!(e.to_string().contains("`opengist`"), "{e}");
}
