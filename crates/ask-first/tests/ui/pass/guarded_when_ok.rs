// #[guarded(when = "predicate")] with a `Clearance<T>` for a `Conditional` target: compiles,
// with other rmcp extractors kept after the guard's own, and with no `Parameters` at all.
use ask_first::{
    Approved, Binding, Clearance, Conditional, Fact, Guard, HasGuard, InputError, Question,
    Resolve, Target, guarded,
};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

ask_first::wording! {
    struct ShareAsk = "This will make a note of {} readable by everyone.";
    struct WipeAsk = "This will delete all {} notes.";
}

struct WriteNote {
    text: String,
    shared: bool,
    was_shared: bool,
}

impl Target for WriteNote {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("text", &self.text).flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<ShareAsk>([Fact::bytes(self.text.len() as u64)])
    }
}

impl Conditional for WriteNote {}

impl WriteNote {
    fn widens_visibility(&self) -> bool {
        self.shared && !self.was_shared
    }
}

struct Wipe;

impl Target for Wipe {
    const OPERATION: &'static str = "wipe";
    fn bind(&self, binding: &mut Binding) {
        binding.flag("all", true);
    }
    fn question(&self) -> Question {
        Question::new::<WipeAsk>([Fact::count(3)])
    }
}

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    text: String,
    #[serde(default)]
    shared: bool,
}

#[derive(Serialize, JsonSchema)]
struct Written {
    bytes: usize,
    asked: bool,
}

#[derive(Clone)]
struct Server {
    guard: Guard,
}

impl HasGuard for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

impl Resolve<Server, WriteArgs> for WriteNote {
    async fn resolve(_: &Server, args: &WriteArgs) -> Result<Self, InputError> {
        Ok(Self {
            text: args.text.clone(),
            shared: args.shared,
            was_shared: false,
        })
    }
}

impl Resolve<Server, ()> for Wipe {
    async fn resolve(_: &Server, _: &()) -> Result<Self, InputError> {
        Ok(Self)
    }
}

#[tool_router]
impl Server {
    #[guarded(when = "widens_visibility")]
    #[tool(description = "Write a note")]
    async fn write_note(
        &self,
        context: RequestContext<RoleServer>,
        clearance: Clearance<WriteNote>,
        Parameters(args): Parameters<WriteArgs>,
    ) -> Result<Json<Written>, ErrorData> {
        let _ = context.id;
        let asked = clearance.approved_by().is_some();
        let note = clearance.into_target();
        let _ = args.text;
        Ok(Json(Written {
            bytes: note.text.len(),
            asked,
        }))
    }

    /// Delete every note.
    #[guarded(always)]
    #[tool]
    async fn wipe(&self, approved: Approved<Wipe>) -> String {
        let Wipe = approved.into_target();
        "wiped".to_owned()
    }
}

#[tool_handler]
impl ServerHandler for Server {}

pub(crate) fn main() {
    let server = Server {
        guard: Guard::builder("pass").build(),
    };
    let _ = server.clone().guard;
    let router = Server::tool_router();
    let write = router.get("write_note").expect("write_note is listed");
    let properties = write.input_schema["properties"].as_object().unwrap();
    assert!(properties.contains_key("text") && properties.contains_key("shared"));
    assert!(!properties.contains_key("context"));
    assert!(write.output_schema.is_some());
    let wipe = router.get("wipe").expect("wipe is listed");
    assert_eq!(wipe.description.as_deref(), Some("Delete every note."));
    assert!(wipe.output_schema.is_none());
}
