//! `#[guarded]` in a real rmcp `#[tool_router]`: the router lists the guarded tools with the
//! input schema of their `Parameters` plus the optional `confirm_token` the macro adds (the
//! argument types here do not declare it; nothing else of the guard's plumbing shows) and the
//! output schema their `Json<T>` return type would have given, and a call through an in-process
//! rmcp client runs the generated path: resolve, ask, and only then the handler's body; the
//! token path works for arguments that never declared `confirm_token`.

#[allow(dead_code)]
#[path = "../examples/notes/store.rs"]
mod notes;

use std::sync::Arc;

use ask_first::{
    Approved, Binding, Clearance, Conditional, Fact, Guard, HasGuard, InputError, Question,
    Resolve, Target, fact::Id, guarded,
};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::{ErrorData, RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use ask_first::testing::{confirm_token_in, text_of};
use notes::{DeleteNote, Note, Store};

ask_first::wording! {
    struct ShareQuestion = "This will share note {} with everyone.";
    struct WipeQuestion = "This will delete all {} notes.";
}

/// Writes exactly the cleared note (the store's own `write` takes the example's target).
fn write(store: &Store, clearance: Clearance<WriteWidening>) {
    let target = clearance.into_target();
    let note = Note {
        id: target.id.as_str().to_owned(),
        text: target.text,
        shared: target.shared,
    };
    store.notes().insert(note.id.clone(), note);
}

/// Deletes every note there was when the person was asked.
fn wipe(store: &Store, approved: Approved<Wipe>) -> usize {
    let _ = approved.into_target();
    let mut notes = store.notes();
    let count = notes.len();
    notes.clear();
    count
}

/// Writing a note, asked about only when it widens the note's visibility: unlike the
/// example's `WriteNote`, its condition depends on what the server holds.
struct WriteWidening {
    id: Id,
    text: String,
    shared: bool,
    was_shared: bool,
}

impl Target for WriteWidening {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding
            .text("id", self.id.as_str())
            .text("text", &self.text)
            .flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<ShareQuestion>([Fact::id(self.id.clone())])
    }
}

impl Conditional for WriteWidening {}

impl WriteWidening {
    /// Asks only when the write would share a note that was not shared before.
    fn widens_visibility(&self) -> bool {
        self.shared && !self.was_shared
    }
}

struct Wipe {
    count: usize,
}

impl Target for Wipe {
    const OPERATION: &'static str = "wipe";
    fn bind(&self, binding: &mut Binding) {
        binding.number("count", self.count as u64);
    }
    fn question(&self) -> Question {
        Question::new::<WipeQuestion>([Fact::count(self.count as u64)])
    }
}

#[derive(Deserialize, JsonSchema)]
struct DeleteNoteArgs {
    /// The note to delete.
    id: String,
}

/// Strict arguments: an unknown key is an error, and `confirm_token` is not declared. The
/// guard takes the token out before these are deserialized.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StrictDeleteArgs {
    /// The note to delete.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct WriteNoteArgs {
    /// The note to write.
    id: String,
    /// Its text.
    text: String,
    /// Whether everyone may read it.
    #[serde(default)]
    shared: bool,
}

