//! `#[derive(Target)]`: a target's operation, binding and question from the struct, and its
//! evidence from a method it names (`evidence = "changes()"`).
//!
//! ```text
//! #[derive(Target)]
//! #[target(operation = "delete_note", question = "This will delete note {id} ({size}).")]
//! #[target(line = "It cannot be undone.")]
//! struct DeleteNote { id: Id, #[target(skip)] size: ByteSize }
//! ```
//!
//! expands to (inside `const _: () = { ... };`):
//!
//! ```text
//! struct __Line0; impl ::ask_first::__private::Wording for __Line0 { const TEXT = "This will delete note {} ({})."; }
//! struct __Line1; impl ::ask_first::__private::Wording for __Line1 { const TEXT = "It cannot be undone."; }
//! impl ::ask_first::__private::Target for DeleteNote {
//!     const OPERATION: &'static str = "delete_note";
//!     fn bind(&self, binding: &mut ::ask_first::__private::Binding) {
//!         <Id as ::ask_first::__private::BindValue>::bind_value(&self.id, "id", binding);
//!     }
//!     fn question(&self) -> ::ask_first::__private::Question {
//!         ::ask_first::__private::Question::new::<__Line0>([
//!             <Id as ::ask_first::__private::ToFact>::to_fact(&self.id),
//!             <ByteSize as ::ask_first::__private::ToFact>::to_fact(&self.size),
//!         ])
//!         .line::<__Line1>([])
//!     }
//! }
//! ```
//!
//! With `evidence = "changes()"` it also writes
//! `fn evidence(&self) -> ::ask_first::__private::Evidence { IntoEvidence::into_evidence(self.changes()) }`.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

const STRUCT_OPTIONS: &str = "#[target] on the struct accepts `operation = \"name\"`, \
                              `question = \"text {field}\"`, `line = \"text {field}\"` and \
                              `evidence = \"method()\"`";
const FIELD_OPTIONS: &str =
    "#[target] on a field accepts `skip`, and one of `count`, `bytes` or `date`";

/// How a field is shown when a placeholder names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Its type implements `ToFact`.
    Own,
    Count,
    Bytes,
    Date,
}

struct Field {
    ident: Ident,
    ty: Type,
    skip: bool,
    kind: Kind,
}

/// One piece of a template: literal text or a placeholder.
enum Piece {
    Text(String),
    /// `{name}` (a field) or `{name()}` (a method of the target).
    Field(String),
    Method(String),
}

struct Template {
    literal: LitStr,
    pieces: Vec<Piece>,
}

