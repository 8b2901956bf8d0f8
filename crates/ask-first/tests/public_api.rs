//! The facade's public surface, counted, so it stays learnable in one sitting.
//!
//! Every name reachable from `ask_first` is one `pub use` leaf or one `pub mod` in `src/lib.rs`
//! (the facade defines nothing itself). This test parses that file as Rust syntax (`syn`, not a
//! text search) with every feature on, and holds what it finds to [`SURFACE`]: an item added,
//! removed or renamed fails here with the difference, so a change to the surface is a change to
//! this list, made on purpose. It also refuses what would make the count unbounded or
//! misleading: a glob (`pub use x::*`), a whole module or crate of another crate re-exported
//! (`pub use ask_first_serve as serve`), and the same item exported under two paths.
//! `#[doc(hidden)]` items (the macro's `__private`) are not part of the surface.
//!
//! The count is items plus modules, the way rustdoc lists them (its `all.html` of
//! `cargo doc -p ask-first --all-features` gives the same 59 items, and the 6 modules).
//! The root holds the concepts a guarded server is written with and what their signatures
//! name ([`ROOT_MOST`] at most); the kinds of facts a question shows are under `fact`.
//! Before this list existed, the same count was 231: 104 items and 8 modules in the facade's
//! own pages, 7 items and a module in `testing`, and the whole `ask-first-serve` crate (99
//! items, 12 modules) through `pub use ask_first_serve as serve`; `Caller`, `Identity`,
//! `OUTCOME_META_KEY`, `elicitation_from_env` and `elicitation_off_notice` were exported twice.

use std::collections::BTreeMap;

use syn::{Attribute, Item, UseTree};

/// Every public path of the facade (with every feature on), sorted.
const SURFACE: &[&str] = &[
    "AlteredState",
    "Approved",
    "ApprovedBy",
    "BindText",
    "BindValue",
    "Binding",
    "Clearance",
    "Conditional",
    "Exempt",
    "Fact",
    "Guard",
    "GuardBuilder",
    "HasGuard",
    "InputError",
    "Question",
    "Resolve",
    "SealKey",
    "ServeError",
    "Serving",
    "Target",
    "Target",
    "Wording",
    "audit",
    "audit::AuditEvent",
    "audit::AuditOutcome",
    "audit::AuditSink",
    "audit::OUTCOME_META_KEY",
    "audit::Route",
    "audit::outcome_of",
    "fact",
    "fact::Address",
    "fact::ByteSize",
    "fact::Configured",
    "fact::Count",
    "fact::Evidence",
    "fact::EvidenceItem",
    "fact::Id",
    "fact::Link",
    "fact::Moment",
    "fact::Name",
    "fact::NotConfigured",
    "fact::PathName",
    "fact::Span",
    "fact::ToFact",
    "guarded",
    "nonce",
    "nonce::Nonce",
    "nonce::NonceStore",
    "nonce::NonceStoreError",
    "nonce::SpendFuture",
    "principal",
    "principal::Caller",
    "principal::Identity",
    "principal::default_principal",
    "protocol",
    "protocol::GuardCall",
    "protocol::Interruption",
    "protocol::InterruptionKind",
    "testing",
    "testing::Era",
    "testing::Person",
    "testing::Reply",
    "testing::confirm_token_in",
    "testing::connect",
    "testing::text_of",
    "wording",
];

/// The most items the facade may have, modules included (64 until the approval page's evidence
/// added `fact::Evidence` and `fact::EvidenceItem`).
const MOST: usize = 66;

/// The most items at the facade's root, modules not included: what a newcomer reads first.
const ROOT_MOST: usize = 24;

/// The kinds of facts: under `ask_first::fact`, never at the root.
const FACT_KINDS: &[&str] = &[
    "Address",
    "ByteSize",
    "Configured",
    "Count",
    "Id",
    "Link",
    "Moment",
    "Name",
    "NotConfigured",
    "PathName",
    "Span",
    "ToFact",
];

