//! What several tools share.

pub(crate) mod existing_gist;
pub(crate) mod preflight;
pub(crate) mod write_answer;
pub(crate) mod write_outcome;
