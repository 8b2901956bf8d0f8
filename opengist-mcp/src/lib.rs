//! opengist-mcp: an MCP server for Opengist, the self-hosted pastebin, with a confirmation
//! guard on every destructive tool.
//!
//! Fourteen tools read, search, create, update, fork, like and delete gists. Deleting, and
//! publishing anything that is not private, asks the person at the client first, through the
//! `mcp-guard` framework: the Opengist client's write methods accept only the guard's
//! approval, so an unguarded destructive call does not compile.

#![warn(missing_docs)]

pub mod cli;
pub mod config;
pub mod doctor;
pub mod http;
pub mod limits;
pub mod logging;
pub mod opengist;
pub mod server;
pub mod targets;
pub mod tools;
