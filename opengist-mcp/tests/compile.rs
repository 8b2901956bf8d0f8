//! Compile-fail proof for the server itself: no code outside the guard can reach a
//! destructive Opengist call. Each case is one file under `tests/ui/`, named for what it
//! proves, with the compiler's error in its `.stderr` (written with the pinned toolchain).

#[test]
fn destructive_calls_need_the_guard() {
    one_dependency_build();
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

/// trybuild checks the cases' dependencies with its flags, then the cases with one more
/// (`--diagnostic-width=140`), and cargo rebuilds every dependency when flags change; with the
/// case builds' flags in `CARGO_ENCODED_RUSTFLAGS` (which outranks the `--config` trybuild
/// passes) every step builds with the same flags, once, shared with the framework's cases in
/// `target/tests/trybuild` (the same function is in the facade's `tests/compile.rs`).
fn one_dependency_build() {
    const FLAGS: &str =
        "--cfg\x1ftrybuild\x1f--verbose\x1f-A\x1fdead_code\x1f--diagnostic-width=140";
    // SAFETY: this test binary has this one test; nothing else reads or writes the
    // environment while it is set (before trybuild starts any process).
    unsafe { std::env::set_var("CARGO_ENCODED_RUSTFLAGS", FLAGS) };
}
