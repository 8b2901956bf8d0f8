//! [`PageProof`]: what approving on the approval page takes, as the guard's texts say it.

/// What the person uses to approve on the approval page ([`ApprovalPages::proof`]), so that
/// the link's result and the URL elicitation's message say what the page will ask for.
///
/// [`ApprovalPages::proof`]: crate::ApprovalPages::proof
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PageProof {
    /// A passkey enrolled for the principal that asked.
    #[default]
    Passkey,
    /// A sign-in at the operator's identity provider as the caller.
    Login,
    /// Either.
    PasskeyOrLogin,
}

impl PageProof {
    /// In the third person, after "needs" or "with": `their passkey`.
    pub fn theirs(self) -> &'static str {
        match self {
            Self::Passkey => "their passkey",
            Self::Login => "a sign-in at their identity provider as themselves",
            Self::PasskeyOrLogin => {
                "their passkey or a sign-in at their identity provider as themselves"
            }
        }
    }

    /// To the person, after "with": `your passkey`.
    pub fn yours(self) -> &'static str {
        match self {
            Self::Passkey => "your passkey",
            Self::Login => "a sign-in at your identity provider",
            Self::PasskeyOrLogin => "your passkey or a sign-in at your identity provider",
        }
    }
}
