//! `get_user`: the token's own account, or another user's public profile.
//!
//! The output is an allowlist: id, username, avatar, creation date, admin flag, and the e-mail
//! address only for the token's own account. Nothing else Opengist sends passes through, so a
//! field a future Opengist adds cannot leak by default.

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Parameters;
use super::common::arguments::check_username;
use crate::opengist::User;
use crate::state::{OpengistServer, ToolResult, failure, opengist_failure};
use crate::text::rfc3339;

/// Arguments of `get_user`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetUserArgs {
    /// A username. Not with `user_id`.
    #[serde(default)]
    pub username: Option<String>,
    /// A numeric user id. Not with `username`.
    #[serde(default)]
    pub user_id: Option<u64>,
}

/// Whose account to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UserQuery {
    /// The token owner's own (`GET /api/user`, needs `user:read`).
    Me,
    /// By username.
    Name(String),
    /// By numeric id.
    Id(u64),
}

impl GetUserArgs {
    /// Validates the arguments: at most one of `username` and `user_id`.
    pub(crate) fn validate(&self) -> Result<UserQuery, String> {
        match (&self.username, self.user_id) {
            (Some(_), Some(_)) => Err(
                "give `username` or `user_id`, not both (or neither, for the token's own account)."
                    .into(),
            ),
            (Some(name), None) => {
                check_username(Some(name)).map(|n| n.map_or(UserQuery::Me, UserQuery::Name))
            }
            (None, Some(0)) => {
                Err("`user_id` must be a positive number, as in a gist owner's `id`.".into())
            }
            (None, Some(id)) => Ok(UserQuery::Id(id)),
            (None, None) => Ok(UserQuery::Me),
        }
    }
}

/// Result of `get_user`: only these fields, whatever Opengist sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct UserOut {
    /// Numeric user id.
    pub id: u64,
    /// Username.
    pub username: String,
    /// Avatar image URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar_url: Option<String>,
    /// When the account was made (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Whether the account is an administrator, if Opengist says; Opengist 1.15 never does, so
    /// this is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_admin: Option<bool>,
    /// E-mail address: only for the token's own account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// True when this is the token owner's own account, however it was named (telling needs
    /// the user:read scope; without it only the no-argument call says true).
    pub own_account: bool,
}

/// Shapes a user through the allowlist. `own_account` is true only for `GET /api/user`: an
/// e-mail address is passed on for that account only.
pub(crate) fn shape_user(user: &User, own_account: bool) -> UserOut {
    UserOut {
        id: user.profile.id,
        username: user.name().to_owned(),
        avatar_url: (!user.profile.avatar_url.is_empty()).then(|| user.profile.avatar_url.clone()),
        created_at: rfc3339(user.profile.created_at),
        is_admin: user.is_admin,
        email: if own_account {
            user.email.clone()
        } else {
            None
        },
        own_account,
    }
}

#[tool_router(router = get_user_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Reads a user account.
    #[tool(
        name = "get_user",
        description = "Read a user account: give `username` or `user_id`, or neither for the token's own account (which needs the user:read scope and includes the e-mail address). Returns only id, username, avatar_url, created_at, and email for your own account.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<UserOut>()
    )]
    async fn get_user(&self, Parameters(args): Parameters<GetUserArgs>) -> ToolResult<UserOut> {
        let query = args.validate().map_err(failure)?;
        let client = &self.client()?;
        let (user, own) = match &query {
            UserQuery::Me => (client.get_user_me().await, true),
            UserQuery::Name(name) => (client.get_user_by_name(name).await, false),
            UserQuery::Id(id) => (client.get_user_by_id(*id).await, false),
        };
        let user = user.map_err(opengist_failure)?;
        // By name or id, the account is the token's own when its id is the token's: known
        // once the token's access was learned (it needs user:read to name the account).
        let own = own
            || client
                .token_access()
                .await
                .ok()
                .and_then(|access| access.is_own_account(user.profile.id))
                .unwrap_or(false);
        Ok(self.output(shape_user(&user, own)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(extra: serde_json::Value) -> User {
        let mut v = json!({
            "id": 7, "login": "alice", "username": "alice",
            "avatar_url": "https://gist.example.com/avatar/7", "type": "User",
            "created_at": "2024-01-01T00:00:00Z"
        });
        if let (Some(obj), Some(more)) = (v.as_object_mut(), extra.as_object()) {
            obj.extend(more.clone());
        }
        serde_json::from_value(v).expect("user")
    }

    #[test]
    fn arguments() {
        let q = |username: Option<&str>, user_id: Option<u64>| {
            GetUserArgs {
                username: username.map(str::to_owned),
                user_id,
            }
            .validate()
        };
        assert_eq!(q(None, None), Ok(UserQuery::Me));
        assert_eq!(q(Some(" bob "), None), Ok(UserQuery::Name("bob".into())));
        assert_eq!(q(None, Some(3)), Ok(UserQuery::Id(3)));
        assert!(
            q(Some("bob"), Some(3))
                .expect_err("both")
                .contains("not both")
        );
        assert!(q(None, Some(0)).is_err());
        assert!(q(Some("a/b"), None).is_err());
        assert!(serde_json::from_value::<GetUserArgs>(json!({"name": "x"})).is_err());
    }

    #[test]
    fn only_allowlisted_fields_pass() {
        let me = user(json!({
            "email": "alice@example.com", "is_admin": true,
            "password": "hash", "md5_hash": "x", "ssh_keys": ["k"], "totp": "s"
        }));
        let out = shape_user(&me, true);
        let value = serde_json::to_value(&out).expect("json");
        let keys: Vec<&str> = value
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "avatar_url",
                "created_at",
                "email",
                "id",
                "is_admin",
                "own_account",
                "username"
            ]
        );
        assert_eq!(value["email"], json!("alice@example.com"));
        assert_eq!(value["created_at"], json!("2024-01-01T00:00:00Z"));
    }

    #[test]
    fn email_only_for_the_own_account() {
        let other = user(json!({"email": "bob@example.com"}));
        let out = shape_user(&other, false);
        assert_eq!(out.email, None);
        assert!(!out.own_account);
        let bare = user(json!({"avatar_url": "", "created_at": null}));
        let out = shape_user(&bare, false);
        assert_eq!(
            (out.avatar_url, out.created_at, out.is_admin),
            (None, None, None)
        );
    }

    #[tokio::test]
    async fn both_selectors_are_an_input_error_before_the_setup_check() {
        let server = OpengistServer::unconfigured();
        let err = server
            .get_user(Parameters(GetUserArgs {
                username: Some("bob".into()),
                user_id: Some(2),
            }))
            .await
            .err()
            .expect("error");
        let text = serde_json::to_string(&err).expect("json");
        assert!(text.contains("not both"), "{text}");
        let err = server
            .get_user(Parameters(GetUserArgs::default()))
            .await
            .err()
            .expect("unconfigured");
        let text = serde_json::to_string(&err).expect("json");
        assert!(text.contains("OPENGIST_URL"), "{text}");
    }
}
