//! Serving over stdio through the guard's hardened transport ([`ask_first_core::stdio`]):
//! every line gets an answer, nothing but protocol goes to stdout.

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

/// Why a stdio session did not start or ended badly.
#[derive(Debug, thiserror::Error)]
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
        .serve(ask_first_core::stdio::stdio())
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
