use serde_json::json;

use crate::opengist::gist_evidence::FileNow;

use super::*;

fn facts(files: &[&str]) -> GistFacts {
    GistFacts {
        site: ask_first::fact::Configured::fixed("https://gist.example.org"),
        owner: "alice".to_owned(),
        visibility: Visibility::Public,
        files: files.iter().map(|f| ((*f).to_owned(), 1)).collect(),
        contents: files
            .iter()
            .map(|f| ((*f).to_owned(), FileNow::given("x")))
            .collect(),
        fork_count: 0,
        like_count: 0,
        created_at: 0,
        updated_at: 0,
        revision: None,
        topics: None,
    }
}

fn args(ops: Vec<FileOpArg>, allow_create: bool) -> UpdateGistArgs {
    UpdateGistArgs {
        gist_id: "0123456789abcdef0123456789abcdef".to_owned(),
        title: None,
        description: None,
        visibility: None,
        file_ops: ops,
        allow_create,
        confirm_token: None,
    }
}

fn op(
    op: FileOpKind,
    filename: &str,
    new_filename: Option<&str>,
    content: Option<&str>,
) -> FileOpArg {
    FileOpArg {
        op,
        filename: filename.to_owned(),
        new_filename: new_filename.map(str::to_owned),
        content: content.map(str::to_owned),
    }
}

#[test]
fn a_write_to_a_missing_file_is_refused_with_a_near_match_unless_allowed() {
    let f = facts(&["README.md"]);
    let refused = file_changes(
        &args(
            vec![op(FileOpKind::Write, "readme.md", None, Some("x"))],
            false,
        ),
        &f,
    )
    .expect_err("missing file");
    assert!(
        refused.contains("\"readme.md\", which is not in the gist"),
        "{refused}"
    );
    assert!(refused.contains("Did you mean \"README.md\"?"), "{refused}");
    assert!(refused.contains("allow_create: true"), "{refused}");
    let allowed = file_changes(
        &args(vec![op(FileOpKind::Write, "new.md", None, Some("x"))], true),
        &f,
    )
    .expect("allowed");
    assert_eq!(
        allowed,
        vec![FileChange::Write {
            filename: "new.md".to_owned(),
            content: "x".to_owned()
        }]
    );
}

#[test]
fn renames_need_an_existing_source_and_a_free_destination() {
    let f = facts(&["a", "b"]);
    let missing = file_changes(
        &args(vec![op(FileOpKind::Rename, "c", Some("d"), None)], true),
        &f,
    )
    .expect_err("no source");
    assert!(
        missing.contains("renames \"c\", which is not in the gist"),
        "{missing}"
    );
    let clobber = file_changes(
        &args(vec![op(FileOpKind::Rename, "a", Some("b"), None)], true),
        &f,
    )
    .expect_err("destination exists");
    assert!(clobber.contains("already exists"), "{clobber}");
    let itself = file_changes(
        &args(vec![op(FileOpKind::Rename, "a", Some("a"), None)], false),
        &f,
    )
    .expect_err("rename onto itself");
    assert!(
        itself.contains("to its own name") && !itself.contains("overwrite"),
        "{itself}"
    );
    let rewrite = file_changes(
        &args(
            vec![op(FileOpKind::Rename, "a", Some("a"), Some("x"))],
            false,
        ),
        &f,
    )
    .expect("a rename onto itself with content writes it");
    assert_eq!(
        rewrite,
        vec![FileChange::Write {
            filename: "a".to_owned(),
            content: "x".to_owned()
        }]
    );
    let unnamed = file_changes(
        &args(vec![op(FileOpKind::Rename, "a", None, None)], true),
        &f,
    )
    .expect_err("no new name");
    assert!(unnamed.contains("without `new_filename`"), "{unnamed}");
    let ok = file_changes(
        &args(
            vec![op(FileOpKind::Rename, "a", Some("z"), Some("new"))],
            false,
        ),
        &f,
    )
    .expect("valid rename");
    assert_eq!(ok[0].content(), Some("new"));
}

#[test]
fn writes_need_content_and_no_new_name() {
    let f = facts(&["a"]);
    let empty = file_changes(
        &args(vec![op(FileOpKind::Write, "a", None, None)], false),
        &f,
    )
    .expect_err("no content");
    assert!(empty.contains("without `content`"), "{empty}");
    let renaming = file_changes(
        &args(
            vec![op(FileOpKind::Write, "a", Some("b"), Some("x"))],
            false,
        ),
        &f,
    )
    .expect_err("write with new name");
    assert!(renaming.contains("use `op: \"rename\"`"), "{renaming}");
}

const ID: &str = "0123456789abcdef0123456789abcdef";

fn detail(title: &str, files: &[(&str, &str)], head: &str) -> GistDetail {
    let files: serde_json::Map<String, serde_json::Value> = files
        .iter()
        .map(|(name, content)| {
            (
                (*name).to_owned(),
                json!({"filename": name, "size": content.len(), "content": content}),
            )
        })
        .collect();
    serde_json::from_value(json!({
        "id": ID, "title": title, "visibility": "private",
        "files": files, "commits": [{"version": head}],
    }))
    .expect("a gist detail")
}

fn update() -> UpdateReadBack {
    UpdateReadBack {
        id: GistId::parse(ID).expect("id"),
        title: Some("new".to_owned()),
        description: None,
        visibility: Some(Visibility::Private),
        files: vec![
            FileChange::Write {
                filename: "a.txt".to_owned(),
                content: "new a".to_owned(),
            },
            FileChange::Rename {
                filename: "b.txt".to_owned(),
                new_filename: "c.txt".to_owned(),
                content: None,
            },
        ],
        revision: Some("old-head".to_owned()),
    }
}

#[test]
fn an_update_is_applied_not_applied_or_mixed_by_what_reads_back() {
    let u = update();
    let after = detail("new", &[("a.txt", "new a\n"), ("c.txt", "b")], "new-head");
    assert!(matches!(u.judge(after), Seen::Applied(_)));
    // Visibility was private already, so that change "shows" either way: the unmoved
    // head says the files were not written.
    let before = detail("old", &[("a.txt", "old a"), ("b.txt", "b")], "old-head");
    assert!(matches!(u.judge(before), Seen::NotApplied));
    let half = detail("new", &[("a.txt", "old a"), ("b.txt", "b")], "new-head");
    match u.judge(half) {
        Seen::Mixed(what) => assert!(what.contains("2 of the 4"), "{what}"),
        _ => panic!("a half-applied update is mixed"),
    }
    let metadata = UpdateReadBack {
        files: Vec::new(),
        ..update()
    };
    let same = detail("old", &[("a.txt", "old a")], "old-head");
    assert!(matches!(metadata.judge(same), Seen::Mixed(_)));
    let retitled = detail("new", &[("a.txt", "old a")], "old-head");
    assert!(matches!(metadata.judge(retitled), Seen::Applied(_)));
    let untouched = UpdateReadBack {
        visibility: None,
        ..metadata
    };
    let same = detail("old", &[("a.txt", "old a")], "old-head");
    assert!(matches!(untouched.judge(same), Seen::NotApplied));
}
