//! MCP over stdio where every line gets an answer: the guard framework's transport
//! ([`ask_first_serve::stdio`]), which any server built on the guard can use; re-exported here for the
//! binary, its tests and its fuzz targets.

pub use ask_first_serve::stdio::*;
