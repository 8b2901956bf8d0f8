//! What several tools share, one file per kind of thing. A helper only one tool uses lives in
//! that tool's file.
//!
//! - [`arguments`]: the [`Parameters`] extractor, [`GistIdArg`], the `username` check.
//! - [`list_scope`]: which gist list to read (`list_gists`, `search_gists`).
//! - [`paging`]: `page`/`per_page` and the next-page call of per-gist lists.
//! - [`gist_shapes`]: output shapes several results carry (a listed gist, a commit).
//! - [`tool_schemas`]: the post-processing of every tool's schemas.
//! - [`guard_texts`]: what the guarded tools' descriptions and the instructions say about the
//!   guard, for the running `ELICITATION` setting.
//! - `existing_gist`: resolving the gist a write changes, and the facts its question shows.
//! - `preflight`: the checks a write makes before anyone is asked.
//! - `write_outcome`: what became of a write whose answer was lost (the read-back).
//! - `write_answer`: a failed write's result, with its outcome named for the audit log.

pub(crate) mod arguments;
pub(crate) mod gist_shapes;
pub(crate) mod guard_texts;
pub(crate) mod list_scope;
pub(crate) mod paging;
pub(crate) mod tool_schemas;

pub(crate) mod existing_gist;
pub(crate) mod preflight;
pub(crate) mod write_answer;
pub(crate) mod write_outcome;

#[cfg(test)]
pub(crate) mod fixtures;

pub(crate) use arguments::{GistIdArg, Parameters};
