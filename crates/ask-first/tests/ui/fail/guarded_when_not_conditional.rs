// `when` needs a conditional target: `AlwaysWrite` does not implement `Conditional`, so it
// is always guarded and has no `Clearance`.
#[path = "../fixture.rs"]
mod fixture;

use fixture::{AskShare, Server, WriteArgs};
use ask_first::{Binding, Clearance, Question, InputError, Resolve, Target, guarded};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

/// A target with a predicate, but not `Conditional`.
struct AlwaysWrite {
    id: String,
    shared: bool,
}

impl Target for AlwaysWrite {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id).flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<AskShare>([])
    }
}

impl AlwaysWrite {
    fn is_shared(&self) -> bool {
        self.shared
    }
}

impl Resolve<Server, WriteArgs> for AlwaysWrite {
    async fn resolve(_: &Server, args: &WriteArgs) -> Result<Self, InputError> {
        Ok(Self {
            id: args.id.clone(),
            shared: args.shared,
        })
    }
}

#[tool_router]
impl Server {
    #[guarded(when = "is_shared")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        Parameters(args): Parameters<WriteArgs>,
        clearance: Clearance<AlwaysWrite>,
    ) -> String {
        let _ = clearance;
        args.id
    }
}

fn main() {
    let _ = Server::tool_router();
}
