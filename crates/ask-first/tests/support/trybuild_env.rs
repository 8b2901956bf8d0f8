//! The environment both trybuild suites (the facade's `tests/compile.rs` and opengist-mcp's
//! `crates/opengist-mcp/tests/compile.rs`) give the cargo that trybuild starts, so that the two
//! projects in the shared `target/tests/trybuild` check every dependency once, not once each
//! and again on every alternation:
//!
//! - **flags**: trybuild checks the cases' dependencies with its flags (`--cfg trybuild
//!   --verbose -A dead_code`), then the cases with one more (`--diagnostic-width=140`), and a
//!   change of flags makes cargo rebuild every dependency. `CARGO_ENCODED_RUSTFLAGS` outranks
//!   the `--config build.rustflags` trybuild passes, so with the case builds' flags there every
//!   step (and both projects) builds with the same flags.
//! - **the package's own variables**: `cargo test` runs each test binary with its package's
//!   `CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, … in its environment, and trybuild's cargo inherits
//!   them. ring's build script declares `rerun-if-env-changed` on `CARGO_MANIFEST_DIR` and
//!   `CARGO_PKG_NAME`, which cargo compares in its own environment: the facade's suite and
//!   opengist-mcp's differ there, so each re-ran ring's C build and re-checked everything above
//!   it (rustls, reqwest, redis, our crates) after the other. Removed, both suites present the
//!   same environment. trybuild itself then finds the crate from the working directory (cargo
//!   runs a test in its package's root), as it does when `CARGO_MANIFEST_DIR` is unset.

/// Sets the environment described in the module docs; call it first in the test, before
/// trybuild starts any process.
pub(crate) fn one_dependency_build() {
    const FLAGS: &str =
        "--cfg\x1ftrybuild\x1f--verbose\x1f-A\x1fdead_code\x1f--diagnostic-width=140";
    let per_package: Vec<std::ffi::OsString> = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let name = name.to_string_lossy();
            name.starts_with("CARGO_PKG_")
                || name.starts_with("CARGO_MANIFEST_")
                || name.starts_with("CARGO_BIN_")
                || name == "CARGO_CRATE_NAME"
                || name == "CARGO_PRIMARY_PACKAGE"
                || name == "CARGO_TARGET_TMPDIR"
                || name == "OUT_DIR"
        })
        .collect();
    // SAFETY: each suite's test binary has this one test; nothing else reads or writes the
    // environment while it changes (before trybuild starts any process or thread).
    unsafe {
        std::env::set_var("CARGO_ENCODED_RUSTFLAGS", FLAGS);
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false");
        for name in per_package {
            std::env::remove_var(name);
        }
    }
}
