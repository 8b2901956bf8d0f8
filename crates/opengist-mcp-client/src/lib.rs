//! The Opengist client and gist cache that `opengist-mcp` serves from.
//!
//! Two layers, in one direction: [`cache`] stands on [`opengist`], and [`opengist`] stands
//! on nothing else of this crate. Neither can reach the server: `opengist-mcp` depends on
//! this crate, never the reverse, so a `use opengist_mcp::…` here does not compile.
//!
//! - [`opengist`]: the REST client, typed requests and answers, one error type, gist
//!   references, and each guarded write (its body, what an approval is bound to, the
//!   question a person sees) taking the guard's approval by value.
//! - [`cache`]: the gists Opengist already sent, kept in memory and keyed by the exact state
//!   they were read at.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod cache;
pub mod opengist;
