//! What tool calls answer with and keep: the result-size ceiling
//! (`OPENGIST_MCP_MAX_RESULT_BYTES`), the file cache (`OPENGIST_MCP_CACHE_BYTES`) and whether
//! gists are offered as MCP resources (`OPENGIST_MCP_RESOURCES`).

use super::error::ConfigError;
use super::var::{self, Source};

/// Default of `OPENGIST_MCP_MAX_RESULT_BYTES`.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 262_144;
/// Smallest accepted `OPENGIST_MCP_MAX_RESULT_BYTES`.
pub const MIN_MAX_RESULT_BYTES: usize = 4096;
/// Largest accepted `OPENGIST_MCP_MAX_RESULT_BYTES` (8 MiB).
pub const MAX_MAX_RESULT_BYTES: usize = 8 * 1024 * 1024;
/// Default of `OPENGIST_MCP_CACHE_BYTES` (64 MiB).
pub const DEFAULT_CACHE_BYTES: u64 = crate::cache::DEFAULT_CACHE_BYTES;
/// Largest accepted `OPENGIST_MCP_CACHE_BYTES` (4 GiB).
pub const MAX_CACHE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// The results part of [`super::Config`].
pub(super) struct ResultSettings {
    pub(super) max_result_bytes: usize,
    pub(super) cache_bytes: u64,
    pub(super) resources: bool,
}

impl ResultSettings {
    /// Reads the result ceiling, the cache size and the resources switch.
    pub(super) fn parse(source: &Source<'_>) -> Result<Self, ConfigError> {
        let max_result_bytes = source.number(
            var::OPENGIST_MCP_MAX_RESULT_BYTES,
            MIN_MAX_RESULT_BYTES as u64,
            MAX_MAX_RESULT_BYTES as u64,
            DEFAULT_MAX_RESULT_BYTES as u64,
        )? as usize;
        let cache_bytes = source.number(
            var::OPENGIST_MCP_CACHE_BYTES,
            0,
            MAX_CACHE_BYTES,
            DEFAULT_CACHE_BYTES,
        )?;
        let resources = parse_resources(source.exact(var::OPENGIST_MCP_RESOURCES))?;
        Ok(Self {
            max_result_bytes,
            cache_bytes,
            resources,
        })
    }
}

/// `OPENGIST_MCP_RESOURCES`: unset means on; otherwise exactly `true` or `false`.
fn parse_resources(value: Option<String>) -> Result<bool, ConfigError> {
    match value.as_deref() {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(ConfigError::Resources),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_switch_is_strict_and_on_by_default() {
        assert_eq!(parse_resources(None), Ok(true));
        assert_eq!(parse_resources(Some("true".into())), Ok(true));
        assert_eq!(parse_resources(Some("false".into())), Ok(false));
        for bad in ["1", "no", "False", "off", ""] {
            let error = parse_resources(Some(bad.into())).expect_err(bad);
            assert_eq!(error, ConfigError::Resources);
            let text = error.to_string();
            assert!(text.contains("OPENGIST_MCP_RESOURCES") && text.contains("`false`"));
        }
    }
}
