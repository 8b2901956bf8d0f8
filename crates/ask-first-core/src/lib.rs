//! Core types of [`ask-first`](https://docs.rs/ask-first): a typestate confirmation guard for
//! MCP servers built on `rmcp`. A destructive operation takes an [`Approved<T>`] (or a
//! [`Clearance<T>`]) by value, and only the [`Guard`] makes those, after a person's yes or the
//! two-call token.
//!
//! Use it through the facade crate `ask-first`, which re-exports what a server needs, adds the
//! `#[guarded]` attribute and serving, and is where the guide is: what the guard guarantees,
//! writing a guarded tool step by step, and a compiled example
//! ([the guide](https://docs.rs/ask-first/latest/ask_first/), also the repository's
//! `crates/ask-first/README.md`). This crate's pages are the reference for the types and the engine.
//!
//! A target, its binding and its question:
//!
//! ```
//! use ask_first_core::{Binding, Fact, Id, Question, Target};
//!
//! ask_first_core::wording! {
//!     struct DeleteNoteQuestion = "This will delete note {}. It cannot be undone.";
//! }
//!
//! /// Deleting one note: bound to the note's id.
//! struct DeleteNote {
//!     id: Id,
//! }
//!
//! impl Target for DeleteNote {
//!     const OPERATION: &'static str = "delete_note";
//!     fn bind(&self, binding: &mut Binding) {
//!         binding.text("id", self.id.as_str());
//!     }
//!     fn question(&self) -> Question {
//!         Question::new::<DeleteNoteQuestion>([Fact::id(self.id.clone())])
//!     }
//! }
//!
//! let target = DeleteNote { id: Id::new("n1").unwrap() };
//! assert_eq!(target.question().render(), "This will delete note n1. It cannot be undone.");
//! assert_ne!(target.fingerprint(), DeleteNote { id: Id::new("n2").unwrap() }.fingerprint());
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod approval;
mod approval_memory;
mod approval_record;
mod approval_store;
mod audit;
mod bind_value;
mod call;
mod clock;
mod dialog;
mod engine;
mod evidence;
mod identity;
mod nonce;
mod nonce_file;
mod page_proof;
mod question;
// The seal's own functions are public only to the fuzz targets (feature `fuzzing`); a
// server names nothing here but `SealKey`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod seal;
#[cfg(not(feature = "fuzzing"))]
#[allow(unreachable_pub)]
mod seal;
mod settings;
mod target;
#[cfg(feature = "testing")]
pub mod testing;

pub use approval::{Approved, ApprovedBy, Clearance, Exempt};
pub use approval_memory::MemoryApprovalStore;
pub use approval_record::{
    ApprovalPages, ApprovalRecord, ApprovalStore, DecideRefused, RecordFuture, RecordId,
    RecordState, RecordStoreError, TooManyPending,
};
pub use approval_store::{APPROVALS_DIR, FileApprovalStore, FileApprovalStoreError};
pub use audit::{AuditEvent, AuditOutcome, AuditSink, OUTCOME_META_KEY, Route, outcome_of};
pub use bind_value::{BindText, BindValue};
pub use call::{CONFIRM_TOKEN_ARG, CONFIRM_TOKEN_DESCRIPTION, GuardCall};
pub use dialog::{DialogCarrier, DialogSlot};
pub use engine::{
    APPROVAL_INPUT_KEY, APPROVAL_URL_KEY, APPROVE_PROPERTY, ApprovalRoute, BINDING_CODE_KEY,
    Caller, ClientDeclared, ELICITATION_COMPLETE_METHOD, Guard, GuardBuilder, HasGuard, InputError,
    Interruption, InterruptionKind, MAX_ASK_ROUNDS, MAX_PENDING_APPROVALS,
    PERSON_REQUIRED_META_KEY, PrincipalFn, Resolve, RoutePlan, ToolNeeds, approval_dialog,
    default_principal,
};
pub use engine::{
    AUTHORIZATION_DETAILS_TYPE, AlteredState, Backchannel, BackchannelFuture, BackchannelPoll,
    BackchannelStarted, token_reply,
};
pub use evidence::{Evidence, EvidenceGroup, EvidenceItem, Excerpt};
pub use identity::Identity;
pub use nonce::{MemoryNonceStore, NonceStore, NonceStoreError, SpendFuture};
pub use nonce_file::{FileNonceStore, FileNonceStoreError, SPENT_LOG_FILE};
pub use page_proof::{PageProof, enrol_command};
pub use question::{
    Address, ByteSize, Configured, Count, Fact, Id, InvalidId, Link, Moment, Name, NotConfigured,
    PathName, Question, Span, ToFact, Wording,
};
pub use seal::{Nonce, SealKey, SealKeyTooShort};
pub use settings::{
    ELICITATION_VAR, InvalidElicitationSetting, elicitation_from_env, elicitation_off_notice,
    parse_elicitation,
};
pub use target::{Binding, Conditional, Fingerprint, Target};

