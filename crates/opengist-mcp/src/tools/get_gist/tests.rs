use super::shape::shape_gist;
use super::*;
use crate::result_budget::json_len;
use crate::tools::common::fixtures::*;

fn options() -> GistViewOptions {
    GistViewOptions {
        sha: None,
        include_content: true,
        max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
        include_commits: false,
        include_forks: false,
        include_clone_urls: false,
    }
}

#[test]
fn get_gist_arguments() {
    let limits = ContentLimits::for_ceiling(262_144);
    assert_eq!(
        limits,
        ContentLimits {
            max_file: 65_536,
            max_total: 122_880
        }
    );
    let args = |v: Value| serde_json::from_value::<GetGistArgs>(v).expect("args");
    let o = args(json!({"gist_id": ID})).validate(limits).expect("ok");
    assert!(o.include_content && !o.include_commits);
    assert_eq!(o.max_file_bytes, DEFAULT_MAX_FILE_BYTES);
    // The default total is held under the ceiling's maximum.
    assert_eq!(o.max_total_bytes, 122_880);
    let err = args(json!({"gist_id": ID, "sha": "HEAD"}))
        .validate(limits)
        .expect_err("HEAD");
    assert!(err.contains("commits[0].version"), "{err}");
    assert!(
        args(json!({"gist_id": ID, "sha": "xyz1"}))
            .validate(limits)
            .is_err()
    );
    assert_eq!(
        args(json!({"gist_id": ID, "sha": "ABCD"}))
            .validate(limits)
            .expect("sha")
            .sha,
        Some(Sha::parse("abcd").expect("sha"))
    );
    assert!(
        args(json!({"gist_id": ID, "max_file_bytes": 65_537}))
            .validate(limits)
            .is_err()
    );
    assert!(
        args(json!({"gist_id": ID, "max_file_bytes": 0}))
            .validate(limits)
            .is_err()
    );
    assert!(
        args(json!({"gist_id": ID, "max_total_bytes": 122_881}))
            .validate(limits)
            .is_err()
    );
    assert!(serde_json::from_value::<GetGistArgs>(json!({"gist_id": ID, "bogus": 1})).is_err());
    // A tiny ceiling still has usable limits.
    let tiny = ContentLimits::for_ceiling(4096);
    assert_eq!(
        tiny,
        ContentLimits {
            max_file: 1024,
            max_total: 512
        }
    );
    let o = args(json!({"gist_id": ID})).validate(tiny).expect("ok");
    assert_eq!((o.max_file_bytes, o.max_total_bytes), (1024, 512));
}

#[test]
fn small_gists_come_back_whole() {
    let d = detail(vec![
        file_json("b.md", "# B\n", 4, false, "utf-8"),
        file_json("a.txt", "hello", 5, false, "utf-8"),
    ]);
    let out = shape_gist(&d, &options());
    assert_eq!(out.revision.as_deref(), Some(HEAD));
    let names: Vec<&str> = out.files.iter().map(|f| f.filename.as_str()).collect();
    assert_eq!(names, ["a.txt", "b.md"]);
    assert_eq!(out.files[0].content.as_deref(), Some("hello"));
    assert!(!out.files[0].truncated && out.files[0].omitted.is_none());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert!(out.commits.is_none() && out.forks.is_none() && out.clone_urls.is_none());
    assert_eq!(out.gist.fork_of, None);
    assert!(out.provenance.untrusted);
}

#[test]
fn big_files_are_cut_with_the_call_that_continues_them() {
    let big = "é".repeat(50_000); // 100_000 bytes
    let d = detail(vec![file_json("a.txt", &big, big.len(), false, "utf-8")]);
    let mut o = options();
    o.max_file_bytes = 32_769; // inside an "é"
    let out = shape_gist(&d, &o);
    let f = &out.files[0];
    assert!(f.truncated);
    assert_eq!(f.content.as_deref().map(str::len), Some(32_768));
    assert_eq!(
        out.notes,
        [format!(
            r#"content of "a.txt" cut at 32768 of 100000 bytes (max_file_bytes=32769): get_gist_file with gist_id="{ID}", filename="a.txt", sha="{HEAD}", offset=32768"#
        )]
    );
}

