//! The existing gist a guarded write is about, read before asking: its id (from an id or a
//! link), its detail, and its topics (which Opengist's API drops with every change).

use ask_first::InputError;

use crate::opengist::GistDetail;
use crate::opengist::requests::GistId;
use crate::state::{OpengistServer, opengist_failure, rejection};

/// The gist `gist_id` names (a 32-hex id or a link on this instance), as Opengist holds it
/// now. Any failure is the tool's input error: no one is asked.
pub(crate) async fn resolve_gist(
    server: &OpengistServer,
    gist_id: &str,
) -> Result<(GistId, GistDetail), InputError> {
    let client = &server.client().map_err(rejection)?;
    let id = server.gist_id(gist_id).await.map_err(rejection)?;
    let detail = client
        .get_gist(&id)
        .await
        .map_err(|e| rejection(opengist_failure(e)))?;
    Ok((id, detail))
}

/// The gist `id` (already resolved: no link is looked up again) as Opengist holds it now: what
/// a guarded tool's `Resolve::recheck` reads after a yes, to compare with what was shown.
pub(crate) async fn reread_gist(
    server: &OpengistServer,
    id: &GistId,
) -> Result<GistDetail, InputError> {
    let client = &server.client().map_err(rejection)?;
    client
        .get_gist(id)
        .await
        .map_err(|e| rejection(opengist_failure(e)))
}

/// The gist's topics for the facts of a change that drops them: `None` when they cannot be
/// read (Opengist's single-gist answer never carries them; see `opengist/topics.rs`).
pub(crate) async fn topics_of(server: &OpengistServer, detail: &GistDetail) -> Option<Vec<String>> {
    let client = &server.client().ok()?;
    crate::cache::gist_topics(&server.cache(), client, &detail.summary)
        .await
        .ok()
        .flatten()
}

/// Opengist lists at most 50 files of a gist; beyond that, names cannot be checked, so file
/// operations are refused rather than guessed at.
pub(crate) fn refuse_partial_file_list(detail: &GistDetail) -> Result<(), InputError> {
    if detail.truncated {
        return Err(InputError::new(
            "Opengist listed only part of this gist's files (it shows at most 50), so the filenames cannot be checked and nothing was changed. Use Opengist's web interface for gists with more than 50 files.",
        ));
    }
    Ok(())
}
