//! MCP over stdio where every line gets an answer: the guard framework's transport
//! ([`mcp_guard::stdio`]), which any server built on the guard can use; re-exported here for the
//! binary, its tests and its fuzz targets.

pub use mcp_guard::stdio::*;
