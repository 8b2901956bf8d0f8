//! The fourteen tools, by family, and what they share: argument helpers and error shaping.
//! The server type and its shared state are in [`crate::state`].

mod arguments;
pub mod common;
pub mod create_gist;
pub mod delete_gist;
pub mod delete_gist_files;
pub mod fork_gist;
pub mod read;
pub mod search;
pub mod set_gist_like;
pub mod update_gist;
pub mod users;

pub use arguments::Parameters;
