//! The `#[guarded]` attribute macro and `#[derive(Target)]` of
//! [`ask-first`](https://docs.rs/ask-first).
//!
//! Use them through the facade: `ask_first::guarded` and `ask_first::Target`. The code they
//! generate names items only as `::ask_first::__private::…` (a hidden module of the facade, rmcp
//! included). So a server depends on `ask-first` (and on `rmcp`, which `#[tool]` needs anyway),
//! never on this crate or on `ask-first-core` directly.
//!
//! Their references (options, expansion, every error) are on the facade's pages, where a
//! server's author looks:
//! [`ask_first::guarded`](https://docs.rs/ask-first/latest/ask_first/attr.guarded.html) and
//! [`ask_first::Target`](https://docs.rs/ask-first/latest/ask_first/derive.Target.html). The
//! facade's doc tests compile their examples.
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

/// Guards an rmcp tool handler: the `#[guarded]` that `ask-first` re-exports as
/// `ask_first::guarded`, whose page is its reference.
#[proc_macro_attribute]
pub fn guarded(args: TokenStream, item: TokenStream) -> TokenStream {
    let options = options::parse(args.into());
    expand::guarded(options, item.into()).into()
}

/// Implements `ask_first::Target` from a struct: the `#[derive(Target)]` that `ask-first`
/// re-exports as `ask_first::Target`, whose page is its reference.
#[proc_macro_derive(Target, attributes(target))]
pub fn derive_target(item: TokenStream) -> TokenStream {
    target::derive(item.into()).into()
}
