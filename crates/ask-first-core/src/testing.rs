//! Test doubles for a server built on the guard (feature `testing`, off by default): a
//! scripted person at an in-process rmcp client, and [`connect`] to put one in front of a
//! server in either protocol era.
//!
//! The [`Person`] answers every dialog the way its [`Reply`] says (accept with the box ticked
//! or unticked, decline, cancel, accept with any content, fail, never answer), records each
//! question it was shown, and can hold a dialog open until the test lets it answer (the window
//! in which a client cancels). It declares the elicitation capability unless made
//! [`Person::without_elicitation`], so the guard takes its two-call token path.
//!
//! In the 2025-11-25 era ([`Era::Legacy`]) the guard pushes `elicitation/create` to the
//! person; in the 2026-07-28 era ([`Era::Modern`]) `tools/call` returns `input_required` and
//! rmcp's client answers it through the same handler, so one person serves both.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    CallToolResult, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, Implementation,
    ProtocolVersion,
};
use rmcp::service::{
    ClientInitializeError, NotificationContext, RequestContext, RoleClient, RunningService,
};
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, ServerHandler, ServiceExt,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::APPROVE_PROPERTY;

/// Which protocol a test's client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, 2025-11-25: the guard pushes `elicitation/create`.
    Legacy,
    /// `server/discover`, 2026-07-28: the guard returns `input_required`.
    Modern,
}

impl Era {
    /// Both eras, the older first: `for era in Era::BOTH { ... }`.
    pub const BOTH: [Era; 2] = [Era::Legacy, Era::Modern];

    /// The protocol version a session in this era negotiates.
    pub fn protocol_version(self) -> ProtocolVersion {
        match self {
            Era::Legacy => ProtocolVersion::V_2025_11_25,
            Era::Modern => ProtocolVersion::V_2026_07_28,
        }
    }
}

/// What the person at the client answers when asked.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Accept with the approval box ticked (`approve: true`).
    Approve,
    /// Accept with the box unticked (`approve: false`).
    Unticked,
    /// Decline the dialog.
    Decline,
    /// Cancel (dismiss) the dialog.
    Cancel,
    /// Never answer.
    Silent,
    /// Accept without any content.
    NoContent,
    /// Accept with `approve: 1`.
    NotABool,
    /// Accept with `approve: "true"`.
    TrueAsString,
    /// Accept with exactly this content.
    Content(Value),
    /// The client's dialog fails with an internal error.
    Fails,
    /// The client has no handler for `elicitation/create` (a gateway that declared the
    /// capability upstream anyway): JSON-RPC -32601.
    MethodNotFound,
    /// The client says elicitation is not supported (the Python SDK's default answer):
    /// JSON-RPC -32600.
    NotSupported,
}

/// What every clone of one [`Person`] shares: what it saw, and the hold.
#[derive(Default)]
struct Seen {
    asked: AtomicUsize,
    questions: Mutex<Vec<String>>,
    withdrawn: Mutex<Vec<CancelledNotificationParam>>,
    holding: AtomicBool,
    shown: Notify,
    answer: Notify,
    /// Replies still to give before `reply` applies, in order.
    script: Mutex<std::collections::VecDeque<Reply>>,
}

/// A scripted person at an rmcp client: answers every dialog with its [`Reply`] and records
/// what it was shown. Clones share the record, so a test keeps one and hands one to the
/// client.
#[derive(Clone)]
pub struct Person {
    reply: Reply,
    can_elicit: bool,
    seen: Arc<Seen>,
}

impl Person {
    /// A person whose client declares elicitation and who answers every dialog with `reply`.
    pub fn new(reply: Reply) -> Self {
        Self {
            reply,
            can_elicit: true,
            seen: Arc::default(),
        }
    }

    /// A person who answers the first dialog with the first of `replies`, the second with the
    /// second, and every later one with the last (e.g. `[Reply::Approve, Reply::Decline]`:
    /// yes to the first question, no to any question asked again).
    pub fn scripted(replies: impl IntoIterator<Item = Reply>) -> Self {
        let mut replies: std::collections::VecDeque<Reply> = replies.into_iter().collect();
        let last = replies.pop_back().unwrap_or(Reply::Decline);
        let person = Self::new(last);
        *lock(&person.seen.script) = replies;
        person
    }

    /// A client that declares no elicitation capability: the guard never shows it a dialog
    /// and answers with a `confirm_token` instead.
    pub fn without_elicitation() -> Self {
        Self::new(Reply::Approve).declaring_elicitation(false)
    }

    /// The same person, with its client declaring the elicitation capability or not.
    pub fn declaring_elicitation(mut self, declared: bool) -> Self {
        self.can_elicit = declared;
        self
    }

    /// The same person, holding each dialog open until [`Person::answer_held`] (or
    /// [`Person::stop_holding`]) lets it answer.
    pub fn holding(self) -> Self {
        self.seen.holding.store(true, Ordering::SeqCst);
        self
    }

