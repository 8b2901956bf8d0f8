//! The compile-time half of the guarantee: every way around the guard that must not compile,
//! each a file in `tests/ui/fail` with the compiler's message beside it in a `.stderr`. The
//! correct uses of `#[guarded]` (`tests/ui/pass`) are ordinary tests in `tests/compile_pass.rs`,
//! so this suite only type-checks: trybuild's project builds no code.
//!
//! The `.stderr` files are written by the toolchain pinned in `rust-toolchain.toml`; after a
//! deliberate change, regenerate them with
//! `TRYBUILD=overwrite cargo test -p ask-first --test compile` and read every one.

#[test]
fn ui() {
    one_dependency_build();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
}

/// trybuild checks the cases' dependencies first with its flags (`--cfg trybuild --verbose -A
/// dead_code`), then the cases with one more (`--diagnostic-width=140`); a change of flags makes
/// cargo rebuild every dependency, so each was built twice, and again by the next project in
/// the shared `target/tests/trybuild` (opengist-mcp's cases). `CARGO_ENCODED_RUSTFLAGS`
/// outranks the `--config build.rustflags` trybuild passes to cargo: with the case builds'
/// flags there, every step (and both projects) builds with the same flags, once. The same
/// function is in `opengist-mcp/tests/compile.rs`.
fn one_dependency_build() {
    const FLAGS: &str =
        "--cfg\x1ftrybuild\x1f--verbose\x1f-A\x1fdead_code\x1f--diagnostic-width=140";
    // SAFETY: this test binary has this one test; nothing else reads or writes the
    // environment while it is set (before trybuild starts any process).
    unsafe { std::env::set_var("CARGO_ENCODED_RUSTFLAGS", FLAGS) };
}
