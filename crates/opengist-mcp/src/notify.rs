//! `notifications/resources/list_changed` after this server's own writes: to every legacy
//! (2025-11-25) session that listed resources, and to every open 2026-07-28
//! `subscriptions/listen` stream that asked for `resourcesListChanged`, of the account that
//! wrote. Each session and stream is remembered with its [`Audience`] (the account its
//! requests act as: one for everyone with a configured token, one per person's token on a
//! team server), and only that audience's are told, so one person never learns when another
//! writes.
//!
//! A legacy session is remembered when it calls `resources/list` over a channel that can carry
//! a notification (a session made by `initialize`: stdio, or stateful HTTP); other 2026-07-28
//! requests are stateless and have no such channel, so there the client opens a
//! `subscriptions/listen` stream, remembered for as long as it is open. At most
//! [`MAX_WATCHERS`] of each are remembered (the oldest is forgotten first) and closed ones are
//! dropped whenever the list is touched, so the lists stay bounded however many sessions come
//! and go. Sending never holds up the write that caused it: it runs on its own task, each send
//! bounded by [`SEND_TIMEOUT`].
//!
//! [`ResourceState`], what the server's shared state holds for resources, is here too: this
//! file imports nothing else of the crate, so the shared state can hold it without a cycle.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ResourceListChangedNotification, ServerNotification};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};

/// Whose sessions are told about a change: a digest naming an account (its cache owner),
/// never a token.
pub(crate) type Audience = [u8; 16];

/// Sessions remembered at most.
pub(crate) const MAX_WATCHERS: usize = 1024;
/// Longest wait for one session's notification to be queued.
pub(crate) const SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// What the resources feature holds for one process: whether it is on, and the sessions to
/// tell about changes.
#[derive(Default)]
pub struct ResourceState {
    enabled: bool,
    watchers: ListWatchers,
}

impl ResourceState {
    /// Resources on (`true`) or off.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            watchers: ListWatchers::default(),
        }
    }

    /// Whether resources, templates, completion and links are offered.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The sessions told about list changes.
    pub fn watchers(&self) -> &ListWatchers {
        &self.watchers
    }
}

/// The sessions to tell when the resource list changed.
#[derive(Default)]
pub struct ListWatchers {
    peers: Mutex<Vec<(Audience, Peer<RoleServer>)>>,
    streams: Mutex<Vec<(Arc<()>, Audience, SubscriptionSink)>>,
}

/// Forgets a `subscriptions/listen` stream when dropped (the stream ended).
pub struct Listening<'a> {
    watchers: &'a ListWatchers,
    key: Arc<()>,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        if let Ok(mut streams) = self.watchers.streams.lock() {
            streams.retain(|(key, _, _)| !Arc::ptr_eq(key, &self.key));
        }
    }
}

fn list_changed() -> ServerNotification {
    ServerNotification::ResourceListChangedNotification(ResourceListChangedNotification {
        method: Default::default(),
        extensions: Default::default(),
    })
}

impl ListWatchers {
    /// Remembers `peer`'s session for `audience`, if it has a handshake (legacy) and is not
    /// remembered yet.
    pub fn watch(&self, peer: &Peer<RoleServer>, audience: Audience) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        let Ok(mut peers) = self.peers.lock() else {
            return;
        };
        peers.retain(|(_, p)| !p.is_transport_closed());
        let known = peers.iter().any(|(heard, p)| {
            *heard == audience && p.peer_info().is_some_and(|i| Arc::ptr_eq(&i, &info))
        });
        if known {
            return;
        }
        if peers.len() >= MAX_WATCHERS {
            peers.remove(0);
        }
        peers.push((audience, peer.clone()));
    }

    /// Remembers an open `subscriptions/listen` stream for `audience` until the returned guard
    /// is dropped.
    pub fn listen(&self, sink: &SubscriptionSink, audience: Audience) -> Listening<'_> {
        let key = Arc::new(());
        if let Ok(mut streams) = self.streams.lock() {
            if streams.len() >= MAX_WATCHERS {
                streams.remove(0);
            }
            streams.push((Arc::clone(&key), audience, sink.clone()));
        }
        Listening {
            watchers: self,
            key,
        }
    }

    /// Sessions and streams remembered now.
    pub fn len(&self) -> usize {
        self.peers.lock().map(|p| p.len()).unwrap_or_default()
            + self.streams.lock().map(|s| s.len()).unwrap_or_default()
    }

    /// Whether no session is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tells every remembered open session of `audience` that the list changed, on a task of
    /// its own.
    pub fn changed(&self, audience: Audience) {
        let peers: Vec<Peer<RoleServer>> = match self.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|(_, p)| !p.is_transport_closed());
                peers
                    .iter()
                    .filter(|(heard, _)| *heard == audience)
                    .map(|(_, peer)| peer.clone())
                    .collect()
            }
            Err(_) => return,
        };
        let streams: Vec<SubscriptionSink> = self
            .streams
            .lock()
            .map(|s| {
                s.iter()
                    .filter(|(_, heard, _)| *heard == audience)
                    .map(|(_, _, sink)| sink.clone())
                    .collect()
            })
            .unwrap_or_default();
        if peers.is_empty() && streams.is_empty() {
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
            for sink in streams {
                let sent = tokio::time::timeout(SEND_TIMEOUT, sink.send(list_changed())).await;
                if !matches!(sent, Ok(Ok(()))) {
                    tracing::debug!(
                        "a subscription could not be told that the resource list changed"
                    );
                }
            }
        });
    }
}
