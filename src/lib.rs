pub use mcp_guard_core::*; pub use mcp_guard_derive::guarded;
