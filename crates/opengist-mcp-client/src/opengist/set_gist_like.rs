//! `set_gist_like` as an Opengist operation. Opengist only toggles a like
//! (`PUT /api/gists/:uuid/like`), so [`OpengistClient::set_like`] reads the state first and
//! toggles only when it differs; the toggle itself is private to this file. Not guarded, never
//! retried. The tool is `tools/set_gist_like.rs`.

use reqwest::Method;

use super::client::OpengistClient;
use super::error::{CallInfo, OpengistError, Scope};
use super::requests::GistId;
use super::responses::{LikeChange, LikeState};

impl OpengistClient {
    /// Likes or unlikes a gist, idempotently: Opengist's endpoint toggles, so this reads the
    /// state first (and whether the gist is visible at all), toggles only when needed, and
    /// reads it back to confirm.
    pub async fn set_like(&self, id: &GistId, liked: bool) -> Result<LikeChange, OpengistError> {
        let now = self.liked(id).await?;
        match (now, liked) {
            (true, true) => return Ok(LikeChange::AlreadyLiked),
            (false, false) => return Ok(LikeChange::AlreadyNotLiked),
            _ => {}
        }
        self.toggle_like(id).await?;
        let after = self.is_liked(id).await? == LikeState::Liked;
        if after != liked {
            return Err(OpengistError::LikeNotConfirmed { wanted: liked });
        }
        Ok(if liked {
            LikeChange::Liked
        } else {
            LikeChange::Unliked
        })
    }

    /// `PUT /api/gists/:uuid/like`: TOGGLES. Private: only [`set_like`](Self::set_like),
    /// which reads the state first, may call it.
    async fn toggle_like(&self, id: &GistId) -> Result<(), OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "like"])?;
        let call = CallInfo::new(
            "like or unlike a gist",
            Scope::UserWrite,
            format!("gist {id}"),
        );
        let response = self.send_write::<()>(Method::PUT, url, None, &call).await?;
        self.check(response, &call).await.map(drop)
    }
}
