// The target must be resolvable from the tool's arguments: `DeleteNote` resolves from
// `DeleteArgs`, not from the `WriteArgs` this handler takes.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteNote, Server, WriteArgs};
use ask_first::{Approved, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(always)]
    #[tool(description = "Delete a note")]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        let _ = approved.into_target();
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