// Every path above resolves (the list is not a wish): a removed or misspelt one fails to build.
#[allow(unused_imports)]
use ask_first::{
    AlteredState, Approved, ApprovedBy, BindText, BindValue, Binding, Clearance, Conditional,
    Exempt, Fact, Guard, GuardBuilder, HasGuard, InputError, Question, Resolve, SealKey,
    ServeError, Serving, Target, Wording, audit, fact, guarded, nonce, principal, protocol,
    testing, wording,
};
#[allow(unused_imports)]
use ask_first::{
    audit::{AuditEvent, AuditOutcome, AuditSink, OUTCOME_META_KEY, Route, outcome_of},
    fact::{
        Address, ByteSize, Configured, Count, Evidence, EvidenceItem, Id, Link, Moment, Name,
        NotConfigured, PathName, Span, ToFact,
    },
    nonce::{Nonce, NonceStore, NonceStoreError, SpendFuture},
    principal::{Caller, Identity, default_principal},
    protocol::{GuardCall, Interruption, InterruptionKind},
    testing::{Era, Person, Reply, confirm_token_in, connect, text_of},
};

/// One public name: its path in the facade and what it re-exports (`None` for a module).
struct Exported {
    path: String,
    source: Option<String>,
}

fn hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("doc")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|word| word == "hidden")
    })
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// The leaves of a `use` tree: `(name in the facade, path re-exported)`; an error for a glob.
fn leaves(tree: &UseTree, prefix: &str, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}::{name}")
        }
    };
    match tree {
        UseTree::Path(path) => leaves(&path.tree, &join(&path.ident.to_string()), out),
        UseTree::Name(name) => {
            let name = name.ident.to_string();
            out.push((name.clone(), join(&name)));
            Ok(())
        }
        UseTree::Rename(rename) => {
            out.push((rename.rename.to_string(), join(&rename.ident.to_string())));
            Ok(())
        }
        UseTree::Glob(_) => Err(format!("a glob re-export `pub use {prefix}::*`")),
        UseTree::Group(group) => group
            .items
            .iter()
            .try_for_each(|tree| leaves(tree, prefix, out)),
    }
}

