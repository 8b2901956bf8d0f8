//! `opengist-mcp doctor`, run as a person would: one line per check, a fix for each failure,
//! exit code 0 only when nothing failed, and never the token in its output.

use std::process::{Command, Output};

const TOKEN: &str = "og_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn doctor(env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_opengist-mcp"));
    command
        .arg("doctor")
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the binary runs")
}

fn all_output(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn without_a_url_it_fails_and_says_how_to_fix_it() {
    let output = doctor(&[]);
    let text = all_output(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL url: OPENGIST_URL is not set; fix:"),
        "{text}"
    );
    assert!(text.contains("ok   elicitation"), "{text}");
    assert!(text.trim_end().ends_with("some checks failed"), "{text}");
}

#[test]
fn an_unreachable_instance_is_named_and_the_token_never_shown() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let url = format!("http://{addr}");
    let output = doctor(&[
        ("OPENGIST_URL", &url),
        ("OPENGIST_TOKEN", TOKEN),
        ("ELICITATION", "false"),
        ("RUST_LOG", "trace"),
    ]);
    let text = all_output(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("ok   url"), "{text}");
    assert!(text.contains("FAIL reachable"), "{text}");
    assert!(
        text.contains(&addr.to_string()),
        "the failure names the instance: {text}"
    );
    assert!(
        text.contains("warn elicitation: ELICITATION=false"),
        "{text}"
    );
    assert!(!text.contains(&TOKEN[3..20]), "the token leaked: {text}");
}

#[test]
fn a_bad_elicitation_value_stops_before_any_check() {
    let output = doctor(&[("ELICITATION", "yes")]);
    let text = all_output(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("`true`") && text.contains("`false`"),
        "{text}"
    );
    assert!(!text.contains("FAIL url"), "{text}");
}
