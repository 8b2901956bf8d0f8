//! Compile-fail proof for the server itself: no code outside the guard can reach a
//! destructive Opengist call. Each case is one file under `tests/ui/`, named for what it
//! proves, with the compiler's error in its `.stderr` (written with the pinned toolchain).

#[test]
fn destructive_calls_need_the_guard() {
    one_dependency_build();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

// One environment for both trybuild suites (flags, no per-package variables), so the
// dependencies are checked once in the shared target/tests/trybuild: see the file.
#[path = "../../ask-first/tests/support/trybuild_env.rs"]
mod trybuild_env;
use trybuild_env::one_dependency_build;
