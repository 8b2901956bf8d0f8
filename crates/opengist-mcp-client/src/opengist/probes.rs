//! Requests Opengist refuses before changing anything: how the client learns what the
//! configured token may do ([`TokenAccess`]), and the check a guarded write makes before it
//! asks anyone.
//!
//! Opengist checks a route's scope before it reads the request body (its `apiScope`
//! middleware), and validates the body before it changes anything. So a request with an
//! empty body to a write route answers 422 when the token holds the scope and 403 `token
//! lacks required scope/permission` when it does not, and never writes. The probes (v1.15.1,
//! `internal/web/server/router.go`, `internal/web/handlers/api/v1/`):
//!
//! | scope | probe | with the scope | without |
//! |---|---|---|---|
//! | `gist:write` | `POST /api/gists` `{}` | 422 (no files) | 403 |
//! | `user:write` | `PATCH /api/user` `{}` | 422 (no username or email) | 403 |
//! | `user:read` | `GET /api/user` | 200, the account | 403 |
//! | `gist:read` | implied by `gist:write`; else a private or unlisted gist in `GET /api/gists` | | |
//!
//! `gist:read` is soft: without it Opengist answers reads with the public subset, never a
//! 403, so a token with neither `gist:write` nor a visible non-public gist of its owner cannot
//! be told apart from one without `gist:read` ([`Grant::Unknown`]).
//!
//! Before a guarded write asks anyone, the same kind of probe checks the exact call:
//! `PATCH /api/gists/:uuid` `{}` passes Opengist's token, scope, visibility, ownership and
//! archive checks and stops at its "at least one field" 422 ([`OpengistClient::check_can_update`],
//! [`OpengistClient::check_can_delete_files`], [`OpengistClient::check_can_delete`], each in
//! its operation's file); `POST /api/gists` `{}` does the same for a new gist
//! ([`OpengistClient::check_can_create`]).
//!
//! The learned [`TokenAccess`] is kept by the client ([`super::access`]) and forgotten
//! whenever Opengist answers any request with 401 or 403, so it is learned again on next use.

use std::sync::Arc;

use reqwest::{Method, StatusCode};

use super::access::{Grant, Identity, TokenAccess};
use super::client::OpengistClient;
use super::error::{CallInfo, OpengistError, Scope, display_base};
use super::requests::{GistId, Visibility};
use super::{ListScope, MAX_PER_PAGE};

/// A request Opengist refuses before changing anything: each has a fixed, empty body.
#[derive(Debug, Clone)]
pub(super) enum Probe {
    /// `POST /api/gists` `{}`.
    CreateGist,
    /// `PATCH /api/user` `{}`.
    UpdateAccount,
    /// `PATCH /api/gists/:uuid` `{}`, on behalf of `operation` (e.g. `delete a gist`).
    ChangeGist {
        /// The gist.
        id: GistId,
        /// The operation the probe stands in for, for error messages.
        operation: &'static str,
    },
}

impl Probe {
    /// The probe for `operation` (e.g. `delete a gist`) on gist `id`.
    pub(super) fn change_gist(id: &GistId, operation: &'static str) -> Self {
        Self::ChangeGist {
            id: id.clone(),
            operation,
        }
    }

    /// Method, path segments and what the probe stands for.
    pub(super) fn request(&self) -> (Method, Vec<String>, CallInfo) {
        match self {
            Self::CreateGist => (
                Method::POST,
                vec!["api".into(), "gists".into()],
                CallInfo::new("create a gist", Scope::GistWrite, "a new gist"),
            ),
            Self::UpdateAccount => (
                Method::PATCH,
                vec!["api".into(), "user".into()],
                CallInfo::new(
                    "change your account or likes",
                    Scope::UserWrite,
                    "the token owner's account",
                ),
            ),
            Self::ChangeGist { id, operation } => (
                Method::PATCH,
                vec!["api".into(), "gists".into(), id.as_str().to_owned()],
                CallInfo::new(operation, Scope::GistWrite, format!("gist {id}")),
            ),
        }
    }
}

impl OpengistClient {
    /// What the token may do: learned once (three or four requests, none of which changes
    /// anything), then remembered until Opengist answers 401 or 403.
    pub async fn token_access(&self) -> Result<Arc<TokenAccess>, OpengistError> {
        if let Some(known) = self.access_cache().get() {
            return Ok(known);
        }
        let learned = Arc::new(self.learn_token_access().await?);
        self.access_cache().set(learned.clone());
        Ok(learned)
    }

