//! The `#[guarded]` attribute macro and `#[derive(Target)]` of
//! [`ask-first`](https://docs.rs/ask-first) (see [`macro@Target`] for the derive).
//!
//! Use it through the facade, `ask_first::guarded`: the code it generates names items only as
//! `::ask_first::__private::…` (a hidden module of the facade, rmcp included), so a server depends on `ask-first` (and on `rmcp`, which `#[tool]` needs
//! anyway), never on this crate or on `ask-first-core` directly.
//!
//! How a guarded tool is written (the target, the API that takes the proof, `Resolve`,
//! `HasGuard`, and this attribute) is in the guide,
//! [Writing a guarded tool](https://docs.rs/ask-first/latest/ask_first/#writing-a-guarded-tool)
//! (also the repository's `crates/ask-first/README.md`), with a compiled example. This page is the
//! macro's reference: its options, what it expands to, and its errors.
//!
//! # The handler
//!
//! `#[guarded]` goes on a tool handler in an rmcp `#[tool_router]` impl, **above** rmcp's
//! `#[tool]`. The handler is an `async fn` taking `&self`, its `Parameters<A>` (if the tool has
//! arguments), and the proof its destructive call consumes: `Approved<T>` for
//! `#[guarded(always)]`, `Clearance<T>` for `#[guarded(when = "predicate")]`. `T` implements
//! `Target` and `Resolve<Server, A>` (`Resolve<Server, ()>` when the tool takes no
//! `Parameters`), the server implements `HasGuard`, and for `when`, `T` implements
//! `Conditional` and has the predicate as a method.
//!
//! ```ignore
//! #[tool_router]
//! impl NotesServer {
//!     #[guarded(always)]
//!     #[tool(description = "Delete a note", annotations(destructive_hint = true))]
//!     async fn delete_note(
//!         &self,
//!         Parameters(args): Parameters<DeleteNoteArgs>,
//!         approved: Approved<DeleteNote>,
//!     ) -> Result<Json<Deleted>, ErrorData> {
//!         let note = self.store.delete(approved); // takes Approved<DeleteNote> by value
//!         Ok(Json(Deleted::from(note)))
//!     }
//!
//!     #[guarded(when = "widens_visibility")]
//!     #[tool(description = "Write a note")]
//!     async fn write_note(
//!         &self,
//!         Parameters(args): Parameters<WriteNoteArgs>,
//!         clearance: Clearance<WriteNote>,
//!     ) -> Result<Json<Written>, ErrorData> {
//!         self.store.write(clearance); // takes Clearance<WriteNote> by value
//!         Ok(Json(Written::default()))
//!     }
//! }
//! ```
//!
//! # The options
//!
//! - `#[guarded(always)]`: every call asks. The handler takes `Approved<T>`.
//! - `#[guarded(when = "predicate")]`: the call asks only when `target.predicate()` returns
//!   `true`; otherwise the guard makes an `Exempt<T>` without asking. The handler takes
//!   `Clearance<T>` (`Approved` or `Exempt`), and `T` must implement `Conditional`. The
//!   predicate is an inherent or trait method `fn(&self) -> bool` of the target, named in a
//!   string so the attribute reads like the condition it states.
//!
//! Exactly one of them is accepted; there is no default. Beside it:
//!
//! - `person_required` (`#[guarded(always, person_required)]`): the tool runs only after a
//!   person's yes in a dialog and **never** falls back to the two-call `confirm_token`. A call
//!   that cannot show a dialog (the client declares no elicitation, the connection cannot carry
//!   it, the dialog request fails, or the server runs with `ELICITATION=false`) gets an
//!   `isError` result saying that a person is required, why none could be asked, and what would
//!   let it run (with `structuredContent` `{"status": "person_required", "tool", "why_no_dialog"}`),
//!   and a quoted `confirm_token` is never accepted. In `tools/list` such a tool carries
//!   `"_meta": {"ask-first/person_required": true}` (merged into a `meta = ..` the `#[tool]`
//!   gives) and its input schema is its arguments' own, without the `confirm_token` property;
//!   say it in the description too, for models that read only that. It is listed to every
//!   client (a 2026-07-28 client declares its capabilities per request, so the list cannot
//!   know), and answered with the refusal where no dialog can be shown.
//! - `verified` (`#[guarded(always, verified)]`): stricter still, the tool takes only a yes a
//!   model cannot give: the approval page with a passkey (`ask-first-serve`'s feature
//!   `passkeys`). No dialog and no `confirm_token` will do; with no passkey enrolled the call is
//!   refused, naming how to enable the page. It is marked and listed as `person_required`.
//!
//! # The expansion (decided)
//!
//! The macro generates **the tool-facing method**, with the handler's name and visibility, and
//! moves the handler's body, unchanged, into an `async move` block inside it. The guard's
//! per-call context is an rmcp extractor, [`GuardCall`], placed **before** `Parameters`: it reads
//! the call's context, the tool's name, a 2026-07-28 retry's `requestState` and `inputResponses`,
//! and takes a quoted `confirm_token` out of the raw arguments, which `Parameters` then consumes
//! without it.
//!
//! `#[guarded]` must be **above** `#[tool]`: outer attributes expand first, so `#[guarded]` sees
//! the handler as written. rmcp's `#[tool]` then sees the generated method: it derives the input
//! schema from `Parameters<A>` exactly as before (the proof and `GuardCall` are not part of it),
//! and rewrites the `async fn` into the boxed future rmcp's router calls. Because the generated
//! method returns `CallToolResponse`, rmcp can no longer read a `Json<T>` output type from it:
//! `#[guarded]` adds `output_schema = ::ask_first::__private::rmcp::handler::server::tool::
//! schema_for_output::<T>()` to the `#[tool(...)]` attribute when the handler returned `Json<T>`
//! or `Result<Json<T>, E>` and the attribute sets no `output_schema` (its settings are parsed as
//! rmcp parses them, not searched as text) — the same expression rmcp writes. `#[tool_router]` finds the
//! method by its `#[tool]` attribute and does not care about the order.
//!
//! For the `delete_note` handler above, the expansion is:
//!
//! ```text
//! #[tool(description = "Delete a note", annotations(destructive_hint = true),
//!        output_schema =
//!            ::ask_first::__private::rmcp::handler::server::tool::schema_for_output::<Deleted>())]
//! async fn delete_note(
//!     &self,
//!     __ask_first_call: ::ask_first::__private::GuardCall,
//!     __ask_first_params: Parameters<DeleteNoteArgs>,
//!     /* the handler's other extractors, in their order */
//! ) -> Result<::ask_first::__private::rmcp::model::CallToolResponse,
//!             ::ask_first::__private::rmcp::ErrorData> {
//!     let __ask_first_proof: Approved<DeleteNote>;
//!     let __ask_first_guard: &::ask_first::__private::Guard =
//!         ::ask_first::__private::HasGuard::guard(self);
//!     // 1. resolve the target; an input error is answered as such and asks no one
//!     let __ask_first_target =
//!         match <DeleteNote as ::ask_first::__private::Resolve<Self, DeleteNoteArgs>>::resolve(
//!             self, &__ask_first_params.0).await {
//!             Ok(target) => target,
//!             Err(rejection) => return Ok(::ask_first::__private::InputError::into_response(rejection)),
//!         };
//!     // 2. ask (for `when`: `let needed: bool = __ask_first_target.predicate();`
//!     //    then `__ask_first_guard.clear(call, target, needed, recheck)`); after a yes in a
//!     //    pushed dialog the guard reads the target again through `recheck` and asks again
//!     //    if it no longer reads as shown
//!     let __ask_first_recheck = |__ask_first_shown: DeleteNote| {
//!         <DeleteNote as ::ask_first::__private::Resolve<Self, DeleteNoteArgs>>::recheck(
//!             self, &__ask_first_params.0, __ask_first_shown)
//!     };
//!     let __ask_first_slot = ::ask_first::__private::audit_slot(&__ask_first_call);
//!     __ask_first_proof =
//!         match __ask_first_guard
//!             .approve(__ask_first_call, __ask_first_target, __ask_first_recheck).await {
//!             Ok(proof) => proof,
//!             // (a `Json<T>` handler passes it through `__private::for_output_schema` first)
//!             Err(interruption) =>
//!                 return ::ask_first::__private::Interruption::into_result(interruption),
//!         };
//!     // 3. the handler's own bindings, then its body, unchanged
//!     let Parameters(args) = __ask_first_params;
//!     let approved: Approved<DeleteNote> = __ask_first_proof;
//!     let __ask_first_result = ::ask_first::__private::body::<
//!         Result<Json<Deleted>, ErrorData>, _>(async move { /* body */ }).await;
//!     let __ask_first_response =
//!         ::ask_first::__private::rmcp::handler::server::tool::IntoCallToolResult
//!             ::into_call_tool_result(__ask_first_result);
//!     // 4. the audit log learns what became of the call
//!     ::ask_first::__private::record_call(
//!         __ask_first_guard, __ask_first_slot.take().as_ref(), &__ask_first_response);
//!     __ask_first_response
//! }
//! ```
//!
//! The macro recognises parameters by the last segment of their type's path, as rmcp does:
//! `Parameters<A>`, `Approved<T>`, `Clearance<T>` (written with any path, e.g.
//! `ask_first::Approved<T>`, but not through a type alias). Every other parameter is an rmcp
//! extractor and is kept, in order, after `Parameters`. As `GuardCall` takes a retry's
//! `requestState` and `inputResponses`, a guarded handler should not also ask for rmcp's
//! `RequestState` or `InputResponses` extractors: they would find them taken.
//!
//! Without `Parameters<A>`, no `__ask_first_params` is added (the tool keeps rmcp's empty input
//! schema) and the target is resolved from `&()`. `__private::body` pins the block's output to
//! the handler's return type, so `?` and `return` in the body mean what they meant before.
//! Names starting with `__ask_first_` are the macro's; the body should not use them.
//!
//! [`GuardCall`]: https://docs.rs/ask-first/latest/ask_first/protocol/struct.GuardCall.html
//!
//! `A` need not declare `confirm_token`: `#[guarded]` adds it to the tool's input schema as an
//! optional string (`input_schema = ::ask_first::__private::input_schema_with_confirm_token::<A>()`
//! on the `#[tool]`, unless the `#[tool]` gives an `input_schema`), and `GuardCall` takes it out
//! of the arguments before `Parameters<A>` deserializes them, so an `A` with
//! `#[serde(deny_unknown_fields)]` works without it. An `A` that declares it anyway keeps its
//! own description in the schema, and reads `None`.
//!
//! # Errors
//!
//! Misuse is a compile error pointing at the offending token:
//!
//! | Mistake | Reported on | Message (start) |
//! |---|---|---|
//! | `#[guarded]` without an option | the attribute | `#[guarded] needs one option` |
//! | an unknown option | the option | ``unknown option `x`: #[guarded] accepts `always` or `when = "predicate"`, and optionally `person_required` or `verified` `` |
//! | `person_required` alone | the attribute | `` `person_required` says who must answer, not when to ask `` |
//! | `person_required = …`, or it twice | the option | what `person_required` takes |
//! | `always` and `when` together, or one twice | the second option | `` `always` and `when` exclude each other `` |
//! | `always = …`, bare `when`, `when = ident`, `when = "not a name"` | the value | what `always`/`when` take |
//! | `#[guarded]` below `#[tool]` (rmcp's rewrite seen) | `fn` | `#[guarded] must be above #[tool]` |
//! | not an `async fn` | `fn` | ``a #[guarded] handler must be an `async fn` `` |
//! | no `&self` receiver | the receiver | ``a #[guarded] handler takes `&self` `` |
//! | no `Approved<T>` (`always`) / `Clearance<T>` (`when`) | the signature | `` #[guarded(always)] needs a parameter of type `Approved<T>` `` |
//! | `Clearance<T>` with `always` | the type | `` `always` gives an `Approved<T>`; `Clearance<T>` is for `#[guarded(when = ...)]` `` |
//! | `Approved<T>` with `when` | the type | `` `when` gives a `Clearance<T>` `` |
//! | `Exempt<T>` | the type | `` a handler cannot take `Exempt<T>` `` |
//! | `&Approved<T>` | the type | ``take `Approved<T>` by value`` |
//! | a second proof | the second | `a #[guarded] handler takes one approval parameter` |
//! | two `Parameters` | the second | ``takes at most one `Parameters<..>` `` |
//!
//! and, from the type checker, with the messages ask-first-core's traits carry:
//!
//! | Mistake | Reported on |
//! |---|---|
//! | `T` is not a `Target` | `Approved<T>` / `Clearance<T>` |
//! | `T` does not implement `Resolve<Self, A>` | `T` |
//! | `T` is not `Conditional` (with `when`) | `Clearance<T>` |
//! | the predicate is not a method of `T` | the string |
//! | the predicate does not return `bool` | the string: ``a `#[guarded(when = ...)]` predicate must return `bool`, not `&str` `` |
//! | `Self` does not implement `HasGuard` | `always` / `when` |
//!
//! After an error of the first table the macro emits a stand-in method with the handler's name
//! (so the router does not pile its own errors on top) and the handler as written under another
//! name (so errors in its body still show). The facade's trybuild suite keeps each case with its
//! `.stderr`.
#![cfg_attr(docsrs, feature(doc_cfg))]

