//! One stdio line through the transport's check, and the same bytes as an HTTP body through the
//! wire's envelope check (both bounded: depth and values counted before any parse): never
//! panics, and every refusal is one JSON-RPC 2.0 error response with an integer code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ask_first_serve::http::wire::body_verdict;
use ask_first_serve::stdio::{MAX_DEPTH, MAX_VALUES, Verdict, check_line, leading_id, shape};

fuzz_target!(|data: &[u8]| {
    let _ = leading_id(data);
    let counted = shape(data);
    for has_session in [false, true] {
        if let Ok(id) = body_verdict(data, has_session) {
            // Passed on: within the bounds, and the id echoed is a legal one.
            assert!(counted.values <= MAX_VALUES && counted.depth <= MAX_DEPTH);
            assert!(id.is_null() || id.is_i64() || id.is_u64() || id.is_string());
        }
    }
    if let Verdict::Refuse(answer) = check_line(data) {
        let value: serde_json::Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(value["jsonrpc"], "2.0");
        assert!(value["error"]["code"].is_i64());
        assert!(value["id"].is_null() || value["id"].is_i64() || value["id"].is_string());
    }
});
