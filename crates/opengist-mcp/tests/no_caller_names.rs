//! opengist-mcp's rule for its questions: no title, description, topic or filename, ever.
//! The framework can show caller-supplied names (framed and escaped), but this server's
//! questions stay made of ids, counts, sizes, dates and fixed wording: a gist's text fields
//! are exactly where an injected instruction would sit. This test reads the server's source
//! and fails if any of it builds a caller-supplied fact.

use std::fs;
use std::path::{Path, PathBuf};

/// What building a caller-supplied fact looks like, through the facade or the core crate.
const CALLER_KINDS: [&str; 6] = [
    "Fact::name",
    "Fact::path",
    "Fact::address",
    "Name::new",
    "PathName",
    "Address::new",
];

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("the source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn questions_show_no_caller_supplied_names() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(
        files.len() > 10,
        "expected the server's sources under {}",
        src.display()
    );
    let mut offending = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("a source file is UTF-8");
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for kind in CALLER_KINDS {
                if code.contains(kind) {
                    offending.push(format!("{}:{}: {kind}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(
        offending.is_empty(),
        "opengist-mcp's questions must not show titles, descriptions, topics or filenames \
         (caller-supplied names): {offending:#?}"
    );
}
