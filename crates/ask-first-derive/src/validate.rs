//! The checks a handler passes before it is expanded, each refusing with a message that
//! names the fix: an `async fn` above rmcp's `#[tool]`, taking `&self`, one proof of the kind
//! the mode gives (by value), at most one `Parameters<A>`.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{FnArg, ImplItemFn, PatType, ReturnType, Signature, Type};

use crate::options::Mode;
use crate::parse::{ParamsParam, Proof, ProofParam, is_tool, last_segment, type_argument};

/// Checks `function` and sorts its inputs: the proof, `Parameters<A>`, and the rest.
pub(crate) fn handler<'a>(mode: &Mode, function: &'a ImplItemFn) -> syn::Result<Inputs<'a>> {
    check_async(function)?;
    check_receiver(&function.sig)?;
    sort_inputs(mode, &function.sig)
}

/// A handler that is not `async fn`: either rmcp's `#[tool]` ran first and rewrote it (its
/// return type is now the boxed future rmcp writes, and the `#[tool]` attribute is gone), or
/// it was written without `async`. Each gets its own message.
fn check_async(function: &ImplItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    if sig.asyncness.is_some() {
        return Ok(());
    }
    let returns_a_future = match &sig.output {
        ReturnType::Type(_, ty) => names_future(ty.to_token_stream()),
        ReturnType::Default => false,
    };
    let below_tool = returns_a_future && !function.attrs.iter().any(is_tool);
    let message = if below_tool {
        "#[guarded] must be above #[tool]: rmcp's #[tool] has already rewritten this handler \
         into a boxed future, too late for #[guarded]. Move `#[guarded(..)]` to the line above \
         `#[tool(..)]`"
    } else {
        "a #[guarded] handler must be an `async fn`: the guard awaits the person's answer before \
         the body runs. Write `async fn`"
    };
    Err(syn::Error::new_spanned(sig.fn_token, message))
}

/// Whether `tokens` name `Future` anywhere (rmcp's `Pin<Box<dyn Future<Output = ..>>>`).
fn names_future(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "Future",
        proc_macro2::TokenTree::Group(group) => names_future(group.stream()),
        _ => false,
    })
}

fn check_receiver(sig: &Signature) -> syn::Result<()> {
    const MESSAGE: &str = "a #[guarded] handler takes `&self`: the guard is read from the \
                           server through `ask_first::HasGuard`";
    match sig.receiver() {
        Some(receiver) if receiver.reference.is_some() && receiver.mutability.is_none() => Ok(()),
        Some(receiver) => Err(syn::Error::new_spanned(receiver, MESSAGE)),
        None => Err(syn::Error::new(sig.paren_token.span.join(), MESSAGE)),
    }
}

/// The proof, `Parameters<A>` if any, and the handler's other typed inputs.
pub(crate) type Inputs<'a> = (ProofParam<'a>, Option<ParamsParam<'a>>, Vec<&'a PatType>);

/// Splits the handler's typed inputs into the proof, `Parameters<A>`, and everything else.
fn sort_inputs<'a>(mode: &Mode, sig: &'a Signature) -> syn::Result<Inputs<'a>> {
    let wanted = match mode {
        Mode::Always { .. } => Proof::Approved,
        Mode::When { .. } => Proof::Clearance,
    };
    let mut proof: Option<ProofParam<'a>> = None;
    let mut params: Option<ParamsParam<'a>> = None;
    let mut others = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(arg) = input else { continue };
        if let Type::Reference(reference) = &*arg.ty
            && let Some(found) = last_segment(&reference.elem).and_then(|s| Proof::of(&s.ident))
        {
            return Err(syn::Error::new_spanned(
                &arg.ty,
                format!(
                    "take `{}<T>` by value, not by reference: the operation consumes it, so it \
                     is used once",
                    found.name(),
                ),
            ));
        }
        let Some(segment) = last_segment(&arg.ty) else {
            others.push(arg);
            continue;
        };
        if segment.ident == "Parameters" {
            if params.is_some() {
                return Err(syn::Error::new_spanned(
                    &arg.ty,
                    "a #[guarded] handler takes at most one `Parameters<..>`: the target is \
                     resolved from it",
                ));
            }
            let args = type_argument(segment).ok_or_else(|| {
                syn::Error::new_spanned(&arg.ty, "name the arguments' type: `Parameters<Args>`")
            })?;
            params = Some(ParamsParam { arg, args });
            continue;
        }
        let Some(found) = Proof::of(&segment.ident) else {
            others.push(arg);
            continue;
        };
        if let Some(first) = &proof {
            let first = last_segment(&first.arg.ty).map_or(String::new(), |s| s.ident.to_string());
            return Err(syn::Error::new_spanned(
                &arg.ty,
                format!(
                    "a #[guarded] handler takes one approval parameter, and `{first}<..>` is \
                     already there: remove this one"
                ),
            ));
        }
        check_proof(mode, wanted, found, &arg.ty)?;
        let target = type_argument(segment).ok_or_else(|| {
            syn::Error::new_spanned(
                &arg.ty,
                format!(
                    "name the target: `{}<T>`, where `T` is what the operation acts on",
                    found.name()
                ),
            )
        })?;
        proof = Some(ProofParam { arg, target });
    }
    let Some(proof) = proof else {
        return Err(missing_proof(mode, sig));
    };
    Ok((proof, params, others))
}

fn check_proof(mode: &Mode, wanted: Proof, found: Proof, ty: &Type) -> syn::Result<()> {
    let message = match (mode, found) {
        _ if found == wanted => return Ok(()),
        (Mode::Always { .. }, Proof::Clearance) => {
            "`always` gives an `Approved<T>`; `Clearance<T>` is for `#[guarded(when = ...)]`"
        }
        (Mode::When { .. }, Proof::Approved) => {
            "`when` gives a `Clearance<T>` (approved, or exempt when the condition is false): \
             take `Clearance<T>` here, or use `#[guarded(always)]` to take `Approved<T>`"
        }
        (Mode::Always { .. }, _) => {
            "a handler cannot take `Exempt<T>`: only the guard decides that a target is exempt. \
             `always` gives an `Approved<T>`; for a conditional target take `Clearance<T>` with \
             `#[guarded(when = ...)]`"
        }
        (Mode::When { .. }, _) => {
            "a handler cannot take `Exempt<T>`: only the guard decides that a target is exempt. \
             Take `Clearance<T>`: it is `Approved` when the condition held and `Exempt` when it \
             did not"
        }
    };
    Err(syn::Error::new_spanned(ty, message))
}

fn missing_proof(mode: &Mode, sig: &Signature) -> syn::Error {
    let message = match mode {
        Mode::Always { .. } => "#[guarded(always)] needs a parameter of type `Approved<T>`, where \
             `T` is the target: the guard resolves `T` from the arguments, asks, and passes the \
             approval in, and the destructive call consumes it; without it the handler could \
             act unapproved"
            .to_owned(),
        Mode::When { predicate, .. } => format!(
            "#[guarded(when = \"{predicate}\")] needs a parameter of type `Clearance<T>`, where \
             `T` is the target: the guard resolves `T` from the arguments, asks when \
             `T::{predicate}` is true, and passes the approval or exemption in, and the \
             operation consumes it; without it the handler could act unapproved"
        ),
    };
    let mut span = TokenStream::new();
    sig.ident.to_tokens(&mut span);
    sig.paren_token
        .surround(&mut span, |tokens| sig.inputs.to_tokens(tokens));
    syn::Error::new_spanned(span, message)
}
