// The predicate answers yes or no: it must return `bool`.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{Server, WriteArgs, WriteNote};
use ask_first::{Clearance, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(when = "id")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        clearance: Clearance<WriteNote>,
    ) -> String {
        let _ = clearance.into_target();
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
