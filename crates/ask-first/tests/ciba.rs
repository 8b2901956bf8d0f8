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

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ask_first::{Approved, Guard, HasGuard, InputError, Resolve, guarded};
use ask_first_core::{
    AUTHORIZATION_DETAILS_TYPE, ApprovalRecord, ApprovalRoute, ApprovalStore, BINDING_CODE_KEY,
    Backchannel, BackchannelFuture, BackchannelPoll, BackchannelStarted, Caller,
    MAX_PENDING_APPROVALS, MemoryApprovalStore,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The provider: it records what it was asked and answers polls from a script (pending once
/// the script is empty). As a real provider does, it gives a request's token once: a later
/// poll of that request answers `Consumed` (`invalid_grant`).
#[derive(Default)]
struct ScriptedIdp {
    asked: Mutex<Vec<(String, ApprovalRecord, String)>>,
    answers: Mutex<VecDeque<BackchannelPoll>>,
    polls: AtomicUsize,
    /// The requests whose token was given.
    given: Mutex<HashSet<String>>,
    /// Each request's lifetime, seconds (0: 600).
    expires_in: AtomicU64,
    /// How long each poll takes, milliseconds.
    poll_ms: AtomicU64,
    /// How long sending a request takes, milliseconds.
    start_ms: AtomicU64,
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
        let expires_in = match self.expires_in.load(Ordering::SeqCst) {
            0 => 600,
            secs => secs,
        };
        let delay = Duration::from_millis(self.start_ms.load(Ordering::SeqCst));
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            Ok(BackchannelStarted {
                auth_req_id,
                expires_in,
            })
        })
    }

    fn poll<'a>(
        &'a self,
        _subject: &'a str,
        record: &'a ApprovalRecord,
    ) -> BackchannelFuture<'a, BackchannelPoll> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let delay = Duration::from_millis(self.poll_ms.load(Ordering::SeqCst));
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            let request = record.auth_req_id.clone().unwrap_or_default();
            if self.given.lock().expect("given").contains(&request) {
                return BackchannelPoll::Consumed;
            }
            let next = self.answers.lock().expect("answers").pop_front();
            if next == Some(BackchannelPoll::Approved) {
                self.given.lock().expect("given").insert(request);
            }
            next.unwrap_or(BackchannelPoll::Pending)
        })
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
    let store = Arc::new(Store::seeded());
    replica(era, idp, Arc::new(MemoryApprovalStore::new()), store).await
}

/// A server over `notes`, keeping its records in `records`: two of them over the same stores
/// are two replicas.
async fn replica(
    era: Era,
    idp: Arc<ScriptedIdp>,
    records: Arc<dyn ApprovalStore>,
    notes: Arc<Store>,
) -> (RunningService<RoleClient, Person>, NotesServer) {
    let guard = Guard::builder("notes-ciba")
        .backchannel(idp)
        .approval_store(records)
        .approval_routes(vec![ApprovalRoute::Ciba])
        .build();
    let server = NotesServer {
        guard,
        store: notes,
        bodies: Arc::default(),
    };
    // A person who would approve any dialog: none may be shown on this route.
    let client = connect(era, server.clone(), Person::new(Reply::Approve))
        .await
        .expect("connected");
    (client, server)
}

async fn delete(client: &RunningService<RoleClient, Person>, id: &str) -> CallToolResult {
    delete_by(client.peer().clone(), id).await
}

async fn delete_by(peer: Peer<RoleClient>, id: &str) -> CallToolResult {
    let params = CallToolRequestParams::new("delete_note")
        .with_arguments(json!({ "id": id }).as_object().cloned().expect("object"));
    peer.call_tool(params).await.expect("a tool result")
}

/// `n` identical calls deleting `id` at once, through `peers` in turn.
async fn at_once(peers: &[Peer<RoleClient>], id: &str, n: usize) -> Vec<CallToolResult> {
    let calls: Vec<_> = (0..n)
        .map(|i| {
            let (peer, id) = (peers[i % peers.len()].clone(), id.to_owned());
            tokio::spawn(async move { delete_by(peer, &id).await })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.expect("joined"));
    }
    results
}

