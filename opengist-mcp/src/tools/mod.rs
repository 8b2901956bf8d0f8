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

pub mod create_gist;
pub mod delete_gist;
pub mod delete_gist_files;
pub mod fork_gist;
pub mod set_gist_like;
pub mod update_gist;
