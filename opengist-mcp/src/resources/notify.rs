//! `notifications/resources/list_changed` after this server's own writes, to every legacy
//! (2025-11-25) session that listed resources.
//!
//! A session is remembered when it calls `resources/list` over a channel that can carry a
//! notification (a session made by `initialize`: stdio, or stateful HTTP); 2026-07-28
//! requests are stateless and have no such channel. At most [`MAX_WATCHERS`] sessions are
//! remembered (the oldest is forgotten first) and closed ones are dropped whenever the list is
//! touched, so the list stays bounded however many sessions come and go. Sending never holds
//! up the write that caused it: it runs on its own task, each send bounded by
//! [`SEND_TIMEOUT`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};

/// Sessions remembered at most.
pub const MAX_WATCHERS: usize = 1024;
/// Longest wait for one session's notification to be queued.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// The sessions to tell when the resource list changed.
#[derive(Default)]
pub struct ListWatchers {
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl ListWatchers {
    /// Remembers `peer`'s session, if it has a handshake (legacy) and is not remembered yet.
    pub fn watch(&self, peer: &Peer<RoleServer>) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        let Ok(mut peers) = self.peers.lock() else {
            return;
        };
        peers.retain(|p| !p.is_transport_closed());
        let known = peers
            .iter()
            .any(|p| p.peer_info().is_some_and(|i| Arc::ptr_eq(&i, &info)));
        if known {
            return;
        }
        if peers.len() >= MAX_WATCHERS {
            peers.remove(0);
        }
        peers.push(peer.clone());
    }

    /// Sessions remembered now.
    pub fn len(&self) -> usize {
        self.peers.lock().map(|p| p.len()).unwrap_or_default()
    }

    /// Whether no session is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tells every remembered open session that the list changed, on a task of its own.
    pub fn changed(&self) {
        let peers: Vec<Peer<RoleServer>> = match self.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|p| !p.is_transport_closed());
                peers.clone()
            }
            Err(_) => return,
        };
        if peers.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            for peer in peers {
                let sent =
                    tokio::time::timeout(SEND_TIMEOUT, peer.notify_resource_list_changed()).await;
                if !matches!(sent, Ok(Ok(()))) {
                    tracing::debug!("a session could not be told that the resource list changed");
                }
            }
        });
    }
}
