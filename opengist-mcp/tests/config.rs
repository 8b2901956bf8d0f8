//! Configuration: every variable, every flag, every bad value, and the rule that no message
//! echoes a value that might be secret.

mod loading;
use loading::{load, load_with};

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use opengist_mcp::catalog;
use opengist_mcp::cli::{CliArgs, Command};
use opengist_mcp::config::{
    AllowedHost, AllowedOrigin, Config, ConfigError, FilterError, Loaded, OpengistUrl, OriginPort,
    Secret, ToolFilter,
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
    assert!(config.elicitation);
    assert!(!config.seal_key_configured);
    assert!(config.http_addr.is_none());
    assert!(config.http_token.is_none());
    assert_eq!(config.max_result_bytes, 262_144);
    assert!(config.allowed_hosts.is_empty());
    assert!(config.allowed_origins.is_empty());
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

// ---------------------------------------------------------------- ELICITATION

#[test]
fn elicitation_is_strict_and_names_both_values() {
    assert!(ok(&[("ELICITATION", "true")]).config.elicitation);
    assert!(!ok(&[("ELICITATION", "false")]).config.elicitation);
    for bad in [
        "", "1", "0", "off", "on", "yes", "no", "TRUE", "False", " true", CANARY,
    ] {
        let error = err(&[("ELICITATION", bad)]);
        assert!(matches!(error, ConfigError::Elicitation(_)), "{bad:?}");
        let message = error.to_string();
        assert!(
            message.contains("`true`") && message.contains("`false`"),
            "{message}"
        );
        assert!(message.contains("ELICITATION"));
        assert!(!message.contains(CANARY));
    }
}

// ---------------------------------------------------------------- OPENGIST_MCP_SEAL_KEY

#[test]
fn seal_key_accepts_hex_and_base64() {
    use base64::Engine as _;
    let bytes = [7u8; 32];
    let engines = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let mut encodings: Vec<String> = engines.iter().map(|e| e.encode([0xfbu8; 48])).collect();
    encodings.push("07".repeat(32));
    encodings.push("AB".repeat(40));
    encodings.push(base64::engine::general_purpose::STANDARD.encode(bytes));
    for key in encodings {
        let loaded = ok(&[("OPENGIST_MCP_SEAL_KEY", &key)]);
        assert!(loaded.config.seal_key_configured, "{key}");
        assert!(!format!("{:?}", loaded.config).contains(&key));
    }
}

#[test]
fn seal_key_refusals() {
    let error = err(&[("OPENGIST_MCP_SEAL_KEY", &"ab".repeat(31))]);
    assert_eq!(error, ConfigError::SealKeyTooShort { bytes: 31 });
    assert!(error.to_string().contains("openssl rand -hex 32"));
    for bad in [format!("{CANARY}!!"), format!("zz{CANARY}")] {
        let error = err(&[("OPENGIST_MCP_SEAL_KEY", &bad)]);
        assert_eq!(error, ConfigError::SealKeyEncoding, "{bad}");
        assert!(!error.to_string().contains(CANARY));
    }
    // base64 of 24 bytes (not hex: `Q` is no hex digit): decodes, too short.
    let error = err(&[("OPENGIST_MCP_SEAL_KEY", &"QQ".repeat(16))]);
    assert_eq!(error, ConfigError::SealKeyTooShort { bytes: 24 });
}

#[test]
fn seal_key_flag_wins_and_warns() {
    let args = cli(&["--seal-key", &"0a".repeat(32)]);
    let loaded = load_with(&args, &[("OPENGIST_MCP_SEAL_KEY", "bad")]).expect("flag wins");
    assert!(loaded.config.seal_key_configured);
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("--seal-key") && w.contains("ps"))
    );
    assert!(!loaded.warnings.iter().any(|w| w.contains(&"0a".repeat(32))));
}

