// The approval's type parameter must be a guard target: `Note` is a plain struct.
use mcp_guard::{Approved, Binding, Guard, Guarded, Question, Target, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

mcp_guard::wording! { struct Ask = "Delete this note?"; }

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    id: String,
}

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

/// Not a `Target`: nothing says what an approval of it would be bound to.
struct Note;

struct Server {
    guard: Guard,
}

impl Guarded for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[tool_router]
impl Server {
    #[guarded(always)]
    #[tool(description = "Delete a note")]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
        approved: Approved<Note>,
    ) -> String {
        let _ = approved;
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
