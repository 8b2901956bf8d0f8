// A destructive store method takes `Approved<DeleteNote>`; a tool handler without #[guarded]
// has no way to get one, so it cannot call the method at all.
use ask_first::{Approved, Binding, Question, Target};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

ask_first::wording! { struct Ask = "Delete this note?"; }

struct DeleteNote {
    id: String,
}

impl Target for DeleteNote {
    const OPERATION: &'static str = "delete_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id);
    }
    fn question(&self) -> Question {
        Question::new::<Ask>([])
    }
}

struct Store;

impl Store {
    fn delete(&self, approved: Approved<DeleteNote>) -> String {
        approved.into_target().id
    }
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    id: String,
}

struct Server {
    store: Store,
}

#[tool_router]
impl Server {
    #[tool(description = "Delete a note, without asking")]
    async fn delete_note(&self, Parameters(args): Parameters<DeleteArgs>) -> String {
        self.store.delete(DeleteNote { id: args.id })
    }
}

fn main() {
    let _ = Server::tool_router();
}