fn note(server: &NotesServer, id: &str) {
    server.store.notes().insert(
        id.to_owned(),
        notes::Note {
            id: id.to_owned(),
            text: format!("text of {id}"),
            shared: false,
        },
    );
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

async fn identical_calls_at_once_send_one_request(era: Era) {
    let idp = Arc::new(ScriptedIdp::default());
    // A provider that takes a while to answer: the window in which identical calls race.
    idp.start_ms.store(50, Ordering::SeqCst);
    let (client, server) = started(era, idp.clone()).await;
    let results = at_once(&[client.peer().clone()], "n1", 40).await;
    let codes: HashSet<String> = results.iter().map(pending_code).collect();
    assert_eq!(codes.len(), 1, "one code for every identical call");
    assert_eq!(idp.asked(), 1, "one request sent to the person's device");
    // The control: another note is a call of its own, and is asked about.
    pending_code(&delete(&client, "n2").await);
    assert_eq!(idp.asked(), 2);
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    client.cancel().await.expect("closed");
}

/// Six identical retries at once after one approval, round after round, on one replica, then
/// on two sharing the record store: the delete runs exactly once a round, and the yes is never
/// lost (the provider gives its token to one poll; the other polls share it, or are told
/// `invalid_grant`, which is not a refusal).
async fn concurrent_retries_after_a_yes_run_once(era: Era) {
    let idp = Arc::new(ScriptedIdp::default());
    idp.poll_ms.store(30, Ordering::SeqCst);
    let records: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::new());
    let notes = Arc::new(Store::seeded());
    let (one, server_one) = replica(era, idp.clone(), records.clone(), notes.clone()).await;
    let (two, server_two) = replica(era, idp.clone(), records, notes).await;
    for (round, peers) in [
        vec![one.peer().clone()],
        vec![one.peer().clone(), two.peer().clone()],
    ]
    .into_iter()
    .cycle()
    .take(8)
    .enumerate()
    {
        let id = format!("r{round}");
        note(&server_one, &id);
        pending_code(&delete(&one, &id).await);
        idp.answer(BackchannelPoll::Approved);
        let results = at_once(&peers, &id, 6).await;
        let ran = results.iter().filter(|r| r.is_error != Some(true)).count();
        assert_eq!(ran, 1, "round {round}: {results:?}");
        for result in results.iter().filter(|r| r.is_error == Some(true)) {
            let text = text_of(result);
            assert!(
                text.contains("identical call made at the same time"),
                "{text}"
            );
        }
        assert!(!server_one.store.notes().contains_key(&id), "round {round}");
        let bodies =
            server_one.bodies.load(Ordering::SeqCst) + server_two.bodies.load(Ordering::SeqCst);
        assert_eq!(bodies, round + 1, "round {round}");
    }
    assert_eq!(idp.asked(), 8, "no request beyond one per round");
    one.cancel().await.expect("closed");
    two.cancel().await.expect("closed");
}

/// After the provider's request expired, the retry says so, and the new request's question
/// (what the device shows) says so too.
async fn an_expired_request_is_told_to_the_model_and_the_person(era: Era) {
    let idp = Arc::new(ScriptedIdp::default());
    idp.expires_in.store(1, Ordering::SeqCst);
    let (client, server) = started(era, idp.clone()).await;
    let first = pending_code(&delete(&client, "n1").await);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let again = delete(&client, "n1").await;
    let second = pending_code(&again);
    assert_ne!(second, first);
    let text = text_of(&again);
    assert!(
        text.contains(&format!("earlier request (code {first}) before it expired")),
        "{text}"
    );
    assert_eq!(idp.asked(), 2);
    assert_eq!(
        idp.polls.load(Ordering::SeqCst),
        0,
        "an expired request is not polled"
    );
    let asked: Vec<String> = idp
        .asked
        .lock()
        .expect("asked")
        .iter()
        .map(|(_, record, _)| record.question.clone())
        .collect();
    assert!(
        asked[1].contains(&format!("code {first}) expired unanswered")),
        "{}",
        asked[1]
    );
    assert!(
        !asked[0].contains("expired"),
        "the control: the first says nothing"
    );
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    client.cancel().await.expect("closed");
}

/// A model alone asking about ever new notes: at most the bound of questions open at once,
/// and no request past it reaches the provider; the refusal says so and what to do.
async fn open_questions_are_bounded_per_person(era: Era) {
    let idp = Arc::new(ScriptedIdp::default());
    let (client, server) = started(era, idp.clone()).await;
    for i in 0..MAX_PENDING_APPROVALS {
        note(&server, &format!("b{i}"));
        pending_code(&delete(&client, &format!("b{i}")).await);
    }
    note(&server, "past");
    let refused = delete(&client, "past").await;
    let text = text_of(&refused);
    assert_eq!(refused.is_error, Some(true), "{text}");
    assert!(text.contains("waiting for their answer already"), "{text}");
    assert!(
        text.contains("answer (approve or decline) the open ones"),
        "{text}"
    );
    assert_eq!(
        idp.asked(),
        MAX_PENDING_APPROVALS,
        "nothing sent past the bound"
    );
    // An answer frees a place: the person declines one, and the next question is asked.
    idp.answer(BackchannelPoll::Declined);
    let declined = delete(&client, "b0").await;
    assert!(text_of(&declined).contains("declined on their device"));
    pending_code(&delete(&client, "past").await);
    assert_eq!(idp.asked(), MAX_PENDING_APPROVALS + 1);
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    client.cancel().await.expect("closed");
}

in_both_eras!(
    approved_on_the_device_runs_once,
    declined_expired_or_refused_never_run,
    identical_calls_at_once_send_one_request,
    concurrent_retries_after_a_yes_run_once,
    an_expired_request_is_told_to_the_model_and_the_person,
    open_questions_are_bounded_per_person
);

#[test]
fn the_details_type_is_named_for_the_framework() {
    assert_eq!(AUTHORIZATION_DETAILS_TYPE, "ask_first_approval");
}
