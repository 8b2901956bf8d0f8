//! Opengist's answers, as the client reads them: every response type from arbitrary bytes,
//! and the accessors the tools use on what parsed. Never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use opengist_mcp::opengist::{Commit, GistDetail, GistFile, GistSummary, Owner, User};

fuzz_target!(|data: &[u8]| {
    if let Ok(detail) = serde_json::from_slice::<GistDetail>(data) {
        let _ = detail.id();
        let _ = detail.head_sha();
        let _ = serde_json::to_vec(&detail);
    }
    if let Ok(list) = serde_json::from_slice::<Vec<GistSummary>>(data) {
        let _ = serde_json::to_vec(&list);
    }
    if let Ok(file) = serde_json::from_slice::<GistFile>(data) {
        let _ = file.is_base64();
    }
    let _ = serde_json::from_slice::<Vec<Commit>>(data);
    if let Ok(user) = serde_json::from_slice::<User>(data) {
        let _ = user.name();
    }
    if let Ok(owner) = serde_json::from_slice::<Owner>(data) {
        let _ = owner.name();
    }
});
