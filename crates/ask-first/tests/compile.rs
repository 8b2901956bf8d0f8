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

#[path = "support/trybuild_env.rs"]
mod trybuild_env;
use trybuild_env::one_dependency_build;
