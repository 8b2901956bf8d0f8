//! Reading a handler as syntax: which of its parameters is the proof and which the
//! arguments, the types they name, and what its `#[tool]` attribute sets. Nothing here
//! refuses anything; `validate` does.

use syn::punctuated::Punctuated;
use syn::{Attribute, GenericArgument, Meta, PatType, PathArguments, Token, Type};

/// The three proofs a handler could ask for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proof {
    Approved,
    Clearance,
    Exempt,
}

impl Proof {
    pub(crate) fn of(ident: &syn::Ident) -> Option<Self> {
        if ident == "Approved" {
            Some(Self::Approved)
        } else if ident == "Clearance" {
            Some(Self::Clearance)
        } else if ident == "Exempt" {
            Some(Self::Exempt)
        } else {
            None
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Approved => "Approved",
            Self::Clearance => "Clearance",
            Self::Exempt => "Exempt",
        }
    }
}

/// The handler's approval parameter.
pub(crate) struct ProofParam<'a> {
    pub(crate) arg: &'a PatType,
    pub(crate) target: &'a Type,
}

/// The handler's `Parameters<A>` parameter.
pub(crate) struct ParamsParam<'a> {
    pub(crate) arg: &'a PatType,
    pub(crate) args: &'a Type,
}

/// The last path segment of a type, looking through invisible groups and parentheses.
pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// The single type argument of a segment such as `Approved<T>`.
pub(crate) fn type_argument(segment: &syn::PathSegment) -> Option<&Type> {
    let PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    let mut types = arguments.args.iter().filter_map(|argument| match argument {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(ty), None) => Some(ty),
        _ => None,
    }
}

/// rmcp's `#[tool]`, recognised as `#[tool_router]` does: by the path's last segment.
pub(crate) fn is_tool(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool")
}

/// Whether `attr` is rmcp's `#[tool(...)]` and sets `name = ...`: its arguments parsed as rmcp
/// parses them (comma-separated settings: `name = expr`, `name(...)`, `name`), so a string or
/// an expression that merely contains the word does not count.
pub(crate) fn tool_sets(attr: &Attribute, name: &str) -> bool {
    if !is_tool(attr) {
        return false;
    }
    let Meta::List(list) = &attr.meta else {
        return false;
    };
    list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
        .is_ok_and(|settings| {
            settings.iter().any(
                |setting| matches!(setting, Meta::NameValue(value) if value.path.is_ident(name)),
            )
        })
}

/// `T` from `Json<T>` or `Result<Json<T>, E>`, as rmcp's `extract_schema_from_return_type`.
pub(crate) fn json_output(ty: &Type) -> Option<&Type> {
    fn json(ty: &Type) -> Option<&Type> {
        let segment = match ty {
            Type::Path(path) => path.path.segments.last()?,
            _ => return None,
        };
        if segment.ident != "Json" {
            return None;
        }
        match &segment.arguments {
            PathArguments::AngleBracketed(arguments) => match arguments.args.first()? {
                GenericArgument::Type(inner) => Some(inner),
                _ => None,
            },
            _ => None,
        }
    }
    if let Some(inner) = json(ty) {
        return Some(inner);
    }
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last()?;
    if segment.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    match arguments.args.first()? {
        GenericArgument::Type(ok) => json(ok),
        _ => None,
    }
}