    /// Whether this person's client declares the elicitation capability.
    pub fn declares_elicitation(&self) -> bool {
        self.can_elicit
    }

    /// How many dialogs this person was shown.
    pub fn asked(&self) -> usize {
        self.seen.asked.load(Ordering::SeqCst)
    }

    /// The message of every form dialog this person was shown, in order.
    pub fn questions(&self) -> Vec<String> {
        lock(&self.seen.questions).clone()
    }

    /// Every `notifications/cancelled` the server sent this client (a withdrawn dialog).
    pub fn withdrawn(&self) -> Vec<CancelledNotificationParam> {
        lock(&self.seen.withdrawn).clone()
    }

    /// Waits until a dialog is shown (at once if one was shown since the last wait).
    pub async fn dialog_shown(&self) {
        self.seen.shown.notified().await;
    }

    /// Lets one held dialog answer (the next one, if none is held yet).
    pub fn answer_held(&self) {
        self.seen.answer.notify_one();
    }

    /// Answers every dialog at once from now on.
    pub fn stop_holding(&self) {
        self.seen.holding.store(false, Ordering::SeqCst);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.seen.asked.fetch_add(1, Ordering::SeqCst);
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            lock(&self.seen.questions).push(message.clone());
        }
        self.seen.shown.notify_one();
        if self.seen.holding.load(Ordering::SeqCst) {
            self.seen.answer.notified().await;
        }
        let scripted = lock(&self.seen.script).pop_front();
        Ok(match scripted.as_ref().unwrap_or(&self.reply) {
            Reply::Approve => accept(json!({ APPROVE_PROPERTY: true })),
            Reply::Unticked => accept(json!({ APPROVE_PROPERTY: false })),
            Reply::Decline => ElicitResult::new(ElicitationAction::Decline),
            Reply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            Reply::Silent => std::future::pending().await,
            Reply::NoContent => ElicitResult::new(ElicitationAction::Accept),
            Reply::NotABool => accept(json!({ APPROVE_PROPERTY: 1 })),
            Reply::TrueAsString => accept(json!({ APPROVE_PROPERTY: "true" })),
            Reply::Content(content) => accept(content.clone()),
            Reply::Fails => return Err(ErrorData::internal_error("the dialog broke", None)),
            Reply::MethodNotFound => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "Method not found",
                    None,
                ));
            }
            Reply::NotSupported => {
                return Err(ErrorData::invalid_request(
                    "Elicitation not supported",
                    None,
                ));
            }
        })
    }

    async fn on_cancelled(
        &self,
        params: CancelledNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.seen.withdrawn).push(params);
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.can_elicit {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("scripted-person", "0.0.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// The text of a tool result as a model reads it: its text blocks, joined by newlines.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The token a token reply's text gives on its `confirm_token: <TOKEN>` line (see
/// [`text_of`]), if it has one: what the second call quotes.
pub fn confirm_token_in(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("confirm_token: "))
        .map(|token| token.trim().to_owned())
}

/// Why [`connect`] found no session.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The handshake failed: the server refused or closed the pipe.
    #[error("the {era:?} handshake with the server under test failed: {source}")]
    Handshake {
        /// The era the client tried.
        era: Era,
        /// What rmcp's client reported.
        #[source]
        source: Box<ClientInitializeError>,
    },
    /// The session runs another protocol version than the era asked for: the server does
    /// not offer that era.
    #[error(
        "the {era:?} session negotiated protocol {negotiated:?}, not {expected:?}: does the server support that era?"
    )]
    WrongEra {
        /// The era the client asked for.
        era: Era,
        /// The version it expected.
        expected: ProtocolVersion,
        /// The version the session negotiated.
        negotiated: Option<ProtocolVersion>,
    },
}

/// Serves `server` on an in-memory pipe (in a spawned tokio task) and connects `person`'s
/// client to it in `era`: the `initialize` handshake for [`Era::Legacy`], `server/discover`
/// preferring 2026-07-28 for [`Era::Modern`]. Fails if the negotiated version is not the
/// era's. The server task ends when the client does.
pub async fn connect<S: ServerHandler>(
    era: Era,
    server: S,
    person: Person,
) -> Result<RunningService<RoleClient, Person>, ConnectError> {
    let (server_io, client_io) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = match era {
        Era::Legacy => person.serve(client_io).await,
        Era::Modern => {
            person
                .serve_with_lifecycle(
                    client_io,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
        }
    }
    .map_err(|source| ConnectError::Handshake {
        era,
        source: Box::new(source),
    })?;
    let negotiated = client.peer_info().map(|info| info.protocol_version.clone());
    let expected = era.protocol_version();
    if negotiated.as_ref() != Some(&expected) {
        return Err(ConnectError::WrongEra {
            era,
            expected,
            negotiated,
        });
    }
    Ok(client)
}
