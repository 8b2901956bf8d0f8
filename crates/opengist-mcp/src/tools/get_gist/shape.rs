//! What `get_gist` answers ([`GistOut`]: metadata, files, commits, forks, clone URLs, notes)
//! and how a gist is shaped into it: content cut to the per-file and total budgets in
//! filename order, every cut named in `notes`, the whole fitted to a byte budget.

use super::*;

/// A gist's metadata in `get_gist`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct GistMeta {
    /// The 32-hex id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// Who can see it.
    pub visibility: Visibility,
    /// The owner's username.
    pub owner: String,
    /// Its web page.
    pub html_url: String,
    /// Topics, read from the owner's gist list (Opengist's single-gist answer never carries
    /// them). Empty, with a note saying so, when no list this token can read shows the gist.
    pub topics: Vec<String>,
    /// Likes.
    pub like_count: u64,
    /// Forks (all of them, including ones this token cannot see).
    pub fork_count: u64,
    /// Created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Last updated (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// When it expires, if it does (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Archived gists are read-only.
    pub archived: bool,
    /// The id of the gist this one forks, if it is a fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<String>,
}

/// One file in `get_gist`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct FileOut {
    /// Its exact name (pass it to `get_gist_file`).
    pub filename: String,
    /// Language as Opengist detected it.
    pub language: String,
    /// Size of the whole file in bytes.
    pub size: u64,
    /// The content shown (text), possibly cut: see `truncated` and `notes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// True when `content` is only the start of the file.
    pub truncated: bool,
    /// Why no content is shown, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
}

/// One fork in `get_gist`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ForkOut {
    /// The fork's id.
    pub id: String,
    /// Its owner's username.
    pub owner: String,
    /// Its web page.
    pub html_url: String,
}

/// Clone URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct CloneUrls {
    /// `git clone` over HTTP(S).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// `git clone` over SSH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
}

