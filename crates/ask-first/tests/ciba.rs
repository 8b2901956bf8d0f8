//! The `ciba` route through a real rmcp client and server, in process, in both protocol eras,
//! with a scripted identity provider (a [`Backchannel`] whose polls answer what each test
//! says). What is checked is the guard's side: the record asked about, the pending answer with
//! its code, and that the body runs exactly once, only after an approval, never on repeats, a
//! decline, an expiry or a refused token. The provider's own side (the token checks against a
//! real OpenID provider) is `e2e/test_ciba.py`'s.

#[macro_use]
mod eras;
#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;
use ask_first::testing::{Era, Person, Reply, connect, text_of};
use notes::{DeleteNote, Store, note_id};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ask_first::{Approved, Guard, HasGuard, InputError, Resolve, guarded};
use ask_first_core::{
    AUTHORIZATION_DETAILS_TYPE, ApprovalRecord, ApprovalRoute, BINDING_CODE_KEY, Backchannel,
    BackchannelFuture, BackchannelPoll, BackchannelStarted, Caller,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The provider: it records what it was asked and answers polls from a script (pending once
/// the script is empty).
#[derive(Default)]
struct ScriptedIdp {
    asked: Mutex<Vec<(String, ApprovalRecord, String)>>,
    answers: Mutex<VecDeque<BackchannelPoll>>,
    polls: AtomicUsize,
}

impl ScriptedIdp {
    fn answer(&self, poll: BackchannelPoll) {
        self.answers.lock().expect("answers").push_back(poll);
    }

    fn asked(&self) -> usize {
        self.asked.lock().expect("asked").len()
    }
}

impl Backchannel for ScriptedIdp {
    fn subject(&self, _caller: &Caller<'_>) -> Option<String> {
        Some("alice".to_owned())
    }

    fn start<'a>(
        &'a self,
        subject: &'a str,
        record: &'a ApprovalRecord,
        binding_code: &'a str,
    ) -> BackchannelFuture<'a, Result<BackchannelStarted, String>> {
        let mut asked = self.asked.lock().expect("asked");
        asked.push((subject.to_owned(), record.clone(), binding_code.to_owned()));
        let auth_req_id = format!("req-{}", asked.len());
        Box::pin(async move {
            Ok(BackchannelStarted {
                auth_req_id,
                expires_in: 600,
            })
        })
    }

    fn poll<'a>(
        &'a self,
        _subject: &'a str,
        _record: &'a ApprovalRecord,
    ) -> BackchannelFuture<'a, BackchannelPoll> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let next = self.answers.lock().expect("answers").pop_front();
        Box::pin(async move { next.unwrap_or(BackchannelPoll::Pending) })
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoteArgs {
    id: String,
}

#[derive(Clone)]
struct NotesServer {
    guard: Guard,
    store: Arc<Store>,
    bodies: Arc<AtomicUsize>,
}

