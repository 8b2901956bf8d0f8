// The approval's type parameter must be a guard target: `Note` is a plain struct.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteArgs, Server};
use ask_first::{Approved, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

/// Not a `Target`: nothing says what an approval of it would be bound to.
struct Note;

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
