//! The WebAuthn ceremonies the pages run, through `webauthn_rp`: registering a passkey (the
//! enrolment link) and verifying an assertion (the approval page). User verification is
//! required in both: a passkey proves a person unlocked the authenticator, not only that one
//! was present. The relying party is the host the pages are served on: `localhost` on a
//! loopback listener, the public URL's host where an HTTP server mounts them.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use webauthn_rp::bin::{Decode as _, Encode as _};
use webauthn_rp::request::auth::{
    AuthenticationVerificationOptions, DiscoverableCredentialRequestOptions,
};
use webauthn_rp::request::register::{
    CredProtect, Nickname, PublicKeyCredentialUserEntity, RegistrationVerificationOptions,
    UserHandle64, Username,
};
use webauthn_rp::request::{AsciiDomain, ExtensionInfo, RpId};
use webauthn_rp::response::CredentialId;
use webauthn_rp::response::register::{CompressedPubKey, DynamicState, StaticState};
use webauthn_rp::{
    AuthenticatedCredential, DiscoverableAuthentication64, DiscoverableAuthenticationServerState,
    PublicKeyCredentialCreationOptions, Registration, RegistrationServerState,
};

use super::aaguid::{self, AaguidList};
use super::passkeys::Enrolled;

fn rp_id(host: &str) -> Result<RpId, String> {
    AsciiDomain::try_from(host.to_owned())
        .map(RpId::Domain)
        .map_err(|e| format!("the relying party id is refused: {e}"))
}

/// A registration begun: what to keep, and the options for the browser (JSON).
pub(crate) struct RegistrationStarted {
    pub(crate) state: RegistrationServerState<64>,
    pub(crate) options: String,
    user: UserHandle64,
}

/// Begins registering a passkey named after `principal`.
pub(crate) fn start_registration(principal: &str, rp: &str) -> Result<RegistrationStarted, String> {
    let rp = rp_id(rp)?;
    let user = UserHandle64::new();
    let name = Username::try_from(principal)
        .or_else(|_| Username::try_from("ask-first"))
        .map_err(|e| format!("the user name is refused: {e}"))?;
    let entity = PublicKeyCredentialUserEntity {
        name,
        id: &user,
        display_name: Nickname::try_from(principal).ok(),
    };
    let mut options = PublicKeyCredentialCreationOptions::passkey(&rp, entity, Vec::new());
    // Asked for, not enforced: an authenticator without the credProtect extension (Chromium's
    // virtual one, older security keys) still enrols. User verification is required by the
    // options' own selection criteria and checked on every assertion.
    options.extensions.cred_protect =
        CredProtect::UserVerificationRequired(ExtensionInfo::AllowDontEnforceValue);
    let (state, client) = options
        .start_ceremony()
        .map_err(|e| format!("the registration could not begin: {e}"))?;
    let options = serde_json::to_string(&client).map_err(|e| e.to_string())?;
    Ok(RegistrationStarted {
        state,
        options,
        user,
    })
}

/// Finishes a registration begun with [`start_registration`] from the browser's JSON, coming
/// from `origin`: the passkey to keep, when its authenticator's AAGUID is in `aaguids` (if set).
pub(crate) fn finish_registration(
    started: RegistrationStarted,
    json: &[u8],
    origin: &str,
    rp: &str,
    principal: &str,
    name: &str,
    aaguids: Option<&AaguidList>,
) -> Result<Enrolled, String> {
    let rp = rp_id(rp)?;
    let registration = serde_json::from_slice::<Registration>(json)
        .map_err(|e| format!("the browser's answer is not a registration: {e}"))?;
    let options = RegistrationVerificationOptions::<&str, &str> {
        allowed_origins: &[origin],
        ..RegistrationVerificationOptions::default()
    };
    let credential = started
        .state
        .verify(&rp, &registration, &options)
        .map_err(|e| format!("the registration was refused: {e}"))?;
    if credential.user_id() != &started.user {
        return Err("the registration names another user".to_owned());
    }
    let reported = credential.metadata().aaguid.data();
    if let Some(list) = aaguids {
        list.check(reported)?;
    }
    let static_state = credential
        .static_state()
        .encode()
        .map_err(|e| format!("the passkey cannot be stored: {e}"))?;
    let dynamic_state = credential
        .dynamic_state()
        .encode()
        .map_err(|e| format!("the passkey cannot be stored: {e:?}"))?;
    Ok(Enrolled {
        principal: principal.to_owned(),
        name: name.to_owned(),
        added_at: super::now(),
        credential_id: URL_SAFE_NO_PAD.encode(credential.id().inner()),
        user_handle: URL_SAFE_NO_PAD
            .encode(credential.user_id().encode().unwrap_or_else(|e| match e {})),
        static_state: URL_SAFE_NO_PAD.encode(static_state),
        dynamic_state: URL_SAFE_NO_PAD.encode(dynamic_state),
        aaguid: aaguid::format(reported),
    })
}

