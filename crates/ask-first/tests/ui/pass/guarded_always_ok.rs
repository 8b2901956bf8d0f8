// #[guarded(always)] above rmcp's #[tool], in a #[tool_router] impl: compiles, and the router
// lists the tool with its input schema (from `Parameters`) and output schema (from `Json`).
use std::sync::Mutex;

use ask_first::{
    Approved, Binding, Fact, Guard, HasGuard, InputError, Question, Resolve, Target, fact::Id,
    guarded,
};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

ask_first::wording! { struct Ask = "This will delete note {}."; }

struct DeleteNote {
    id: Id,
}

impl Target for DeleteNote {
    const OPERATION: &'static str = "delete_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", self.id.as_str());
    }
    fn question(&self) -> Question {
        Question::new::<Ask>([Fact::id(self.id.clone())])
    }
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The note to delete.
    id: String,
}

#[derive(Serialize, JsonSchema)]
struct Deleted {
    id: String,
}

struct Store {
    notes: Mutex<Vec<String>>,
}

impl Store {
    /// The destructive call: it takes the approval by value.
    fn delete(&self, approved: Approved<DeleteNote>) -> String {
        let id = approved.into_target().id;
        self.notes
            .lock()
            .unwrap()
            .retain(|note| note != id.as_str());
        id.as_str().to_owned()
    }
}

struct Server {
    guard: Guard,
    store: Store,
}

impl HasGuard for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Server, DeleteArgs> for DeleteNote {
    async fn resolve(_: &Server, args: &DeleteArgs) -> Result<Self, InputError> {
        let id = Id::new(&args.id).map_err(|error| InputError::new(error.to_string()))?;
        Ok(Self { id })
    }
}

#[tool_router]
impl Server {
    #[guarded(always)]
    #[tool(
        description = "Delete a note",
        annotations(destructive_hint = true, read_only_hint = false)
    )]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
        approved: Approved<DeleteNote>,
    ) -> Result<Json<Deleted>, ErrorData> {
        if args.id.is_empty() {
            return Err(ErrorData::invalid_params("empty id", None));
        }
        let id = self.store.delete(approved);
        Ok(Json(Deleted { id }))
    }
}

#[tool_handler]
impl ServerHandler for Server {}

pub(crate) fn main() {
    let server = Server {
        guard: Guard::builder("pass").build(),
        store: Store {
            notes: Mutex::new(vec!["n1".to_owned()]),
        },
    };
    let _ = &server.guard;
    let tools = Server::tool_router().list_all();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, "delete_note");
    assert!(tool.input_schema["properties"].get("id").is_some());
    let output = tool.output_schema.as_ref().expect("an output schema");
    assert!(output["properties"].get("id").is_some());
    assert_eq!(
        tool.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
}
