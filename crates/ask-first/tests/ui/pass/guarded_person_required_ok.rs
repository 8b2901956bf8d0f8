// `person_required` beside `always` or `when`: the handlers are the same; only the guard's
// answer where no dialog can be shown differs.
#[path = "../fixture.rs"]
mod fixture;

use ask_first::{Approved, Clearance, guarded};
use fixture::{DeleteArgs, DeleteNote, Server, WriteArgs, WriteNote};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

#[tool_router]
impl Server {
    #[guarded(always, person_required)]
    #[tool(description = "Delete a note; only a person's yes will do")]
    async fn delete_note(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
        approved: Approved<DeleteNote>,
    ) -> String {
        let _ = approved.into_target();
        args.id
    }

    #[guarded(person_required, when = "is_shared")]
    #[tool(description = "Write a note; sharing needs a person's yes")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        clearance: Clearance<WriteNote>,
    ) -> String {
        let _ = clearance.into_target();
        args.id
    }
}

pub(crate) fn main() {
    let _ = Server::tool_router();
}
