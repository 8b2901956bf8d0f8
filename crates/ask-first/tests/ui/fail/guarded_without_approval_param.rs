// #[guarded(always)] on a handler that takes no `Approved<T>`: the guard would ask and then
// have nothing to hand over, and the body could act unapproved.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteArgs, Server};
use ask_first::guarded;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(always)]
    #[tool(description = "Delete a note")]
    async fn delete_note(&self, Parameters(args): Parameters<DeleteArgs>) -> String {
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
