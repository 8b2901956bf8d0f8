//! Compile-fail proof for the server itself: no code outside the guard can reach a
//! destructive Opengist call. Each case is one file under `tests/ui/`, named for what it
//! proves, with the compiler's error in its `.stderr` (written with the pinned toolchain).

#[test]
fn destructive_calls_need_the_guard() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
