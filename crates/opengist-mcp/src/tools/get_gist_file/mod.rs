//! `get_gist_file`: one file of a gist, paged by byte offset, windows aligned to character
//! boundaries at both ends; binary files are reported as omitted.
//!
//! A file `get_gist` already holds whole is cut from that answer; otherwise the window is
//! read raw, through the cache (a small file at a full revision sha is read once and kept).

use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::Parameters;
use crate::cache;
use crate::opengist::requests::GistId;
use crate::opengist::{RawFile, Sha};
use crate::result_budget::fit_within;
use crate::state::{OpengistServer, Provenance, ToolResult, failure, opengist_failure};
use crate::text::call_text;
use crate::text::unknown_file::unknown_file_message;

/// Default `max_bytes` of `get_gist_file`.
pub(crate) const DEFAULT_MAX_WINDOW_BYTES: usize = 64 * 1024;

/// Arguments of `get_gist_file`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetGistFileArgs {
    /// The gist: its 32-hex id or a link to it on this Opengist instance.
    pub gist_id: String,
    /// The file's exact name, as `get_gist` lists it.
    pub filename: String,
    /// A revision (commit sha, 4 to 40 hex digits). Default: the latest.
    #[serde(default)]
    pub sha: Option<String>,
    /// Byte offset to start at (from `next_offset`). Default 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most bytes to return. Default 65536; at most half the result-size ceiling minus 4 KiB.
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

/// A validated `get_gist_file` request (apart from the gist id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRequest {
    /// The exact filename.
    pub filename: String,
    /// The revision, if one was asked for.
    pub sha: Option<Sha>,
    /// Where to start.
    pub offset: u64,
    /// Most bytes.
    pub max_bytes: usize,
}

/// Largest `max_bytes` of `get_gist_file` for a ceiling of `ceiling` bytes.
pub(crate) fn max_window_bytes(ceiling: usize) -> usize {
    (ceiling / 2)
        .saturating_sub(4 * 1024)
        .max(ceiling / 8)
        .max(4)
}

impl GetGistFileArgs {
    /// Validates everything but the gist id; `max_window` is the ceiling's largest window.
    pub(crate) fn validate(&self, max_window: usize) -> Result<FileRequest, String> {
        if self.filename.is_empty() {
            return Err(
                "`filename` is empty: give a file's exact name as get_gist lists it.".into(),
            );
        }
        let sha = match self.sha.as_deref() {
            Some(text) => Some(Sha::parse(text).map_err(|e| format!("`sha`: {e}."))?),
            None => None,
        };
        let max_bytes = match self.max_bytes {
            None => DEFAULT_MAX_WINDOW_BYTES.min(max_window),
            Some(n) if (4..=max_window).contains(&n) => n,
            Some(_) => {
                return Err(format!(
                    "`max_bytes` must be 4 to {max_window} (half the result-size ceiling minus 4 KiB; a character can take 4 bytes); page through larger files with `offset` = the previous `next_offset`."
                ));
            }
        };
        Ok(FileRequest {
            filename: self.filename.clone(),
            sha,
            offset: self.offset.unwrap_or(0),
            max_bytes,
        })
    }
}

/// Result of `get_gist_file`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct FileWindow {
    /// The file's name.
    pub filename: String,
    /// The revision read.
    pub sha: String,
    /// Where `content` starts in the file, in bytes (moved forward to the next character
    /// boundary when the requested offset fell inside a character).
    pub offset: u64,
    /// Bytes of the file covered by `content`.
    pub bytes_returned: u64,
    /// The file's size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    /// True when the file goes on after this window.
    pub truncated: bool,
    /// Where the next window starts, when the file goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// The exact call for the next window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<String>,
    /// The text of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Why no content is shown (binary file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
    /// Anything else worth knowing about this window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Marks gist text as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// Where the window's bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WindowSource<'a> {
    /// The bytes from `offset` (possibly more than will be shown).
    pub bytes: &'a [u8],
    /// Where `bytes` start.
    pub offset: u64,
    /// The file's full size, when known.
    pub total_bytes: Option<u64>,
    /// Whether the file goes on after `bytes`.
    pub more_follows: bool,
}

impl<'a> WindowSource<'a> {
    /// A raw read from Opengist.
    pub(crate) fn from_raw(raw: &'a RawFile, known_size: Option<u64>) -> Self {
        Self {
            bytes: &raw.bytes,
            offset: raw.offset,
            total_bytes: raw.total_bytes.or(known_size),
            more_follows: raw.truncated,
        }
    }

    /// A window cut from content already in hand (the whole file).
    pub(crate) fn from_whole(content: &'a str, offset: u64, max_bytes: usize) -> Self {
        let bytes = content.as_bytes();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let end = start.saturating_add(max_bytes).min(bytes.len());
        Self {
            bytes: bytes.get(start..end).unwrap_or_default(),
            offset,
            total_bytes: Some(bytes.len() as u64),
            more_follows: end < bytes.len(),
        }
    }
}

