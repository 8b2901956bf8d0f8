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

/// The command the operator runs on the server's machine to enrol a passkey that approves the
/// questions of `principal` on the approval page of the server (binary) `server`:
/// `notes passkeys add --principal token:alice`. The principal is quoted for a POSIX shell when
/// it holds anything but letters, digits and `._:@/+=-`.
pub fn enrol_command(server: &str, principal: &str) -> String {
    let plain = !principal.is_empty()
        && principal
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:@/+=-".contains(c));
    let principal = if plain {
        principal.to_owned()
    } else {
        format!("'{}'", principal.replace('\'', "'\\''"))
    };
    format!("{server} passkeys add --principal {principal}")
}

#[cfg(test)]
mod tests {
    use super::enrol_command;

    #[test]
    fn the_enrol_command_quotes_a_principal_a_shell_would_split() {
        assert_eq!(
            enrol_command("notes", "token:alice"),
            "notes passkeys add --principal token:alice"
        );
        assert_eq!(
            enrol_command("notes", "oauth:https://id.example/#a b"),
            "notes passkeys add --principal 'oauth:https://id.example/#a b'"
        );
        assert_eq!(
            enrol_command("notes", "it's"),
            "notes passkeys add --principal 'it'\\''s'"
        );
        assert_eq!(
            enrol_command("notes", ""),
            "notes passkeys add --principal ''"
        );
    }
}
