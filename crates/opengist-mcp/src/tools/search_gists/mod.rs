//! `search_gists`: Opengist has no search endpoint, so this pages through a gist list and
//! matches, bounded by design.
//!
//! How it beats the obvious version (fetch every gist, then grep):
//! - Metadata (title, description, topics, owner) is matched from the list itself, with no
//!   further request. Only gists that did not match on metadata are read in full, and only
//!   when `filenames` or `content` is asked for.
//! - Full reads run four at a time (`buffer_unordered(4)`), and results are consumed in list
//!   order at a "frontier", so the answer is deterministic: the same matches, the same stop
//!   point and the same `next_call` whatever order the reads finish in.
//! - It stops as soon as `limit` matches are in hand (reads past that point are never
//!   started, or are dropped in flight), when the content byte budget or the read budget is
//!   used up, or after `max_pages` pages; the result says which, how much was scanned, and the
//!   exact call that resumes at the first gist not examined.
//!
//! Matching is case-insensitive substring matching: a gist matches when the whole query (with
//! runs of whitespace read as one space) occurs in one of the chosen fields, or when every
//! whitespace-separated term occurs in some chosen field.
//!
//! The parts, one file each: [`args`] (the arguments and their checks), [`matching`] (queries,
//! hits, one gist's files scanned), [`scan`] (the frontier over list pages, the stop points,
//! the result), the handler, and the `resource_link`s of a result.

pub(crate) mod args;
pub(crate) mod matching;
pub(crate) mod scan;

mod handler;
mod links;

#[cfg(test)]
mod tests;
