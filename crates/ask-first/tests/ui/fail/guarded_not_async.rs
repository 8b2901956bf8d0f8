// A #[guarded] handler must be `async fn`: the guard awaits the person's answer.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteArgs, DeleteNote, Server};
use ask_first::{Approved, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(always)]
    #[tool(description = "Delete a note")]
    fn delete_note(
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
