// Only the guard decides a target is exempt: a handler cannot ask for an `Exempt<T>`.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{Server, WriteArgs, WriteNote};
use ask_first::{Exempt, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(when = "is_shared")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        exempt: Exempt<WriteNote>,
    ) -> String {
        let _ = exempt.into_target();
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