// ---------------------------------------------------------------- HTTP address and token

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
        let loaded = ok(&[("OPENGIST_MCP_HTTP_ADDR", raw)]);
        let expected: SocketAddr = expected.parse().expect("test address");
        assert_eq!(loaded.config.http_addr, Some(expected), "{raw}");
    }
    for bad in [
        "nope",
        "127.0.0.1",
        "localhost",
        "70000",
        "example.com:80",
        CANARY,
    ] {
        let error = err(&[("OPENGIST_MCP_HTTP_ADDR", bad)]);
        assert_eq!(error, ConfigError::HttpAddr, "{bad}");
        assert!(!error.to_string().contains(CANARY));
    }
    let loaded = load_with(
        &cli(&["--http", "9001"]),
        &[("OPENGIST_MCP_HTTP_ADDR", "nope")],
    )
    .expect("flag wins");
    assert_eq!(loaded.config.http_addr.map(|a| a.port()), Some(9001));
}

#[test]
fn non_loopback_needs_a_bearer_secret() {
    for addr in ["0.0.0.0:8080", "[::]:8080", "192.0.2.1:8080"] {
        let error = err(&[("OPENGIST_MCP_HTTP_ADDR", addr)]);
        assert!(
            matches!(error, ConfigError::HttpTokenRequired { .. }),
            "{addr}"
        );
        assert!(error.to_string().contains("OPENGIST_MCP_HTTP_TOKEN"));
        let loaded = ok(&[
            ("OPENGIST_MCP_HTTP_ADDR", addr),
            ("OPENGIST_MCP_HTTP_TOKEN", "0123456789abcdef"),
        ]);
        assert_eq!(
            loaded.config.http_token.as_ref().map(Secret::expose),
            Some("0123456789abcdef")
        );
        assert!(!format!("{:?}", loaded.config).contains("0123456789abcdef"));
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
        let error = err(&[("OPENGIST_MCP_HTTP_TOKEN", bad)]);
        assert_eq!(error, ConfigError::HttpToken, "{bad}");
        assert!(!error.to_string().contains(CANARY));
        assert!(!error.to_string().contains(bad));
    }
    let args = cli(&["--http-token", "sixteen-chars-ok"]);
    let loaded = load_with(&args, &[("OPENGIST_MCP_HTTP_TOKEN", "bad")]).expect("flag wins");
    assert_eq!(
        loaded.config.http_token.as_ref().map(Secret::expose),
        Some("sixteen-chars-ok")
    );
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("--http-token") && w.contains("ps"))
    );
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| w.contains("sixteen-chars-ok"))
    );
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
fn http_limits() {
    use opengist_mcp::http::HttpLimits;
    let defaults = ok(&[]).config.http_limits;
    assert_eq!(defaults, HttpLimits::default());
    assert_eq!(defaults.header_timeout, Duration::from_secs(10));
    assert_eq!(defaults.body_timeout, Duration::from_secs(30));
    assert_eq!(defaults.max_connections, 256);
    assert_eq!(defaults.max_sessions, 512);
    assert_eq!(defaults.session_idle, Duration::from_secs(300));

    let header = "OPENGIST_MCP_HTTP_HEADER_TIMEOUT_SECS";
    let body = "OPENGIST_MCP_HTTP_BODY_TIMEOUT_SECS";
    let connections = "OPENGIST_MCP_HTTP_MAX_CONNECTIONS";
    let sessions = "OPENGIST_MCP_HTTP_MAX_SESSIONS";
    let idle = "OPENGIST_MCP_HTTP_SESSION_IDLE_SECS";
    let limits = ok(&[
        (header, "1"),
        (body, "3600"),
        (connections, "65536"),
        (sessions, "1"),
        (idle, "86400"),
    ])
    .config
    .http_limits;
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
    let args = cli(&[
        "--http-header-timeout-secs",
        "3",
        "--http-body-timeout-secs",
        "4",
        "--http-max-connections",
        "5",
        "--http-max-sessions",
        "6",
        "--http-session-idle-secs",
        "7",
    ]);
    let env = [
        (header, "x"),
        (body, "x"),
        (connections, "x"),
        (sessions, "x"),
        (idle, "x"),
    ];
    let limits = load_with(&args, &env)
        .expect("flags win")
        .config
        .http_limits;
    assert_eq!(
        limits,
        HttpLimits {
            header_timeout: Duration::from_secs(3),
            body_timeout: Duration::from_secs(4),
            max_connections: 5,
            max_sessions: 6,
            session_idle: Duration::from_secs(7),
            ..HttpLimits::default()
        }
    );
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

// ---------------------------------------------------------------- allowed hosts and origins

#[test]
fn allowed_hosts() {
    let loaded = ok(&[
        ("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:8080"),
        (
            "OPENGIST_MCP_ALLOWED_HOSTS",
            "MCP.example.com, mcp.example.com:8443,,[::1]:9,10.0.0.1",
        ),
    ]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let hosts = loaded.config.allowed_hosts;
    assert_eq!(
        hosts,
        [
            AllowedHost {
                host: "mcp.example.com".into(),
                port: None
            },
            AllowedHost {
                host: "mcp.example.com".into(),
                port: Some(8443)
            },
            AllowedHost {
                host: "::1".into(),
                port: Some(9)
            },
            AllowedHost {
                host: "10.0.0.1".into(),
                port: None
            },
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
        let error = err(&[("OPENGIST_MCP_ALLOWED_HOSTS", list)]);
        assert_eq!(error, ConfigError::AllowedHost { position }, "{list}");
        assert!(error.to_string().contains(&format!("entry #{position}")));
    }
    let loaded = load_with(
        &cli(&["--allowed-hosts", "a.example"]),
        &[("OPENGIST_MCP_ALLOWED_HOSTS", "bad host")],
    )
    .expect("flag wins");
    assert_eq!(loaded.config.allowed_hosts.len(), 1);
}

#[test]
fn allowed_origins() {
    let loaded = ok(&[
        ("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:8080"),
        (
            "OPENGIST_MCP_ALLOWED_ORIGINS",
            "https://App.example.com, http://app.example.com, https://x.example:*, null, http://[::1]:3000/",
        ),
    ]);
    let origins = loaded.config.allowed_origins;
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
        let error = err(&[("OPENGIST_MCP_ALLOWED_ORIGINS", list)]);
        assert_eq!(error, ConfigError::AllowedOrigin { position }, "{list}");
    }
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
    assert_eq!(args.http.as_deref(), Some("127.0.0.1:1"));
    assert!(args.read_only && args.insecure_tls);
    assert_eq!(args.allow_tools.as_deref(), Some("a"));
    assert_eq!(args.deny_tools.as_deref(), Some("b"));
    assert_eq!(args.seal_key.as_deref(), Some("k"));
    assert_eq!(args.http_token.as_deref(), Some("t"));
    assert_eq!(args.max_result_bytes.as_deref(), Some("5000"));
    assert_eq!(args.allowed_hosts.as_deref(), Some("h"));
    assert_eq!(args.allowed_origins.as_deref(), Some("o"));
    assert_eq!(args.dialog_timeout_secs.as_deref(), Some("5"));
    assert_eq!(args.request_timeout_secs.as_deref(), Some("6"));
    assert_eq!(args.cache_bytes.as_deref(), Some("7"));
    assert_eq!(args.command, None);
}

#[test]
fn doctor_subcommand_takes_the_same_flags() {
    let args = cli(&["doctor", "--read-only", "--http", "8080"]);
    assert_eq!(args.command, Some(Command::Doctor));
    assert!(args.read_only);
    let args = cli(&["--insecure-tls", "doctor"]);
    assert_eq!(args.command, Some(Command::Doctor));
    assert!(args.insecure_tls);
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

    let error = CliArgs::try_parse_from(["opengist-mcp", "--help"]).expect_err("prints");
    assert_eq!(error.kind(), clap::error::ErrorKind::DisplayHelp);
    let help = error.to_string();
    for needle in [
        "OPENGIST_URL",
        "OPENGIST_TOKEN",
        "ELICITATION",
        "RUST_LOG",
        "OPENGIST_READ_ONLY",
        "OPENGIST_ALLOW_TOOLS",
        "OPENGIST_DENY_TOOLS",
        "OPENGIST_INSECURE_TLS",
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
        "[default: 67108864]",
        "[default: 262144]",
        "[default: 600]",
        "[default: 30]",
        "doctor",
        "(ps)",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
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
    let loaded = unsafe { Config::from_process(&CliArgs::default()) }.expect("valid");
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
    assert!(!loaded.config.elicitation);
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
fn http_bounds_are_read_under_this_servers_names() {
    use opengist_mcp::http::limits::HttpBounds;
    assert_eq!(ok(&[]).config.http_limits.bounds, HttpBounds::default());
    let bounds = ok(&[
        ("OPENGIST_MCP_HTTP_DIALOGS_PER_SESSION", "2"),
        ("OPENGIST_MCP_HTTP_MAX_STREAMS", "10"),
        ("OPENGIST_MCP_HTTP_STREAM_IDLE_SECS", "9"),
    ])
    .config
    .http_limits
    .bounds;
    assert_eq!(bounds.dialogs_per_session, 2);
    assert_eq!(bounds.max_streams, Some(10));
    assert_eq!(bounds.stream_idle, Duration::from_secs(9));
    let error = err(&[("OPENGIST_MCP_HTTP_MAX_DIALOGS", "0")]);
    assert!(
        error.to_string().contains("OPENGIST_MCP_HTTP_MAX_DIALOGS"),
        "{error}"
    );
    let error = err(&[
        ("OPENGIST_MCP_HTTP_MAX_CONNECTIONS", "8"),
        ("OPENGIST_MCP_HTTP_MAX_STREAMS", "8"),
    ]);
    let text = error.to_string();
    assert!(
        text.contains("OPENGIST_MCP_HTTP_MAX_STREAMS") && text.contains("--http-max-connections"),
        "{text}"
    );
}

#[test]
fn the_no_authentication_switch_is_strict_and_off_by_default() {
    let loaded = load(&[]).expect("defaults");
    assert!(!loaded.config.http_no_auth);
    assert!(loaded.config.state_dir.is_none());
    let loaded = load(&[
        ("OPENGIST_MCP_HTTP_NO_AUTH", "true"),
        ("OPENGIST_MCP_STATE_DIR", "/var/lib/opengist-mcp"),
    ])
    .expect("both set");
    assert!(loaded.config.http_no_auth);
    assert_eq!(
        loaded.config.state_dir.as_deref(),
        Some(std::path::Path::new("/var/lib/opengist-mcp"))
    );
    for bad in ["1", "yes", "TRUE", ""] {
        let error = err(&[("OPENGIST_MCP_HTTP_NO_AUTH", bad)]);
        assert_eq!(error, ConfigError::HttpNoAuth, "{bad:?}");
        assert!(error.to_string().contains("OPENGIST_MCP_HTTP_NO_AUTH"));
    }
}

#[test]
fn the_team_mode_needs_the_url_and_no_token_of_its_own() {
    use opengist_mcp::config::AuthMode;
    let url = ("OPENGIST_URL", "https://gist.example.com");
    let team = ("OPENGIST_MCP_HTTP_AUTH", "opengist");
    let http = ("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:8765");
    let Loaded { config, warnings } = ok(&[url, team, http]);
    assert!(config.serves_team());
    assert_eq!(config.http_auth.mode, AuthMode::Server("opengist".into()));
    assert!(
        warnings.iter().all(|w| !w.contains("OPENGIST_TOKEN")),
        "no OPENGIST_TOKEN is asked for: {warnings:?}"
    );
    // A non-loopback address needs no shared secret in this mode.
    let wide = ("OPENGIST_MCP_HTTP_ADDR", "0.0.0.0:8765");
    assert!(ok(&[url, team, wide]).config.serves_team());
    // Positive control: in the default mode it does.
    assert!(matches!(
        err(&[url, wide]),
        ConfigError::HttpTokenRequired { .. }
    ));
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
    assert_eq!(tokens.config.http_auth.mode, AuthMode::Tokens);
    let e = err(&[("OPENGIST_MCP_HTTP_AUTH", "github")]);
    assert!(e.to_string().contains("`opengist`"), "{e}");
}
