//! `fork_gist` as an Opengist operation: `POST /api/gists/:uuid/forks`. Not guarded (a fork
//! is the token owner's own new gist, as private or public as the original), never retried.
//! The tool is `tools/fork_gist.rs`.

use reqwest::{Method, StatusCode};

use super::client::OpengistClient;
use super::error::{CallInfo, OpengistError, Scope};
use super::requests::GistId;
use super::responses::{ForkOutcome, GistSummary};

impl OpengistClient {
    /// Forks someone else's gist, or finds the token owner's existing fork of it.
    pub async fn fork_gist(&self, id: &GistId) -> Result<ForkOutcome, OpengistError> {
        let url = self.endpoint(&["api", "gists", id.as_str(), "forks"])?;
        let call = CallInfo::new("fork a gist", Scope::GistWrite, format!("gist {id}"));
        let response = self
            .send_write::<()>(Method::POST, url, None, &call)
            .await?;
        let status = response.status();
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            let error = self.error_from(response, &call).await;
            return Err(match error {
                OpengistError::Validation {
                    message: Some(ref m),
                    ..
                } if m.to_lowercase().contains("own") => OpengistError::CannotForkOwn {
                    resource: call.resource.clone(),
                },
                other => other,
            });
        }
        let response = self.check(response, &call).await?;
        let fork: GistSummary = self.parse_json(response, &call).await?;
        Ok(if status == StatusCode::CREATED {
            ForkOutcome::Created(fork)
        } else {
            ForkOutcome::Existing(fork)
        })
    }
}
