// `when` takes the method name in a string literal.
use mcp_guard::{
    Binding, Clearance, Conditional, Guard, Guarded, Question, Rejection, Resolve, Target, guarded,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

mcp_guard::wording! { struct Ask = "Share this note?"; }

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    id: String,
    shared: bool,
}

struct WriteNote {
    id: String,
    shared: bool,
}

impl Target for WriteNote {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id).flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<Ask>([])
    }
}

impl Conditional for WriteNote {}

impl WriteNote {
    fn is_shared(&self) -> bool {
        self.shared
    }
}

struct Server {
    guard: Guard,
}

impl Guarded for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Server, WriteArgs> for WriteNote {
    async fn resolve(_: &Server, args: &WriteArgs) -> Result<Self, Rejection> {
        Ok(Self {
            id: args.id.clone(),
            shared: args.shared,
        })
    }
}

#[tool_router]
impl Server {
    #[guarded(when = is_shared)]
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
