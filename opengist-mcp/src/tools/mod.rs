//! The fourteen tools, one file (or folder) each, and what several of them share
//! ([`common`]). The server type and its shared state are in [`crate::state`].

pub mod common;

pub mod check_gist_like;
pub mod get_gist;
pub mod get_gist_file;
pub mod get_user;
pub mod list_gist_commits;
pub mod list_gist_forks;
pub mod list_gists;
pub mod search_gists;

mod audit_outcome;
mod outcome;
mod preflight;
pub mod write;

pub use common::Parameters;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::state::OpengistServer;

impl OpengistServer {
    /// The routers of the eight reading tools, one each.
    pub(crate) fn reading_routers() -> ToolRouter<Self> {
        Self::list_gists_router()
            + Self::get_gist_router()
            + Self::get_gist_file_router()
            + Self::list_gist_commits_router()
            + Self::list_gist_forks_router()
            + Self::check_gist_like_router()
            + Self::search_gists_router()
            + Self::get_user_router()
    }
}