#[derive(Serialize, JsonSchema)]
struct Deleted {
    id: String,
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Written {
    id: String,
    asked: bool,
}

fn note_id(id: &str) -> Result<Id, InputError> {
    Id::new(id).map_err(|_| InputError::new("`id` must be 1 to 64 letters, digits, '-' or '_'"))
}

impl Resolve<NotesServer, DeleteNoteArgs> for DeleteNote {
    async fn resolve(server: &NotesServer, args: &DeleteNoteArgs) -> Result<Self, InputError> {
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

impl Resolve<NotesServer, StrictDeleteArgs> for DeleteNote {
    async fn resolve(server: &NotesServer, args: &StrictDeleteArgs) -> Result<Self, InputError> {
        let loose = DeleteNoteArgs {
            id: args.id.clone(),
        };
        <Self as Resolve<NotesServer, DeleteNoteArgs>>::resolve(server, &loose).await
    }
}

impl Resolve<NotesServer, WriteNoteArgs> for WriteWidening {
    async fn resolve(server: &NotesServer, args: &WriteNoteArgs) -> Result<Self, InputError> {
        let id = note_id(&args.id)?;
        let was_shared = server
            .store
            .notes()
            .get(id.as_str())
            .is_some_and(|note| note.shared);
        Ok(Self {
            id,
            text: args.text.clone(),
            shared: args.shared,
            was_shared,
        })
    }
}

impl Resolve<NotesServer, ()> for Wipe {
    async fn resolve(server: &NotesServer, _: &()) -> Result<Self, InputError> {
        Ok(Self {
            count: server.store.notes().len(),
        })
    }
}

#[derive(Clone)]
struct NotesServer {
    guard: Guard,
    store: Arc<Store>,
}

impl HasGuard for NotesServer {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[tool_router]
impl NotesServer {
    #[guarded(always)]
    #[tool(
        description = "Delete a note",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<DeleteNoteArgs>,
        approved: Approved<DeleteNote>,
    ) -> Result<Json<Deleted>, ErrorData> {
        let note = self
            .store
            .delete(approved)
            .ok_or_else(|| ErrorData::internal_error("the note vanished", None))?;
        Ok(Json(Deleted {
            id: args.id,
            text: note.text,
        }))
    }

    #[guarded(always)]
    #[tool(description = "Delete a note; strict arguments")]
    async fn delete_strict(
        &self,
        Parameters(args): Parameters<StrictDeleteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        self.store.delete(approved);
        format!("deleted {}", args.id)
    }

    #[guarded(always, person_required)]
    #[tool(
        description = "Delete a note, only after a person's yes in a dialog.",
        meta = rmcp::model::MetaObject(
            json!({"example/kept": 1}).as_object().cloned().unwrap_or_default()
        )
    )]
    async fn erase_note(
        &self,
        Parameters(args): Parameters<DeleteNoteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        self.store.delete(approved);
        format!("erased {}", args.id)
    }

    #[guarded(when = "widens_visibility")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteNoteArgs>,
        clearance: Clearance<WriteWidening>,
    ) -> Result<Json<Written>, ErrorData> {
        let asked = clearance.approved_by().is_some();
        write(&self.store, clearance);
        Ok(Json(Written { id: args.id, asked }))
    }

    /// Delete every note.
    #[guarded(always)]
    #[tool]
    async fn wipe(&self, approved: Approved<Wipe>) -> String {
        let count = wipe(&self.store, approved);
        if count == 0 {
            return "there was nothing to delete".to_owned();
        }
        format!("deleted {count} notes")
    }

    #[tool(description = "Count the notes")]
    async fn count(&self) -> String {
        self.store.notes().len().to_string()
    }
}

#[tool_handler]
impl ServerHandler for NotesServer {}

/// The example's store: `n1`, `n2`, `n3`, private.
fn server() -> NotesServer {
    NotesServer {
        guard: Guard::builder("notes-test").build(),
        store: Arc::new(Store::seeded()),
    }
}