    /// The remembered [`TokenAccess`], if any; never sends a request.
    pub fn known_token_access(&self) -> Option<Arc<TokenAccess>> {
        self.access_cache().get()
    }

    /// Learns what the token may do now, without remembering it. A token Opengist does not
    /// accept is [`OpengistError::BadToken`].
    pub async fn learn_token_access(&self) -> Result<TokenAccess, OpengistError> {
        let (identity, user_read) = match self.get_user_me().await {
            Ok(user) => (
                Some(Identity {
                    id: user.profile.id,
                    username: user.name().to_owned(),
                }),
                Grant::Present,
            ),
            Err(OpengistError::MissingScope { .. }) => (None, Grant::Missing),
            Err(error) => return Err(error),
        };
        let gist_write = self.probe_grant(Probe::CreateGist).await?;
        let user_write = self.probe_grant(Probe::UpdateAccount).await?;
        let gist_read = if gist_write == Grant::Present {
            Grant::Present
        } else {
            let page = self
                .list_gists(ListScope::Mine, 1, MAX_PER_PAGE, None)
                .await?;
            if page
                .items
                .iter()
                .any(|g| g.visibility != Visibility::Public)
            {
                Grant::Present
            } else {
                Grant::Unknown
            }
        };
        Ok(TokenAccess {
            identity,
            gist_read,
            gist_write,
            user_read,
            user_write,
        })
    }

    /// The check a guarded write makes before asking: `probe` answers as the real call
    /// would up to the body's validation, and changes nothing. Each operation's file names
    /// its own check (e.g. `check_can_update` in `update_gist.rs`).
    pub(super) async fn check_probe(&self, probe: &Probe) -> Result<(), OpengistError> {
        self.refuse_known_missing_write(probe)?;
        self.probe(probe).await
    }

    /// What is already known settles it: a token known to lack `gist:write` is refused
    /// without a request (a token's scopes never change in Opengist; a 401 or 403 forgets
    /// the knowledge anyway).
    fn refuse_known_missing_write(&self, probe: &Probe) -> Result<(), OpengistError> {
        match self.known_token_access() {
            Some(access) if access.gist_write == Grant::Missing => {
                let (_, _, call) = probe.request();
                Err(OpengistError::MissingScope {
                    scope: Scope::GistWrite,
                    operation: call.operation,
                    settings_url: super::error::settings_url(self.base_url()),
                    token_use: self.token_use(),
                })
            }
            _ => Ok(()),
        }
    }

    async fn probe_grant(&self, probe: Probe) -> Result<Grant, OpengistError> {
        match self.probe(&probe).await {
            Ok(()) => Ok(Grant::Present),
            Err(OpengistError::MissingScope { .. }) => Ok(Grant::Missing),
            Err(error) => Err(error),
        }
    }

    /// Sends one fixed probe, with the body `{}`. Opengist's validation answer (422) means
    /// every check before it passed: `Ok`. Anything else is the error the real call would
    /// get. Never retried.
    pub(super) async fn probe(&self, probe: &Probe) -> Result<(), OpengistError> {
        let (method, segments, call) = probe.request();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        let url = self.endpoint(&segments)?;
        let empty = serde_json::Map::new();
        let response = match self.send_write(method, url, Some(&empty), &call).await {
            Ok(response) => response,
            // The probe writes nothing: a lost answer leaves only the check unmade, never a
            // write that "may have been applied".
            Err(OpengistError::AnswerLost { operation, cause }) => {
                return Err(OpengistError::CheckAnswerLost {
                    operation,
                    cause,
                    base: display_base(self.base_url()),
                });
            }
            Err(error) => return Err(error),
        };
        let status = response.status();
        if status == StatusCode::UNPROCESSABLE_ENTITY || status.is_success() {
            return Ok(());
        }
        Err(self.error_from(response, &call).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_have_fixed_routes() {
        let (method, path, call) = Probe::CreateGist.request();
        assert_eq!((method, path.join("/")), (Method::POST, "api/gists".into()));
        assert_eq!(call.scope, Scope::GistWrite);
        let (method, path, _) = Probe::UpdateAccount.request();
        assert_eq!((method, path.join("/")), (Method::PATCH, "api/user".into()));
    }
}