/// Shapes a window: at most `limit` bytes of `source`, aligned to character boundaries at
/// both ends. Text that is not UTF-8 (or holds NUL bytes) is binary and not shown.
pub(crate) fn shape_window(
    gist_id: &GistId,
    filename: &str,
    sha: &str,
    source: &WindowSource<'_>,
    limit: usize,
    max_bytes_arg: Option<usize>,
) -> FileWindow {
    let mut notes: Vec<String> = Vec::new();
    let mut bytes = source.bytes;
    let mut offset = source.offset;
    let mut more = source.more_follows;
    if bytes.len() > limit {
        bytes = bytes.get(..limit).unwrap_or_default();
        more = true;
    }
    // A start inside a character: skip its continuation bytes.
    if offset > 0 {
        let skip = bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        if skip > 0 {
            bytes = bytes.get(skip..).unwrap_or_default();
            offset += skip as u64;
            notes.push(format!(
                "the requested offset fell inside a character: moved forward {skip} byte(s) to {offset}"
            ));
        }
    }
    let binary = || binary_window(filename, sha, source.offset, source.total_bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // A character cut at the window's end, with more of the file after it.
        Err(e) if e.error_len().is_none() && more => {
            let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
            std::str::from_utf8(valid).unwrap_or_default()
        }
        Err(_) => return binary(),
    };
    if text.contains('\0') {
        return binary();
    }
    let returned = text.len() as u64;
    let end = offset + returned;
    let goes_on = more || (text.len() < bytes.len());
    let next_offset = goes_on.then_some(end);
    if returned == 0 && !goes_on && source.total_bytes.is_some_and(|t| offset >= t) {
        notes.push(format!(
            "offset {offset} is at or past the end of the file ({} bytes)",
            source.total_bytes.unwrap_or_default()
        ));
    }
    let next_call = next_offset.map(|next| {
        let mut args: Vec<(&str, Value)> = vec![
            ("gist_id", json!(gist_id.as_str())),
            ("filename", json!(filename)),
            ("sha", json!(sha)),
            ("offset", json!(next)),
        ];
        if let Some(max) = max_bytes_arg {
            args.push(("max_bytes", json!(max)));
        }
        call_text("get_gist_file", &args)
    });
    FileWindow {
        filename: filename.to_owned(),
        sha: sha.to_owned(),
        offset,
        bytes_returned: returned,
        total_bytes: source.total_bytes,
        truncated: goes_on,
        next_offset,
        next_call,
        content: Some(text.to_owned()),
        omitted: None,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        provenance: Provenance::OPENGIST,
    }
}

/// The answer for a binary file: nothing shown, and why.
pub(crate) fn binary_window(
    filename: &str,
    sha: &str,
    offset: u64,
    size: Option<u64>,
) -> FileWindow {
    let omitted = match size {
        Some(n) => format!("binary file ({n} bytes): not shown"),
        None => "binary file: not shown".into(),
    };
    FileWindow {
        filename: filename.to_owned(),
        sha: sha.to_owned(),
        offset,
        bytes_returned: 0,
        total_bytes: size,
        truncated: false,
        next_offset: None,
        next_call: None,
        content: None,
        omitted: Some(omitted),
        note: None,
        provenance: Provenance::OPENGIST,
    }
}

#[tool_router(router = get_gist_file_router, vis = "pub(crate)")]
impl OpengistServer {
    /// Reads a window of one file.
    #[tool(
        name = "get_gist_file",
        description = "Read one file of a gist, paged: up to max_bytes (default 65536) from byte `offset`, aligned to character boundaries. `next_offset`/`next_call` continue it. Binary files are reported as omitted. `filename` must match exactly; `sha` defaults to the latest revision.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = rmcp::handler::server::tool::schema_for_output::<FileWindow>()
    )]
    async fn get_gist_file(
        &self,
        Parameters(args): Parameters<GetGistFileArgs>,
    ) -> ToolResult<FileWindow> {
        let max_window = max_window_bytes(self.max_result_bytes());
        let request = args.validate(max_window).map_err(failure)?;
        let client = &self.client()?;
        let view = &self.cache();
        let id = self.gist_id(&args.gist_id).await?;
        let detail = cache::read_gist_files(view, client, &id, request.sha.as_ref())
            .await
            .map_err(opengist_failure)?;
        let sha = match &request.sha {
            Some(sha) => sha.clone(),
            None => {
                let head = detail.head_sha().ok_or_else(|| {
                    failure(format!(
                        "Opengist listed no commits for gist {id}, so its latest revision is unknown: pass `sha` (a commit's `version` from list_gist_commits)."
                    ))
                })?;
                Sha::parse(head).map_err(|_| {
                    failure(format!(
                        "Opengist named the latest revision of gist {id} in an unexpected form: pass `sha` (a commit's `version` from list_gist_commits)."
                    ))
                })?
            }
        };
        let file = detail.files.get(&request.filename);
        if file.is_none() && !detail.truncated {
            return Err(failure(unknown_file_message(
                &request.filename,
                &id,
                &detail,
            )));
        }
        let budget = self.max_result_bytes() / 2;
        let shape = |source: &WindowSource<'_>, size: Option<u64>| {
            fit_within(budget, request.max_bytes, |limit| {
                let mut window = shape_window(
                    &id,
                    &request.filename,
                    sha.as_str(),
                    source,
                    limit,
                    args.max_bytes,
                );
                window.total_bytes = window.total_bytes.or(size);
                window
            })
        };
        if let Some(file) = file {
            if file.is_base64() {
                return Ok(self.output(binary_window(
                    &request.filename,
                    sha.as_str(),
                    request.offset,
                    Some(file.size),
                )));
            }
            // The whole file is already here, byte for byte: no second request.
            let exact = !file.truncated
                && file.content.len() as u64 == file.size
                && !file.content.contains('\u{FFFD}');
            if exact {
                let source =
                    WindowSource::from_whole(&file.content, request.offset, request.max_bytes);
                return Ok(self.output(shape(&source, Some(file.size))));
            }
        }
        let size = file.map(|f| f.size);
        let raw = cache::raw_window(
            view,
            client,
            &id,
            &sha,
            &request.filename,
            request.offset,
            request.max_bytes as u64,
            size,
        )
        .await
        .map_err(opengist_failure)?;
        let source = WindowSource::from_raw(&raw, size);
        Ok(self.output(shape(&source, size)))
    }
}

#[cfg(test)]
mod tests;
