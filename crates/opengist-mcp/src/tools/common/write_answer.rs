//! What the writing tools' results share: the gist a write answers with ([`WrittenGist`]),
//! how a guarded call was allowed to run ([`ClearedBy`]), and its filenames.

use ask_first::ApprovedBy;
use schemars::JsonSchema;
use serde::Serialize;

use crate::opengist::requests::Visibility;
use crate::opengist::{GistDetail, GistSummary};

// A result's `cleared_by`. The doc line below is its schema's description and the schemars
// name keeps `Clearing`, so what clients are told does not change.
/// How a guarded call was allowed to run.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Clearing")]
pub(crate) enum ClearedBy {
    /// A person approved it in a dialog.
    Dialog,
    /// The same call was made twice with a confirmation token; no person was asked.
    ConfirmToken,
    /// The person approved it on the approval page, with their passkey.
    ApprovalPage,
    /// The person approved it on their device, through their identity provider (CIBA).
    IdentityProvider,
    /// No question was needed (e.g. the gist is and stays private).
    NotNeeded,
}

impl ClearedBy {
    /// From the guard's clearance: `None` when no question was needed.
    pub(crate) fn of(by: Option<ApprovedBy>) -> Self {
        match by {
            Some(ApprovedBy::Dialog) => Self::Dialog,
            Some(ApprovedBy::Page) => Self::ApprovalPage,
            Some(ApprovedBy::Ciba) => Self::IdentityProvider,
            Some(ApprovedBy::Token) => Self::ConfirmToken,
            // A way of approving added later: never claim more than the token proves.
            Some(_) => Self::ConfirmToken,
            None => Self::NotNeeded,
        }
    }
}

// The gist a write answers with: its id, its web page and who can see it (not
// `crate::opengist::GistRef`, the id-or-link a caller names a gist by). The doc line below is
// its schema's description and the schemars name keeps `GistRef`, so what clients are told
// does not change.
/// A short summary of a gist in write results.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "GistRef")]
pub(crate) struct WrittenGist {
    /// The gist's id.
    pub id: String,
    /// Its web page.
    pub html_url: String,
    /// Who can see it.
    pub visibility: Visibility,
}

impl From<&GistSummary> for WrittenGist {
    fn from(summary: &GistSummary) -> Self {
        Self {
            id: summary.id.to_string(),
            html_url: summary.html_url.clone(),
            visibility: summary.visibility,
        }
    }
}

/// The gist's filenames, sorted.
pub(crate) fn filenames(detail: &GistDetail) -> Vec<String> {
    detail.files.keys().cloned().collect()
}