/// Expands the derive, or the errors that say what to fix.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(|input| expand(&input)) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => &fields.named,
            _ => {
                return Err(syn::Error::new(
                    name.span(),
                    "#[derive(Target)] needs a struct with named fields: the question's \
                     placeholders and the binding name them (`struct DeleteNote { id: Id }`)",
                ));
            }
        },
        _ => {
            return Err(syn::Error::new(
                name.span(),
                "#[derive(Target)] works on a struct with named fields; for an enum, \
                 implement `ask_first::Target` by hand",
            ));
        }
    };

    let mut errors: Vec<syn::Error> = Vec::new();
    let mut operation: Option<LitStr> = None;
    let mut lines: Vec<(bool, LitStr)> = Vec::new(); // (is the question's first line, text)
    let mut evidence: Option<(Ident, LitStr)> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("target")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            match key.as_deref() {
                Some(key @ ("operation" | "question" | "line" | "evidence")) => {
                    let value = meta.value().map_err(|_| {
                        meta.error(format!("`{key}` takes a string: write `{key} = \"...\"`"))
                    })?;
                    let literal: LitStr = value.parse().map_err(|error| {
                        syn::Error::new(
                            error.span(),
                            format!("`{key}` takes a string literal: write `{key} = \"...\"`"),
                        )
                    })?;
                    match key {
                        "operation" => {
                            if operation.is_some() {
                                return Err(syn::Error::new(
                                    literal.span(),
                                    "`operation` is given twice: a target has one operation",
                                ));
                            }
                            check_operation(&literal)?;
                            operation = Some(literal);
                        }
                        "evidence" => {
                            if evidence.is_some() {
                                return Err(syn::Error::new(
                                    literal.span(),
                                    "`evidence` is given twice: a target has one evidence \
                                     method; put every group in it",
                                ));
                            }
                            evidence = Some((evidence_method(&literal)?, literal));
                        }
                        "question" => {
                            if lines.iter().any(|(first, _)| *first) {
                                return Err(syn::Error::new(
                                    literal.span(),
                                    "`question` is given twice: it is the first line; add \
                                     further lines with `line = \"...\"`",
                                ));
                            }
                            lines.push((true, literal));
                        }
                        _ => lines.push((false, literal)),
                    }
                    Ok(())
                }
                _ => {
                    let shown = key.map_or_else(|| "this".to_owned(), |k| format!("`{k}`"));
                    Err(meta.error(format!("unknown option {shown}: {STRUCT_OPTIONS}")))
                }
            }
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    if operation.is_none() {
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "#[derive(Target)] needs the operation's name: add \
                 `#[target(operation = \"...\")]` to `{name}`, e.g. `operation = \"delete_note\"` \
                 (it is bound into every approval)"
            ),
        ));
    }
    let question_at = lines.iter().position(|(first, _)| *first);
    if question_at.is_none() {
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "#[derive(Target)] needs the question a person is shown: add \
                 `#[target(question = \"...\")]` to `{name}`, with `{{field}}` placeholders, \
                 e.g. `question = \"This will delete note {{id}}.\"`"
            ),
        ));
    }

    let mut fields = Vec::new();
    for field in named {
        // A field with a bad option is still a field: its placeholders are not "unknown".
        let (parsed, error) = parse_field(field);
        fields.push(parsed);
        errors.extend(error);
    }

    // The question first, then the other lines in the order written.
    let mut ordered: Vec<LitStr> = Vec::new();
    if let Some(at) = question_at {
        ordered.push(lines[at].1.clone());
    }
    ordered.extend(
        lines
            .iter()
            .filter(|(first, _)| !first)
            .map(|(_, text)| text.clone()),
    );
    let mut templates = Vec::new();
    let mut all_parsed = true;
    for literal in ordered {
        match parse_template(&literal) {
            Ok(pieces) => templates.push(Template { literal, pieces }),
            Err(error) => {
                all_parsed = false;
                errors.push(error);
            }
        }
    }

    // Every field placeholder names a field.
    let names: Vec<String> = fields.iter().map(|f| f.ident.to_string()).collect();
    let mut shown: BTreeSet<String> = BTreeSet::new();
    for template in &templates {
        for piece in &template.pieces {
            if let Piece::Field(field) = piece {
                if names.iter().any(|n| n == field) {
                    shown.insert(field.clone());
                } else {
                    errors.push(syn::Error::new(
                        template.literal.span(),
                        format!(
                            "unknown placeholder `{{{field}}}`: `{name}` has no field `{field}` \
                             (its fields: {}); a placeholder names a field, `{{field}}`, or a \
                             method of the target, `{{method()}}`",
                            if names.is_empty() {
                                "none".to_owned()
                            } else {
                                names.join(", ")
                            }
                        ),
                    ));
                }
            }
        }
    }
    // A field neither bound nor shown is a forgotten binding or dead weight.
    for field in fields.iter().filter(|f| f.skip && all_parsed) {
        if !shown.contains(&field.ident.to_string()) {
            let ident = &field.ident;
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "field `{ident}` is neither bound nor shown: remove `#[target(skip)]` if it \
                     decides what runs (then it is bound), show it in the question as \
                     `{{{ident}}}`, or take it out of the target"
                ),
            ));
        }
    }

    let mut all = errors.into_iter();
    if let Some(mut first) = all.next() {
        for error in all {
            first.combine(error);
        }
        return Err(first);
    }

    let operation = operation.expect("checked above");
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();

    let binds = fields.iter().filter(|f| !f.skip).map(|field| {
        let ident = &field.ident;
        let ty = &field.ty;
        let key = ident.to_string();
        quote_spanned! {ty.span()=>
            <#ty as ::ask_first::__private::BindValue>::bind_value(&self.#ident, #key, binding);
        }
    });

    let mut wordings = Vec::new();
    let mut chain = Vec::new();
    for (index, template) in templates.iter().enumerate() {
        let wording = format_ident!("__McpGuardLine{index}");
        let mut text = String::new();
        let mut facts = Vec::new();
        for piece in &template.pieces {
            match piece {
                Piece::Text(literal) => text.push_str(literal),
                Piece::Field(name) => {
                    text.push_str("{}");
                    let field = fields
                        .iter()
                        .find(|f| f.ident == name)
                        .expect("checked above");
                    facts.push(fact_of(field));
                }
                Piece::Method(name) => {
                    text.push_str("{}");
                    let method = Ident::new(name, template.literal.span());
                    facts.push(quote_spanned! {template.literal.span()=>
                        ::ask_first::__private::ToFact::to_fact(&self.#method())
                    });
                }
            }
        }
        wordings.push(quote! {
            struct #wording;
            impl ::ask_first::__private::Wording for #wording {
                const TEXT: &'static str = #text;
            }
        });
        chain.push(if index == 0 {
            quote! { ::ask_first::__private::Question::new::<#wording>([#(#facts),*]) }
        } else {
            quote! { .line::<#wording>([#(#facts),*]) }
        });
    }

    let evidence = evidence.map(|(method, literal)| {
        quote_spanned! {literal.span()=>
            fn evidence(&self) -> ::ask_first::__private::Evidence {
                ::ask_first::__private::IntoEvidence::into_evidence(self.#method())
            }
        }
    });

    Ok(quote! {
        #[allow(non_local_definitions)]
        const _: () = {
            #(#wordings)*
            #[automatically_derived]
            impl #impl_generics ::ask_first::__private::Target for #name #type_generics #where_clause {
                const OPERATION: &'static str = #operation;
                fn bind(&self, binding: &mut ::ask_first::__private::Binding) {
                    let _ = &binding;
                    #(#binds)*
                }
                fn question(&self) -> ::ask_first::__private::Question {
                    #(#chain)*
                }
                #evidence
            }
        };
    })
}

/// The expression showing `field`, spanned on its type so a type that is no fact kind is
/// reported on the field.
fn fact_of(field: &Field) -> TokenStream {
    let ident = &field.ident;
    let ty = &field.ty;
    match field.kind {
        Kind::Own => quote_spanned! {ty.span()=>
            <#ty as ::ask_first::__private::ToFact>::to_fact(&self.#ident)
        },
        Kind::Count => quote_spanned! {ty.span()=>
            ::ask_first::__private::Fact::count(::core::convert::Into::<u64>::into(self.#ident))
        },
        Kind::Bytes => quote_spanned! {ty.span()=>
            ::ask_first::__private::Fact::bytes(::core::convert::Into::<u64>::into(self.#ident))
        },
        Kind::Date => quote_spanned! {ty.span()=>
            ::ask_first::__private::Fact::date_unix(::core::convert::Into::<i64>::into(self.#ident))
        },
    }
}

fn check_operation(literal: &LitStr) -> syn::Result<()> {
    let value = literal.value();
    let valid = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'));
    if valid {
        Ok(())
    } else {
        Err(syn::Error::new(
            literal.span(),
            format!(
                "{value:?} is not an operation name: use ASCII letters, digits, `_`, `-`, `.` \
                 or `:`, e.g. `operation = \"delete_note\"`"
            ),
        ))
    }
}

/// The method an `evidence = "name()"` names.
fn evidence_method(literal: &LitStr) -> syn::Result<Ident> {
    let value = literal.value();
    let bare = value.trim().strip_suffix("()").map(str::trim);
    match bare.map(syn::parse_str::<Ident>) {
        Some(Ok(method)) => Ok(Ident::new(&method.to_string(), literal.span())),
        _ => Err(syn::Error::new(
            literal.span(),
            format!(
                "`evidence = {value:?}` does not name a method: write `evidence = \"name()\"`, \
                 where `fn name(&self) -> ask_first::fact::Evidence` is a method of the target \
                 that says what exactly changes"
            ),
        )),
    }
}

/// A named field and its options, with the first error in them.
fn parse_field(field: &syn::Field) -> (Field, Option<syn::Error>) {
    let ident = field
        .ident
        .clone()
        .unwrap_or_else(|| Ident::new("_", field.span()));
    let mut skip = false;
    let mut kind = Kind::Own;
    let mut first_error = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("target")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            let this = match key.as_deref() {
                Some("skip") => {
                    skip = true;
                    return Ok(());
                }
                Some("count") => Kind::Count,
                Some("bytes") => Kind::Bytes,
                Some("date") => Kind::Date,
                Some("bind") => {
                    return Err(meta.error(
                        "fields are bound by default: drop `bind`; mark a field that does not \
                         decide what runs `#[target(skip)]` instead",
                    ));
                }
                _ => {
                    let shown = key.map_or_else(|| "this".to_owned(), |k| format!("`{k}`"));
                    return Err(meta.error(format!("unknown option {shown}: {FIELD_OPTIONS}")));
                }
            };
            if kind != Kind::Own {
                return Err(meta.error(
                    "a field is shown as one fact kind: keep one of `count`, `bytes` or `date`",
                ));
            }
            kind = this;
            Ok(())
        });
        if let Err(error) = parsed {
            first_error.get_or_insert(error);
        }
    }
    let parsed = Field {
        ident,
        ty: field.ty.clone(),
        skip,
        kind,
    };
    (parsed, first_error)
}

/// Splits a template into text and `{name}` / `{name()}` placeholders; `{{` and `}}` are
/// literal braces.
fn parse_template(literal: &LitStr) -> syn::Result<Vec<Piece>> {
    let value = literal.value();
    let error = |message: String| syn::Error::new(literal.span(), message);
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                if !closed {
                    return Err(error(
                        "unclosed `{` in the text: close the placeholder as `{field}`, or write \
                         `{{` for a literal brace"
                            .to_owned(),
                    ));
                }
                let name = name.trim();
                if name.is_empty() {
                    return Err(error(
                        "placeholders are named: write `{field}` (a field of the target) or \
                         `{method()}`, not `{}`"
                            .to_owned(),
                    ));
                }
                let (bare, method) = match name.strip_suffix("()") {
                    Some(bare) => (bare, true),
                    None => (name, false),
                };
                if syn::parse_str::<Ident>(bare).is_err() {
                    return Err(error(format!(
                        "`{{{name}}}` is not a placeholder: write `{{field}}` (a field of the \
                         target) or `{{method()}}`; `{{{{` and `}}}}` are literal braces"
                    )));
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(if method {
                    Piece::Method(bare.to_owned())
                } else {
                    Piece::Field(bare.to_owned())
                });
            }
            '}' => {
                return Err(error(
                    "unmatched `}` in the text: write `}}` for a literal brace".to_owned(),
                ));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    // The rendered wording uses `{}` for its placeholders: a literal one would take a fact.
    let literal_pair = pieces
        .iter()
        .any(|p| matches!(p, Piece::Text(t) if t.contains("{}")));
    if literal_pair {
        return Err(error(
            "a literal `{}` cannot appear in a question (it would read as a placeholder): \
             reword it"
                .to_owned(),
        ));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(input: TokenStream) -> String {
        let input: DeriveInput = syn::parse2(input).expect("parses");
        match expand(&input) {
            Ok(_) => panic!("expected an error"),
            Err(error) => error
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    #[test]
    fn expands_a_well_formed_target() {
        let input: DeriveInput = syn::parse2(quote! {
            #[target(operation = "delete_note", question = "Delete {id} ({size})? {{literal}}")]
            #[target(line = "Shown: {shown_size()}.")]
            struct DeleteNote { id: Id, #[target(skip, bytes)] size: u64 }
        })
        .expect("parses");
        let out = expand(&input).expect("expands").to_string();
        assert!(out.contains("\"Delete {} ({})? {literal}\""), "{out}");
        assert!(out.contains("\"Shown: {}.\""), "{out}");
        assert!(out.contains("shown_size"), "{out}");
        assert!(
            !out.contains("\"size\""),
            "a skipped field is not bound: {out}"
        );
    }

    #[test]
    fn evidence_names_a_method() {
        let input: DeriveInput = syn::parse2(quote! {
            #[target(operation = "op", question = "x", evidence = "changes()")]
            struct S { id: Id }
        })
        .expect("parses");
        let out = expand(&input).expect("expands").to_string();
        assert!(out.contains("fn evidence"), "{out}");
        assert!(out.contains("changes ()"), "{out}");
        // Without it, no `evidence` is written: the trait's default (none) holds.
        let input: DeriveInput = syn::parse2(quote! {
            #[target(operation = "op", question = "x")]
            struct S { id: Id }
        })
        .expect("parses");
        assert!(
            !expand(&input)
                .expect("expands")
                .to_string()
                .contains("fn evidence")
        );
        for bad in ["changes", "", "a b()", "changes(x)"] {
            let e = errors(quote! {
                #[target(operation = "op", question = "x", evidence = #bad)]
                struct S { id: Id }
            });
            assert!(e.contains("does not name a method"), "{bad}: {e}");
            assert!(e.contains("evidence = \"name()\""), "{bad}: {e}");
        }
        let e = errors(quote! {
            #[target(operation = "op", question = "x", evidence = "a()", evidence = "b()")]
            struct S { id: Id }
        });
        assert!(e.contains("`evidence` is given twice"), "{e}");
    }

    #[test]
    fn names_every_mistake() {
        let e = errors(quote! { struct S { id: Id } });
        assert!(e.contains("needs the operation's name"), "{e}");
        assert!(e.contains("needs the question"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "{idd} {} ")]
            struct S { id: Id }
        });
        assert!(e.contains("placeholders are named"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "{idd}")]
            struct S { id: Id }
        });
        assert!(e.contains("unknown placeholder `{idd}`"), "{e}");
        assert!(e.contains("its fields: id"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "{id")]
            struct S { id: Id }
        });
        assert!(e.contains("unclosed"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "id}")]
            struct S { id: Id }
        });
        assert!(e.contains("unmatched"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x", title = "y")]
            struct S { id: Id }
        });
        assert!(e.contains("unknown option `title`"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x")]
            struct S { #[target(skip)] id: Id }
        });
        assert!(e.contains("neither bound nor shown"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x")]
            struct S { #[target(count, bytes)] n: u64 }
        });
        assert!(e.contains("one fact kind"), "{e}");
        let e = errors(quote! {
            #[target(operation = "delete note", question = "x")]
            struct S { id: Id }
        });
        assert!(e.contains("not an operation name"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x {{}}")]
            struct S { id: Id }
        });
        assert!(e.contains("literal `{}`"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x")]
            struct S(Id);
        });
        assert!(e.contains("named fields"), "{e}");
        let e = errors(quote! {
            #[target(operation = "op", question = "x")]
            struct S { #[target(bind)] id: Id }
        });
        assert!(e.contains("bound by default"), "{e}");
    }
}