fn properties(schema: &JsonObject) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_router_lists_guarded_tools_with_their_schemas_and_annotations() {
    let router = NotesServer::tool_router();
    let mut names: Vec<String> = router
        .list_all()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "count",
            "delete_note",
            "delete_strict",
            "erase_note",
            "wipe",
            "write_note"
        ]
    );
    assert!(
        router.get("delete_note").expect("listed").meta.is_none(),
        "only person_required tools carry the mark"
    );

    // person_required: marked in _meta (merged with the tool's own), and no confirm_token.
    let erase = router.get("erase_note").expect("erase_note is listed");
    assert_eq!(properties(&erase.input_schema), ["id"]);
    let meta = erase
        .meta
        .as_ref()
        .expect("a person_required tool has _meta");
    assert_eq!(
        meta.0.get(ask_first_core::PERSON_REQUIRED_META_KEY),
        Some(&json!(true))
    );
    assert_eq!(meta.0.get("example/kept"), Some(&json!(1)));

    let strict = router
        .get("delete_strict")
        .expect("delete_strict is listed");
    assert_eq!(properties(&strict.input_schema), ["confirm_token", "id"]);

    let delete = router.get("delete_note").expect("delete_note is listed");
    assert_eq!(delete.description.as_deref(), Some("Delete a note"));
    assert_eq!(properties(&delete.input_schema), ["confirm_token", "id"]);
    let token = &delete.input_schema["properties"]["confirm_token"];
    assert_eq!(token["type"], json!(["string", "null"]));
    assert_eq!(
        token["description"].as_str(),
        Some(ask_first_core::CONFIRM_TOKEN_DESCRIPTION)
    );
    let required = delete
        .input_schema
        .get("required")
        .cloned()
        .unwrap_or_default();
    assert!(
        !required.to_string().contains("confirm_token"),
        "confirm_token is optional: {required}"
    );
    let output = delete
        .output_schema
        .as_ref()
        .expect("Json<Deleted> gives an output schema");
    assert_eq!(properties(output), ["id", "text"]);
    let annotations = delete.annotations.as_ref().expect("annotations are kept");
    assert_eq!(annotations.destructive_hint, Some(true));
    assert_eq!(annotations.read_only_hint, Some(false));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.open_world_hint, Some(false));

    let write = router.get("write_note").expect("write_note is listed");
    assert_eq!(
        properties(&write.input_schema),
        ["confirm_token", "id", "shared", "text"]
    );
    let output = write.output_schema.as_ref().expect("output schema");
    assert_eq!(properties(output), ["asked", "id"]);

    let wipe = router.get("wipe").expect("wipe is listed");
    assert_eq!(wipe.description.as_deref(), Some("Delete every note."));
    assert_eq!(properties(&wipe.input_schema), ["confirm_token"]);
    assert!(
        wipe.output_schema.is_none(),
        "a String result has no schema"
    );
}

/// A client without the elicitation capability: the guard takes the two-call token path.
async fn connect(server: NotesServer) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_io).await.expect("client connects")
}

fn arguments(value: Value) -> JsonObject {
    value.as_object().expect("an object").clone()
}

fn token_in(result: &CallToolResult) -> String {
    confirm_token_in(&text_of(result)).unwrap_or_else(|| panic!("no token in: {}", text_of(result)))
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments(args)))
        .await
        .expect("the call completes")
}

/// `DeleteNoteArgs` declares no `confirm_token`: the framework supplies it.
#[tokio::test]
async fn a_guarded_call_runs_its_body_only_after_the_token_comes_back() {
    let server = server();
    let store = server.store.clone();
    let client = connect(server).await;

    let first = call(&client, "delete_note", json!({"id": "n1"})).await;
    assert_eq!(first.is_error, Some(true));
    assert!(
        text_of(&first).contains("This will delete note n1 (10 bytes of text)."),
        "{}",
        text_of(&first)
    );
    // The tool has an output schema, so the token reply's facts travel in _meta, never as
    // structuredContent the schema would reject.
    assert!(first.structured_content.is_none());
    let facts = first
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(ask_first_core::token_reply::META_KEY))
        .expect("the token reply's facts in _meta");
    assert_eq!(facts["confirm_token"], token_in(&first).as_str());
    assert_eq!(facts["status"], "confirmation_required");
    assert!(
        store.notes().contains_key("n1"),
        "nothing is deleted before the approval"
    );

    let token = token_in(&first);
    let second = call(
        &client,
        "delete_note",
        json!({"id": "n1", "confirm_token": token}),
    )
    .await;
    assert_ne!(second.is_error, Some(true), "{}", text_of(&second));
    assert_eq!(
        second.structured_content,
        Some(json!({"id": "n1", "text": "first note"}))
    );
    let left: Vec<String> = store.notes().keys().cloned().collect();
    assert_eq!(left, ["n2", "n3"], "exactly the approved note is deleted");

    client.cancel().await.expect("client stops");
}

