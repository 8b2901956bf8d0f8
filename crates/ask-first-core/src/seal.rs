//! Sealed, single-use, short-lived proofs: the `requestState` of the 2026-07-28 era and the
//! two-call confirmation token.
//!
//! A seal is `v1.` followed by base64url of a 58-byte payload and a 16-byte tag:
//! `[kind][round][expiry: u64 BE][nonce: 16][binding prefix: 16][question prefix: 16]` then
//! HMAC-SHA256(key, domain || operation || principal || payload) truncated to 128 bits.
//! The operation and principal are bound by the tag without being carried; the prefixes of the
//! target's binding fingerprint and of the fingerprint of the question it showed are carried
//! so that "opens onto another call" and "the target changed since it was shown" can be told
//! apart from "was tampered with". Verification is constant-time (`hmac`'s
//! `verify_truncated_left`).

use std::fmt;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use crate::target::Fingerprint;

type HmacSha256 = Hmac<Sha256>;

const PREFIX: &str = "v1.";
const DOMAIN: &[u8] = b"ask-first/seal/v1";
const PAYLOAD_LEN: usize = 1 + 1 + 8 + 16 + 16 + 16;
const TAG_LEN: usize = 16;

/// The secret that seals and opens. Replicas that answer each other's questions share it.
#[derive(Clone)]
pub struct SealKey(Vec<u8>);

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the seal key is {0} bytes long; use at least 32 random bytes (e.g. the output of `openssl rand -hex 32`)"
)]
pub struct SealKeyTooShort(pub usize);

impl SealKey {
    /// A key from configuration: at least 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SealKeyTooShort> {
        if bytes.len() < 32 {
            return Err(SealKeyTooShort(bytes.len()));
        }
        Ok(Self(bytes.to_vec()))
    }

    /// A fresh random key for this process alone.
    pub fn random() -> Self {
        let mut bytes = vec![0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        Self(bytes)
    }
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealKey(<redacted>)")
    }
}

/// What a seal is for. A seal of one kind never opens as another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealKind {
    /// The `requestState` of an `input_required` result.
    RequestState = 1,
    /// The two-call confirmation token.
    ConfirmToken = 2,
    /// The `requestState` naming an approval record on the page (its nonce is the record's
    /// id).
    PageRecord = 3,
}

/// A single-use number carried by every seal.
pub type Nonce = [u8; 16];

/// What a seal is bound to besides its own payload.
#[derive(Debug, Clone, Copy)]
pub struct SealScope<'a> {
    /// The operation's name ([`Target::OPERATION`](crate::Target::OPERATION)).
    pub operation: &'a str,
    /// The fingerprint of the exact target's binding ([`Target::fingerprint`](crate::Target::fingerprint)).
    pub fingerprint: &'a Fingerprint,
    /// The fingerprint of the question the person was shown ([`Fingerprint::of_question`]):
    /// a seal opens only while the target still reads as it was shown.
    pub shown: &'a Fingerprint,
    /// Who asked, with which credential ([`Guard::holder_of`](crate::Guard::holder_of)): a seal
    /// made for one does not open for another.
    pub principal: &'a str,
}

/// A seal that opened: its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The nonce, to be spent exactly once.
    pub nonce: Nonce,
    /// Expiry, in seconds since the Unix epoch.
    pub expires_at: u64,
    /// The round of questioning it was issued in.
    pub round: u8,
}

/// Why a seal did not open. Every variant means "no valid answer".
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// Not a seal this code produced.
    #[error("it is not in the form this server issues")]
    Malformed,
    /// The tag did not verify: altered, made with another key, for another operation or
    /// another principal, or of another kind.
    #[error("it was not issued by this server for this operation and caller, or it was altered")]
    BadTag,
    /// Genuine, but for another target: other arguments, or a binding that holds server-side
    /// facts which changed.
    #[error(
        "it was issued for a different call: the arguments have changed since, or what they name has"
    )]
    OtherTarget,
    /// Genuine and for these arguments, but the target no longer reads as the question it was
    /// issued with showed it (a fact shown has changed).
    #[error("the target changed since it was issued: what it showed no longer holds")]
    TargetChanged,
    /// Genuine, but past its expiry.
    #[error("it has expired")]
    Expired,
}