#[test]
fn a_total_budget_below_the_partial_minimum_still_shows_files_in_order() {
    let d = detail(vec![
        file_json("big.txt", &"b".repeat(5000), 5000, false, "utf-8"),
        file_json("mid.txt", &"m".repeat(1500), 1500, false, "utf-8"),
        file_json("small.txt", "s", 1, false, "utf-8"),
    ]);
    let mut o = options();
    o.max_file_bytes = 100;
    o.max_total_bytes = 1000;
    let out = shape_gist(&d, &o);
    let shown: Vec<Option<usize>> = out
        .files
        .iter()
        .map(|f| f.content.as_ref().map(String::len))
        .collect();
    assert_eq!(shown, [Some(100), Some(100), Some(1)]);
    assert!(
        out.notes.iter().all(|n| !n.contains("earlier files")),
        "{:?}",
        out.notes
    );
    assert!(
        out.notes[0].contains("(max_file_bytes=100)"),
        "{:?}",
        out.notes
    );
}

#[test]
fn the_total_budget_is_spent_in_filename_order() {
    let d = detail(vec![
        file_json("1.txt", &"a".repeat(3000), 3000, false, "utf-8"),
        file_json("2.txt", &"b".repeat(3000), 3000, false, "utf-8"),
        file_json("3.txt", &"c".repeat(3000), 3000, false, "utf-8"),
        file_json("4.txt", "d", 1, false, "utf-8"),
    ]);
    let mut o = options();
    o.max_total_bytes = 5000;
    let out = shape_gist(&d, &o);
    let shown: Vec<Option<usize>> = out
        .files
        .iter()
        .map(|f| f.content.as_ref().map(String::len))
        .collect();
    // 3000 whole, 2000 of the second, nothing left for the third; the last one is
    // omitted too, in order, even though it is tiny.
    assert_eq!(shown, [Some(3000), Some(2000), None, None]);
    assert_eq!(
        out.files[2].omitted.as_deref(),
        Some("over max_total_bytes: call get_gist_file")
    );
    assert!(out.notes[0].contains("cut at 2000 of 3000 bytes (max_total_bytes=5000)"));
    assert!(out.notes[0].ends_with("offset=2000"), "{}", out.notes[0]);
    assert!(out.notes[1].starts_with(r#"content of "3.txt" (3000 bytes) not shown"#));
    assert!(!out.notes[1].contains("offset="));
    assert_eq!(out.notes.len(), 3);
    // Many omitted files share one note after the first few.
    let many: Vec<Value> = (0..12)
        .map(|i| {
            file_json(
                &format!("{i:02}.txt"),
                &"q".repeat(2000),
                2000,
                false,
                "utf-8",
            )
        })
        .collect();
    let mut small = options();
    small.max_total_bytes = 2000;
    let crowded = shape_gist(&detail(many), &small);
    assert_eq!(
        crowded.notes.len(),
        NAMED_OMISSIONS + 1,
        "{:?}",
        crowded.notes
    );
    let last = crowded.notes.last().map(String::as_str).unwrap_or_default();
    assert!(last.starts_with("6 more file(s) not shown"), "{last}");
    assert!(
        last.contains(r#""11.txt""#) && last.contains(r#"filename="<filename>""#),
        "{last}"
    );
    // Same input, same output.
    assert_eq!(
        serde_json::to_value(shape_gist(&d, &o)).ok(),
        serde_json::to_value(&out).ok()
    );
}

#[test]
fn binary_files_are_never_dumped() {
    let d = detail(vec![file_json(
        "logo.png",
        "iVBORw0KGgo=",
        8,
        false,
        "base64",
    )]);
    let out = shape_gist(&d, &options());
    assert_eq!(out.files[0].content, None);
    assert_eq!(
        out.files[0].omitted.as_deref(),
        Some("binary file (8 bytes): not shown")
    );
    assert!(out.notes.is_empty());
}

#[test]
fn opengists_own_cut_is_noted_without_its_replacement_character() {
    // Opengist cut inside a character; Go wrote U+FFFD for the broken tail.
    let content = format!("{}\u{FFFD}", "x".repeat(100));
    let d = detail(vec![file_json("big.log", &content, 900_000, true, "utf-8")]);
    let out = shape_gist(&d, &options());
    let f = &out.files[0];
    assert!(f.truncated);
    assert_eq!(f.content.as_deref(), Some("x".repeat(100).as_str()));
    assert!(
        out.notes[0].starts_with(r#"content of "big.log" cut by Opengist at 100 of 900000 bytes"#),
        "{}",
        out.notes[0]
    );
    assert!(out.notes[0].ends_with("offset=100"));
}

#[test]
fn include_content_false_lists_files_only() {
    let d = detail(vec![file_json("a.txt", "hello", 5, false, "utf-8")]);
    let mut o = options();
    o.include_content = false;
    let out = shape_gist(&d, &o);
    assert_eq!(
        out.files[0].omitted.as_deref(),
        Some("include_content=false")
    );
    assert!(out.files[0].content.is_none() && out.notes.is_empty());
}

#[test]
fn commits_forks_clone_urls_and_the_file_cut() {
    let mut v =
        serde_json::to_value(detail(vec![file_json("a", "x", 1, false, "utf-8")])).expect("json");
    v["commits"] = Value::Array((0..10).map(|i| commit_json(&format!("{i:040x}"))).collect());
    v["forks"] = json!([summary_json(ID2, "public")]);
    v["fork_count"] = json!(3);
    v["truncated"] = json!(true);
    v["fork_of"] = summary_json(ID2, "public");
    let d: GistDetail = serde_json::from_value(v).expect("detail");
    let mut o = options();
    o.include_commits = true;
    o.include_forks = true;
    o.include_clone_urls = true;
    let out = shape_gist(&d, &o);
    let commits = out.commits.as_ref().expect("commits");
    assert_eq!(commits.len(), 10);
    assert_eq!(commits[0].author, "Alice");
    assert_eq!(
        (
            commits[0].additions,
            commits[0].deletions,
            commits[0].files_changed
        ),
        (3, 1, 1)
    );
    assert_eq!(out.forks.as_ref().map(Vec::len), Some(1));
    assert_eq!(out.gist.fork_of.as_deref(), Some(ID2));
    assert!(out.files_truncated);
    let clone = out.clone_urls.as_ref().expect("urls");
    assert!(clone.http.as_deref().is_some_and(|u| u.ends_with(".git")));
    let all = out.notes.join("\n");
    assert!(all.contains("only the first 50 files"), "{all}");
    assert!(all.contains(&format!(
        r#"list_gist_commits with gist_id="{ID}", page=2, per_page=10"#
    )));
    assert!(all.contains(&format!(r#"list_gist_forks with gist_id="{ID}""#)));
    // No email leaks through the commit shape.
    assert!(
        !serde_json::to_string(&out)
            .expect("json")
            .contains("alice@example.com")
    );
}

#[test]
fn a_requested_revision_is_named_in_continuations() {
    let big = "z".repeat(40_000);
    let d = detail(vec![file_json("a.txt", &big, big.len(), false, "utf-8")]);
    let mut o = options();
    o.sha = Some(Sha::parse("beef").expect("sha"));
    let out = shape_gist(&d, &o);
    assert_eq!(out.revision.as_deref(), Some("beef"));
    assert!(out.notes[0].contains(r#"sha="beef""#), "{}", out.notes[0]);
}

#[test]
fn gists_are_fitted_to_the_ceiling_before_bounded_cuts_anything() {
    // Escapes make JSON larger than the raw bytes: newlines double.
    let content = "\n".repeat(60_000);
    let d = detail(vec![file_json(
        "n.txt",
        &content,
        content.len(),
        false,
        "utf-8",
    )]);
    let mut o = options();
    o.max_file_bytes = 65_536;
    o.max_total_bytes = 122_880;
    let budget = 131_072 / 2;
    let out = shape_gist_within(&d, &o, budget);
    let size = json_len(&serde_json::to_value(&out).expect("json"));
    assert!(size <= budget, "{size}");
    let shown = out.files[0].content.as_ref().map_or(0, String::len);
    assert!(shown > 0 && shown < 60_000);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains(&format!("offset={shown}")))
    );
    assert!(out.notes.iter().any(|n| n.contains("result-size ceiling")));
}

// -- the handler: input errors make no request --

#[tokio::test]
async fn a_head_sha_is_refused_before_the_setup_check() {
    let server = OpengistServer::unconfigured();
    let args: GetGistArgs =
        serde_json::from_value(json!({"gist_id": ID, "sha": "HEAD"})).expect("args");
    let err = server.get_gist(Parameters(args)).await.err().expect("head");
    assert!(text_of(&err).contains("commits[0].version"));
}
