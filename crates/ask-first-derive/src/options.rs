//! Parsing `#[guarded(always)]` and `#[guarded(when = "predicate")]`, each optionally with
//! `person_required`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Meta, Token};

/// The attribute's options: when to ask, and whether only a person's yes will do.
pub(crate) struct Options {
    /// When to ask.
    pub(crate) mode: Mode,
    /// `person_required`: never fall back to the two-call token.
    pub(crate) person_required: bool,
    /// `verified`: only a yes a model cannot give (the approval page with a passkey).
    pub(crate) verified: bool,
}

/// When the attribute asks.
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

const ACCEPTED: &str = "#[guarded] accepts `always` or `when = \"predicate\"`, and optionally `person_required` or `verified`";

/// Parses the attribute's arguments: exactly one of `always` or `when = "ident"`, and at most
/// one `person_required`.
pub(crate) fn parse(args: TokenStream) -> syn::Result<Options> {
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
    let mut person_required = false;
    let mut verified = false;
    for meta in metas {
        if meta.path().is_ident("verified") {
            if !matches!(meta, Meta::Path(_)) || verified {
                return Err(syn::Error::new_spanned(
                    meta,
                    "`verified` takes no value and is written once: `#[guarded(always, verified)]`",
                ));
            }
            verified = true;
            continue;
        }
        if meta.path().is_ident("person_required") {
            if !matches!(meta, Meta::Path(_)) {
                return Err(syn::Error::new_spanned(
                    meta,
                    "`person_required` takes no value: write `#[guarded(always, person_required)]`",
                ));
            }
            if person_required {
                return Err(syn::Error::new_spanned(
                    meta,
                    "`person_required` is given twice: write it once",
                ));
            }
            person_required = true;
            continue;
        }
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
    let mode = mode.ok_or_else(|| {
        let message = if person_required || verified {
            "`person_required` says who must answer, not when to ask: add `always` or \
             `when = \"predicate\"`, e.g. `#[guarded(always, person_required)]`"
                .to_owned()
        } else {
            format!("#[guarded] needs one option: {ACCEPTED}")
        };
        syn::Error::new(Span::call_site(), message)
    })?;
    Ok(Options {
        mode,
        person_required: person_required || verified,
        verified,
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

    fn mode(args: TokenStream) -> Option<(Mode, bool)> {
        parse(args)
            .ok()
            .map(|options| (options.mode, options.person_required))
    }

    #[test]
    fn accepts_always_and_when() {
        assert!(matches!(
            mode(quote!(always)),
            Some((Mode::Always { .. }, false))
        ));
        assert!(matches!(
            mode(quote!(always,)),
            Some((Mode::Always { .. }, false))
        ));
        match mode(quote!(when = "is_shared")) {
            Some((Mode::When { predicate, .. }, false)) => {
                assert_eq!(predicate.to_string(), "is_shared")
            }
            _ => panic!("expected `when`"),
        }
    }

    #[test]
    fn accepts_person_required_beside_either() {
        assert!(matches!(
            mode(quote!(always, person_required)),
            Some((Mode::Always { .. }, true))
        ));
        assert!(matches!(
            mode(quote!(person_required, when = "p")),
            Some((Mode::When { .. }, true))
        ));
        assert!(error(quote!(person_required)).contains("not when to ask"));
        assert!(error(quote!(always, person_required, person_required)).contains("given twice"));
        assert!(error(quote!(always, person_required = true)).contains("takes no value"));
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
