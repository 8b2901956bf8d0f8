//! Parsing `#[guarded(always)]` and `#[guarded(when = "predicate")]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Meta, Token};

/// What the attribute asks for.
pub(crate) enum Mode {
    /// `always`: the handler takes `Approved<T>`.
    Always {
        /// The `always` keyword, where "`Self` holds no guard" is reported.
        span: Span,
    },
    /// `when = "predicate"`: the handler takes `Clearance<T>`.
    When {
        /// The `when` keyword, where "`Self` holds no guard" is reported.
        span: Span,
        /// The predicate, spanned on the string literal, so an unknown method is reported there.
        predicate: Ident,
    },
}

impl Mode {
    /// The option's keyword, for spans that stand for the attribute.
    pub(crate) fn span(&self) -> Span {
        match self {
            Self::Always { span } | Self::When { span, .. } => *span,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Always { .. } => "always",
            Self::When { .. } => "when",
        }
    }
}

const ACCEPTED: &str = "#[guarded] accepts `always` or `when = \"predicate\"`";

/// Parses the attribute's arguments: exactly one of `always` or `when = "ident"`.
pub(crate) fn parse(args: TokenStream) -> syn::Result<Mode> {
    if args.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[guarded] needs one option: `#[guarded(always)]` to ask before every call, or \
             `#[guarded(when = \"predicate\")]` to ask only when the target's \
             `fn predicate(&self) -> bool` returns true",
        ));
    }
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated
        .parse2(args)
        .map_err(|error| {
            syn::Error::new(error.span(), format!("expected an option: {ACCEPTED}"))
        })?;
    let mut mode: Option<Mode> = None;
    for meta in metas {
        let this = option(&meta)?;
        if let Some(first) = &mode {
            let message = if first.name() == this.name() {
                format!(
                    "`{}` is given twice: #[guarded] takes one option",
                    this.name()
                )
            } else {
                "`always` and `when` exclude each other: #[guarded] takes exactly one option, \
                 `always` or `when = \"predicate\"`"
                    .to_owned()
            };
            return Err(syn::Error::new_spanned(meta, message));
        }
        mode = Some(this);
    }
    mode.ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            format!("#[guarded] needs one option: {ACCEPTED}"),
        )
    })
}

fn option(meta: &Meta) -> syn::Result<Mode> {
    let path = meta.path();
    if path.is_ident("always") {
        return match meta {
            Meta::Path(path) => Ok(Mode::Always { span: path.span() }),
            _ => Err(syn::Error::new_spanned(
                meta,
                "`always` takes no value: write `#[guarded(always)]`",
            )),
        };
    }
    if path.is_ident("when") {
        let Meta::NameValue(name_value) = meta else {
            return Err(syn::Error::new_spanned(
                meta,
                "`when` names the target's predicate in a string: write \
                 `#[guarded(when = \"predicate\")]`",
            ));
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(literal),
            ..
        }) = &name_value.value
        else {
            return Err(syn::Error::new_spanned(
                &name_value.value,
                "`when` takes a string literal naming a method of the target, \
                 `fn(&self) -> bool`: e.g. `when = \"widens_visibility\"`",
            ));
        };
        let predicate = literal.parse::<Ident>().map_err(|_| {
            syn::Error::new(
                literal.span(),
                format!(
                    "{:?} is not a method name: `when` names a method of the target, \
                     `fn(&self) -> bool`, e.g. `when = \"widens_visibility\"`",
                    literal.value()
                ),
            )
        })?;
        return Ok(Mode::When {
            span: path.span(),
            predicate,
        });
    }
    let shown = path
        .get_ident()
        .map_or_else(|| "this".to_owned(), |ident| format!("`{ident}`"));
    Err(syn::Error::new_spanned(
        meta,
        format!("unknown option {shown}: {ACCEPTED}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn error(args: TokenStream) -> String {
        match parse(args) {
            Ok(_) => panic!("expected an error"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn accepts_always_and_when() {
        assert!(matches!(parse(quote!(always)), Ok(Mode::Always { .. })));
        assert!(matches!(parse(quote!(always,)), Ok(Mode::Always { .. })));
        match parse(quote!(when = "is_shared")) {
            Ok(Mode::When { predicate, .. }) => assert_eq!(predicate.to_string(), "is_shared"),
            _ => panic!("expected `when`"),
        }
    }

    #[test]
    fn refuses_everything_else() {
        assert!(error(quote!()).contains("needs one option"));
        assert!(error(quote!(sometimes)).contains("unknown option `sometimes`"));
        assert!(error(quote!(always, when = "x")).contains("exclude each other"));
        assert!(error(quote!(always, always)).contains("given twice"));
        assert!(error(quote!(always = true)).contains("takes no value"));
        assert!(error(quote!(when)).contains("in a string"));
        assert!(error(quote!(when = is_shared)).contains("string literal"));
        assert!(error(quote!(when = "is shared")).contains("not a method name"));
        assert!(error(quote!(when = "fn")).contains("not a method name"));
        assert!(error(quote!("always")).contains("expected an option"));
    }
}
