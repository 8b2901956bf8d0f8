//! The fourteen tools, by family, and what they share: argument helpers and error shaping.
//! The server type and its shared state are in [`crate::state`].

mod arguments;
mod audit_outcome;
mod outcome;
mod preflight;
pub mod read;
pub mod search;
pub mod users;
pub mod write;

pub use arguments::Parameters;
