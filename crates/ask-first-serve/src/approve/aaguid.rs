//! The authenticators enrolment accepts (`<PREFIX>_PASSKEY_AAGUIDS`): an allowlist of AAGUIDs,
//! the 16-byte model identifier an authenticator puts in the data it signs at registration.
//!
//! What it proves: the authenticator *reports* a listed model. `webauthn_rp` verifies no
//! attestation certificate chain (it takes `none` and self attestation only, and asks browsers
//! for `none`; a `direct` answer carrying a certificate chain is refused by it), so the AAGUID is
//! the authenticator's own claim, which browsers pass on under `none` attestation. The list keeps
//! out what honestly says it is another kind (a synced passkey in a password manager, a
//! phone); a device built to lie could claim a listed AAGUID. Enrolment itself stays out of a
//! model's reach either way (a one-time link on the operator's terminal).

use std::fmt::Write as _;

use super::ApprovalSettingError;

/// The AAGUIDs enrolment accepts, and the setting that lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AaguidList {
    aaguids: Vec<[u8; 16]>,
    setting: String,
}

impl AaguidList {
    /// Parses `text`, comma-separated UUIDs (`cb69481e-8ff7-4039-93ec-0a2729a154a8`; the
    /// hyphens may be left out), for the setting `setting`.
    pub fn parse(text: &str, setting: &str) -> Result<Self, ApprovalSettingError> {
        let mut aaguids = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let hex: String = entry.chars().filter(|c| *c != '-').collect();
            let bytes = (hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| {
                    let mut out = [0u8; 16];
                    for (i, byte) in out.iter_mut().enumerate() {
                        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
                    }
                    Some(out)
                })
                .flatten()
                .ok_or_else(|| ApprovalSettingError::Aaguids {
                    setting: setting.to_owned(),
                    entry: entry.to_owned(),
                })?;
            aaguids.push(bytes);
        }
        if aaguids.is_empty() {
            return Err(ApprovalSettingError::Aaguids {
                setting: setting.to_owned(),
                entry: text.to_owned(),
            });
        }
        Ok(Self {
            aaguids,
            setting: setting.to_owned(),
        })
    }

    /// The list `<prefix>_PASSKEY_AAGUIDS` sets; `None` when unset (any authenticator).
    pub(crate) fn from_env(prefix: &str) -> Result<Option<Self>, ApprovalSettingError> {
        let setting = format!("{prefix}_PASSKEY_AAGUIDS");
        match std::env::var(&setting) {
            Ok(text) if !text.trim().is_empty() => Self::parse(&text, &setting).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether `aaguid` is listed; the refusal to show when not.
    pub(crate) fn check(&self, aaguid: &[u8]) -> Result<(), String> {
        if self
            .aaguids
            .iter()
            .any(|listed| listed.as_slice() == aaguid)
        {
            return Ok(());
        }
        Err(format!(
            "this authenticator reports the AAGUID {}, which {} does not list (the authenticators this server enrols); use a listed one, or have the operator add it to {}",
            format(aaguid),
            self.setting,
            self.setting
        ))
    }
}

/// An AAGUID as a UUID (`01020304-0506-0708-0102-030405060708`).
pub(crate) fn format(aaguid: &[u8]) -> String {
    let mut out = String::with_capacity(36);
    for (i, byte) in aaguid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_parse_with_or_without_hyphens_and_anything_else_is_refused() {
        let list = AaguidList::parse(
            "01020304-0506-0708-0102-030405060708, CB69481E8FF7403993EC0A2729A154A8",
            "T_PASSKEY_AAGUIDS",
        )
        .expect("two UUIDs");
        let chromium = [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8];
        assert!(list.check(&chromium).is_ok());
        let refused = list.check(&[0; 16]).expect_err("not listed");
        assert!(
            refused.contains("00000000-0000-0000-0000-000000000000")
                && refused.contains("T_PASSKEY_AAGUIDS"),
            "{refused}"
        );
        assert_eq!(format(&chromium), "01020304-0506-0708-0102-030405060708");
        for bad in ["", " , ", "0102", "zz020304-0506-0708-0102-030405060708"] {
            let error = AaguidList::parse(bad, "T_PASSKEY_AAGUIDS").expect_err(bad);
            assert!(error.to_string().contains("T_PASSKEY_AAGUIDS"), "{error}");
        }
    }
}
