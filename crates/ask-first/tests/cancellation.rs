//! A cancelled call never runs: a server built with `#[guarded]`, an rmcp client in process,
//! both protocol eras.
//!
//! The client sends `notifications/cancelled` for a guarded call at the moments an attacker (or
//! an impatient client) would: while the pushed dialog is open (2025-11-25) and then answers it
//! "approve" anyway; and while the server is still resolving the target, on every path (pushed
//! dialog, `input_required` retry with an approval, confirm_token, exempt). In every case the
//! body must not run and the note must still be there; a later call on the same session still
//! works.

#[macro_use]
mod eras;
#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;
use ask_first::testing::{Era, Person, Reply, confirm_token_in, connect, text_of};
use notes::{DeleteNote, Store, WriteNote, note_id};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ask_first::{Approved, Clearance, Guard, HasGuard, InputError, Resolve, fact::Id, guarded};
use ask_first_core::{APPROVAL_INPUT_KEY, APPROVE_PROPERTY};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, InputResponses,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, RoleClient, RunningService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;

#[derive(Deserialize, JsonSchema)]
struct NoteArgs {
    id: String,
    #[serde(default)]
    shared: bool,
    #[allow(dead_code)]
    #[serde(default)]
    confirm_token: Option<String>,
    /// Says when this call is over (see [`Calls`]).
    #[serde(skip)]
    end: CallEnd,
}

/// The calls that reached the server (entered `resolve`) and those that are over: their
/// arguments, which a call holds from `resolve` to the end of its body, were dropped (it
/// finished, or it was cancelled and dropped). Once every call that entered is over, nothing
/// of a cancelled one can still run: the event a "nothing ran" check waits for.
#[derive(Default)]
struct Calls {
    entered: AtomicUsize,
    ended: AtomicUsize,
    changed: Notify,
}

impl Calls {
    /// Waits until every call that reached the server is over (at most 10 s: then it fails).
    async fn all_ended(&self, what: &str) {
        let settled = async {
            loop {
                let changed = self.changed.notified();
                if self.ended.load(Ordering::SeqCst) == self.entered.load(Ordering::SeqCst) {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), settled)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{what}: {} call(s) reached the server and only {} ended within 10 s",
                    self.entered.load(Ordering::SeqCst),
                    self.ended.load(Ordering::SeqCst)
                )
            });
    }
}

/// Held in a call's arguments once the call reaches the server; tells [`Calls`] when it is over.
#[derive(Default)]
struct CallEnd(std::sync::Mutex<Option<Arc<Calls>>>);

impl CallEnd {
    fn arm(&self, calls: &Arc<Calls>) {
        let mut slot = self.0.lock().expect("call end lock");
        if slot.is_none() {
            calls.entered.fetch_add(1, Ordering::SeqCst);
            *slot = Some(calls.clone());
        }
    }
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        let calls = self.0.get_mut().ok().and_then(Option::take);
        if let Some(calls) = calls {
            calls.ended.fetch_add(1, Ordering::SeqCst);
            calls.changed.notify_waiters();
        }
    }
}

/// Holds a call inside `resolve` until the test lets it go: the window in which the client
/// cancels.
#[derive(Default)]
struct Gate {
    armed: AtomicBool,
    entered: Notify,
    release: Notify,
}

impl Gate {
    async fn pass(&self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.entered.notify_one();
            self.release.notified().await;
        }
    }
}

#[derive(Clone)]
struct NotesServer {
    guard: Guard,
    store: Arc<Store>,
    bodies: Arc<AtomicUsize>,
    gate: Arc<Gate>,
    calls: Arc<Calls>,
}

