//! The catalog of tools: the one list of the fourteen tools and what the rest of the server
//! needs to know about each before calling it: its name, whether it only reads, whether
//! `essential` stands for it in the allow and deny lists, and the Opengist scope it needs.
//!
//! The server builds its router and filter from [`TOOLS`], `config` resolves the allow/deny
//! lists and read-only mode against it, `doctor` derives which tools each scope serves from
//! it, and the tests iterate it. A tool's own file holds everything else about it (arguments,
//! handler, result). Adding a tool is one file (its arguments, its `#[tool_router]` impl,
//! its result), its `mod` line in `crate::tools`, and one row here naming its router.

use rmcp::handler::server::router::tool::ToolRouter;

use crate::opengist::Scope;
use crate::state::OpengistServer;
use Access::{Reads, Writes};

/// Whether a tool only reads from Opengist or changes something there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only: registered in read-only mode; `readOnlyHint` is true.
    Reads,
    /// Creates, changes or deletes something in Opengist; `readOnlyHint` is false.
    Writes,
}

/// One tool as the server, `config` and `doctor` know it.
#[derive(Debug, Clone, Copy)]
pub struct ToolEntry {
    /// The tool's name, as clients call it.
    pub name: &'static str,
    /// Whether it only reads.
    pub access: Access,
    /// Whether `essential` in `OPENGIST_ALLOW_TOOLS` / `OPENGIST_DENY_TOOLS` stands for it.
    pub essential: bool,
    /// The access-token scope it needs; [`Scope::AnyToken`] when any valid token will do.
    pub scope: Scope,
    /// Its router, made by `#[tool_router]` in the tool's own file: exactly this one tool.
    pub router: fn() -> ToolRouter<OpengistServer>,
}

impl ToolEntry {
    /// Whether the tool only reads (it exists in read-only mode).
    pub const fn reads(&self) -> bool {
        matches!(self.access, Access::Reads)
    }
}

const fn row(
    name: &'static str,
    access: Access,
    essential: bool,
    scope: Scope,
    router: fn() -> ToolRouter<OpengistServer>,
) -> ToolEntry {
    ToolEntry {
        name,
        access,
        essential,
        scope,
        router,
    }
}

/// `get_gist_file`: the tool resources stand beside (they read what it reads, so they exist
/// only when it is enabled).
#[rustfmt::skip]
pub(crate) const GET_GIST_FILE: ToolEntry =
    row("get_gist_file", Reads, true, Scope::GistRead, OpengistServer::get_gist_file_router);

/// Every tool, in the order they are listed: the reading tools, then the writing ones.
#[rustfmt::skip]
pub const TOOLS: &[ToolEntry] = &[
    //  name                access  essential scope            router
    row("list_gists",        Reads,  true,  Scope::GistRead,  OpengistServer::list_gists_router),
    row("search_gists",      Reads,  true,  Scope::GistRead,  OpengistServer::search_gists_router),
    row("get_gist",          Reads,  true,  Scope::GistRead,  OpengistServer::get_gist_router),
    GET_GIST_FILE,
    row("list_gist_commits", Reads,  false, Scope::GistRead,  OpengistServer::list_gist_commits_router),
    row("list_gist_forks",   Reads,  false, Scope::GistRead,  OpengistServer::list_gist_forks_router),
    row("get_user",          Reads,  false, Scope::UserRead,  OpengistServer::get_user_router),
    row("check_gist_like",   Reads,  false, Scope::AnyToken,  OpengistServer::check_gist_like_router),
    row("create_gist",       Writes, true,  Scope::GistWrite, OpengistServer::create_gist_router),
    row("update_gist",       Writes, true,  Scope::GistWrite, OpengistServer::update_gist_router),
    row("delete_gist_files", Writes, false, Scope::GistWrite, OpengistServer::delete_gist_files_router),
    row("delete_gist",       Writes, true,  Scope::GistWrite, OpengistServer::delete_gist_router),
    row("fork_gist",         Writes, false, Scope::GistWrite, OpengistServer::fork_gist_router),
    row("set_gist_like",     Writes, false, Scope::UserWrite, OpengistServer::set_gist_like_router),
];

/// Every tool name, in the order they are listed.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    TOOLS.iter().map(|tool| tool.name)
}

/// The names of the tools that only read (all that exist in read-only mode), in order.
pub fn reading_names() -> impl Iterator<Item = &'static str> + Clone {
    TOOLS
        .iter()
        .filter(|tool| tool.reads())
        .map(|tool| tool.name)
}

/// The names `essential` stands for in the allow and deny lists, in order.
pub fn essential_names() -> impl Iterator<Item = &'static str> + Clone {
    TOOLS
        .iter()
        .filter(|tool| tool.essential)
        .map(|tool| tool.name)
}

/// The names of the tools that need `scope`, in order.
pub(crate) fn names_needing(scope: Scope) -> impl Iterator<Item = &'static str> + Clone {
    TOOLS
        .iter()
        .filter(move |tool| tool.scope == scope)
        .map(|tool| tool.name)
}

/// The guarded tools, in the catalog's order: each asks a person (or, where no dialog can be
/// shown, takes the two-call token) before it changes anything. Only these can be made
/// verified (`OPENGIST_MCP_VERIFIED_TOOLS`).
pub const GUARDED: [&str; 4] = [
    "create_gist",
    "update_gist",
    "delete_gist_files",
    "delete_gist",
];

