//! placeholder

use super::OpengistServer;
use rmcp::tool_router;

#[tool_router(router = read_router, vis = "pub(crate)", allow_empty)]
impl OpengistServer {}
