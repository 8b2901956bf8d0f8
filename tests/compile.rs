//! The compile-time half of the guarantee: every way around the guard that must not compile,
//! each a file in `tests/ui/fail` with the compiler's message beside it in a `.stderr`, and
//! correct uses of `#[guarded]` in `tests/ui/pass`.
//!
//! The `.stderr` files are written by the toolchain pinned in `rust-toolchain.toml`; after a
//! deliberate change, regenerate them with
//! `TRYBUILD=overwrite cargo test -p ask-first --test compile` and read every one.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
