//! The `#[guarded]` attribute macro of `mcp-guard`.
#![warn(missing_docs)]

mod expand;
mod options;

use proc_macro::TokenStream;

/// Guards an rmcp tool handler.
#[proc_macro_attribute]
pub fn guarded(args: TokenStream, item: TokenStream) -> TokenStream {
    let mode = options::parse(args.into());
    expand::guarded(mode, item.into()).into()
}
