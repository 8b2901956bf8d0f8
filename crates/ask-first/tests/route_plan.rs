//! What a server tells a client about a guarded tool's route (`Guard::route_for`, read in its
//! `tools/list` handler from that request's context) is the route that client's call of the
//! tool then takes, through a real rmcp client in both eras: the form dialog, the two-call
//! token (dialogs off, or none declared), the approval page's link, a refusal.

#[macro_use]
mod eras;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use ask_first::testing::{Era, Person, Reply, confirm_token_in, connect, text_of};
use ask_first::{Approved, Guard, GuardBuilder, HasGuard, InputError, Resolve, Target, fact::Id};
use ask_first_core::{ApprovalPages, ApprovalRoute, Caller, ClientDeclared, RecordId, ToolNeeds};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Target)]
#[target(operation = "delete_note", question = "This will delete note {id}.")]
struct DeleteNote {
    id: Id,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    note_id: String,
    #[allow(dead_code, reason = "read by the guard from the raw arguments")]
    confirm_token: Option<String>,
}

#[derive(Clone)]
struct Notes {
    guard: Guard,
    notes: Arc<Mutex<BTreeMap<String, String>>>,
}

impl HasGuard for Notes {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Notes, DeleteArgs> for DeleteNote {
    async fn resolve(_server: &Notes, args: &DeleteArgs) -> Result<Self, InputError> {
        Ok(Self {
            id: Id::new(&args.note_id).map_err(|e| InputError::new(e.to_string()))?,
        })
    }
}

#[tool_router]
impl Notes {
    #[ask_first::guarded(always)]
    #[tool(description = "Delete a note.")]
    async fn delete(
        &self,
        Parameters(_args): Parameters<DeleteArgs>,
        approved: Approved<DeleteNote>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = approved.into_target().id.as_str().to_owned();
        self.notes.lock().expect("notes").remove(&id);
        Ok(CallToolResult::success(vec![ContentBlock::text("deleted")]))
    }
}

#[tool_handler(name = "route-plan-test")]
impl ServerHandler for Notes {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The description names the route, as a server's own words would follow it.
        let client = ClientDeclared::of(&context);
        let principal = self.guard.principal_of(&Caller::of(&context));
        let mut tools = Self::tool_router().list_all();
        for tool in &mut tools {
            let plan = self
                .guard
                .route_for(&client, &principal, &tool.name, ToolNeeds::AnyRoute);
            tool.description = Some(format!("{plan:?}").into());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }
}

/// A page with a passkey enrolled: its link is all a client without URL mode gets.
struct Page;

impl ApprovalPages for Page {
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
        Box::pin(async {})
    }
}

/// What the call did, named as the plan names it.
async fn told_and_taken(era: Era, builder: GuardBuilder, person: Person) -> (String, String) {
    let notes = Arc::new(Mutex::new(BTreeMap::from([(
        "n1".to_owned(),
        "x".to_owned(),
    )])));
    let server = Notes {
        guard: builder.build(),
        notes: notes.clone(),
    };
    let client = connect(era, server, person.clone()).await.expect("connect");
    let listed = client.list_all_tools().await.expect("tools/list");
    let told = listed[0]
        .description
        .as_deref()
        .unwrap_or_default()
        .to_owned();
    let arguments = serde_json::json!({"note_id": "n1"});
    let result = client
        .call_tool(
            CallToolRequestParams::new("delete")
                .with_arguments(arguments.as_object().expect("object").clone()),
        )
        .await
        .expect("tools/call");
    let text = text_of(&result);
    let status = result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("status"))
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_owned();
    let modern = era == Era::Modern;
    let taken = if person.asked() > 0 && result.is_error != Some(true) {
        assert!(
            !notes.lock().expect("notes").contains_key("n1"),
            "asked, approved, ran"
        );
        if modern {
            "FormInputRequired"
        } else {
            "FormPushed"
        }
    } else if confirm_token_in(&text).is_some() {
        if text.contains("ELICITATION=false") {
            "TokenSwitchedOff"
        } else {
            "TokenNotDeclared"
        }
    } else if status == "approval_pending" {
        "PageLink"
    } else if status == "person_required" {
        "RefusedNoPerson"
    } else if text.contains("approval page") {
        "RefusedNotVerified"
    } else {
        panic!("an unexpected answer: {text}")
    };
    (told, taken.to_owned())
}

async fn the_route_told_is_the_route_taken(era: Era) {
    let page = || Guard::builder("notes").approval_pages(Arc::new(Page));
    let cases: Vec<(&str, GuardBuilder, Person)> = vec![
        (
            "dialog",
            Guard::builder("notes"),
            Person::new(Reply::Approve),
        ),
        (
            "no dialog",
            Guard::builder("notes"),
            Person::without_elicitation(),
        ),
        (
            "dialogs off",
            Guard::builder("notes").elicitation(false),
            Person::new(Reply::Approve),
        ),
        ("page, dialog client", page(), Person::new(Reply::Approve)),
        ("page, no dialog", page(), Person::without_elicitation()),
        (
            "form first",
            page().approval_routes(vec![ApprovalRoute::Form, ApprovalRoute::Page]),
            Person::new(Reply::Approve),
        ),
        (
            "verified, no page",
            Guard::builder("notes").verified_tools(["delete"]),
            Person::new(Reply::Approve),
        ),
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (case, builder, person) in cases {
        let (told, taken) = told_and_taken(era, builder, person).await;
        assert_eq!(told, taken, "{case}: told {told}, took {taken}");
        kinds.insert(taken);
    }
    // Positive control: the cases reach different routes, so a plan that always said the
    // same would fail above.
    assert!(kinds.len() >= 5, "{kinds:?}");
}

in_both_eras!(the_route_told_is_the_route_taken);