/// `StrictDeleteArgs` denies unknown fields and declares no `confirm_token`: the guard takes
/// the token out of the arguments first, so the second call deserializes and runs.
#[tokio::test]
async fn strict_arguments_work_without_declaring_the_token() {
    let server = server();
    let store = server.store.clone();
    let client = connect(server).await;
    let first = call(&client, "delete_strict", json!({"id": "n1"})).await;
    let token = token_in(&first);
    let second = call(
        &client,
        "delete_strict",
        json!({"id": "n1", "confirm_token": token}),
    )
    .await;
    assert_ne!(second.is_error, Some(true), "{}", text_of(&second));
    assert_eq!(text_of(&second), "deleted n1");
    assert!(!store.notes().contains_key("n1"));
    // Any other unknown key is still refused by the arguments' own type.
    let unknown = call(
        &client,
        "delete_strict",
        json!({"id": "n2", "colour": "red"}),
    )
    .await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text_of(&unknown).contains("unknown field `colour`"),
        "{}",
        text_of(&unknown)
    );
    assert!(store.notes().contains_key("n2"));
    client.cancel().await.expect("client stops");
}

/// A `person_required` tool answers a client without dialogs with a refusal, never a token,
/// and does not accept a token issued by another tool.
#[tokio::test]
async fn a_person_required_tool_never_issues_or_takes_a_token() {
    let server = server();
    let store = server.store.clone();
    let client = connect(server).await;
    let refused = call(&client, "erase_note", json!({"id": "n1"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(confirm_token_in(&text_of(&refused)).is_none());
    assert!(
        text_of(&refused).contains("runs `erase_note` only after a person approves it"),
        "{}",
        text_of(&refused)
    );
    assert_eq!(
        refused.structured_content.as_ref().map(|s| &s["status"]),
        Some(&json!("person_required"))
    );
    let token = token_in(&call(&client, "delete_note", json!({"id": "n1"})).await);
    let quoted = call(
        &client,
        "erase_note",
        json!({"id": "n1", "confirm_token": token}),
    )
    .await;
    assert_eq!(quoted.is_error, Some(true));
    assert!(store.notes().contains_key("n1"));
    client.cancel().await.expect("client stops");
}

#[tokio::test]
async fn an_input_error_is_reported_without_asking() {
    let client = connect(server()).await;
    let result = call(&client, "delete_note", json!({"id": "nope"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text_of(&result), "no note `nope`");

    let result = call(&client, "delete_note", json!({"id": "not an id"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).starts_with("`id` must be"),
        "{}",
        text_of(&result)
    );
    client.cancel().await.expect("client stops");
}

#[tokio::test]
async fn when_the_predicate_is_false_the_body_runs_exempt() {
    let server = server();
    let store = server.store.clone();
    let client = connect(server).await;

    let private = call(
        &client,
        "write_note",
        json!({"id": "n2", "text": "second", "shared": false}),
    )
    .await;
    assert_ne!(private.is_error, Some(true), "{}", text_of(&private));
    assert_eq!(
        private.structured_content,
        Some(json!({"id": "n2", "asked": false}))
    );

    let shared = call(
        &client,
        "write_note",
        json!({"id": "n2", "text": "second", "shared": true}),
    )
    .await;
    assert_eq!(shared.is_error, Some(true));
    assert!(!store.notes()["n2"].shared);
    let token = token_in(&shared);
    let approved = call(
        &client,
        "write_note",
        json!({"id": "n2", "text": "second", "shared": true, "confirm_token": token}),
    )
    .await;
    assert_eq!(
        approved.structured_content,
        Some(json!({"id": "n2", "asked": true}))
    );
    assert!(store.notes()["n2"].shared);
    client.cancel().await.expect("client stops");
}

#[tokio::test]
async fn a_tool_without_parameters_resolves_from_unit_and_early_returns_work() {
    let server = server();
    let store = server.store.clone();
    let client = connect(server).await;

    let first = call(&client, "wipe", json!({})).await;
    assert!(text_of(&first).contains("This will delete all 3 notes."));
    assert_eq!(store.notes().len(), 3);
    let token = token_in(&first);
    let done = call(&client, "wipe", json!({"confirm_token": token})).await;
    assert_eq!(text_of(&done), "deleted 3 notes");

    let first = call(&client, "wipe", json!({})).await;
    let token = token_in(&first);
    let empty = call(&client, "wipe", json!({"confirm_token": token})).await;
    assert_eq!(text_of(&empty), "there was nothing to delete");
    client.cancel().await.expect("client stops");
}
