//! The approval page's records through a real rmcp client and server, in process, in both
//! protocol eras, on the link route (a client without URL elicitation gets the link in the
//! result), with a stand-in page: the test decides a record in the store as the person's
//! passkey would. What is checked is the guard's side: a decline is told to the model once and
//! the next call asks afresh; the open questions of one principal are bounded; identical
//! retries after one yes run the body once. The page itself (passkeys, a real browser) is
//! `e2e/test_approval_records.py`'s.

#[macro_use]
mod eras;
#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;
use ask_first::testing::{Era, Person, connect, text_of};
use notes::{DeleteNote, Store, note_id};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ask_first::{Approved, Guard, HasGuard, InputError, Resolve, guarded};
use ask_first_core::{
    APPROVAL_URL_KEY, ApprovalPages, ApprovalStore, MAX_PENDING_APPROVALS, MemoryApprovalStore,
    RecordId,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A page that is always ready: its URL names the record.
struct StandInPage;

impl ApprovalPages for StandInPage {
    fn url<'a>(
        &'a self,
        id: &'a RecordId,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move { Ok(format!("http://localhost:1/approve/{id}")) })
    }

    fn ready(&self) -> bool {
        true
    }

    fn changed<'a>(&'a self, _id: &'a RecordId) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(tokio::time::sleep(std::time::Duration::from_millis(20)))
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
}

#[tool_handler]
impl ServerHandler for NotesServer {}

async fn started(
    era: Era,
) -> (
    RunningService<RoleClient, Person>,
    NotesServer,
    Arc<MemoryApprovalStore>,
) {
    let records = Arc::new(MemoryApprovalStore::new());
    let guard = Guard::builder("notes-page")
        .approval_pages(Arc::new(StandInPage))
        .approval_store(records.clone())
        .build();
    let server = NotesServer {
        guard,
        store: Arc::new(Store::seeded()),
        bodies: Arc::default(),
    };
    let client = connect(era, server.clone(), Person::without_elicitation())
        .await
        .expect("connected");
    (client, server, records)
}

async fn delete_by(peer: Peer<RoleClient>, id: &str) -> CallToolResult {
    let params = CallToolRequestParams::new("delete_note")
        .with_arguments(json!({ "id": id }).as_object().cloned().expect("object"));
    peer.call_tool(params).await.expect("a tool result")
}

async fn delete(client: &RunningService<RoleClient, Person>, id: &str) -> CallToolResult {
    delete_by(client.peer().clone(), id).await
}

/// The record a pending result's link names.
fn linked(result: &CallToolResult) -> RecordId {
    assert_eq!(result.is_error, Some(true), "{}", text_of(result));
    let structured = result.structured_content.as_ref().expect("structured");
    let url = structured[APPROVAL_URL_KEY].as_str().expect("a link");
    RecordId::parse(url.rsplit('/').next().expect("an id")).expect("a record id")
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

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

async fn a_decline_on_the_page_is_told_once_then_asked_afresh(era: Era) {
    let (client, server, records) = started(era).await;
    let first = linked(&delete(&client, "n1").await);
    assert_eq!(records.decide(&first, false, now()).await, Ok(Ok(())));
    let told = delete(&client, "n1").await;
    let text = text_of(&told);
    assert_eq!(told.is_error, Some(true), "{text}");
    assert!(
        text.contains("The person declined on the approval page"),
        "{text}"
    );
    assert!(
        text.contains("Calling `delete_note` again asks them afresh"),
        "{text}"
    );
    assert!(
        !text.contains("http://"),
        "no new link with the decline: {text}"
    );
    // Told once: the next identical call is a new question, with a new link.
    let second = linked(&delete(&client, "n1").await);
    assert_ne!(second, first);
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    assert!(server.store.notes().contains_key("n1"));
    // The control: approved on the page, the identical retry runs.
    assert_eq!(records.decide(&second, true, now()).await, Ok(Ok(())));
    let ran = delete(&client, "n1").await;
    assert_ne!(ran.is_error, Some(true), "{}", text_of(&ran));
    assert_eq!(server.bodies.load(Ordering::SeqCst), 1);
    assert!(!server.store.notes().contains_key("n1"));
    client.cancel().await.expect("closed");
}

async fn open_questions_are_bounded_and_an_answer_frees_a_place(era: Era) {
    let (client, server, records) = started(era).await;
    let mut asked = Vec::new();
    for i in 0..MAX_PENDING_APPROVALS {
        note(&server, &format!("b{i}"));
        asked.push(linked(&delete(&client, &format!("b{i}")).await));
    }
    // A model repeating one of them adds nothing: the same record is named.
    assert_eq!(linked(&delete(&client, "b0").await), asked[0]);
    note(&server, "past");
    let refused = delete(&client, "past").await;
    let text = text_of(&refused);
    assert_eq!(refused.is_error, Some(true), "{text}");
    assert!(
        text.contains(&format!(
            "{MAX_PENDING_APPROVALS} questions are waiting for their answer already"
        )),
        "{text}"
    );
    assert!(text.contains("or wait until those expire"), "{text}");
    assert_eq!(
        records.count_pending("local", now()).await,
        Ok(MAX_PENDING_APPROVALS)
    );
    // The person declines one: a place is free, and the next question is asked.
    assert_eq!(records.decide(&asked[3], false, now()).await, Ok(Ok(())));
    linked(&delete(&client, "past").await);
    assert_eq!(server.bodies.load(Ordering::SeqCst), 0);
    client.cancel().await.expect("closed");
}

async fn identical_retries_after_a_yes_run_once(era: Era) {
    let (client, server, records) = started(era).await;
    for round in 0..5 {
        let id = format!("r{round}");
        note(&server, &id);
        let record = linked(&delete(&client, &id).await);
        assert_eq!(records.decide(&record, true, now()).await, Ok(Ok(())));
        let calls: Vec<_> = (0..6)
            .map(|_| {
                let (peer, id) = (client.peer().clone(), id.clone());
                tokio::spawn(async move { delete_by(peer, &id).await })
            })
            .collect();
        let mut ran = 0;
        for call in calls {
            let result = call.await.expect("joined");
            if result.is_error != Some(true) {
                ran += 1;
                continue;
            }
            let text = text_of(&result);
            assert!(
                text.contains("identical call made at the same time") || text.contains("no note"),
                "{text}"
            );
        }
        assert_eq!(ran, 1, "round {round}");
        assert_eq!(server.bodies.load(Ordering::SeqCst), round + 1);
        assert_eq!(
            records.count_pending("local", now()).await,
            Ok(0),
            "no new question"
        );
    }
    client.cancel().await.expect("closed");
}

in_both_eras!(
    a_decline_on_the_page_is_told_once_then_asked_afresh,
    open_questions_are_bounded_and_an_answer_frees_a_place,
    identical_retries_after_a_yes_run_once
);
