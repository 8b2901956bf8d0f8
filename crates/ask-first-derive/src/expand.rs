//! The expansion of `#[guarded]` on one handler: the tool-facing method rmcp's router calls,
//! generated from a handler that `validate` accepted (or, on an error, a stub beside it).

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, ImplItemFn, Meta, ReturnType, Signature, Token};

use crate::options::{Mode, Options};
use crate::parse::{is_tool, json_output, tool_sets};
use crate::validate;

/// The macro's names for what it adds; visible to the handler's body, hence the prefix.
const CALL: &str = "__ask_first_call";
const PARAMS: &str = "__ask_first_params";

/// Expands `#[guarded(mode)]` on `item`. On error, returns the error together with a stub of
/// the handler, so the error is reported alone rather than followed by the router's complaints
/// about a handler it cannot call.
pub(crate) fn guarded(options: syn::Result<Options>, item: TokenStream) -> TokenStream {
    let function = match syn::parse2::<ImplItemFn>(item) {
        Ok(function) => function,
        Err(error) => {
            let message = "#[guarded] goes on an `async fn` tool handler in an rmcp \
                           `#[tool_router]` impl, above `#[tool]`";
            return syn::Error::new(error.span(), message).into_compile_error();
        }
    };
    let result = options.and_then(|options| expand(&options, &function));
    match result {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.into_compile_error();
            let stub = stub(&function);
            quote! { #error #stub }
        }
    }
}

/// What is emitted next to an error: a handler with the same name that rmcp's router accepts,
/// so the error is not followed by the router's complaints, and the handler as written under
/// another name, so its body is still checked (and its imports still count as used).
fn stub(function: &ImplItemFn) -> TokenStream {
    let attrs = &function.attrs;
    let vis = &function.vis;
    let ident = &function.sig.ident;
    let receiver = function.sig.receiver();
    let mut original = function.clone();
    original.attrs.retain(|attr| !is_tool(attr));
    original.sig.ident = syn::Ident::new(
        &format!(
            "__ask_first_unexpanded_{}",
            ident.to_string().trim_start_matches("r#")
        ),
        ident.span(),
    );
    quote! {
        #(#attrs)*
        #[allow(unused, clippy::all)]
        #vis fn #ident(#receiver) -> ::core::result::Result<
            ::ask_first::__private::rmcp::model::CallToolResponse,
            ::ask_first::__private::rmcp::ErrorData,
        > {
            ::core::unreachable!()
        }

        #[allow(dead_code, clippy::all)]
        #original
    }
}

