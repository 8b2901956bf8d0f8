#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// What a server uses to guard a tool (the guide's opening names these concepts), each name
// exported once. Items the `#[guarded]` expansion calls are in the hidden `__private`; the
// wire-level pieces, the settings parsers and the serving internals are in the layer crates
// (`ask-first-core`, `ask-first-serve`) for the few servers that need them. `tests/public_api.rs`
// lists and counts every name below.

// The target, its binding (what `#[derive(Target)]` binds) and the question a person reads;
// the kinds of facts a question shows are in `fact`.
pub use ask_first_core::{
    BindText, BindValue, Binding, Conditional, Fact, Question, Target, Wording, wording,
};
// From arguments to a target, the guard, and the proofs it makes.
pub use ask_first_core::{
    AlteredState, Approved, ApprovedBy, Clearance, Exempt, Guard, GuardBuilder, HasGuard,
    InputError, Resolve, SealKey,
};
// The macros' full references are on these re-exports, so they show on the facade's own pages.
#[doc = include_str!("reference/derive_target.md")]
pub use ask_first_derive::Target;
#[doc = include_str!("reference/guarded.md")]
pub use ask_first_derive::guarded;

#[cfg(feature = "serve-stdio")]
pub use ask_first_serve::{ServeError, Serving};

/// What a question shows: the kinds of [`Fact`]. Each is a type a target's field can have
/// (`#[derive(Target)]` shows it through [`fact::ToFact`]) and a [`Fact`] constructor takes.
///
/// | kind | shown as |
/// |---|---|
/// | [`fact::Id`] | `3f2a9c91e` (validated: letters, digits, `-_.:`) |
/// | [`fact::Name`] | `caller-supplied name «Q3.txt»` |
/// | [`fact::PathName`] | `caller-supplied path «reports»/«Q3.txt»`, absolute: `/«data»/«x.txt»` |
/// | [`fact::Address`] | `caller-supplied address «ana@example.org»` |
/// | [`fact::Configured`] | `eu-west-3 (server configuration)`: the operator's, never a request's |
/// | [`fact::Link`] | `https://gist.example.org/alice/3f2a9c91e`: a [`fact::Configured`] base and [`fact::Id`]s |
/// | [`fact::Count`], [`fact::ByteSize`] | `3`, `1.5 KiB` |
/// | [`fact::Moment`], [`fact::Span`] | `2026-11-30 12:00 UTC`, `5 min 30 s` |
///
/// Caller-supplied names are framed and escaped (see [`fact::Name`]); free text has no kind.
///
/// Below the question, the approval page shows a target's evidence ([`fact::Evidence`], from
/// [`Target::evidence`](trait@Target)): the items that change ([`fact::EvidenceItem`]), each
/// with its name, size and content digest, and excerpts of content about to become readable,
/// framed as the caller's data.
pub mod fact {
    pub use ask_first_core::{
        Address, ByteSize, Configured, Count, Evidence, EvidenceItem, Id, Link, Moment, Name,
        NotConfigured, PathName, Span, ToFact,
    };
}

/// The audit trail: what the guard records about each decision and each guarded call's
/// outcome, and where ([`audit::AuditSink`], set with [`GuardBuilder::audit`]).
pub mod audit {
    pub use ask_first_core::{
        AuditEvent, AuditOutcome, AuditSink, OUTCOME_META_KEY, Route, outcome_of,
    };
}

/// Spent-answer stores: every approval is used once ([`GuardBuilder::nonce_store`]; replicas
/// share one, such as `ask-first-redis`; `Serving` picks one from its settings).
pub mod nonce {
    pub use ask_first_core::{Nonce, NonceStore, NonceStoreError, SpendFuture};
}

/// Who is calling: the rule that binds seals, tokens and HTTP sessions to a principal
/// ([`GuardBuilder::principal`]), and the HTTP gate's verdict it reads first
/// ([`principal::Identity`]).
pub mod principal {
    pub use ask_first_core::{Caller, Identity, default_principal};
}

/// Hand-written guarded handlers, without `#[guarded]`: the call a handler takes
/// ([`protocol::GuardCall`]), [`Guard::approve`] and [`Guard::clear`], and the answer when the
/// call did not run ([`protocol::Interruption`]). The wire-level keys and the dialog's shape
/// are in `ask-first-core`.
pub mod protocol {
    pub use ask_first_core::{GuardCall, Interruption, InterruptionKind};
}

