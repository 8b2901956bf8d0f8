use rmcp::model::NumberOrString;
use serde_json::{Value, json};

use super::checks::*;
use super::*;

fn refused(line: &str) -> Value {
    match check_line(line.as_bytes()) {
        Verdict::Refuse(answer) => serde_json::from_slice(&answer).expect("json"),
        other => panic!("{line}: {other:?}"),
    }
}

fn deep(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn depth_counts_outside_strings_only() {
    assert_eq!(nesting_depth(b"{\"a\":[1,{\"b\":\"[[[\\\"{\"}]}"), 3);
    assert_eq!(nesting_depth(deep(500).as_bytes()), 500);
}

#[test]
fn shape_bounds_the_values_before_any_parse() {
    assert_eq!(shape(b"[1,2,3]").values, 4);
    assert_eq!(shape(br#"{"a":1,"b":"x,y,[z"}"#).values, 3);
    let many = format!("[{}0]", "0,".repeat(MAX_VALUES));
    assert!(shape(many.as_bytes()).values > MAX_VALUES);
}

#[test]
fn a_line_of_too_many_values_is_refused_unparsed_with_its_id() {
    let values = format!("[{}0]", "0,".repeat(MAX_VALUES));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add","arguments":{{"text":{values}}}}}}}"#
    );
    let answer = refused(&line);
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&MAX_VALUES.to_string()) && message.contains("`text`"),
        "{answer}"
    );
    // Another method: -32600.
    let line = format!(r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"x":{values}}}}}"#);
    let answer = refused(&line);
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
    // Positive control: the same call with fewer values passes.
    let values = format!("[{}0]", "0,".repeat(MAX_VALUES / 2));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"add","arguments":{{"text":{values}}}}}}}"#
    );
    assert!(matches!(check_line(line.as_bytes()), Verdict::Pass(_)));
}

#[tokio::test]
async fn long_lines_are_checked_off_the_async_workers_and_answered_in_order() {
    use tokio::io::AsyncReadExt;
    let (mut client, server) = tokio::io::duplex(1024 * 1024);
    let (read, write) = tokio::io::split(server);
    let mut transport = StdioTransport::new(read, write);
    let padding = "x".repeat(200 * 1024);
    let good = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"pad":"{padding}"}}}}}}"#
    );
    let many = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"_meta":{{"pad":[{}0]}}}}}}"#,
        "0,".repeat(MAX_VALUES)
    );
    let third = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let input = format!("{many}\n{good}\n{third}\n");
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        client.write_all(input.as_bytes()).await.expect("written");
        let mut answer = vec![0u8; 4096];
        let read = client.read(&mut answer).await.expect("an answer");
        answer.truncate(read);
        answer
    });
    let first = transport.receive().await.expect("the long good line");
    assert!(format!("{first:?}").contains("Number(1)"), "{first:?}");
    let next = transport.receive().await.expect("the short line");
    assert!(format!("{next:?}").contains("Number(3)"), "{next:?}");
    let answer = writer.await.expect("the client");
    let answer: Value = serde_json::from_slice(answer.trim_ascii()).expect("one JSON answer");
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
}

#[test]
fn the_limit_is_serde_jsons() {
    let ok = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}}"#,
        deep(MAX_DEPTH - 2)
    );
    assert!(serde_json::from_str::<Value>(&ok).is_ok());
    let over = format!(
        "{}1{}",
        "[".repeat(MAX_DEPTH + 1),
        "]".repeat(MAX_DEPTH + 1)
    );
    assert!(serde_json::from_str::<Value>(&over).is_err());
}

#[test]
fn a_deep_argument_is_named_with_the_id() {
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_gist","arguments":{{"gist_id":{}}}}}}}"#,
        deep(200)
    );
    let answer = refused(&line);
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`gist_id`")
    );
}

#[test]
fn a_wrongly_typed_request_state_is_invalid_params() {
    let answer = refused(
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"delete_gist","requestState":5}}"#,
    );
    assert_eq!(answer["id"], "a");
    assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState"),
        "{answer}"
    );
}

#[test]
fn a_lone_surrogate_names_its_argument() {
    let answer = refused(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_gist","arguments":{"gist_id":"\ud800"}}}"#,
    );
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gist_id"),
        "{answer}"
    );
}

#[test]
fn envelopes_that_are_not_requests() {
    assert_eq!(refused("{nope")["error"]["code"], PARSE_ERROR);
    assert_eq!(refused("{nope")["id"], Value::Null);
    let batch = refused(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(batch["error"]["code"], INVALID_REQUEST);
    assert!(
        batch["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch"),
        "{batch}"
    );
    let pair = refused(r#"["2.0", 1, "ping"]"#);
    assert!(
        pair["error"]["message"].as_str().unwrap().contains("batch"),
        "{pair}"
    );
    let old = refused(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
    assert_eq!(
        (old["id"].clone(), old["error"]["code"].clone()),
        (json!(9), json!(INVALID_REQUEST))
    );
    let object_id = refused(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
    assert_eq!(object_id["id"], Value::Null);
    assert_eq!(object_id["error"]["code"], INVALID_REQUEST);
    assert_eq!(refused("42")["error"]["code"], INVALID_REQUEST);
}

#[test]
fn invalid_utf8_keeps_a_readable_id() {
    let mut line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_gist","arguments":{"gist_id":""#.to_vec();
    line.extend_from_slice(b"\xff\xfe\"}}}");
    let Verdict::Refuse(answer) = check_line(&line) else {
        panic!()
    };
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["id"], 4);
    let Verdict::Refuse(answer) = check_line(b"\xff\xff") else {
        panic!()
    };
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(PARSE_ERROR))
    );
}

#[test]
fn the_id_of_a_cut_line() {
    let prefix =
        br#"{"jsonrpc":"2.0","method":"tools/call","id":12,"params":{"arguments":{"content":"xxxx"#;
    assert_eq!(leading_id(prefix), Some(NumberOrString::Number(12)));
    assert_eq!(leading_id(br#"{"jsonrpc":"2.0","params":{"a":"xx"#), None);
    assert_eq!(leading_id(b"garbage"), None);
}

#[test]
fn good_lines_pass_and_blank_lines_are_skipped() {
    assert!(matches!(
        check_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Verdict::Pass(_)
    ));
    assert!(matches!(
        check_line(br#"{"jsonrpc":"2.0","id":1,"method":"x/unknown"}"#),
        Verdict::Pass(_)
    ));
    assert!(matches!(check_line(b"  \r"), Verdict::Skip));
    assert!(matches!(
        check_line(br#"{"jsonrpc":"2.0","method":"$/lsp"}"#),
        Verdict::Skip | Verdict::Pass(_)
    ));
}