/// Items the `#[guarded]` macro expands to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use rmcp;

    pub use crate::audit::{AuditSlot, AuditTicket};
    pub use crate::evidence::IntoEvidence;
    pub use crate::{
        BindValue, Binding, Evidence, Fact, Guard, GuardCall, HasGuard, InputError, Interruption,
        Question, Resolve, Target, ToFact, Wording,
    };

    /// Where the guard leaves the call's audit ticket once it is cleared.
    pub fn audit_slot(call: &GuardCall) -> AuditSlot {
        call.audit_slot()
    }

    /// Records what became of a guarded call that `ticket`'s clearance let run.
    pub fn record_call(
        guard: &Guard,
        ticket: Option<&AuditTicket>,
        response: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>,
    ) {
        guard.record_call(ticket, response);
    }

    /// For a tool that declares an `outputSchema`: the token reply's facts move to `_meta`.
    pub fn for_output_schema(interruption: Interruption) -> Interruption {
        interruption.for_output_schema()
    }

    /// The verdict of a `#[guarded(when = "...")]` predicate: whether to ask.
    pub fn verdict<V: Verdict>(value: V) -> bool {
        value.asks()
    }

    /// What a `when` predicate may return: only `bool`, so that a predicate returning
    /// anything else is refused with the fix rather than a bare type mismatch.
    #[diagnostic::on_unimplemented(
        message = "a `#[guarded(when = ...)]` predicate must return `bool`, not `{Self}`",
        label = "the target's method named here returns `{Self}`",
        note = "make the predicate `fn name(&self) -> bool` on the target: `true` asks the person, `false` lets the call run without asking (the handler gets `Clearance::Exempt`)"
    )]
    pub trait Verdict {
        /// Whether to ask.
        fn asks(self) -> bool;
    }

    impl Verdict for bool {
        fn asks(self) -> bool {
            self
        }
    }

    /// Pins an async block's output type, so `?` and `return` inside it infer.
    pub fn body<R, F: Future<Output = R>>(future: F) -> F {
        future
    }

    /// The input schema of a guarded tool whose arguments are `T`: `T`'s own (as rmcp's
    /// `#[tool]` derives it), with the optional `confirm_token` string added unless `T`
    /// declares it.
    pub fn input_schema_with_confirm_token<T: rmcp::schemars::JsonSchema + std::any::Any>()
    -> std::sync::Arc<rmcp::model::JsonObject> {
        let schema = rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|e| {
            panic!(
                "Invalid input schema for `{}`: {e}",
                std::any::type_name::<T>()
            )
        });
        crate::call::with_confirm_token(&schema)
    }

    /// The `_meta` of a `person_required` tool in `tools/list`: `given` (the `#[tool(meta = ..)]`
    /// the author wrote, if any) with [`PERSON_REQUIRED_META_KEY`](crate::PERSON_REQUIRED_META_KEY)
    /// set to `true`.
    pub fn person_required_meta(given: Option<rmcp::model::MetaObject>) -> rmcp::model::MetaObject {
        let mut meta = given.unwrap_or_default();
        meta.0.insert(
            crate::PERSON_REQUIRED_META_KEY.to_owned(),
            serde_json::Value::Bool(true),
        );
        meta
    }

    /// The input schema of a guarded tool without arguments: `confirm_token` only.
    pub fn empty_input_schema_with_confirm_token() -> std::sync::Arc<rmcp::model::JsonObject> {
        crate::call::with_confirm_token(&rmcp::handler::server::common::schema_for_empty_input())
    }
}