fn expand(options: &Options, function: &ImplItemFn) -> syn::Result<TokenStream> {
    let mode = &options.mode;
    let sig = &function.sig;
    let (proof, params, others) = validate::handler(mode, function)?;

    let call = syn::Ident::new(CALL, Span::call_site());
    let params_ident = syn::Ident::new(PARAMS, Span::call_site());
    let self_ty = quote!(Self);

    // The tool-facing signature: `GuardCall` first, since it peeks at the raw arguments that
    // `Parameters` consumes; then `Parameters<A>`; then the handler's other extractors.
    let mut inputs: Punctuated<FnArg, Token![,]> = Punctuated::new();
    if let Some(receiver) = sig.receiver() {
        inputs.push(FnArg::Receiver(receiver.clone()));
    }
    inputs.push(syn::parse_quote!(#call: ::ask_first::__private::GuardCall));
    if let Some(params) = &params {
        let ty = &params.arg.ty;
        inputs.push(syn::parse_quote!(#params_ident: #ty));
    }
    for other in &others {
        inputs.push(FnArg::Typed((*other).clone()));
    }
    let mut tool_sig = sig.clone();
    tool_sig.inputs = inputs;
    tool_sig.output = syn::parse_quote! {
        -> ::core::result::Result<
            ::ask_first::__private::rmcp::model::CallToolResponse,
            ::ask_first::__private::rmcp::ErrorData,
        >
    };

    // Resolve the target from the arguments; an `Err` is an input error and asks no one.
    let target_ty = proof.target;
    let (args_ty, args_ref) = match &params {
        Some(params) => {
            let ty = params.args;
            (quote!(#ty), quote!(&#params_ident.0))
        }
        None => (quote!(()), quote!(&())),
    };
    let target_span = target_ty.span();
    let resolve = quote_spanned! {target_span=>
        <#target_ty as ::ask_first::__private::Resolve<#self_ty, #args_ty>>::resolve(self, #args_ref)
    };
    // After a yes in a pushed dialog, the guard reads the target again through this.
    let recheck = quote_spanned! {target_span=>
        let __ask_first_recheck = |__ask_first_shown: #target_ty| {
            <#target_ty as ::ask_first::__private::Resolve<#self_ty, #args_ty>>::recheck(
                self,
                #args_ref,
                __ask_first_shown,
            )
        };
    };
    // `person_required`: the call never falls back to the two-call token.
    // `verified`: only the approval page with a passkey, a yes a model cannot give.
    let require_person = if options.verified {
        Some(quote! {
            let #call = ::ask_first::__private::GuardCall::require_verified(#call);
        })
    } else {
        options.person_required.then(|| {
            quote! {
                let #call = ::ask_first::__private::GuardCall::require_person(#call);
            }
        })
    };

    // The server's guard, read in an `async fn` of its own (`guard_of`) that is the only code
    // naming `HasGuard`: a server without it is reported once per handler, on `always` or
    // `when`. rustc type-checks an `async fn`'s body early (it needs the future's type), so this
    // report comes before those of code that serves the server in another function below it.
    let guard_span = mode.span();
    let guard_of = syn::Ident::new(
        &format!(
            "__ask_first_guard_of_{}",
            sig.ident.to_string().trim_start_matches("r#")
        ),
        sig.ident.span(),
    );
    let guard_of_fn = quote_spanned! {guard_span=>
        #[doc(hidden)]
        #[allow(clippy::all)]
        async fn #guard_of(&self) -> &::ask_first::__private::Guard {
            ::ask_first::__private::HasGuard::guard(self)
        }
    };
    let guard = quote! {
        let __ask_first_guard: &::ask_first::__private::Guard = Self::#guard_of(self).await;
    };
    // Ask: `approve` for `always`, `clear` with the predicate's verdict for `when`.
    // The bounds of `approve` (`Target`) and `clear` (`Conditional`) are reported on `T`.
    let decide = match mode {
        Mode::Always { .. } => quote_spanned! {target_span=>
            __ask_first_guard.approve(#call, __ask_first_target, __ask_first_recheck).await
        },
        Mode::When { predicate, .. } => {
            // The literal's place, the macro's hygiene: an unknown method is reported on the
            // string, without rustc suggesting to replace the string by a bare identifier.
            let mut predicate = predicate.clone();
            predicate.set_span(predicate.span().resolved_at(Span::call_site()));
            let needed = quote_spanned! {predicate.span()=>
                let __ask_first_needed: bool =
                    ::ask_first::__private::verdict(__ask_first_target.#predicate());
            };
            let clear = quote_spanned! {target_span=>
                __ask_first_guard
                    .clear(#call, __ask_first_target, __ask_first_needed, __ask_first_recheck)
                    .await
            };
            quote! {{
                #needed
                #clear
            }}
        }
    };

    // Hand the handler its own bindings, then run its body unchanged.
    let bind_params = params.as_ref().map(|params| {
        let pat = &params.arg.pat;
        let attrs = &params.arg.attrs;
        quote!(#(#attrs)* let #pat = #params_ident;)
    });
    // `always`: declared first with the handler's own type, so that a `T` that is not a
    // `Target` is reported first, on the handler's parameter. `when`: the type comes from
    // `Guard::clear`, whose `T: Conditional` bound reports a target that is not conditional
    // once, on `T` (`Clearance<T>` written out again would report it a second time); the
    // handler's path to `Clearance` is still named (`use … as _`, no type arguments, so nothing
    // is checked twice), so that its import counts as used.
    let proof_ty = &proof.arg.ty;
    let pat = &proof.arg.pat;
    let attrs = &proof.arg.attrs;
    let (proof_declared, bind_proof) = match mode {
        Mode::Always { .. } => (
            quote!(let __ask_first_proof: #proof_ty;),
            quote!(#(#attrs)* let #pat: #proof_ty = __ask_first_proof;),
        ),
        Mode::When { .. } => {
            let named = proof_path(proof_ty).map(|path| {
                quote! {
                    #[allow(unused_imports)]
                    use #path as _;
                }
            });
            (
                quote!(#named let __ask_first_proof;),
                quote!(#(#attrs)* let #pat = __ask_first_proof;),
            )
        }
    };
    let output = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => ty.to_token_stream(),
    };
    let into_result = quote_spanned! {output_span(sig)=>
        ::ask_first::__private::rmcp::handler::server::tool::IntoCallToolResult::into_call_tool_result(
            __ask_first_result,
        )
    };
    let block = &function.block;

    // The input schema: the arguments' own, with the optional `confirm_token` the guard reads
    // (so an argument type need not declare it); a `person_required` tool takes no token, so
    // its schema is rmcp's own, and its `_meta` says that only a person's yes will do.
    let input_schema = match &params {
        _ if options.person_required => None,
        Some(params) => {
            let ty = params.args;
            Some(
                quote!(input_schema = ::ask_first::__private::input_schema_with_confirm_token::<#ty>()),
            )
        }
        None => Some(quote!(
            input_schema = ::ask_first::__private::empty_input_schema_with_confirm_token()
        )),
    };
    let attrs = function.attrs.iter().map(|attr| {
        let attr = with_tool_setting(attr, "output_schema", output_schema_of(&sig.output));
        let attr = with_tool_setting(&attr, "input_schema", input_schema.clone());
        if options.person_required {
            with_person_required_meta(&attr)
        } else {
            attr
        }
    });
    let vis = &function.vis;
    let defaultness = &function.defaultness;
    // A tool with an output schema carries the token reply's facts in `_meta`: some clients
    // validate structuredContent against the schema even on an error result.
    let has_output_schema = match &sig.output {
        ReturnType::Type(_, ty) => json_output(ty).is_some(),
        ReturnType::Default => false,
    } || function
        .attrs
        .iter()
        .any(|attr| tool_sets(attr, "output_schema"));
    let adapt_interruption = if has_output_schema {
        quote!(::ask_first::__private::for_output_schema(interruption))
    } else {
        quote!(interruption)
    };
    Ok(quote! {
        #guard_of_fn

        #(#attrs)*
        #vis #defaultness #tool_sig {
            #proof_declared
            #guard
            #require_person
            let __ask_first_target = match #resolve.await {
                ::core::result::Result::Ok(target) => target,
                ::core::result::Result::Err(rejection) => {
                    return ::core::result::Result::Ok(::ask_first::__private::InputError::into_response(rejection));
                }
            };
            #recheck
            // Where the guard leaves what the audit log records about this call.
            let __ask_first_slot = ::ask_first::__private::audit_slot(&#call);
            __ask_first_proof = match #decide {
                ::core::result::Result::Ok(proof) => proof,
                ::core::result::Result::Err(interruption) => {
                    return ::ask_first::__private::Interruption::into_result(#adapt_interruption);
                }
            };
            #bind_params
            #bind_proof
            let __ask_first_result = ::ask_first::__private::body::<#output, _>(async move #block).await;
            let __ask_first_response = #into_result;
            ::ask_first::__private::record_call(
                __ask_first_guard,
                __ask_first_slot.take().as_ref(),
                &__ask_first_response,
            );
            __ask_first_response
        }
    })
}

/// The path of a proof type without its type arguments (`ask_first::Clearance<T>` →
/// `ask_first::Clearance`), for a `use` that names it without instantiating it.
fn proof_path(ty: &syn::Type) -> Option<syn::Path> {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => {
            let mut path = path.path.clone();
            for segment in &mut path.segments {
                segment.arguments = syn::PathArguments::None;
            }
            Some(path)
        }
        syn::Type::Group(group) => proof_path(&group.elem),
        syn::Type::Paren(paren) => proof_path(&paren.elem),
        _ => None,
    }
}

fn output_span(sig: &Signature) -> Span {
    match &sig.output {
        ReturnType::Default => sig.paren_token.span.close(),
        ReturnType::Type(_, ty) => ty.span(),
    }
}

/// `output_schema = ...` when rmcp would have derived it from a `Json<T>` return type that the
/// tool-facing method no longer has.
fn output_schema_of(output: &ReturnType) -> Option<TokenStream> {
    let inner = match output {
        ReturnType::Type(_, ty) => json_output(ty)?,
        ReturnType::Default => return None,
    };
    // The same expression rmcp's #[tool] writes for a `Json<T>` return type.
    Some(quote!(
        output_schema =
            ::ask_first::__private::rmcp::handler::server::tool::schema_for_output::<#inner>()
    ))
}

/// `#[tool(...)]` with `setting` (`name = expr`) added unless the attribute gives `name`
/// already; any other attribute unchanged.
fn with_tool_setting(attr: &Attribute, name: &str, setting: Option<TokenStream>) -> Attribute {
    let (true, Some(setting)) = (is_tool(attr), setting) else {
        return attr.clone();
    };
    let pound = attr.pound_token;
    let path = attr.path();
    let tokens = match &attr.meta {
        Meta::Path(_) => quote!(#pound[#path(#setting)]),
        Meta::List(list) => {
            if tool_sets(attr, name) {
                return attr.clone();
            }
            let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
            let existing = &list.tokens;
            let comma = match tokens.last() {
                None => None,
                Some(TokenTree::Punct(punct)) if punct.as_char() == ',' => None,
                Some(_) => Some(quote!(,)),
            };
            quote!(#pound[#path(#existing #comma #setting)])
        }
        Meta::NameValue(_) => return attr.clone(),
    };
    let parser = Attribute::parse_outer;
    match syn::parse::Parser::parse2(parser, tokens) {
        Ok(mut parsed) if parsed.len() == 1 => parsed.remove(0),
        _ => attr.clone(),
    }
}

/// `#[tool(...)]` whose `meta` carries the person-required mark: the author's `meta = expr`
/// wrapped, or a new `meta` setting; any other attribute unchanged.
fn with_person_required_meta(attr: &Attribute) -> Attribute {
    const WRAP: &str = "::ask_first::__private::person_required_meta";
    if !is_tool(attr) {
        return attr.clone();
    }
    let Meta::List(list) = &attr.meta else {
        let wrap: TokenStream = WRAP.parse().unwrap_or_default();
        return with_tool_setting(
            attr,
            "meta",
            Some(quote!(meta = #wrap(::core::option::Option::None))),
        );
    };
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    let Some(at) = tokens.windows(2).position(|pair| {
        matches!(&pair[0], TokenTree::Ident(ident) if ident == "meta")
            && matches!(&pair[1], TokenTree::Punct(punct) if punct.as_char() == '=')
    }) else {
        let wrap: TokenStream = WRAP.parse().unwrap_or_default();
        return with_tool_setting(
            attr,
            "meta",
            Some(quote!(meta = #wrap(::core::option::Option::None))),
        );
    };
    // The expression runs to the next top-level comma (groups are single token trees).
    let start = at + 2;
    let end = tokens[start..]
        .iter()
        .position(|token| matches!(token, TokenTree::Punct(punct) if punct.as_char() == ','))
        .map_or(tokens.len(), |offset| start + offset);
    let given: TokenStream = tokens[start..end].iter().cloned().collect();
    let before: TokenStream = tokens[..start].iter().cloned().collect();
    let after: TokenStream = tokens[end..].iter().cloned().collect();
    let wrap: TokenStream = WRAP.parse().unwrap_or_default();
    let pound = attr.pound_token;
    let path = attr.path();
    let rebuilt = quote!(#pound[#path(#before #wrap(::core::option::Option::Some(#given)) #after)]);
    match syn::parse::Parser::parse2(Attribute::parse_outer, rebuilt) {
        Ok(mut parsed) if parsed.len() == 1 => parsed.remove(0),
        _ => attr.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn expand_ok(args: TokenStream, item: TokenStream) -> String {
        let options = crate::options::parse(args).expect("options");
        let function = syn::parse2::<ImplItemFn>(item).expect("function");
        expand(&options, &function).expect("expansion").to_string()
    }

    #[test]
    fn verified_takes_only_the_page_and_is_marked_person_required() {
        let out = expand_ok(
            quote!(always, verified),
            quote! {
                #[tool(description = "Delete")]
                async fn delete(&self, Parameters(a): Parameters<A>, ok: Approved<D>) -> String {
                    todo!()
                }
            },
        );
        assert!(!out.contains("input_schema_with_confirm_token"), "{out}");
        assert!(out.contains("person_required_meta"), "{out}");
        assert!(
            out.contains("GuardCall :: require_verified (__ask_first_call)"),
            "{out}"
        );
        assert!(!out.contains("require_person"), "{out}");
    }

    #[test]
    fn person_required_marks_the_tool_and_takes_no_token() {
        let out = expand_ok(
            quote!(always, person_required),
            quote! {
                #[tool(description = "Delete")]
                async fn delete(&self, Parameters(a): Parameters<A>, ok: Approved<D>) -> String {
                    todo!()
                }
            },
        );
        assert!(!out.contains("input_schema_with_confirm_token"), "{out}");
        assert!(out.contains(
            "# [tool (description = \"Delete\" , meta = :: ask_first :: __private :: \
             person_required_meta (:: core :: option :: Option :: None))]"
        ));
        assert!(out.contains("GuardCall :: require_person (__ask_first_call)"));
        let given = expand_ok(
            quote!(always, person_required),
            quote! {
                #[tool(meta = mine(1, 2), description = "Delete")]
                async fn delete(&self, ok: Approved<D>) -> String { todo!() }
            },
        );
        assert!(
            given.contains(
                "meta = :: ask_first :: __private :: person_required_meta (:: core :: option :: \
                 Option :: Some (mine (1 , 2))) , description = \"Delete\""
            ),
            "{given}"
        );
        let plain = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "Delete")]
                async fn delete(&self, ok: Approved<D>) -> String { todo!() }
            },
        );
        assert!(!plain.contains("person_required") && !plain.contains("require_person"));
        assert!(
            plain.contains(":: recheck (self , & () , __ask_first_shown ,)"),
            "{plain}"
        );
    }

    fn expand_err(args: TokenStream, item: TokenStream) -> String {
        let mode = crate::options::parse(args).expect("options");
        let function = syn::parse2::<ImplItemFn>(item).expect("function");
        match expand(&mode, &function) {
            Ok(_) => panic!("expected an error"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn adds_the_output_schema_rmcp_would_have_derived() {
        let out = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "Delete")]
                async fn delete(&self, Parameters(a): Parameters<A>, ok: Approved<D>)
                    -> Result<Json<Deleted>, ErrorData> { todo!() }
            },
        );
        assert!(out.contains(
            "# [tool (description = \"Delete\" , output_schema = :: ask_first :: __private :: \
             rmcp :: handler :: server :: tool :: schema_for_output :: < Deleted > () , \
             input_schema = :: ask_first :: __private :: input_schema_with_confirm_token :: < A \
             > ())]"
        ));
        assert!(out.contains(":: ask_first :: __private :: for_output_schema (interruption)"));
        let bare = expand_ok(
            quote!(always),
            quote! {
                #[rmcp::tool]
                async fn delete(&self, ok: Approved<D>) -> Json<Deleted> { todo!() }
            },
        );
        assert!(bare.contains("# [rmcp :: tool (output_schema ="));
    }

    #[test]
    fn reads_the_tool_settings_as_syntax_not_text() {
        // The word in a description is no setting: the schema is still added.
        let out = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "Returns the output_schema = of a note")]
                async fn delete(&self, ok: Approved<D>) -> Json<Deleted> { todo!() }
            },
        );
        assert!(out.contains(
            "description = \"Returns the output_schema = of a note\" , output_schema = :: \
             ask_first :: __private :: rmcp"
        ));
        // A handler that returns no Json and sets no output schema keeps the interruption as is.
        let plain = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "output_schema")]
                async fn delete(&self, ok: Approved<D>) -> String { todo!() }
            },
        );
        assert!(!plain.contains("for_output_schema"));
        assert!(!plain.contains("output_schema ="));
        // One the author sets (with a path value) is kept, and the interruption adapted.
        let own = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "x", output_schema = my::schema())]
                async fn delete(&self, ok: Approved<D>) -> String { todo!() }
            },
        );
        assert!(own.contains("output_schema = my :: schema ()"));
        assert!(own.contains("for_output_schema (interruption)"));
    }

    #[test]
    fn keeps_an_explicit_output_schema_and_non_json_returns() {
        let out = expand_ok(
            quote!(always),
            quote! {
                #[tool(output_schema = custom(),)]
                async fn delete(&self, ok: Approved<D>) -> Json<Deleted> { todo!() }
            },
        );
        assert!(out.contains(
            "# [tool (output_schema = custom () , input_schema = :: ask_first :: __private :: \
             empty_input_schema_with_confirm_token ())]"
        ));
        let text = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "x")]
                async fn delete(&self, ok: Approved<D>) -> String { todo!() }
            },
        );
        assert!(text.contains(
            "# [tool (description = \"x\" , input_schema = :: ask_first :: __private :: \
             empty_input_schema_with_confirm_token ())]"
        ));
    }

    #[test]
    fn adds_confirm_token_to_the_input_schema_unless_one_is_given() {
        let out = expand_ok(
            quote!(always),
            quote! {
                #[tool(description = "Delete")]
                async fn delete(&self, Parameters(a): Parameters<A>, ok: Approved<D>) -> String {
                    todo!()
                }
            },
        );
        assert!(out.contains(
            "# [tool (description = \"Delete\" , input_schema = :: ask_first :: __private :: \
             input_schema_with_confirm_token :: < A > ())]"
        ));
        let given = expand_ok(
            quote!(always),
            quote! {
                #[tool(input_schema = mine())]
                async fn delete(&self, Parameters(a): Parameters<A>, ok: Approved<D>) -> String {
                    todo!()
                }
            },
        );
        assert!(
            given.contains("# [tool (input_schema = mine ())]"),
            "{given}"
        );
    }

    #[test]
    fn puts_the_call_before_the_parameters_and_keeps_other_extractors() {
        let out = expand_ok(
            quote!(when = "is_shared"),
            quote! {
                async fn write(&self, ctx: RequestContext<RoleServer>, c: Clearance<W>,
                    Parameters(a): Parameters<A>) -> String { todo!() }
            },
        );
        let call = out
            .find("__ask_first_call : :: ask_first :: __private :: GuardCall")
            .unwrap();
        let params = out.find("__ask_first_params : Parameters < A >").unwrap();
        let ctx = out.find("ctx : RequestContext < RoleServer >").unwrap();
        assert!(call < params && params < ctx);
        assert!(!out.contains("c : Clearance < W > ,"));
        assert!(
            out.contains("< W as :: ask_first :: __private :: Resolve < Self , A >> :: resolve")
        );
        assert!(out.contains("__ask_first_target . is_shared ()"));
        assert!(out.contains(". clear (__ask_first_call"));
    }

    #[test]
    fn reads_the_guard_in_an_async_fn_of_its_own() {
        let out = expand_ok(
            quote!(always),
            quote!(
                async fn r#delete(&self, ok: Approved<D>) {}
            ),
        );
        assert!(
            out.contains(
                "async fn __ask_first_guard_of_delete (& self) -> & :: ask_first :: __private :: \
                 Guard { :: ask_first :: __private :: HasGuard :: guard (self) }"
            ),
            "{out}"
        );
        assert!(
            out.contains("= Self :: __ask_first_guard_of_delete (self) . await ;"),
            "{out}"
        );
        // Only the helper names the trait, so a server without it is reported there alone.
        assert_eq!(out.matches("HasGuard").count(), 1, "{out}");
    }

    #[test]
    fn resolves_from_unit_without_parameters() {
        let out = expand_ok(
            quote!(always),
            quote!(
                async fn wipe(&self, ok: Approved<D>) {}
            ),
        );
        assert!(out.contains(
            "< D as :: ask_first :: __private :: Resolve < Self , () >> :: resolve (self , & ())"
        ));
        assert!(!out.contains("__ask_first_params :"));
    }

    #[test]
    fn refuses_misuse() {
        let missing = expand_err(
            quote!(always),
            quote!(
                async fn f(&self) {}
            ),
        );
        assert!(missing.contains("needs a parameter of type `Approved<T>`"));
        let clearance = expand_err(
            quote!(always),
            quote!(
                async fn f(&self, c: Clearance<X>) {}
            ),
        );
        assert!(clearance.contains("`Clearance<T>` is for `#[guarded(when = ...)]`"));
        let approved = expand_err(
            quote!(when = "p"),
            quote!(
                async fn f(&self, c: Approved<X>) {}
            ),
        );
        assert!(approved.contains("take `Clearance<T>` here"));
        let exempt = expand_err(
            quote!(when = "p"),
            quote!(
                async fn f(&self, c: Exempt<X>) {}
            ),
        );
        assert!(exempt.contains("cannot take `Exempt<T>`"));
        let two = expand_err(
            quote!(always),
            quote!(
                async fn f(&self, a: Approved<X>, b: Approved<X>) {}
            ),
        );
        assert!(two.contains("one approval parameter"));
        let by_ref = expand_err(
            quote!(always),
            quote!(
                async fn f(&self, a: &Approved<X>) {}
            ),
        );
        assert!(by_ref.contains("by value"));
        let sync = expand_err(
            quote!(always),
            quote!(
                fn f(&self, a: Approved<X>) {}
            ),
        );
        assert!(sync.contains("must be an `async fn`"), "{sync}");
        let sync_tool = expand_err(
            quote!(always),
            quote!(
                #[tool(description = "d")]
                fn f(&self, a: Approved<X>) -> String {
                    todo!()
                }
            ),
        );
        assert!(sync_tool.contains("must be an `async fn`"), "{sync_tool}");
        // What rmcp's #[tool] leaves when it ran first: no #[tool], a boxed future returned.
        let below = expand_err(
            quote!(always),
            quote!(
                fn f(
                    &self,
                    a: Approved<X>,
                ) -> ::std::pin::Pin<Box<dyn ::std::future::Future<Output = String> + Send + '_>>
                {
                    Box::pin(async move { todo!() })
                }
            ),
        );
        assert!(below.contains("must be above #[tool]"), "{below}");
        assert!(!below.contains("async fn`"), "{below}");
        let owned = expand_err(
            quote!(always),
            quote!(
                async fn f(self, a: Approved<X>) {}
            ),
        );
        assert!(owned.contains("takes `&self`"));
        let bare = expand_err(
            quote!(always),
            quote!(
                async fn f(&self, a: Approved) {}
            ),
        );
        assert!(bare.contains("name the target"));
    }

    #[test]
    fn an_error_comes_with_a_stub_and_the_handler_under_another_name() {
        let out = guarded(
            crate::options::parse(quote!(always)),
            quote! {
                /// Delete.
                #[tool(description = "Delete")]
                async fn delete(&self, c: Clearance<D>) -> String { c.into_target().0 }
            },
        )
        .to_string();
        assert!(out.contains("compile_error"));
        assert!(out.contains("# [tool (description = \"Delete\")] # [allow (unused , clippy :: all)] fn delete (& self)"));
        assert!(
            out.contains("async fn __ask_first_unexpanded_delete (& self , c : Clearance < D >)")
        );
        assert_eq!(
            out.matches("# [tool").count(),
            1,
            "only the stub is a tool: {out}"
        );
    }

    #[test]
    fn patterns_are_kept() {
        let out = expand_ok(
            quote!(always),
            quote!(
                async fn f(&self, Parameters(a): Parameters<A>, ok: Approved<D>) {}
            ),
        );
        assert!(out.contains("let Parameters (a) = __ask_first_params ;"));
        assert!(out.contains("let ok : Approved < D > = __ask_first_proof ;"));
    }
}
