//! The fourteen tools, one file (or folder) each, and what several of them share
//! ([`common`]). The server type and its shared state are in [`crate::state`].

pub(crate) mod common;

pub(crate) mod check_gist_like;
pub(crate) mod get_gist;
pub(crate) mod get_gist_file;
pub(crate) mod get_user;
pub(crate) mod list_gist_commits;
pub(crate) mod list_gist_forks;
pub(crate) mod list_gists;
pub(crate) mod search_gists;

pub(crate) mod create_gist;
pub(crate) mod delete_gist;
pub(crate) mod delete_gist_files;
pub(crate) mod fork_gist;
pub(crate) mod set_gist_like;
pub(crate) mod update_gist;
