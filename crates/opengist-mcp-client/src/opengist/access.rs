//! What the configured token may do ([`TokenAccess`]: its account and a [`Grant`] per scope),
//! and the client's memory of it. How it is learned without changing anything, and the
//! checks a guarded write makes before asking, are [`super::probes`].
//!
//! The learned [`TokenAccess`] is kept by the client and forgotten whenever Opengist answers
//! any request with 401 or 403, so it is learned again on next use.

use std::sync::{Arc, Mutex};

use super::error::Scope;

/// Whether the token holds a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Opengist confirmed it.
    Present,
    /// Opengist refused a request that needs it.
    Missing,
    /// Opengist answers alike with and without it (only `gist:read` can be unknown).
    Unknown,
}

/// The token's own account, as `GET /api/user` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Numeric user id.
    pub id: u64,
    /// Username.
    pub username: String,
}

/// What the configured token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAccess {
    /// The token's account, when `user:read` lets Opengist say.
    pub identity: Option<Identity>,
    /// `gist:read`.
    pub gist_read: Grant,
    /// `gist:write`.
    pub gist_write: Grant,
    /// `user:read`.
    pub user_read: Grant,
    /// `user:write`.
    pub user_write: Grant,
}

impl TokenAccess {
    /// The grant of one scope ([`Scope::AnyToken`] is always present: the token works).
    pub fn grant(&self, scope: Scope) -> Grant {
        match scope {
            Scope::GistRead => self.gist_read,
            Scope::GistWrite => self.gist_write,
            Scope::UserRead => self.user_read,
            Scope::UserWrite => self.user_write,
            Scope::AnyToken => Grant::Present,
        }
    }

    /// Whether `user_id` is the token's own account: `None` when the account is unknown
    /// (no `user:read`).
    pub fn is_own_account(&self, user_id: u64) -> Option<bool> {
        self.identity.as_ref().map(|me| me.id == user_id)
    }
}

/// The client's memory of [`TokenAccess`].
#[derive(Debug, Default)]
pub(super) struct AccessCache(Mutex<Option<Arc<TokenAccess>>>);

impl AccessCache {
    pub(super) fn get(&self) -> Option<Arc<TokenAccess>> {
        self.0.lock().ok().and_then(|held| held.clone())
    }

    pub(super) fn set(&self, access: Arc<TokenAccess>) {
        if let Ok(mut held) = self.0.lock() {
            *held = Some(access);
        }
    }

    /// Forgets what was learned (Opengist answered 401 or 403: the token or its scopes may
    /// have changed).
    pub(super) fn forget(&self) {
        if let Ok(mut held) = self.0.lock() {
            *held = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(identity: Option<u64>) -> TokenAccess {
        TokenAccess {
            identity: identity.map(|id| Identity {
                id,
                username: "admin".into(),
            }),
            gist_read: Grant::Unknown,
            gist_write: Grant::Missing,
            user_read: Grant::Present,
            user_write: Grant::Present,
        }
    }

    #[test]
    fn own_account_is_known_only_with_an_identity() {
        assert_eq!(access(Some(1)).is_own_account(1), Some(true));
        assert_eq!(access(Some(1)).is_own_account(2), Some(false));
        assert_eq!(access(None).is_own_account(1), None);
        assert_eq!(access(None).grant(Scope::AnyToken), Grant::Present);
        assert_eq!(access(None).grant(Scope::GistWrite), Grant::Missing);
    }

    #[test]
    fn the_cache_forgets() {
        let cache = AccessCache::default();
        assert!(cache.get().is_none());
        cache.set(Arc::new(access(Some(1))));
        assert!(cache.get().is_some());
        cache.forget();
        assert!(cache.get().is_none());
    }
}