/// Result of `get_gist`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct GistOut {
    /// The gist's metadata.
    pub gist: GistMeta,
    /// The revision shown: the newest commit's sha, or the `sha` asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The files, in filename order.
    pub files: Vec<FileOut>,
    /// True when Opengist listed only the first 50 files.
    pub files_truncated: bool,
    /// The newest commits (with `include_commits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<Vec<CommitOut>>,
    /// Public forks, as Opengist embeds them (with `include_forks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks: Option<Vec<ForkOut>>,
    /// Clone URLs (with `include_clone_urls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_urls: Option<CloneUrls>,
    /// What was cut or left out, each with the call that gets the rest.
    pub notes: Vec<String>,
    /// Marks gist text as data.
    #[serde(flatten)]
    pub provenance: Provenance,
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// Shapes a gist. Content is budgeted in filename order: each file gets at most
/// `max_file_bytes`, all together at most `max_total_bytes`; cuts fall on character
/// boundaries, and each cut names the `get_gist_file` call that continues it.
pub(crate) fn shape_gist(detail: &GistDetail, options: &GistViewOptions) -> GistOut {
    let summary = &detail.summary;
    let id = summary.id.to_string();
    let revision = match &options.sha {
        Some(sha) => Some(sha.to_string()),
        None => detail.head_sha().map(str::to_owned),
    };
    let mut notes: Vec<String> = Vec::new();
    let continue_call = |filename: &str, offset: usize| {
        let mut args: Vec<(&str, Value)> =
            vec![("gist_id", json!(id)), ("filename", json!(filename))];
        if let Some(rev) = &revision {
            args.push(("sha", json!(rev)));
        }
        if offset > 0 {
            args.push(("offset", json!(offset)));
        }
        call_text("get_gist_file", &args)
    };

    let mut remaining = options.max_total_bytes;
    let mut over_budget: Vec<String> = Vec::new();
    let mut files = Vec::with_capacity(detail.files.len());
    for (name, file) in &detail.files {
        let filename = if file.filename.is_empty() {
            name.clone()
        } else {
            file.filename.clone()
        };
        let mut out = FileOut {
            filename: filename.clone(),
            language: file.language.clone(),
            size: file.size,
            content: None,
            truncated: false,
            omitted: None,
        };
        if !options.include_content {
            out.omitted = Some("include_content=false".into());
        } else if file.is_base64() {
            out.omitted = Some(format!("binary file ({} bytes): not shown", file.size));
        } else {
            // Go replaces a character Opengist cut in half with U+FFFD: drop it, so the
            // continuation offset is a real byte offset.
            let text = if file.truncated {
                file.content.trim_end_matches('\u{FFFD}')
            } else {
                file.content.as_str()
            };
            let whole = text.len() as u64 >= file.size && !file.truncated;
            // A cut shorter than this is not worth showing; never more than a file or the
            // whole budget may hold, so the first file always gets its share.
            let worth_showing = text
                .len()
                .min(MIN_PARTIAL_BYTES)
                .min(options.max_file_bytes)
                .min(options.max_total_bytes);
            if remaining < worth_showing {
                out.omitted = Some("over max_total_bytes: call get_gist_file".into());
                over_budget.push(filename.clone());
                if over_budget.len() <= NAMED_OMISSIONS {
                    notes.push(format!(
                        "content of {filename:?} ({} bytes) not shown: earlier files used {} of max_total_bytes={}, leaving {remaining}: {}",
                        file.size,
                        options.max_total_bytes - remaining,
                        options.max_total_bytes,
                        continue_call(&filename, 0)
                    ));
                }
            } else {
                let cap = options.max_file_bytes.min(remaining);
                let shown = cut_at_char(text, cap);
                remaining -= shown.len();
                let total = file.size.max(text.len() as u64);
                if shown.len() < text.len() {
                    let why = if cap < options.max_file_bytes {
                        format!("max_total_bytes={}", options.max_total_bytes)
                    } else {
                        format!("max_file_bytes={}", options.max_file_bytes)
                    };
                    notes.push(format!(
                        "content of {filename:?} cut at {} of {total} bytes ({why}): {}",
                        shown.len(),
                        continue_call(&filename, shown.len())
                    ));
                } else if !whole {
                    notes.push(format!(
                        "content of {filename:?} cut by Opengist at {} of {total} bytes: {}",
                        shown.len(),
                        continue_call(&filename, shown.len())
                    ));
                }
                out.truncated = shown.len() < text.len() || !whole;
                out.content = Some(shown.to_owned());
            }
        }
        files.push(out);
    }
    if over_budget.len() > NAMED_OMISSIONS {
        notes.push(format!(
            "{} more file(s) not shown for the same reason ({}): read each with {}",
            over_budget.len() - NAMED_OMISSIONS,
            over_budget
                .get(NAMED_OMISSIONS..)
                .unwrap_or_default()
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            continue_call("<filename>", 0)
        ));
    }
    if detail.truncated {
        notes.push(format!(
            "Opengist's API lists only the first 50 files of this gist; the others are listed on its web page ({}) and readable with get_gist_file by exact filename.",
            summary.html_url
        ));
    }

    let commits = options.include_commits.then(|| {
        if detail.commits.len() >= EMBEDDED_COMMITS {
            let call = if options.sha.is_some() {
                call_text("list_gist_commits", &[("gist_id", json!(id))])
            } else {
                call_text(
                    "list_gist_commits",
                    &[
                        ("gist_id", json!(id)),
                        ("page", json!(2)),
                        ("per_page", json!(EMBEDDED_COMMITS)),
                    ],
                )
            };
            notes.push(format!(
                "Opengist embeds only the {EMBEDDED_COMMITS} newest commits; older ones: {call}"
            ));
        }
        detail.commits.iter().map(CommitOut::from_commit).collect()
    });

    let forks = options.include_forks.then(|| {
        let shown = detail.forks.len() as u64;
        if shown < summary.fork_count {
            notes.push(format!(
                "fork_count is {} but {shown} fork(s) are shown (Opengist embeds at most {EMBEDDED_FORKS}, public ones only): {}",
                summary.fork_count,
                call_text("list_gist_forks", &[("gist_id", json!(id))])
            ));
        }
        detail
            .forks
            .iter()
            .map(|f| ForkOut {
                id: f.id.to_string(),
                owner: f.owner.name().to_owned(),
                html_url: f.html_url.clone(),
            })
            .collect()
    });

    let clone_urls = options.include_clone_urls.then(|| CloneUrls {
        http: non_empty(&summary.clone_url),
        ssh: non_empty(&summary.ssh_url),
    });

    GistOut {
        gist: GistMeta {
            id: id.clone(),
            title: summary.title.clone(),
            description: summary.description.clone(),
            visibility: summary.visibility,
            owner: summary.owner.name().to_owned(),
            html_url: summary.html_url.clone(),
            topics: summary.topics.clone(),
            like_count: summary.like_count,
            fork_count: summary.fork_count,
            created_at: rfc3339(summary.created_at),
            updated_at: rfc3339(summary.updated_at),
            expires_at: rfc3339(summary.expires_at),
            archived: summary.archived,
            fork_of: detail.fork_of.as_ref().map(|f| f.id.to_string()),
        },
        revision,
        files,
        files_truncated: detail.truncated,
        commits,
        forks,
        clone_urls,
        notes,
        provenance: Provenance::OPENGIST,
    }
}

/// [`shape_gist`], with the total content budget lowered until the JSON fits `budget` bytes.
pub(crate) fn shape_gist_within(
    detail: &GistDetail,
    options: &GistViewOptions,
    budget: usize,
) -> GistOut {
    fit_within(budget, options.max_total_bytes, |allowance| {
        let mut fitted = options.clone();
        fitted.max_total_bytes = allowance;
        fitted.max_file_bytes = options.max_file_bytes.min(allowance.max(1));
        let mut out = shape_gist(detail, &fitted);
        if allowance < options.max_total_bytes {
            out.notes.push(format!(
                "content was limited to {allowance} bytes in all so the result fits the result-size ceiling"
            ));
        }
        out
    })
}