/// The public surface of `items` (a file or an inline module's body) under `module`.
fn surface(items: &[Item], module: &str, out: &mut Vec<Exported>) -> Result<(), String> {
    let join = |name: &str| {
        if module.is_empty() {
            name.to_owned()
        } else {
            format!("{module}::{name}")
        }
    };
    for item in items {
        match item {
            Item::Use(item) if is_pub(&item.vis) && !hidden(&item.attrs) => {
                let mut found = Vec::new();
                leaves(&item.tree, "", &mut found)?;
                for (name, source) in found {
                    let path = join(&name);
                    // A crate re-exported as itself, or a module re-exported whole, would bring
                    // every item in it. Functions and macros are lower-case too: those the
                    // facade exports are listed in SURFACE, a module is not.
                    if !source.contains("::") {
                        return Err(format!("`pub use {source}` re-exports a whole crate"));
                    }
                    if name.starts_with(|c: char| c.is_ascii_lowercase())
                        && !SURFACE.contains(&path.as_str())
                    {
                        return Err(format!(
                            "`{path}` (from `{source}`) is lower-case and not in SURFACE: list \
                             a function or macro there; a module re-exported whole would bring \
                             every item in it"
                        ));
                    }
                    out.push(Exported {
                        path,
                        source: Some(source),
                    });
                }
            }
            Item::Mod(item) if is_pub(&item.vis) && !hidden(&item.attrs) => {
                let name = join(&item.ident.to_string());
                let Some((_, body)) = &item.content else {
                    return Err(format!(
                        "`pub mod {name};` is a file module: the facade keeps its modules inline"
                    ));
                };
                out.push(Exported {
                    path: name.clone(),
                    source: None,
                });
                surface(body, &name, out)?;
            }
            Item::Use(_) | Item::Mod(_) => {}
            // The facade only re-exports: anything else public is defined here, and counted.
            other => {
                if let Some(vis) = visibility(other)
                    && is_pub(vis)
                {
                    return Err(format!(
                        "an item defined in the facade itself (under `{module}`): define it in \
                         ask-first-core and re-export it"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn visibility(item: &Item) -> Option<&syn::Visibility> {
    match item {
        Item::Const(item) => Some(&item.vis),
        Item::Enum(item) => Some(&item.vis),
        Item::Fn(item) => Some(&item.vis),
        Item::Static(item) => Some(&item.vis),
        Item::Struct(item) => Some(&item.vis),
        Item::Trait(item) => Some(&item.vis),
        Item::Type(item) => Some(&item.vis),
        Item::Union(item) => Some(&item.vis),
        _ => None,
    }
}

fn facade() -> Vec<Exported> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs");
    let text = std::fs::read_to_string(path).expect("src/lib.rs is readable");
    let file = syn::parse_file(&text).expect("src/lib.rs parses");
    let mut out = Vec::new();
    if let Err(problem) = surface(&file.items, "", &mut out) {
        panic!("src/lib.rs: {problem}");
    }
    out
}

#[test]
fn the_facade_exports_exactly_the_listed_paths() {
    let mut found: Vec<String> = facade().into_iter().map(|item| item.path).collect();
    found.sort();
    let mut listed: Vec<String> = SURFACE.iter().map(|path| (*path).to_owned()).collect();
    listed.sort();
    let added: Vec<_> = found.iter().filter(|path| !listed.contains(path)).collect();
    let removed: Vec<_> = listed.iter().filter(|path| !found.contains(path)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the facade's surface changed: added {added:?}, removed {removed:?}; update SURFACE in \
         tests/public_api.rs (and the guide's list) if that is intended"
    );
    assert_eq!(found, listed);
}

#[test]
fn the_root_holds_the_concepts_and_the_fact_kinds_are_under_fact() {
    let root: Vec<String> = facade()
        .into_iter()
        .filter(|item| item.source.is_some() && !item.path.contains("::"))
        .map(|item| item.path)
        .collect();
    let kinds_at_root: Vec<_> = root
        .iter()
        .filter(|path| FACT_KINDS.contains(&path.as_str()))
        .collect();
    assert!(
        kinds_at_root.is_empty(),
        "fact kinds at the root: {kinds_at_root:?}; export them under `pub mod fact`"
    );
    for kind in FACT_KINDS {
        let path = format!("fact::{kind}");
        assert!(SURFACE.contains(&path.as_str()), "{path} is not exported");
    }
    assert!(
        root.len() <= ROOT_MOST,
        "{} items at the root, more than {ROOT_MOST}: {root:?}",
        root.len()
    );
}

#[test]
fn the_facade_stays_small() {
    let count = facade().len();
    println!("items reachable from ask_first: {count} (before: 231)");
    assert!(
        count <= MOST,
        "{count} items reachable from ask_first, more than {MOST}: put plumbing in `__private`, \
         leave wire-level pieces to ask-first-core / ask-first-serve"
    );
}

#[test]
fn nothing_is_exported_twice() {
    let mut by_source: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for item in facade() {
        if let Some(source) = item.source {
            by_source.entry(source).or_default().push(item.path);
        }
    }
    let twice: Vec<_> = by_source
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .collect();
    assert!(twice.is_empty(), "exported under two paths: {twice:?}");
}

#[test]
fn the_checker_refuses_globs_and_whole_crates() {
    let refused = |source: &str| {
        let file = syn::parse_file(source).expect("parses");
        surface(&file.items, "", &mut Vec::new()).is_err()
    };
    // Positive control: the forms the facade uses pass.
    assert!(!refused(
        "pub use ask_first_core::{Guard, Id};\n pub mod audit { pub use ask_first_core::outcome_of; }\n #[doc(hidden)] pub mod __private { pub use ask_first_core::__private::*; }"
    ));
    assert!(refused("pub use ask_first_core::seal::*;"));
    assert!(refused("pub use ask_first_serve as serve;"));
    assert!(refused("pub use ask_first_core::{seal, stdio};"));
    assert!(refused("pub struct Defined;"));
}
