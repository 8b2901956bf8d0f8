//! Check before asking: what a guarded tool can know before it asks a person is checked
//! while its target resolves, so no one is asked to approve a call that cannot succeed and
//! no confirmation token is handed out for one.
//!
//! Each check is a request Opengist refuses before changing anything (see
//! [`crate::opengist::access`]): it passes exactly the checks the real call would meet (the
//! token, its `gist:write` scope, whether Opengist answers at all, and for an existing gist
//! its visibility, owner and archive state). Its failure is an input error: the tool answers
//! it at once, asking no one.

use mcp_guard::Rejection;

use crate::opengist::Change;
use crate::opengist::error::OpengistError;
use crate::opengist::requests::GistId;

use super::{OpengistServer, rejection};

fn refused(error: OpengistError, nothing: &str) -> Rejection {
    Rejection::new(format!(
        "{error}. {nothing}, and no one was asked: this call cannot succeed as it stands."
    ))
}

/// `create_gist` can succeed now.
pub(super) async fn can_create(server: &OpengistServer) -> Result<(), Rejection> {
    let client = server.client().map_err(rejection)?;
    client
        .check_can_create()
        .await
        .map_err(|e| refused(e, "Nothing was created"))
}

/// `change` of gist `id` can succeed now.
pub(super) async fn can_change(
    server: &OpengistServer,
    id: &GistId,
    change: Change,
) -> Result<(), Rejection> {
    let client = server.client().map_err(rejection)?;
    client
        .check_can_change(id, change)
        .await
        .map_err(|e| refused(e, "Nothing was changed"))
}