// `#[guarded]`: its options (`options`), the handler read as syntax (`parse`), the checks it
// must pass (`validate`), and the code generated from it (`expand`). `#[derive(Target)]` is
// `target`.
mod expand;
mod options;
mod parse;
mod target;
mod validate;

use proc_macro::TokenStream;

/// Guards an rmcp tool handler: resolves its target from the arguments, asks a person (or
/// issues the two-call token), and runs the body only with the approval in hand.
///
/// `#[guarded(always)]` hands the body an `Approved<T>`; `#[guarded(when = "predicate")]` a
/// `Clearance<T>`, asking only when `target.predicate()` is true; `person_required` beside
/// either never falls back to the two-call token. Place it above rmcp's `#[tool]`. See the
/// [crate documentation](crate) for the expansion and every error.
#[proc_macro_attribute]
pub fn guarded(args: TokenStream, item: TokenStream) -> TokenStream {
    let options = options::parse(args.into());
    expand::guarded(options, item.into()).into()
}

/// Implements `ask_first::Target` from the struct: its operation, its binding and its
/// question, with the question's placeholders checked against the fields at compile time.
///
/// ```ignore
/// use ask_first::{Target, fact::{ByteSize, Id, PathName}};
///
/// #[derive(Target)]
/// #[target(
///     operation = "delete_file",
///     question = "This will delete {path} ({size}) from share {share}.",
///     line = "It cannot be undone."
/// )]
/// struct DeleteFile {
///     share: Id,
///     path: PathName,   // a caller-supplied name: shown framed and escaped
///     #[target(skip)]   // shown, not bound
///     size: ByteSize,
/// }
/// ```
///
/// # On the struct
///
/// - `operation = "name"` (required): `Target::OPERATION`, bound into every approval.
///   ASCII letters, digits, `_`, `-`, `.`, `:`.
/// - `question = "text"` (required): the question's first line.
/// - `line = "text"` (any number, in order): further lines.
///
/// Each may sit in its own `#[target(...)]` or share one. In the texts, `{field}` shows a
/// field and `{method()}` the result of a method `fn(&self) -> T` of the target (for a
/// fact computed from fields, e.g. the size of a text that is bound but never shown);
/// `{{` and `}}` are literal braces. The texts become fixed `Wording` (compile-time
/// constants): nothing at run time can change them.
///
/// # Fact kinds: what a placeholder may show
///
/// A placeholder's field (or method result) must implement `ask_first::fact::ToFact`: `Id`, the
/// caller-supplied names `Name`, `PathName` and `Address` (shown framed, marked as the
/// caller's and escaped), the newtypes `Count`, `ByteSize`, `Moment`, `Span`, a `Fact`, and
/// `Vec`s of them (shown as a list). **Not** `String`, `&str` or plain numbers: free text
/// reaches a question only declared as a caller-supplied name, and a number only said to be
/// a count, a size or a date. A plain `u8`..`u64` field may say so in place, with
/// `#[target(count)]` or `#[target(bytes)]` (`#[target(date)]`: `i64` seconds, or anything
/// `Into<i64>`).
///
/// # The binding: every field, unless `skip`
///
/// Every field is bound, by name, in declaration order, through `ask_first::BindValue`
/// (text, numbers, flags, lists, sets, options, `PathName`'s components; implement it for a
/// type of your own). Forgetting a field that decides what runs is the mistake that matters,
/// so binding is the default. `#[target(skip)]` leaves a field out: for a fact shown to the
/// person that does not decide what runs (a size next to an id). A skipped field must be
/// shown: a field neither bound nor shown is refused.
///
/// A hand-written `impl Target` keeps working: the derive writes nothing else.
///
/// # Errors
///
/// Every misuse is a compile error that names its fix (the facade's trybuild cases
/// `tests/ui/fail/derive_target_*`):
///
/// | Mistake | Reported on | Message (start) |
/// |---|---|---|
/// | no `operation` | the struct's name | `#[derive(Target)] needs the operation's name` |
/// | no `question` | the struct's name | `#[derive(Target)] needs the question a person is shown` |
/// | `{nope}` | the text | ``unknown placeholder `{nope}`: `S` has no field `nope` (its fields: ...)`` |
/// | `{}` | the text | `placeholders are named: write `{field}`` |
/// | `{id` / `id}` | the text | ``unclosed `{` `` / ``unmatched `}` `` |
/// | a `String` (or `u64`) field as a placeholder | the field's type | `` `String` cannot be shown in a question: it is not a fact kind `` |
/// | a field whose type is not `BindValue` | the field's type | `` `T` cannot be bound into an approval `` |
/// | `#[target(skip)]` on a field not shown | the field | ``field `x` is neither bound nor shown`` |
/// | an unknown option | the option | ``unknown option `x`: #[target] on the struct accepts ...`` |
/// | `#[target(bind)]` | `bind` | `fields are bound by default` |
/// | an enum or a tuple struct | its name | `#[derive(Target)] works on a struct with named fields` |
#[proc_macro_derive(Target, attributes(target))]
pub fn derive_target(item: TokenStream) -> TokenStream {
    target::derive(item.into()).into()
}