fn tag(key: &SealKey, scope: &SealScope<'_>, payload: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so `new_from_slice` cannot fail here.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(&key.0)
        .unwrap_or_else(|_| unreachable!("HMAC-SHA256 takes keys of any length"));
    for part in [
        DOMAIN,
        scope.operation.as_bytes(),
        scope.principal.as_bytes(),
    ] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.update(payload);
    mac
}

/// Seals a fresh nonce for `scope`, valid until `expires_at` (Unix seconds).
pub fn seal(
    key: &SealKey,
    kind: SealKind,
    scope: &SealScope<'_>,
    round: u8,
    expires_at: u64,
) -> String {
    let mut nonce = [0u8; 16];
    rand::rng().fill_bytes(&mut nonce);
    seal_nonce(key, kind, scope, round, expires_at, nonce)
}

/// Seals the given `nonce` (an approval record's id) for `scope`, valid until `expires_at`.
pub fn seal_nonce(
    key: &SealKey,
    kind: SealKind,
    scope: &SealScope<'_>,
    round: u8,
    expires_at: u64,
    nonce: Nonce,
) -> String {
    let mut payload = Vec::with_capacity(PAYLOAD_LEN + TAG_LEN);
    payload.push(kind as u8);
    payload.push(round);
    payload.extend_from_slice(&expires_at.to_be_bytes());
    payload.extend_from_slice(&nonce);
    payload.extend_from_slice(&scope.fingerprint.as_bytes()[..16]);
    payload.extend_from_slice(&scope.shown.as_bytes()[..16]);
    let code = tag(key, scope, &payload).finalize().into_bytes();
    payload.extend_from_slice(&code[..TAG_LEN]);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(payload))
}