/// Test doubles for a guarded server's own tests (feature `testing`, off by default; add
/// `ask-first = { version = "...", features = ["testing"] }` to `[dev-dependencies]`).
///
/// A [`testing::Person`] is a scripted person at an in-process rmcp client: it answers every
/// dialog the way its [`testing::Reply`] says, records the questions it was shown, can hold a
/// dialog open (to cancel meanwhile), or declare no elicitation at all (the token path).
/// [`testing::connect`] serves the server on an in-memory pipe and connects the person in
/// either protocol era ([`testing::Era`]): a pushed `elicitation/create` on 2025-11-25, an
/// `input_required` answered through the same handler on 2026-07-28. [`testing::text_of`] and
/// [`testing::confirm_token_in`] read a result as a model would, and the token to quote.
///
/// A server author tests a guarded tool with it:
///
/// ```
/// use std::collections::BTreeSet;
/// use std::sync::{Arc, Mutex};
///
/// use ask_first::testing::{Era, Person, Reply, connect};
/// use ask_first::fact::Id;
/// use ask_first::{Approved, Binding, Fact, Guard, HasGuard, Question, InputError, Resolve};
/// use ask_first::{Target, guarded};
/// use rmcp::handler::server::wrapper::Parameters;
/// use rmcp::model::CallToolRequestParams;
/// use rmcp::{ServerHandler, tool, tool_handler, tool_router};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use serde_json::json;
///
/// ask_first::wording! {
///     struct DeleteQuestion = "This will delete note {}. It cannot be undone.";
/// }
///
/// struct DeleteNote {
///     id: Id,
/// }
///
/// impl Target for DeleteNote {
///     const OPERATION: &'static str = "delete_note";
///     fn bind(&self, binding: &mut Binding) {
///         binding.text("id", self.id.as_str());
///     }
///     fn question(&self) -> Question {
///         Question::new::<DeleteQuestion>([Fact::id(self.id.clone())])
///     }
/// }
///
/// #[derive(Clone)]
/// struct NotesServer {
///     guard: Guard,
///     notes: Arc<Mutex<BTreeSet<String>>>,
/// }
///
/// impl HasGuard for NotesServer {
///     fn guard(&self) -> &Guard {
///         &self.guard
///     }
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct DeleteArgs {
///     id: String,
/// }
///
/// impl Resolve<NotesServer, DeleteArgs> for DeleteNote {
///     async fn resolve(server: &NotesServer, args: &DeleteArgs) -> Result<Self, InputError> {
///         let id = Id::new(&args.id).map_err(|error| InputError::new(error.to_string()))?;
///         if !server.notes.lock().unwrap().contains(id.as_str()) {
///             return Err(InputError::new(format!("There is no note {id}.")));
///         }
///         Ok(Self { id })
///     }
/// }
///
/// #[tool_router]
/// impl NotesServer {
///     #[guarded(always)]
///     #[tool(description = "Delete a note. Asks the person at the client first.")]
///     async fn delete_note(
///         &self,
///         Parameters(_args): Parameters<DeleteArgs>,
///         approved: Approved<DeleteNote>,
///     ) -> String {
///         let target = approved.into_target();
///         self.notes.lock().unwrap().remove(target.id.as_str());
///         format!("deleted {}", target.id)
///     }
/// }
///
/// #[tool_handler]
/// impl ServerHandler for NotesServer {}
///
/// fn server() -> NotesServer {
///     NotesServer {
///         guard: Guard::builder("notes").build(),
///         notes: Arc::new(Mutex::new(BTreeSet::from(["n1".to_owned()]))),
///     }
/// }
///
/// fn delete(id: &str) -> CallToolRequestParams {
///     let args = json!({ "id": id }).as_object().cloned().unwrap();
///     CallToolRequestParams::new("delete_note").with_arguments(args)
/// }
///
/// #[tokio::main]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     // The router lists the tool with its arguments' schema, and the optional
///     // `confirm_token` the guard adds; the approval is not part of it.
///     let tools = NotesServer::tool_router().list_all();
///     assert_eq!(tools[0].name, "delete_note");
///     assert!(tools[0].input_schema["properties"].get("id").is_some());
///     assert!(tools[0].input_schema["properties"].get("confirm_token").is_some());
///
///     for era in Era::BOTH {
///         // A declined dialog changes nothing; the person saw facts only.
///         let server = server();
///         let person = Person::new(Reply::Decline);
///         let client = connect(era, server.clone(), person.clone()).await?;
///         let result = client.call_tool(delete("n1")).await?;
///         assert_eq!(result.is_error, Some(true));
///         assert_eq!(person.questions(), ["This will delete note n1. It cannot be undone."]);
///         assert!(server.notes.lock().unwrap().contains("n1"));
///
///         // An approved one runs the body, once.
///         let person = Person::new(Reply::Approve);
///         let client = connect(era, server.clone(), person.clone()).await?;
///         client.call_tool(delete("n1")).await?;
///         assert_eq!(person.asked(), 1);
///         assert!(server.notes.lock().unwrap().is_empty());
///     }
///     Ok(())
/// }
/// ```
#[cfg(feature = "testing")]
pub mod testing {
    pub use ask_first_core::testing::{Era, Person, Reply, confirm_token_in, connect, text_of};
}

/// Items the `#[guarded]` expansion names (`::ask_first::__private::…`), rmcp included. Not an
/// API: nothing here is a promise.
#[doc(hidden)]
pub mod __private {
    pub use ask_first_core::__private::*;
}
