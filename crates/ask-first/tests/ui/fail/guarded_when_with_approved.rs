// `when` hands over a `Clearance<T>` (approved, or exempt when the condition is false), so
// the handler cannot claim an `Approved<T>` it may not get.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{Server, WriteArgs, WriteNote};
use ask_first::{Approved, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(when = "is_shared")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        approved: Approved<WriteNote>,
    ) -> String {
        let _ = approved.into_target();
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