impl HasGuard for NotesServer {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

/// The note `id` names and the length of its text, if it exists.
fn existing(server: &NotesServer, id: &str) -> Result<(Id, u64), InputError> {
    let id = note_id(id)?;
    let Some(bytes) = server.store.text_len(&id) else {
        return Err(InputError::new(format!("no note `{id}`")));
    };
    Ok((id, bytes as u64))
}

impl Resolve<NotesServer, NoteArgs> for DeleteNote {
    async fn resolve(server: &NotesServer, args: &NoteArgs) -> Result<Self, InputError> {
        args.end.arm(&server.calls);
        server.gate.pass().await;
        let (id, bytes) = existing(server, &args.id)?;
        Ok(Self { id, bytes })
    }
}

impl Resolve<NotesServer, NoteArgs> for WriteNote {
    async fn resolve(server: &NotesServer, args: &NoteArgs) -> Result<Self, InputError> {
        args.end.arm(&server.calls);
        server.gate.pass().await;
        Ok(Self {
            id: existing(server, &args.id)?.0,
            text: String::new(),
            shared: args.shared,
        })
    }
}

#[tool_router]
impl NotesServer {
    #[guarded(always)]
    #[tool(description = "Delete a note")]
    async fn delete_note(
        &self,
        Parameters(_args): Parameters<NoteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        self.bodies.fetch_add(1, Ordering::SeqCst);
        let id = approved.target().id.clone();
        self.store.delete(approved);
        format!("deleted {id}")
    }

    #[guarded(when = "is_shared")]
    #[tool(description = "Touch a note; asks when it would be shared")]
    async fn write_note(
        &self,
        Parameters(_args): Parameters<NoteArgs>,
        clearance: Clearance<WriteNote>,
    ) -> String {
        self.bodies.fetch_add(1, Ordering::SeqCst);
        format!("wrote {}", clearance.into_target().id)
    }
}

#[tool_handler]
impl ServerHandler for NotesServer {}

impl NotesServer {
    fn new() -> Self {
        Self {
            guard: Guard::builder("notes-test").build(),
            store: Arc::new(Store::seeded()),
            bodies: Arc::default(),
            gate: Arc::default(),
            calls: Arc::default(),
        }
    }

    fn has(&self, id: &str) -> bool {
        self.store.notes().contains_key(id)
    }
}

struct Session {
    client: RunningService<RoleClient, Person>,
    server: NotesServer,
    person: Person,
}

impl Session {
    /// A fresh server, and a person who approves every dialog but only when the test lets
    /// them (see [`Person::holding`]).
    async fn open(era: Era, can_elicit: bool) -> Self {
        let server = NotesServer::new();
        let person = Person::new(Reply::Approve)
            .declaring_elicitation(can_elicit)
            .holding();
        let client = connect(era, server.clone(), person.clone())
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        Self {
            client,
            server,
            person,
        }
    }

    /// Sends a call whose response the test may never see (a cancelled call gets none).
    async fn start(&self, params: CallToolRequestParams) -> RequestHandle<RoleClient> {
        self.client
            .peer()
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("the call is sent")
    }

    /// Cancels `handle`, then makes one more round trip: the server reads its input in order,
    /// so when that answer is back, the cancellation has been seen.
    async fn cancel(&self, handle: RequestHandle<RoleClient>) {
        handle
            .cancel(Some("the user pressed stop".to_owned()))
            .await
            .expect("notifications/cancelled is sent");
        self.client.list_tools(None).await.expect("round trip");
    }

    /// Waits until every call that reached the server is over (the event: nothing of a
    /// cancelled call can run after it), then checks that no body ran.
    async fn assert_nothing_ran(&self, what: &str) {
        self.server.calls.all_ended(what).await;
        assert_eq!(
            self.server.bodies.load(Ordering::SeqCst),
            0,
            "{what}: a cancelled call ran its body"
        );
        assert!(self.server.has("n1"), "{what}: the note was deleted");
    }