/// Opens `sealed` for `scope` at time `now` (Unix seconds).
///
/// The checks run in this order: form, tag (constant time), target, what it showed, expiry. Spending the
/// nonce is the caller's job ([`NonceStore`](crate::NonceStore)).
pub fn open(
    key: &SealKey,
    kind: SealKind,
    scope: &SealScope<'_>,
    sealed: &str,
    now: u64,
) -> Result<Opened, SealError> {
    let body = sealed.strip_prefix(PREFIX).ok_or(SealError::Malformed)?;
    if body.len() > 2 * (PAYLOAD_LEN + TAG_LEN) {
        return Err(SealError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| SealError::Malformed)?;
    if bytes.len() != PAYLOAD_LEN + TAG_LEN {
        return Err(SealError::Malformed);
    }
    let (payload, code) = bytes.split_at(PAYLOAD_LEN);
    tag(key, scope, payload)
        .verify_truncated_left(code)
        .map_err(|_| SealError::BadTag)?;
    if payload[0] != kind as u8 {
        return Err(SealError::BadTag);
    }
    let round = payload[1];
    let mut expiry = [0u8; 8];
    expiry.copy_from_slice(&payload[2..10]);
    let expires_at = u64::from_be_bytes(expiry);
    let mut nonce = [0u8; 16];
    nonce.copy_from_slice(&payload[10..26]);
    if payload[26..42] != scope.fingerprint.as_bytes()[..16] {
        return Err(SealError::OtherTarget);
    }
    if payload[42..58] != scope.shown.as_bytes()[..16] {
        return Err(SealError::TargetChanged);
    }
    if now >= expires_at {
        return Err(SealError::Expired);
    }
    Ok(Opened {
        nonce,
        expires_at,
        round,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::Question;
    use crate::target::{Binding, Target};

    crate::wording!(struct Q = "q";);

    struct T(&'static str);
    impl Target for T {
        const OPERATION: &'static str = "op";
        fn bind(&self, b: &mut Binding) {
            b.text("id", self.0);
        }
        fn question(&self) -> Question {
            Question::new::<Q>([])
        }
    }

    fn key() -> SealKey {
        SealKey::from_bytes(&[7u8; 32]).expect("32 bytes")
    }

    fn scope<'a>(fp: &'a Fingerprint, principal: &'a str) -> SealScope<'a> {
        SealScope {
            operation: "op",
            fingerprint: fp,
            shown: fp,
            principal,
        }
    }

    #[test]
    fn round_trip() {
        let fp = T("a").fingerprint();
        let s = seal(&key(), SealKind::RequestState, &scope(&fp, "p"), 2, 1000);
        let opened =
            open(&key(), SealKind::RequestState, &scope(&fp, "p"), &s, 999).expect("opens");
        assert_eq!(opened.round, 2);
        assert_eq!(opened.expires_at, 1000);
        assert!(s.len() < 110, "short enough to quote: {}", s.len());
    }

    #[test]
    fn nonces_differ_between_seals() {
        let fp = T("a").fingerprint();
        let a = seal(&key(), SealKind::RequestState, &scope(&fp, "p"), 0, 1000);
        let b = seal(&key(), SealKind::RequestState, &scope(&fp, "p"), 0, 1000);
        assert_ne!(a, b);
    }

    #[test]
    fn every_tampered_character_is_refused() {
        let fp = T("a").fingerprint();
        let s = seal(&key(), SealKind::ConfirmToken, &scope(&fp, "p"), 0, 1000);
        for i in 0..s.len() {
            let mut chars: Vec<char> = s.chars().collect();
            chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
            let tampered: String = chars.into_iter().collect();
            if tampered == s {
                continue;
            }
            assert!(
                open(
                    &key(),
                    SealKind::ConfirmToken,
                    &scope(&fp, "p"),
                    &tampered,
                    10
                )
                .is_err(),
                "position {i} accepted"
            );
        }
    }

    #[test]
    fn refusals_name_their_reason() {
        let fp = T("a").fingerprint();
        let other = T("b").fingerprint();
        let s = seal(&key(), SealKind::RequestState, &scope(&fp, "p"), 0, 1000);
        let open_with =
            |k: &SealKey, kind, sc: &SealScope<'_>, text: &str, now| open(k, kind, sc, text, now);
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &scope(&other, "p"), &s, 10),
            Err(SealError::OtherTarget)
        );
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &scope(&fp, "p"), &s, 1000),
            Err(SealError::Expired)
        );
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &scope(&fp, "q"), &s, 10),
            Err(SealError::BadTag)
        );
        assert_eq!(
            open_with(&key(), SealKind::ConfirmToken, &scope(&fp, "p"), &s, 10),
            Err(SealError::BadTag)
        );
        assert_eq!(
            open_with(
                &SealKey::random(),
                SealKind::RequestState,
                &scope(&fp, "p"),
                &s,
                10
            ),
            Err(SealError::BadTag)
        );
        let other_op = SealScope {
            operation: "other",
            fingerprint: &fp,
            shown: &fp,
            principal: "p",
        };
        let changed = SealScope {
            shown: &other,
            ..scope(&fp, "p")
        };
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &changed, &s, 10),
            Err(SealError::TargetChanged)
        );
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &other_op, &s, 10),
            Err(SealError::BadTag)
        );
        assert_eq!(
            open_with(
                &key(),
                SealKind::RequestState,
                &scope(&fp, "p"),
                &s[..s.len() - 4],
                10
            ),
            Err(SealError::Malformed)
        );
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &scope(&fp, "p"), "", 10),
            Err(SealError::Malformed)
        );
        assert_eq!(
            open_with(
                &key(),
                SealKind::RequestState,
                &scope(&fp, "p"),
                "v1.!!!",
                10
            ),
            Err(SealError::Malformed)
        );
        let long = format!("v1.{}", "A".repeat(10_000));
        assert_eq!(
            open_with(&key(), SealKind::RequestState, &scope(&fp, "p"), &long, 10),
            Err(SealError::Malformed)
        );
    }

    #[test]
    fn short_keys_are_refused_and_keys_are_redacted() {
        assert_eq!(
            SealKey::from_bytes(&[1u8; 31]).err(),
            Some(SealKeyTooShort(31))
        );
        assert_eq!(format!("{:?}", key()), "SealKey(<redacted>)");
    }
}
