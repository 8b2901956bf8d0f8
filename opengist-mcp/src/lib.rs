//! opengist-mcp: an MCP server for Opengist with a confirmation guard on every destructive tool.

pub mod opengist;
pub mod targets;
pub mod cli;
pub mod config;
pub mod http;
pub mod logging;