impl HasGuard for NotesServer {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<NotesServer, NoteArgs> for DeleteNote {
    async fn resolve(server: &NotesServer, args: &NoteArgs) -> Result<Self, InputError> {
        let id = note_id(&args.id)?;
        let Some(bytes) = server.store.text_len(&id) else {
            return Err(InputError::new(format!("no note `{id}`")));
        };
        Ok(Self {
            id,
            bytes: bytes as u64,
        })
    }
}

#[tool_router]
impl NotesServer {
    #[guarded(always, verified)]
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
}

#[tool_handler]
impl ServerHandler for NotesServer {}

async fn started(
    era: Era,
    idp: Arc<ScriptedIdp>,
) -> (RunningService<RoleClient, Person>, NotesServer) {
    let guard = Guard::builder("notes-ciba")
        .backchannel(idp)
        .approval_routes(vec![ApprovalRoute::Ciba])
        .build();
    let server = NotesServer {
        guard,
        store: Arc::new(Store::seeded()),
        bodies: Arc::default(),
    };
    // A person who would approve any dialog: none may be shown on this route.
    let client = connect(era, server.clone(), Person::new(Reply::Approve))
        .await
        .expect("connected");
    (client, server)
}

async fn delete(client: &RunningService<RoleClient, Person>, id: &str) -> CallToolResult {
    let params = CallToolRequestParams::new("delete_note")
        .with_arguments(json!({ "id": id }).as_object().cloned().expect("object"));
    client.call_tool(params).await.expect("a tool result")
}

/// The code a pending result carries (in `structuredContent`).
fn pending_code(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{}", text_of(result));
    let structured = result.structured_content.as_ref().expect("structured");
    assert_eq!(structured["status"], "approval_pending", "{structured}");
    let code = structured[BINDING_CODE_KEY]
        .as_str()
        .expect("code")
        .to_owned();
    let text = text_of(result);
    assert!(
        text.contains(&format!("Pending, code {code}: approve on your device")),
        "{text}"
    );
    assert!(text.contains("identity provider"), "{text}");
    code
}

async fn approved_on_the_device_runs_once(era: Era) {
    let idp = Arc::new(ScriptedIdp::default());
    let (client, server) = started(era, idp.clone()).await;
    let code = pending_code(&delete(&client, "n1").await);
    {
        let asked = idp.asked.lock().expect("asked");
        let (subject, record, sent) = &asked[0];
        assert_eq!(subject, "alice");
        assert_eq!(sent, &code);
        assert_eq!(
            (record.route.as_str(), record.tool.as_str()),
            ("ciba", "delete_note")
        );
        assert!(record.question.contains("n1"), "{}", record.question);
    }
    // Repeats alone: pending, the same code, one request, nothing ran.
    for _ in 0..3 {
        assert_eq!(pending_code(&delete(&client, "n1").await), code);
    }
    assert_eq!((idp.asked(), idp.polls.load(Ordering::SeqCst)), (1, 3));
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    // The device approves: the identical retry runs, once.
    idp.answer(BackchannelPoll::Approved);
    let done = delete(&client, "n1").await;
    assert_ne!(done.is_error, Some(true), "{}", text_of(&done));
    assert_eq!(server.bodies.load(Ordering::SeqCst), 1);
    // Another call asks afresh; nothing runs on the spent approval.
    let fresh = pending_code(&delete(&client, "n2").await);
    assert_ne!(fresh, code);
    assert_eq!(idp.asked(), 2);
    assert_eq!(server.bodies.load(Ordering::SeqCst), 1);
    client.cancel().await.expect("closed");
}

async fn declined_expired_or_refused_never_run(era: Era) {
    for (answer, says) in [
        (BackchannelPoll::Declined, "declined on their device"),
        (BackchannelPoll::Expired, "expired"),
        (
            BackchannelPoll::Refused("the token approves another target".to_owned()),
            "another target",
        ),
    ] {
        let idp = Arc::new(ScriptedIdp::default());
        let (client, server) = started(era, idp.clone()).await;
        pending_code(&delete(&client, "n1").await);
        idp.answer(answer);
        let refused = delete(&client, "n1").await;
        assert_eq!(refused.is_error, Some(true));
        assert!(text_of(&refused).contains(says), "{}", text_of(&refused));
        assert!(
            text_of(&refused)
                .to_lowercase()
                .contains("nothing was changed"),
            "{}",
            text_of(&refused)
        );
        assert_eq!(server.bodies.load(Ordering::SeqCst), 0, "{says}");
        // Control: the next call asks afresh, and approved, runs.
        pending_code(&delete(&client, "n1").await);
        assert_eq!(idp.asked(), 2, "{says}: asked afresh");
        idp.answer(BackchannelPoll::Approved);
        let done = delete(&client, "n1").await;
        assert_ne!(done.is_error, Some(true), "{}", text_of(&done));
        assert_eq!(server.bodies.load(Ordering::SeqCst), 1, "{says}");
        client.cancel().await.expect("closed");
    }
}

in_both_eras!(
    approved_on_the_device_runs_once,
    declined_expired_or_refused_never_run
);

#[test]
fn the_details_type_is_named_for_the_framework() {
    assert_eq!(AUTHORIZATION_DETAILS_TYPE, "ask_first_approval");
}
