//! Matching: the fields a query can match, the query, where it occurs in a field, whether a
//! gist matches, and one gist's files scanned for filenames and content (with snippets).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::opengist::{GistDetail, GistSummary};

/// Longest query, in characters.
pub(crate) const MAX_QUERY_CHARS: usize = 200;
/// Content snippets per matching gist.
pub(crate) const SNIPPETS_PER_GIST: usize = 3;
/// Longest snippet, in characters (including the `…` marks of a cut).
pub(crate) const SNIPPET_CHARS: usize = 200;

/// A field a query can match.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// The title.
    Title,
    /// The description.
    Description,
    /// Any topic.
    Topics,
    /// The owner's username.
    Owner,
    /// Any filename (needs each gist's files to be read).
    Filenames,
    /// File contents (needs each gist's files to be read; within a byte budget).
    Content,
}

impl Field {
    /// The default fields: all but content.
    pub const DEFAULT: [Field; 5] = [
        Field::Title,
        Field::Description,
        Field::Topics,
        Field::Owner,
        Field::Filenames,
    ];

    pub(super) fn needs_files(self) -> bool {
        matches!(self, Self::Filenames | Self::Content)
    }
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    /// The query as given, trimmed.
    pub text: String,
    /// Lowercase, whitespace runs as one space.
    pub phrase: String,
    /// The distinct lowercase words.
    pub terms: Vec<String>,
}

impl Query {
    /// Parses a query: 1 to 200 characters after trimming.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_QUERY_CHARS {
            return Err(format!(
                "`query` must be 1 to {MAX_QUERY_CHARS} characters (it has {chars}): give a word or phrase to look for."
            ));
        }
        let lower = text.to_lowercase();
        let mut terms: Vec<String> = Vec::new();
        for word in lower.split_whitespace() {
            if !terms.iter().any(|t| t == word) {
                terms.push(word.to_owned());
            }
        }
        Ok(Self {
            text: text.to_owned(),
            phrase: lower.split_whitespace().collect::<Vec<_>>().join(" "),
            terms,
        })
    }

    /// Where the query occurs in `text`.
    pub(crate) fn hits(&self, text: &str) -> Hits {
        let lower = text.to_lowercase();
        self.hits_lowered(&lower)
    }

    fn hits_lowered(&self, lower: &str) -> Hits {
        Hits {
            phrase: lower.contains(&self.phrase),
            terms: self
                .terms
                .iter()
                .map(|t| lower.contains(t.as_str()))
                .collect(),
        }
    }
}

/// Which parts of a query occur in a field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hits {
    /// The whole phrase occurs.
    pub phrase: bool,
    /// Each term occurs (in the query's term order).
    pub terms: Vec<bool>,
}

impl Hits {
    /// Whether anything occurs.
    pub(crate) fn any(&self) -> bool {
        self.phrase || self.terms.iter().any(|t| *t)
    }

    /// Adds `other`'s hits to these.
    pub(crate) fn merge(&mut self, other: &Hits) {
        self.phrase |= other.phrase;
        if self.terms.len() < other.terms.len() {
            self.terms.resize(other.terms.len(), false);
        }
        for (mine, theirs) in self.terms.iter_mut().zip(&other.terms) {
            *mine |= *theirs;
        }
    }
}

/// The fields a gist matched on, or `None` when it does not match: the phrase occurs in one
/// field, or every term occurs in some field.
pub(crate) fn matched_fields(query: &Query, hits: &[(Field, Hits)]) -> Option<Vec<Field>> {
    let phrase = hits.iter().any(|(_, h)| h.phrase);
    let all_terms = (0..query.terms.len()).all(|i| {
        hits.iter()
            .any(|(_, h)| h.terms.get(i).copied().unwrap_or(false))
    });
    if !(phrase || (all_terms && !query.terms.is_empty())) {
        return None;
    }
    let mut fields: Vec<Field> = hits
        .iter()
        .filter(|(_, h)| h.any())
        .map(|(f, _)| *f)
        .collect();
    fields.sort();
    fields.dedup();
    Some(fields)
}

/// The metadata hits of a summary, for the chosen metadata fields.
pub(crate) fn meta_hits(
    query: &Query,
    fields: &[Field],
    summary: &GistSummary,
) -> Vec<(Field, Hits)> {
    fields
        .iter()
        .filter_map(|field| {
            let hits = match field {
                Field::Title => query.hits(&summary.title),
                Field::Description => query.hits(&summary.description),
                // One topic per line: the phrase must occur within one topic.
                Field::Topics => query.hits(&summary.topics.join("\n")),
                Field::Owner => query.hits(summary.owner.name()),
                Field::Filenames | Field::Content => return None,
            };
            Some((*field, hits))
        })
        .collect()
}

