//! The crate's layout, checked: dependencies between its modules run one way, the Opengist
//! client stands on its own, and the catalog is the one list of tool names.
//!
//! A module depends on another when its production code (its `#[cfg(test)]` tail and its
//! comments left out) names a path into it: `use crate::…`, `crate::…` inline, or
//! `use super::…`. The checks read the source files as text, so they hold for every build.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use opengist_mcp::catalog;

/// The crate's modules (`a::b`, the crate root as ""), each with its production source.
fn modules() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = module_name(&root, &path);
                if name == "main" {
                    continue; // the binary is a crate of its own
                }
                let text = fs::read_to_string(&path).expect("source is readable");
                found.insert(name, production(&text));
            }
        }
    }
    found
}

fn module_name(root: &Path, file: &Path) -> String {
    let relative: PathBuf = file
        .strip_prefix(root)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The source without its test module and without comments.
fn production(text: &str) -> String {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_start() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = line.split("//").next().unwrap_or_default();
        kept.push_str(code);
        kept.push('\n');
    }
    kept
}

/// Every path named after `crate::` (or `super::`, made absolute), braces expanded.
fn named_paths(module: &str, source: &str) -> Vec<Vec<String>> {
    let parent: Vec<String> = module
        .split("::")
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    let parent = &parent[..parent.len().saturating_sub(1)];
    let mut paths = Vec::new();
    for (prefix, base) in [("crate::", &[][..]), ("super::", parent)] {
        let mut rest = source;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let tree = take_tree(rest);
            for path in expand(tree) {
                let mut full: Vec<String> = base.to_vec();
                full.extend(path);
                paths.push(full);
            }
        }
    }
    paths
}

/// The use-tree at the start of `text`: `a::b`, `a::{b, c::d}`, …
fn take_tree(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &text[..i],
            '}' => depth -= 1,
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => {
                return &text[..i];
            }
            _ => {}
        }
    }
    text
}

fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim().trim_end_matches("::");
    let Some(open) = tree.find('{') else {
        let path: Vec<String> = tree
            .split("::")
            .map(|p| p.split_whitespace().next().unwrap_or_default().to_owned())
            .filter(|p| !p.is_empty())
            .collect();
        return vec![path];
    };
    let head: Vec<String> = tree[..open]
        .split("::")
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for tail in expand(part) {
            let mut path = head.clone();
            path.extend(tail.into_iter().filter(|p| p != "self"));
            out.push(path);
        }
    }
    out
}

/// Module → the other modules it depends on (never itself, its ancestors or descendants).
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut graph = BTreeMap::new();
    for (module, source) in &modules {
        let mut targets = BTreeSet::new();
        for path in named_paths(module, source) {
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|candidate| modules.contains_key(candidate))
            else {
                continue;
            };
            let related = |a: &str, b: &str| a.is_empty() || b.starts_with(&format!("{a}::"));
            if target != *module && !related(&target, module) && !related(module, &target) {
                targets.insert(target);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// A cycle through `start`, if there is one: the modules in order.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let graph = dependencies();
    assert!(graph.len() > 20, "the walk found the modules: {graph:?}");
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(
        cycles.is_empty(),
        "module cycles (make the dependency run one way: tools -> cache -> opengist):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_opengist_client_imports_nothing_else_from_the_crate() {
    let graph = dependencies();
    let outside: Vec<String> = graph
        .iter()
        .filter(|(m, _)| m.starts_with("opengist"))
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| !d.starts_with("opengist"))
                .map(move |d| format!("{m} -> {d}"))
        })
        .collect();
    assert!(
        graph.keys().any(|m| m == "opengist::client"),
        "opengist::client exists"
    );
    assert!(
        outside.is_empty(),
        "opengist/ must stand on its own (move what it needs into opengist/, or the caller up):\n{}",
        outside.join("\n")
    );
}

#[test]
fn the_cache_stands_on_the_opengist_client_only() {
    let graph = dependencies();
    let cache: Vec<(&String, &BTreeSet<String>)> = graph
        .iter()
        .filter(|(m, _)| *m == "cache" || m.starts_with("cache::"))
        .collect();
    assert!(!cache.is_empty(), "a cache module");
    let other: Vec<String> = cache
        .iter()
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| !d.starts_with("opengist") && !d.starts_with("cache"))
                .map(move |d| format!("{m} -> {d}"))
        })
        .collect();
    assert!(
        other.is_empty(),
        "the cache depends on more than opengist/ (tools -> cache -> opengist):\n{}",
        other.join("\n")
    );
}

#[test]
fn tool_names_are_written_in_the_catalog_and_in_tools_only() {
    let names: Vec<&str> = catalog::TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names.len(), 14);
    let mut found = Vec::new();
    for (module, source) in modules() {
        if module == "catalog" || module.starts_with("tools") || module.starts_with("opengist") {
            continue;
        }
        for name in &names {
            if source.contains(&format!("\"{name}\"")) {
                found.push(format!("{module}: \"{name}\""));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a tool name written outside the catalog and the tools (read it from crate::catalog):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_see_a_cycle_and_an_import_when_there_is_one() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        cycle_from(&graph, "a").map(|c| c.join(" -> ")).as_deref(),
        Some("a -> b -> c -> a")
    );
    assert_eq!(cycle_from(&graph, "d"), None);
    let paths = named_paths(
        "tools::x",
        "use crate::{cache::{self, Reads}, opengist::client::Client};\nuse super::common::y;\nlet v = crate::state::failure(1);",
    );
    let joined: BTreeSet<String> = paths.iter().map(|p| p.join("::")).collect();
    for expected in [
        "cache",
        "cache::Reads",
        "opengist::client::Client",
        "tools::common::y",
        "state::failure",
    ] {
        assert!(joined.contains(expected), "{expected} in {joined:?}");
    }
}
