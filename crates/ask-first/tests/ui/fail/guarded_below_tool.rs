// #[guarded] below rmcp's #[tool] sees the handler after #[tool] rewrote it into a boxed
// future, too late to generate the tool-facing method.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteArgs, DeleteNote, Server};
use ask_first::{Approved, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[tool(description = "Delete a note")]
    #[guarded(always)]
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
