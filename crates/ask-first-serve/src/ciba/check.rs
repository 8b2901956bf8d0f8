//! What a CIBA token must say before the call it approves may run, beyond what the OAuth
//! verifier checks (signature, issuer, audience, expiry): who approved, and what.

use ask_first_core::{AUTHORIZATION_DETAILS_TYPE, ApprovalRecord};
use serde_json::{Value, json};

/// The longest question text carried to the device, in characters.
const MAX_DESCRIPTION_CHARS: usize = 2000;

/// The `authorization_details` (RFC 9396) a request about `record` carries: one object of type
/// [`AUTHORIZATION_DETAILS_TYPE`] naming `server`, the tool, the operation, the target's and the
/// question's fingerprints, and the question the device may show.
pub fn authorization_details(server: &str, record: &ApprovalRecord) -> Value {
    let description: String = record
        .question
        .chars()
        .take(MAX_DESCRIPTION_CHARS)
        .collect();
    json!([{
        "type": AUTHORIZATION_DETAILS_TYPE,
        "server": server,
        "tool": record.tool,
        "operation": record.operation,
        "target": record.target,
        "question": record.shown,
        "description": description,
    }])
}

/// Checks a verified token's subject and `authorization_details` against the caller's subject
/// and the record asked about: the subject equal, and exactly one details object, of type
/// [`AUTHORIZATION_DETAILS_TYPE`], whose tool, operation, target and question fingerprints are
/// the record's. The error says which check failed (for the caller; it holds no token).
pub fn check_token(
    token_subject: &str,
    details: Option<&Value>,
    caller_subject: &str,
    record: &ApprovalRecord,
) -> Result<(), &'static str> {
    if token_subject != caller_subject {
        return Err("the token was issued for another person than the caller");
    }
    let Some(Value::Array(entries)) = details else {
        return Err("the token carries no authorization_details");
    };
    let [entry] = entries.as_slice() else {
        return Err("the token's authorization_details is not exactly one approval");
    };
    let field = |key: &str| entry.get(key).and_then(Value::as_str);
    if field("type") != Some(AUTHORIZATION_DETAILS_TYPE) {
        return Err("the token's authorization_details is of another type");
    }
    if field("tool") != Some(record.tool.as_str())
        || field("operation") != Some(record.operation.as_str())
    {
        return Err("the token approves another operation");
    }
    if field("target") != Some(record.target.as_str()) {
        return Err("the token approves another target (its fingerprint differs)");
    }
    if field("question") != Some(record.shown.as_str()) {
        return Err("the token approves another question (its fingerprint differs)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> ApprovalRecord {
        ApprovalRecord::from_json(&json!({
            "id": "AAAAAAAAAAAAAAAAAAAAAA",
            "principal": "oauth:https://id.example#alice",
            "holder": "oauth:https://id.example#alice",
            "tool": "delete_note",
            "operation": "delete_note",
            "target": "aa11",
            "shown": "bb22",
            "question": "Delete note n1?",
            "route": "ciba",
            "auth_req_id": "req",
            "binding_code": "K7QF2M",
            "expires_at": 9,
            "state": "pending",
        }))
        .expect("record")
    }

    #[test]
    fn the_details_sent_pass_the_check() {
        let record = record();
        let details = authorization_details("notes", &record);
        assert_eq!(details[0]["type"], AUTHORIZATION_DETAILS_TYPE);
        assert_eq!(details[0]["description"], "Delete note n1?");
        assert_eq!(
            check_token("alice", Some(&details), "alice", &record),
            Ok(())
        );
    }

    #[test]
    fn another_subject_is_refused() {
        let record = record();
        let details = authorization_details("notes", &record);
        assert!(check_token("mallory", Some(&details), "alice", &record).is_err());
        assert!(check_token("alice", Some(&details), "mallory", &record).is_err());
    }

    #[test]
    fn other_fingerprints_types_or_operations_are_refused() {
        let record = record();
        let good = authorization_details("notes", &record);
        for (key, value) in [
            ("target", "ff00"),
            ("question", "ff00"),
            ("tool", "delete_all"),
            ("operation", "publish_note"),
            ("type", "payment_initiation"),
        ] {
            let mut bad = good.clone();
            bad[0][key] = value.into();
            let refused = check_token("alice", Some(&bad), "alice", &record);
            assert!(refused.is_err(), "{key} changed and accepted");
        }
        let mut missing = good.clone();
        missing[0]
            .as_object_mut()
            .expect("object")
            .remove("question");
        assert!(check_token("alice", Some(&missing), "alice", &record).is_err());
    }

    #[test]
    fn no_details_several_or_not_a_list_are_refused() {
        let record = record();
        let good = authorization_details("notes", &record);
        assert!(check_token("alice", None, "alice", &record).is_err());
        assert!(check_token("alice", Some(&good[0]), "alice", &record).is_err());
        let twice = json!([good[0].clone(), good[0].clone()]);
        assert!(check_token("alice", Some(&twice), "alice", &record).is_err());
        assert!(check_token("alice", Some(&json!([])), "alice", &record).is_err());
    }
}
