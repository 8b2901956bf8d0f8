//! The Opengist REST client: typed requests ([`requests`]), typed responses ([`responses`]),
//! one error type ([`error`]), gist references ([`gist_ref`]) and the client itself.
//!
//! Write methods take the guard's clearance or approval by value; the raw HTTP write path is
//! private to the client, so no other module can reach a create, update or delete without one.

pub mod access;
pub mod error;
pub mod gist_ref;
pub mod git_head;
pub mod read_time;
pub mod requests;
pub mod responses;
pub mod topics;

mod client;

pub use access::{Change, Grant, Identity, TokenAccess};
pub(crate) use client::utf8_window;
pub use client::{
    ClientOptions, ListScope, MAX_JSON_BYTES, MAX_PER_PAGE, OpengistClient, RESOLVE_MAX_PAGES,
};
pub use error::{OpengistError, Scope, TimeoutPhase};
pub use gist_ref::{GistRef, GistRefError, Sha, ShaError};
pub use responses::{
    ApiInfo, ChangeStatus, Commit, CommitAuthor, ForkOutcome, GistDetail, GistFile, GistSummary,
    Health, LikeChange, LikeState, Owner, Page, RawFile, User,
};
