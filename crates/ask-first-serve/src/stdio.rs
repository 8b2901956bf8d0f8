//! Serving over stdio through the hardened transport ([`StdioTransport`]): every line gets an
//! answer, nothing but protocol goes to stdout.
//!
//! rmcp's own stdio transport drops a line it cannot parse without a reply (invalid UTF-8, JSON
//! nested deeper than serde_json's 128 levels, a line over its 16 MiB cap) and answers a
//! `tools/call` whose `params` have a wrong type as an unknown method. [`StdioTransport`]
//! frames the lines itself and answers each one: longer than [`MAX_LINE_BYTES`], nested deeper
//! than [`MAX_DEPTH`], more than [`MAX_VALUES`] values, not JSON, not a JSON-RPC envelope, or
//! `params` that do not fit are answered with the JSON-RPC error that names the problem;
//! everything else goes to rmcp unchanged. It serves any [`rmcp::ServerHandler`], guarded or
//! not: `handler.serve(stdio())`.

pub(crate) mod transport;

pub use transport::{MAX_DEPTH, MAX_LINE_BYTES, MAX_VALUES, StdioTransport, stdio};
// The line checks themselves, for the fuzz targets only.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use transport::checks::{
    Envelope, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, Shape, Verdict, check_line,
    error_response, leading_id, nesting_depth, shape, too_many_values,
};

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

/// Why a stdio session did not start or ended badly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StdioError {
    /// The session could not start; [`StdioError::closed_before_start`] tells whether the
    /// client merely closed stdin before its first request.
    #[error("the MCP session could not start: {detail}")]
    Start {
        /// What rmcp said.
        detail: String,
        /// Whether stdin closed before the first request.
        closed: bool,
    },
    /// The session ended with an error.
    #[error("the MCP session ended with an error: {detail}")]
    Ended {
        /// What rmcp said.
        detail: String,
    },
}

impl StdioError {
    /// Whether the client closed stdin before its first request (not a failure for most
    /// servers: [`crate::Serving::serve`] treats it as a normal end).
    pub fn closed_before_start(&self) -> bool {
        matches!(self, Self::Start { closed: true, .. })
    }
}

/// Serves `server` on stdin/stdout with the hardened transport until stdin closes.
pub async fn serve_stdio<S>(server: S) -> Result<(), StdioError>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let running = server
        .serve(stdio())
        .await
        .map_err(|error| StdioError::Start {
            closed: matches!(error, ServerInitializeError::ConnectionClosed(_)),
            detail: error.to_string(),
        })?;
    running.waiting().await.map_err(|error| StdioError::Ended {
        detail: error.to_string(),
    })?;
    tracing::debug!("stdin closed");
    Ok(())
}
