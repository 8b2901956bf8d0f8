//! The Opengist REST client: typed requests ([`requests`]), typed responses ([`responses`]),
//! one error type ([`error`]), gist references ([`gist_ref`]) and the client itself.
//!
//! Each guarded operation is one file: its request body, its guard target (what an approval
//! is bound to, the question a person sees, when it is asked), its pre-ask check and the
//! client method that takes the guard's clearance or approval by value: [`create_gist`],
//! [`update_gist`], [`delete_gist_files`], [`delete_gist`]. What they share about an existing
//! gist is [`gist_facts`]; what the approval page shows of its files, [`gist_evidence`]. The
//! raw HTTP write path is private to this module, so no other
//! module can reach a create, update or delete without the guard.

pub mod access;
pub mod create_gist;
pub mod delete_gist;
pub mod delete_gist_files;
pub mod error;
pub mod fork_gist;
pub mod gist_evidence;
pub mod gist_facts;
pub mod gist_ref;
pub mod git_head;
pub mod probes;
pub mod read_time;
pub mod requests;
pub mod responses;
pub mod set_gist_like;
pub mod topics;
pub mod update_gist;

mod client;

pub use access::{Grant, Identity, TokenAccess};
pub(crate) use client::utf8_window;
pub use client::{
    ClientOptions, DEFAULT_MAX_REQUESTS, DEFAULT_MAX_REQUESTS_PER_PRINCIPAL, DEFAULT_QUEUE_SECS,
    ListScope, MAX_JSON_BYTES, MAX_PER_PAGE, OpengistClient, RESOLVE_MAX_PAGES, RequestLimits,
    as_principal, install_tls_provider,
};
pub use error::{BusyCap, OpengistError, Scope, TimeoutPhase, TokenUse};
pub use gist_ref::{GistRef, GistRefError, Sha, ShaError};
pub use responses::{
    ApiInfo, ChangeStatus, Commit, CommitAuthor, ForkOutcome, GistDetail, GistFile, GistSummary,
    Health, LikeChange, LikeState, Owner, Page, RawFile, User,
};