/// The catalog entry of the tool called `name`, if there is one.
pub fn entry(name: &str) -> Option<&'static ToolEntry> {
    TOOLS.iter().find(|tool| tool.name == name)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn the_guarded_tools_are_those_that_take_a_confirm_token() {
        for tool in TOOLS {
            let listed = (tool.router)().list_all();
            let takes_token = listed.iter().any(|t| {
                t.input_schema
                    .get("properties")
                    .and_then(|p| p.get(ask_first_core::CONFIRM_TOKEN_ARG))
                    .is_some()
            });
            assert_eq!(takes_token, GUARDED.contains(&tool.name), "{}", tool.name);
        }
        let order: Vec<&str> = names().filter(|name| GUARDED.contains(name)).collect();
        assert_eq!(order, GUARDED, "in the catalog's order");
    }

    #[test]
    fn fourteen_tools_each_named_once() {
        assert_eq!(TOOLS.len(), 14);
        let unique: HashSet<&str> = names().collect();
        assert_eq!(unique.len(), 14, "no two rows share a name");
        assert!(
            names().all(|name| (1..=64).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')),
            "every name is shaped as the allow/deny lists expect"
        );
    }

    #[test]
    fn eight_read_and_six_write_readers_first() {
        assert_eq!(reading_names().count(), 8);
        assert_eq!(TOOLS.iter().filter(|tool| !tool.reads()).count(), 6);
        let first_writer = TOOLS
            .iter()
            .position(|tool| !tool.reads())
            .expect("a writer");
        assert!(
            TOOLS[..first_writer].iter().all(ToolEntry::reads)
                && TOOLS[first_writer..].iter().all(|tool| !tool.reads()),
            "the listing order is the reading tools, then the writing ones"
        );
    }

    #[test]
    fn the_essential_seven() {
        assert_eq!(
            essential_names().collect::<Vec<_>>(),
            [
                "list_gists",
                "search_gists",
                "get_gist",
                "get_gist_file",
                "create_gist",
                "update_gist",
                "delete_gist",
            ]
        );
    }

    // Which tools each scope serves is checked where it shows, in `doctor`'s scope lines
    // (tests/doctor.rs: every tool of every scope, in order); the one scope those lines do not
    // print is checked here.
    #[test]
    fn check_gist_like_needs_only_a_token() {
        assert_eq!(
            names_needing(Scope::AnyToken).collect::<Vec<_>>(),
            ["check_gist_like"]
        );
        assert_eq!(
            entry("check_gist_like").map(|t| t.scope),
            Some(Scope::AnyToken)
        );
    }

    #[test]
    fn lookups_find_rows_by_name() {
        assert_eq!(
            entry(GET_GIST_FILE.name).map(|t| (t.name, t.essential, t.scope)),
            Some((
                GET_GIST_FILE.name,
                GET_GIST_FILE.essential,
                GET_GIST_FILE.scope
            ))
        );
        assert_eq!(
            entry("get_gist_file").map(|t| t.access),
            Some(Access::Reads)
        );
        assert_eq!(entry("delete_gist").map(|t| t.access), Some(Access::Writes));
        assert!(entry("Delete_gist").is_none() && entry("").is_none());
        assert!(entry("get_gists").is_none());
    }

    /// The production source of every file under `src/` but the catalog's and the tools'
    /// (the client's files are another crate): its `#[cfg(test)]` tail and comments left out.
    fn other_sources() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src is readable") {
                let path = entry.expect("entry").path();
                let name = path
                    .strip_prefix(&root)
                    .expect("under src")
                    .to_string_lossy();
                if name == "catalog.rs" || name.starts_with("tools") {
                    continue;
                }
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("source is readable");
                    let production = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or("");
                    let code: Vec<&str> = production
                        .lines()
                        .map(|line| line.split("//").next().unwrap_or_default())
                        .collect();
                    found.push((name.into_owned(), code.join("\n")));
                }
            }
        }
        found
    }

    /// Carried over from the deleted tests/layout.rs (the one check there that was not about
    /// structure, which the compiler now holds): a tool's name is written here and in its own
    /// file, and everything else reads it from this catalog.
    #[test]
    fn tool_names_are_written_in_the_catalog_and_in_tools_only() {
        let sources = other_sources();
        assert!(sources.len() > 20, "the walk found the sources");
        assert!(
            sources.iter().any(|(name, _)| name == "server.rs"),
            "server.rs among them"
        );
        let found = names_in(&sources);
        assert!(
            found.is_empty(),
            "a tool name written outside the catalog and the tools (read it from crate::catalog):\n{}",
            found.join("\n")
        );
    }

    /// `file: "name"` for each tool name written as a string in `sources`.
    fn names_in(sources: &[(String, String)]) -> Vec<String> {
        sources
            .iter()
            .flat_map(|(file, code)| {
                TOOLS
                    .iter()
                    .filter(|tool| code.contains(&format!("\"{}\"", tool.name)))
                    .map(move |tool| format!("{file}: \"{}\"", tool.name))
            })
            .collect()
    }

    #[test]
    fn the_tool_name_check_sees_a_name_outside_the_catalog() {
        let sources = [
            ("a.rs".to_owned(), "let x = \"get_gist\";".to_owned()),
            ("b.rs".to_owned(), "let y = \"get_gists\";".to_owned()),
        ];
        assert_eq!(names_in(&sources), ["a.rs: \"get_gist\""]);
    }
}
