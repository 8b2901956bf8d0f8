//! Fixed wording: the text of a question, written in source code.

/// Fixed text written in source code. Placeholders `{}` are filled with facts, in order.
///
/// Implement it with the [`wording!`](crate::wording) macro:
///
/// ```
/// ask_first_core::wording! {
///     /// The headline of a delete question.
///     pub struct DeleteHeadline = "This will delete {} file(s) from gist {}.";
/// }
/// use ask_first_core::Wording;
/// assert_eq!(DeleteHeadline::TEXT, "This will delete {} file(s) from gist {}.");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not fixed wording",
    label = "a question is made of fixed wording and facts, never of run-time text",
    note = "declare the text with `ask_first::wording! {{ struct Name = \"...\"; }}` and pass `Name` as the type parameter; show run-time values as `Fact`s"
)]
pub trait Wording {
    /// The text. Being a `const`, it cannot come from a request or a record.
    const TEXT: &'static str;
}

/// Declares unit types implementing [`Wording`]: `wording! { pub struct Name = "text {}"; }`.
#[macro_export]
macro_rules! wording {
    ($($(#[$meta:meta])* $vis:vis struct $name:ident = $text:literal;)+) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy)]
            $vis struct $name;
            impl $crate::Wording for $name {
                const TEXT: &'static str = $text;
            }
        )+
    };
}