/// An authentication begun: what to keep, and the options for the browser (JSON).
pub(crate) struct AuthenticationStarted {
    pub(crate) state: DiscoverableAuthenticationServerState,
    pub(crate) options: String,
}

/// Begins an authentication with any passkey of this relying party (the browser offers the
/// person's own); whose passkey it was is checked when it finishes.
pub(crate) fn start_authentication(rp: &str) -> Result<AuthenticationStarted, String> {
    let rp = rp_id(rp)?;
    let (state, client) = DiscoverableCredentialRequestOptions::passkey(&rp)
        .start_ceremony()
        .map_err(|e| format!("the passkey request could not begin: {e}"))?;
    let options = serde_json::to_string(&client).map_err(|e| e.to_string())?;
    Ok(AuthenticationStarted { state, options })
}

/// Why an assertion was refused.
#[derive(Debug)]
pub(crate) enum AssertionRefused {
    /// Not a passkey enrolled on this server.
    NotEnrolled,
    /// Enrolled, but for another principal.
    OtherPrincipal,
    /// The assertion did not verify (signature, challenge, origin, user verification, ...).
    Invalid(String),
}

/// Verifies the browser's assertion `json`, from `origin`, against the enrolled passkeys; it
/// must be `principal`'s. Returns the passkey's index in `enrolled` and its new dynamic state
/// (to store) when it changed.
pub(crate) fn finish_authentication(
    state: DiscoverableAuthenticationServerState,
    json: &[u8],
    origin: &str,
    rp: &str,
    enrolled: &[Enrolled],
    principal: &str,
) -> Result<(usize, Option<String>), AssertionRefused> {
    let rp = rp_id(rp).map_err(AssertionRefused::Invalid)?;
    let authentication = serde_json::from_slice::<DiscoverableAuthentication64>(json)
        .map_err(|e| AssertionRefused::Invalid(format!("not an assertion: {e}")))?;
    let raw_id = URL_SAFE_NO_PAD.encode(authentication.raw_id().inner());
    let (index, entry) = enrolled
        .iter()
        .enumerate()
        .find(|(_, e)| e.credential_id == raw_id)
        .ok_or(AssertionRefused::NotEnrolled)?;
    if entry.principal != principal {
        return Err(AssertionRefused::OtherPrincipal);
    }
    let stored = |text: &str| {
        URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned()))
    };
    let id_bytes = stored(&entry.credential_id)?;
    let user_bytes: [u8; 64] = stored(&entry.user_handle)?
        .try_into()
        .map_err(|_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned()))?;
    let static_bytes = stored(&entry.static_state)?;
    let dynamic_bytes: [u8; 7] = stored(&entry.dynamic_state)?
        .try_into()
        .map_err(|_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned()))?;
    let damaged = |_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned());
    let id = CredentialId::<&[u8]>::decode(id_bytes.as_slice()).map_err(damaged)?;
    let user = UserHandle64::decode(user_bytes).unwrap_or_else(|e| match e {});
    let static_state =
        StaticState::<CompressedPubKey<[u8; 32], [u8; 32], [u8; 48], Vec<u8>>>::decode(
            static_bytes.as_slice(),
        )
        .map_err(|_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned()))?;
    let dynamic_state = DynamicState::decode(dynamic_bytes)
        .map_err(|_| AssertionRefused::Invalid("the stored passkey is damaged".to_owned()))?;
    let mut credential = AuthenticatedCredential::new(id, &user, static_state, dynamic_state)
        .map_err(|e| AssertionRefused::Invalid(format!("the stored passkey is refused: {e}")))?;
    let options = AuthenticationVerificationOptions::<&str, &str> {
        allowed_origins: &[origin],
        ..AuthenticationVerificationOptions::default()
    };
    let changed = state
        .verify(&rp, &authentication, &mut credential, &options)
        .map_err(|e| AssertionRefused::Invalid(format!("the passkey's answer was refused: {e}")))?;
    let dynamic = changed
        .then(|| credential.dynamic_state().encode().ok())
        .flatten()
        .map(|bytes| URL_SAFE_NO_PAD.encode(bytes));
    Ok((index, dynamic))
}
