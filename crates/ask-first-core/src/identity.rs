//! Who an authenticated HTTP request is from: [`Identity`], put in the request's extensions by
//! the serving layer's gate (`ask-first-serve`), read by the principal rule and by tool bodies.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Who an authenticated HTTP request is from. The HTTP gate of `ask-first-serve` puts it in the
/// request's extensions ([`http::request::Parts::extensions`]) once the request's credential
/// is checked, before anything routes it; rmcp hands those parts to the tool through
/// [`RequestContext::extensions`].
///
/// It names two things:
/// - the **principal**, the person: what [`default_principal`](crate::default_principal)
///   returns for the request, what per-person caps count and the audit log records (hashed).
///   It names the way the person was recognised, e.g. `token:alice` (a per-person token),
///   `oauth:<issuer>#<subject>` (an OAuth access token), `local` (the one shared
///   secret, whatever it is: every holder is this one principal, its credential a digest of the
///   secret; and stdio, or no credential at all);
/// - the **credential** within that person ([`Identity::with_credential`]), when one person
///   can hold several (e.g. several tokens of one account): a legacy HTTP session, a pending
///   dialog, a sealed `requestState` and a confirmation token belong to the principal *and*
///   the credential that opened them ([`Guard::holder_of`](crate::Guard::holder_of)), so
///   another credential of the same person cannot answer, use or replay them.
///
/// An identity is *proven* (the gate checked a credential) unless made by
/// [`Identity::unproven`] (the no-authentication mode): a server's own principal rule can only
/// narrow a proven identity, never replace it ([`GuardBuilder::principal`](crate::GuardBuilder::principal)).
///
/// A tool body reads who is calling with [`Identity::of`]:
///
/// ```
/// use ask_first_core::Identity;
/// use rmcp::RoleServer;
/// use rmcp::service::RequestContext;
///
/// /// The caller's principal, or `"local"` on stdio.
/// fn who(context: &RequestContext<RoleServer>) -> String {
///     Identity::of(context).map_or_else(|| "local".to_owned(), |id| id.principal().to_owned())
/// }
///
/// // What the gate does with a request it let through:
/// let mut parts = http::Request::builder().uri("/mcp").body(()).unwrap().into_parts().0;
/// parts.extensions.insert(Identity::new("token:alice"));
/// assert_eq!(Identity::from_parts(&parts).map(Identity::principal), Some("token:alice"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    principal: String,
    credential: Option<String>,
    proven: bool,
}

impl Identity {
    /// The proven identity whose principal is `principal` (e.g. `token:alice`,
    /// `oauth:<issuer>#<subject>`, `opengist:<url>#<user>`), with no credential of its own: the
    /// principal is the credential (one credential per person, such as an OAuth subject).
    pub fn new(principal: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
            credential: None,
            proven: true,
        }
    }

    /// An identity nothing proved (the no-authentication mode: whatever the request's headers
    /// say). A server's principal rule replaces it instead of narrowing it.
    pub fn unproven(principal: impl Into<String>) -> Self {
        Self {
            proven: false,
            ..Self::new(principal)
        }
    }

    /// The same identity, naming which of the person's credentials the request presented
    /// (e.g. a digest of the bearer token, never the token itself). Sessions, pending dialogs,
    /// seals and confirmation tokens are bound to it besides the principal.
    #[must_use]
    pub fn with_credential(mut self, credential: impl Into<String>) -> Self {
        self.credential = Some(credential.into());
        self
    }

    /// The principal: the person, as per-person caps count them.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// Which of the person's credentials the request presented (`None`: the principal is the
    /// only one).
    pub fn credential(&self) -> Option<&str> {
        self.credential.as_deref()
    }

    /// Whether the gate proved this identity (every authenticating mode), rather than took it
    /// from what the request says ([`Identity::unproven`]).
    pub fn is_proven(&self) -> bool {
        self.proven
    }

    /// The identity of the request a tool is handling: present over HTTP after the gate,
    /// `None` on stdio (or in a server that serves HTTP some other way).
    pub fn of(context: &RequestContext<RoleServer>) -> Option<&Identity> {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(Self::from_parts)
    }

    /// The identity the gate put in an HTTP request head, if any.
    pub fn from_parts(parts: &http::request::Parts) -> Option<&Identity> {
        parts.extensions.get::<Identity>()
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.principal)
    }
}