    /// The session still works: an approved delete of another note runs.
    async fn assert_still_serves(&self) {
        self.person.stop_holding();
        self.server.gate.armed.store(false, Ordering::SeqCst);
        let mut params = call("delete_note", json!({ "id": "n2" }));
        let response = self
            .client
            .call_tool(params.clone())
            .await
            .expect("a later call is answered");
        if !self.person.declares_elicitation() {
            let token = confirm_token_in(&text_of(&response)).expect("a token");
            params
                .arguments
                .get_or_insert_default()
                .insert("confirm_token".to_owned(), Value::String(token));
            let response = self.client.call_tool(params).await.expect("answered");
            assert_eq!(text_of(&response), "deleted n2");
        } else {
            assert_eq!(text_of(&response), "deleted n2");
        }
        assert!(!self.server.has("n2"));
        // The positive control of the event: the calls that ran are counted as over too.
        self.server.calls.all_ended("the approved delete").await;
        assert!(self.server.calls.ended.load(Ordering::SeqCst) > 0);
    }
}

fn call(tool: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(tool).with_arguments(arguments)
}

fn approved() -> InputResponses {
    InputResponses::from([(
        APPROVAL_INPUT_KEY.to_owned(),
        json!({ "action": "accept", "content": { APPROVE_PROPERTY: true } }),
    )])
}

// ---- the reported attack: cancel while the dialog is open, approve afterwards ---------------

#[tokio::test]
async fn legacy_a_dialog_answered_after_its_call_was_cancelled_runs_nothing() {
    let s = Session::open(Era::Legacy, true).await;
    let handle = s.start(call("delete_note", json!({ "id": "n1" }))).await;
    s.person.dialog_shown().await;
    s.cancel(handle).await;
    // The late "approve".
    s.person.answer_held();
    s.assert_nothing_ran("approve after cancel").await;
    let withdrawn = s.person.withdrawn();
    assert_eq!(
        withdrawn.len(),
        1,
        "the open dialog is withdrawn with notifications/cancelled: {withdrawn:?}"
    );
    s.assert_still_serves().await;
}

// ---- cancelled while the target resolves: the body is never reached -------------------------

/// The client cancels while the server resolves the target, on the path `params` takes.
async fn cancelled_while_resolving(s: &Session, params: CallToolRequestParams, what: &str) {
    s.person.stop_holding();
    s.server.gate.armed.store(true, Ordering::SeqCst);
    let handle = s.start(params).await;
    s.server.gate.entered.notified().await;
    s.cancel(handle).await;
    s.server.gate.release.notify_one();
    s.assert_nothing_ran(what).await;
}

async fn a_pushed_or_input_required_approval_after_cancel_runs_nothing(era: Era) {
    let s = Session::open(era, true).await;
    let params = match era {
        Era::Legacy => call("delete_note", json!({ "id": "n1" })),
        Era::Modern => {
            // Round one: the question and its sealed state; the cancelled retry carries the
            // approval.
            let first = s
                .client
                .call_tool_once(call("delete_note", json!({ "id": "n1" })))
                .await
                .expect("round one");
            let CallToolResponse::InputRequired(first) = first else {
                panic!("expected input_required, got {first:?}");
            };
            let mut params = call("delete_note", json!({ "id": "n1" }));
            params.request_state = first.request_state;
            params.input_responses = Some(approved());
            params
        }
    };
    cancelled_while_resolving(&s, params, &format!("{era:?} dialog")).await;
    if era == Era::Legacy {
        assert_eq!(
            s.person.asked(),
            0,
            "no dialog is pushed for a call that is already cancelled"
        );
    }
    s.assert_still_serves().await;
}

async fn a_confirm_token_quoted_by_a_cancelled_call_runs_nothing(era: Era) {
    let s = Session::open(era, false).await;
    let first = s
        .client
        .call_tool(call("delete_note", json!({ "id": "n1" })))
        .await
        .expect("first call");
    let token = confirm_token_in(&text_of(&first)).expect("a token");
    let params = call("delete_note", json!({ "id": "n1", "confirm_token": token }));
    cancelled_while_resolving(&s, params, &format!("{era:?} token")).await;
    s.assert_still_serves().await;
}

async fn an_exempt_call_that_was_cancelled_runs_nothing(era: Era) {
    let s = Session::open(era, true).await;
    let params = call("write_note", json!({ "id": "n1", "shared": false }));
    cancelled_while_resolving(&s, params, &format!("{era:?} exempt")).await;
    s.assert_still_serves().await;
}

in_both_eras!(
    a_pushed_or_input_required_approval_after_cancel_runs_nothing,
    a_confirm_token_quoted_by_a_cancelled_call_runs_nothing,
    an_exempt_call_that_was_cancelled_runs_nothing,
);
