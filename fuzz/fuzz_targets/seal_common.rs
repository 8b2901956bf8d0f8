//! Shared by the seal targets: a target type, a key, and the checks.

use ask_first_core::seal::{self, SealKind, SealScope};
use ask_first_core::{Binding, Fingerprint, Question, SealKey, Target};

ask_first_core::wording!(struct Asked = "fuzz";);

/// A target whose binding is one text field.
pub struct Thing(pub String);

impl Target for Thing {
    const OPERATION: &'static str = "fuzz_op";
    fn bind(&self, binding: &mut Binding) {
        binding.text("id", &self.0);
    }
    fn question(&self) -> Question {
        Question::new::<Asked>([])
    }
}

/// Opening a seal of `kind`: arbitrary text never opens; a genuine seal opens only unchanged,
/// for its own kind, target and principal, before its expiry; no input panics.
pub fn check(kind: SealKind, other: SealKind, data: &[u8]) {
    let key = match SealKey::from_bytes(&[7u8; 32]) {
        Ok(key) => key,
        Err(_) => return,
    };
    let fingerprint: Fingerprint = Thing("a".to_owned()).fingerprint();
    let shown = Fingerprint::of_question(&Thing("a".to_owned()).question());
    let scope = SealScope {
        operation: Thing::OPERATION,
        fingerprint: &fingerprint,
        shown: &shown,
        principal: "alice",
    };
    let now = 1_000_000u64;
    // 1. Arbitrary text: cannot carry a valid tag.
    let text = String::from_utf8_lossy(data);
    assert!(seal::open(&key, kind, &scope, &text, now).is_err(), "forged: {text:?}");

    // 2. A genuine seal, edited by the input: opens only when the edit changed nothing.
    let genuine = seal::seal(&key, kind, &scope, 1, now + 60);
    assert!(seal::open(&key, kind, &scope, &genuine, now).is_ok());
    let mut edited = genuine.clone().into_bytes();
    for pair in data.chunks(2) {
        let at = usize::from(pair[0]) % (edited.len() + 1);
        match pair.get(1) {
            Some(&byte) if at < edited.len() => edited[at] = byte,
            Some(&byte) => edited.push(byte),
            None => edited.truncate(at),
        }
    }
    let edited = String::from_utf8_lossy(&edited).into_owned();
    if seal::open(&key, kind, &scope, &edited, now).is_ok() {
        assert_eq!(edited, genuine, "an edited seal opened");
    }
    // 3. Never for another kind, target, principal, or after expiry.
    assert!(seal::open(&key, other, &scope, &genuine, now).is_err());
    let elsewhere = Thing(text.into_owned()).fingerprint();
    if elsewhere != fingerprint {
        let scope_b = SealScope { fingerprint: &elsewhere, ..scope };
        assert!(seal::open(&key, kind, &scope_b, &genuine, now).is_err());
    }
    let bob = SealScope { principal: "bob", ..scope };
    assert!(seal::open(&key, kind, &bob, &genuine, now).is_err());
    assert!(seal::open(&key, kind, &scope, &genuine, now + 60).is_err());
}
