// `always` and `when` exclude each other.
use mcp_guard::{Approved, Binding, Guard, Guarded, Question, Rejection, Resolve, Target, guarded};
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

struct Server {
    guard: Guard,
}

impl Guarded for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Server, DeleteArgs> for DeleteNote {
    async fn resolve(_: &Server, args: &DeleteArgs) -> Result<Self, Rejection> {
        Ok(Self {
            id: args.id.clone(),
        })
    }
}

#[tool_router]
impl Server {
    #[guarded(always, when = "is_shared")]
    #[tool(description = "Delete a note")]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        let _ = approved.into_target();
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
