//! One stdio line through the transport's check: never panics, and every refusal is one
//! JSON-RPC 2.0 error response with an integer code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use opengist_mcp::stdio::{Verdict, check_line, leading_id};

fuzz_target!(|data: &[u8]| {
    let _ = leading_id(data);
    if let Verdict::Refuse(answer) = check_line(data) {
        let value: serde_json::Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(value["jsonrpc"], "2.0");
        assert!(value["error"]["code"].is_i64());
        assert!(value["id"].is_null() || value["id"].is_i64() || value["id"].is_string());
    }
});
