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
fn it_shows_the_effective_mode_and_names_misspelled_settings() {
    let output = doctor(&[
        ("OPENGIST_READONLY", "true"),
        ("OPENGIST_MCP_READ_ONLY", "true"),
        ("OPENGIST_TOKNE", TOKEN),
        ("OPENGIST_MCP_HTTP_ADDR", "127.0.0.1:0"),
        ("OPENGIST_MCP_HTTP_AUTH", "tokens"),
        ("OPENGIST_MCP_HTTP_TOKENS_FILE", "/nonexistent/tokens"),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    for (given, meant) in [
        ("OPENGIST_READONLY", "OPENGIST_READ_ONLY"),
        ("OPENGIST_MCP_READ_ONLY", "OPENGIST_READ_ONLY"),
        ("OPENGIST_TOKNE", "OPENGIST_TOKEN"),
    ] {
        let line = format!(
            "{given} is set but is no setting of this server, so it does nothing; did you mean {meant}?"
        );
        // On stdout as doctor's own failure, with the fix; on stderr as the start-up warning.
        assert!(
            stdout.contains(&format!(
                "FAIL setting: {line}; fix: rename it to the setting you meant, or unset it"
            )),
            "{stdout}"
        );
        assert!(stderr.contains(&line), "{stderr}");
    }
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        !stdout.contains(&TOKEN[3..20]) && !stderr.contains(&TOKEN[3..20]),
        "the token leaked"
    );
    // The misspelled switch did nothing: read-only is off, and every tool is enabled.
    assert!(stdout.contains("ok   read-only: off"), "{stdout}");
    let all = opengist_mcp::catalog::names().count();
    assert!(
        stdout.contains(&format!("ok   tools: {all} of {all} enabled: ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok   serving: streamable HTTP at http://127.0.0.1:0/mcp; callers told apart by OPENGIST_MCP_HTTP_AUTH=tokens"),
        "{stdout}"
    );
    // Positive control: the real name switches read-only on.
    let output = doctor(&[("OPENGIST_READ_ONLY", "true")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("ok   read-only: on"), "{stdout}");
    let reading = opengist_mcp::catalog::reading_names().count();
    assert!(
        stdout.contains(&format!("ok   tools: {reading} of {all} enabled: ")),
        "{stdout}"
    );
    assert!(stdout.contains("ok   serving: stdio"), "{stdout}");
    assert!(
        !stdout.contains("warn setting") && !stdout.contains("FAIL setting"),
        "{stdout}"
    );
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

/// The scope lines exactly as doctor printed them when each scope's tools were a hand-kept
/// list: the lists now come from the catalog, and the lines must not change.
#[test]
fn the_scope_lines_name_the_tools_each_scope_serves() {
    use opengist_mcp::catalog;
    use opengist_mcp::doctor::scope_checks;
    use opengist_mcp::opengist::{Grant, Identity, TokenAccess};

    let access = TokenAccess {
        identity: Some(Identity {
            id: 1,
            username: "admin".into(),
        }),
        gist_read: Grant::Present,
        gist_write: Grant::Missing,
        user_read: Grant::Present,
        user_write: Grant::Missing,
    };
    let all: Vec<String> = catalog::names().map(str::to_owned).collect();
    let url = "https://g/-/settings/access-tokens";
    let lines: Vec<String> = scope_checks(&access, &all, url)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "ok   gist:read: present (a private or unlisted gist of yours is listed): list_gists, \
             search_gists, get_gist, get_gist_file, list_gist_commits, list_gist_forks can use it",
            "FAIL gist:write: missing (POST /api/gists with an empty body: 422 with it, 403 \
             without): create_gist, update_gist, delete_gist_files, delete_gist, fork_gist will \
             not work (the guarded ones refuse before asking anyone); fix: either make a token \
             with gist read and write at https://g/-/settings/access-tokens (Settings → Access \
             Tokens) and set OPENGIST_TOKEN to it, or, to keep this read-only token, set \
             OPENGIST_READ_ONLY=true (only the reading tools are offered)",
            "ok   user:read: present (GET /api/user: 200 with it, 403 without): get_user can use it",
            "warn user:write: missing (PATCH /api/user with an empty body: 422 with it, 403 \
             without): set_gist_like will not work; fix: either make a token with user read and \
             write too at https://g/-/settings/access-tokens (Settings → Access Tokens) and set \
             OPENGIST_TOKEN to it, or stop offering them: \
             OPENGIST_DENY_TOOLS=get_user,set_gist_like",
        ]
    );

    // Read-only: the write scopes' lines say no enabled tool needs them.
    let reading: Vec<String> = catalog::reading_names().map(str::to_owned).collect();
    let lines: Vec<String> = scope_checks(&access, &reading, url)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines[1],
        "ok   gist:write: missing (POST /api/gists with an empty body: 422 with it, 403 \
         without), and no enabled tool needs it"
    );
    assert_eq!(
        lines[3],
        "ok   user:write: missing (PATCH /api/user with an empty body: 422 with it, 403 \
         without), and no enabled tool needs it"
    );
}
