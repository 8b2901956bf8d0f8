//! The correct uses of `#[guarded]` and `#[derive(Target)]`: each file in `tests/ui/pass`
//! compiles, and its `main` checks what the attribute generated (the router's listing, the
//! question). They are ordinary tests, compiled with the rest of the test build, so the
//! trybuild suite (`tests/compile.rs`) only checks its cases and builds nothing.

#[path = "ui/pass/derive_target_ok.rs"]
#[allow(dead_code)]
mod derive_target_ok;
#[path = "ui/pass/guarded_always_ok.rs"]
#[allow(dead_code)]
mod guarded_always_ok;
#[path = "ui/pass/guarded_person_required_ok.rs"]
#[allow(dead_code)]
mod guarded_person_required_ok;
#[path = "ui/pass/guarded_when_ok.rs"]
#[allow(dead_code)]
mod guarded_when_ok;

#[test]
fn derive_target_with_every_kind_of_field() {
    derive_target_ok::main();
}

#[test]
fn guarded_always_lists_its_schemas() {
    guarded_always_ok::main();
}

#[test]
fn guarded_person_required_beside_always_and_when() {
    guarded_person_required_ok::main();
}

#[test]
fn guarded_when_with_other_extractors_and_no_parameters() {
    guarded_when_ok::main();
}
