//! Parsing a two-call `confirm_token`: see `seal_common::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ask_first_core::seal::SealKind;

#[path = "seal_common.rs"]
mod seal_common;

fuzz_target!(|data: &[u8]| {
    seal_common::check(SealKind::ConfirmToken, SealKind::RequestState, data);
});