/// A line of a file where the query occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Snippet {
    /// The file.
    pub filename: String,
    /// The line, 1-based.
    pub line_number: u64,
    /// Up to 200 characters of the line around the match (`…` marks a cut).
    pub text: String,
}

/// What reading one gist's files found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DetailScan {
    /// Hits in `filenames` and `content` (only the chosen ones).
    pub hits: Vec<(Field, Hits)>,
    /// Content lines with hits, at most [`SNIPPETS_PER_GIST`].
    pub snippets: Vec<Snippet>,
    /// Content bytes Opengist sent for this gist (all files, text and base64).
    pub content_bytes: u64,
    /// Whether Opengist cut the file list or a file's content, so part was not searched.
    pub partial: bool,
}

/// The byte offset in `line` of the character at byte `lowered` of `line.to_lowercase()`.
pub(super) fn original_offset(line: &str, lowered: usize) -> usize {
    let mut acc = 0usize;
    for (i, c) in line.char_indices() {
        if acc >= lowered {
            return i;
        }
        acc += c.to_lowercase().map(char::len_utf8).sum::<usize>();
    }
    line.len()
}

/// At most [`SNIPPET_CHARS`] characters of `line` around bytes `start..end`.
pub(crate) fn snippet_text(line: &str, start: usize, end: usize) -> String {
    let line_chars = line.chars().count();
    if line_chars <= SNIPPET_CHARS {
        return line.trim().to_owned();
    }
    let start = start.min(line.len());
    let end = end.clamp(start, line.len());
    let chars_before = line.get(..start).map_or(0, |s| s.chars().count());
    let match_chars = line.get(start..end).map_or(0, |s| s.chars().count());
    // Room for two `…` marks.
    let room = SNIPPET_CHARS - 2;
    let lead = (room.saturating_sub(match_chars) / 3).min(chars_before);
    let first = chars_before - lead;
    let taken: String = line.chars().skip(first).take(room).collect();
    let mut text = String::with_capacity(taken.len() + 6);
    if first > 0 {
        text.push('…');
    }
    text.push_str(&taken);
    if first + room < line_chars {
        text.push('…');
    }
    text
}

/// Reads one gist's files for the chosen file fields: filename hits, content hits in
/// filename order, and up to [`SNIPPETS_PER_GIST`] snippets. Binary files are not searched.
pub(crate) fn scan_detail(query: &Query, fields: &[Field], detail: &GistDetail) -> DetailScan {
    let mut scan = DetailScan {
        content_bytes: detail.files.values().map(|f| f.content.len() as u64).sum(),
        partial: detail.truncated,
        ..DetailScan::default()
    };
    if fields.contains(&Field::Filenames) {
        let names: Vec<&str> = detail
            .files
            .iter()
            .map(|(k, f)| {
                if f.filename.is_empty() {
                    k.as_str()
                } else {
                    f.filename.as_str()
                }
            })
            .collect();
        scan.hits
            .push((Field::Filenames, query.hits(&names.join("\n"))));
    }
    if fields.contains(&Field::Content) {
        let mut hits = Hits {
            phrase: false,
            terms: vec![false; query.terms.len()],
        };
        'files: for (key, file) in &detail.files {
            if file.is_base64() {
                continue;
            }
            scan.partial |= file.truncated;
            let filename = if file.filename.is_empty() {
                key
            } else {
                &file.filename
            };
            for (number, line) in file.content.lines().enumerate() {
                let lower = line.to_lowercase();
                let line_hits = query.hits_lowered(&lower);
                if !line_hits.any() {
                    continue;
                }
                hits.merge(&line_hits);
                if scan.snippets.len() < SNIPPETS_PER_GIST {
                    let found = if line_hits.phrase {
                        lower.find(&query.phrase).map(|p| (p, query.phrase.len()))
                    } else {
                        query
                            .terms
                            .iter()
                            .zip(&line_hits.terms)
                            .find(|(_, hit)| **hit)
                            .and_then(|(t, _)| lower.find(t.as_str()).map(|p| (p, t.len())))
                    };
                    let (p, len) = found.unwrap_or((0, 0));
                    let start = original_offset(line, p);
                    let end = original_offset(line, p + len);
                    scan.snippets.push(Snippet {
                        filename: filename.clone(),
                        line_number: number as u64 + 1,
                        text: snippet_text(line, start, end),
                    });
                }
                if hits.phrase && scan.snippets.len() >= SNIPPETS_PER_GIST {
                    break 'files;
                }
            }
        }
        scan.hits.push((Field::Content, hits));
    }
    scan
}
