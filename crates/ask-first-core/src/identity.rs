//! Who an authenticated HTTP request is from: [`Identity`], put in the request's extensions by
//! the serving layer's gate (`ask-first-serve`), read by the principal rule and by tool bodies.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Who an authenticated HTTP request is from. The HTTP gate of `ask-first-serve` puts it in the
/// request's extensions ([`http::request::Parts::extensions`]) once the request's credential
/// is checked, before anything routes it; rmcp hands those parts to the tool through
/// [`RequestContext::extensions`].
///
/// Its principal is what [`default_principal`](crate::default_principal) returns for the
/// request, so seals, confirmation tokens, legacy HTTP sessions and the audit log (hashed) are
/// all bound to it. The principal names the way the person was recognised, e.g.
/// `token:alice` (a per-person token), `oauth:<issuer>#<subject>` (an OAuth access token),
/// `bearer:<hash>` (the one shared secret: every holder is this one principal) or `local`
/// (no credential at all).
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
}

impl Identity {
    /// The identity whose principal is `principal` (e.g. `token:alice`,
    /// `oauth:<issuer>#<subject>`, `opengist:<url>#<user>`).
    pub fn new(principal: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
        }
    }

    /// The principal: the text seals, tokens and sessions are bound to.
    pub fn principal(&self) -> &str {
        &self.principal
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
