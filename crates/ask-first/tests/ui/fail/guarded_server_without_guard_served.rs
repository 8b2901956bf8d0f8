// A server without `impl HasGuard`, with a #[guarded] tool, served: the missing impl is
// reported at the tool, then once where `Serving::serve` takes the server (not three times
// there). Served with `impl HasGuard`, the same server compiles (examples/notes.rs).
#[path = "../fixture.rs"]
mod fixture;

use ask_first::{Approved, InputError, Resolve, ServeError, Serving, guarded};
use fixture::{DeleteArgs, DeleteNote};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

/// A server without `impl HasGuard`.
#[derive(Clone)]
struct Unguarded {
    tool_router: ToolRouter<Self>,
}

impl Resolve<Unguarded, DeleteArgs> for DeleteNote {
    async fn resolve(_: &Unguarded, args: &DeleteArgs) -> Result<Self, InputError> {
        Ok(Self {
            id: args.id.clone(),
        })
    }
}

#[tool_router]
impl Unguarded {
    #[guarded(always)]
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

#[tool_handler]
impl ServerHandler for Unguarded {}

async fn run() -> Result<(), ServeError> {
    let serving = Serving::from_env("notes", "NOTES")?;
    let server = Unguarded {
        tool_router: Unguarded::tool_router(),
    };
    serving.serve(server).await
}

fn main() {
    let _ = run;
}
