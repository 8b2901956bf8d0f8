//! The fixture the `#[guarded]` cases share: a server holding a guard, an always-guarded
//! target (`DeleteNote`) and a conditional one (`WriteNote`, asked about when `is_shared`),
//! each resolvable from its arguments. A case includes it with
//! `#[path = "../fixture.rs"] mod fixture;` and writes only the `#[tool_router]` it is about,
//! so the compiler's message points at the case's own lines.
#![allow(dead_code)]

use ask_first::{Binding, Conditional, Guard, HasGuard, InputError, Question, Resolve, Target};
use schemars::JsonSchema;
use serde::Deserialize;

ask_first::wording! {
    pub struct AskDelete = "Delete this note?";
    pub struct AskShare = "Share this note?";
}

/// The server: it holds the guard.
pub(super) struct Server {
    pub guard: Guard,
}

impl HasGuard for Server {
    fn guard(&self) -> &Guard {
        &self.guard
    }
}

#[derive(Deserialize, JsonSchema)]
pub(super) struct DeleteArgs {
    pub id: String,
}

/// Always guarded: deleting one note.
pub(super) struct DeleteNote {
    pub id: String,
}

impl Target for DeleteNote {
    const OPERATION: &'static str = "delete_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id);
    }
    fn question(&self) -> Question {
        Question::new::<AskDelete>([])
    }
}

impl Resolve<Server, DeleteArgs> for DeleteNote {
    async fn resolve(_: &Server, args: &DeleteArgs) -> Result<Self, InputError> {
        Ok(Self {
            id: args.id.clone(),
        })
    }
}

#[derive(Deserialize, JsonSchema)]
pub(super) struct WriteArgs {
    pub id: String,
    pub shared: bool,
}

/// HasGuard under a condition: writing a note, asked about when it ends up shared.
pub(super) struct WriteNote {
    pub id: String,
    pub shared: bool,
}

impl Target for WriteNote {
    const OPERATION: &'static str = "write_note";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.id).flag("shared", self.shared);
    }
    fn question(&self) -> Question {
        Question::new::<AskShare>([])
    }
}

impl Conditional for WriteNote {}

impl WriteNote {
    /// The condition: a predicate of the target.
    pub(super) fn is_shared(&self) -> bool {
        self.shared
    }

    /// Not a predicate: it answers a `&str`, not yes or no.
    pub(super) fn id(&self) -> &str {
        &self.id
    }
}

impl Resolve<Server, WriteArgs> for WriteNote {
    async fn resolve(_: &Server, args: &WriteArgs) -> Result<Self, InputError> {
        Ok(Self {
            id: args.id.clone(),
            shared: args.shared,
        })
    }
}
