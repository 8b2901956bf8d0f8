// The server must hold a guard (`impl HasGuard`) for #[guarded] handlers to ask through.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{DeleteArgs, DeleteNote};
use ask_first::{Approved, InputError, Resolve, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

/// A server without `impl HasGuard`.
struct Unguarded;

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

fn main() {
    let _ = Unguarded::tool_router();
}
