//! Legacy (2025-11-25) MCP sessions whose ids say which replica holds them.
//!
//! A legacy session lives in the memory of the replica that answered its `initialize`: a
//! pushed dialog is answered on that session's channel. A gateway in front of several
//! replicas must therefore send every request of a session to that one replica. Hashing the
//! `Mcp-Session-Id` cannot do it: `initialize` carries no session id, so it lands anywhere,
//! and the hash of the id it gets back points at an unrelated replica. With a replica id
//! configured (the replica-id setting), this manager makes ids of the form
//! `<replica id>.<uuid>`, so the gateway routes on the prefix (an nginx `map` on the
//! `Mcp-Session-Id` header's text before the first `.`).
//! Everything else is rmcp's [`LocalSessionManager`].

use std::sync::Arc;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};

/// rmcp's local session manager, with session ids prefixed by the replica's id.
#[derive(Debug, Default)]
pub struct ReplicaSessionManager {
    inner: Arc<LocalSessionManager>,
    prefix: Option<String>,
}

impl ReplicaSessionManager {
    /// Sessions of `inner` (shared with the HTTP layers that count and own sessions) whose
    /// ids start with `<prefix>.`; `None`: plain ids, as rmcp makes them.
    pub fn new(inner: Arc<LocalSessionManager>, prefix: Option<String>) -> Self {
        Self { inner, prefix }
    }
}

impl SessionManager for ReplicaSessionManager {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let Some(prefix) = &self.prefix else {
            return self.inner.create_session().await;
        };
        let id: SessionId = format!("{prefix}.{}", uuid_v4()).into();
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}

/// A random (version 4) UUID in its usual text form, from the `rand` already used for seals.
fn uuid_v4() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ids_start_with_the_replica_and_stay_unique() {
        let manager = ReplicaSessionManager::new(Default::default(), Some("web-2".to_owned()));
        let (a, _ta) = manager.create_session().await.expect("session");
        let (b, _tb) = manager.create_session().await.expect("session");
        assert!(a.starts_with("web-2."), "{a}");
        assert_ne!(a, b);
        assert_eq!(a.len(), "web-2.".len() + 36);
        assert!(manager.has_session(&a).await.expect("lookup"));
        let plain = ReplicaSessionManager::new(Default::default(), None);
        let (c, _tc) = plain.create_session().await.expect("session");
        assert!(!c.contains('.'), "{c}");
    }
}
