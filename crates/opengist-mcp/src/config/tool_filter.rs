//! Which tools to register: `OPENGIST_READ_ONLY`, `OPENGIST_ALLOW_TOOLS` and
//! `OPENGIST_DENY_TOOLS` (and their flags), resolved against the [catalog](crate::catalog).

use std::fmt;

use crate::catalog;

use super::error::{ConfigError, FilterError, FilterList};
use super::var::{self, Source};

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    /// An exact tool name.
    Exact(String),
    /// `prefix*`.
    Prefix(String),
    /// `essential`: the catalog's essential tools ([`catalog::essential_names`]).
    Essential,
}

impl Selector {
    fn parse(entry: &str) -> Self {
        if entry == "essential" {
            Self::Essential
        } else if let Some(prefix) = entry.strip_suffix('*') {
            Self::Prefix(prefix.to_owned())
        } else {
            Self::Exact(entry.to_owned())
        }
    }

    fn matches(&self, tool: &catalog::ToolEntry) -> bool {
        match self {
            Self::Exact(name) => name == tool.name,
            Self::Prefix(prefix) => tool.name.starts_with(prefix.as_str()),
            Self::Essential => tool.essential,
        }
    }
}

/// A list entry with its position, kept for error messages.
#[derive(Clone, PartialEq, Eq)]
struct FilterEntry {
    /// 1-based position in its list, counting non-empty entries.
    position: usize,
    raw: String,
    selector: Selector,
}

impl FilterEntry {
    /// The entry as an error message may show it: itself when it is shaped like a tool name
    /// (`[a-z_*]{1,64}`), `<entry #N>` otherwise (it might be anything, even a secret).
    fn shown(&self) -> String {
        if is_name_shaped(&self.raw) {
            format!("`{}`", self.raw)
        } else {
            format!("<entry #{}>", self.position)
        }
    }
}

impl fmt::Debug for FilterEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// The entries of a list, comma-separated, as they were given.
fn joined(entries: &[FilterEntry]) -> String {
    entries
        .iter()
        .map(|entry| entry.raw.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn is_name_shaped(entry: &str) -> bool {
    (1..=64).contains(&entry.len())
        && entry
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'*')
}

/// Which tools to register: `OPENGIST_ALLOW_TOOLS` and `OPENGIST_DENY_TOOLS` (or their flags).
/// Parsing never fails; whether each entry names something is checked by
/// [`ToolFilter::resolve`], which knows the real tool names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Option<Vec<FilterEntry>>,
    deny: Vec<FilterEntry>,
}

impl ToolFilter {
    /// Parses the two comma-separated lists. `None` or an empty allow list means "all"; an
    /// empty deny list means "none". Blank entries are skipped; entries are trimmed.
    pub fn parse(allow: Option<&str>, deny: Option<&str>) -> Self {
        fn entries(list: &str) -> Vec<FilterEntry> {
            list.split(',')
                .map(str::trim)
                .filter(|entry| !entry.is_empty())
                .enumerate()
                .map(|(index, raw)| FilterEntry {
                    position: index + 1,
                    raw: raw.to_owned(),
                    selector: Selector::parse(raw),
                })
                .collect()
        }
        let allow = allow.map(entries).filter(|list| !list.is_empty());
        let deny = deny.map(entries).unwrap_or_default();
        Self { allow, deny }
    }

    /// The allow list as it could be set again (`None`: all tools).
    pub fn allow_list(&self) -> Option<String> {
        self.allow.as_deref().map(joined)
    }

    /// The deny list as it could be set again (`None`: no tool denied).
    pub fn deny_list(&self) -> Option<String> {
        (!self.deny.is_empty()).then(|| joined(&self.deny))
    }

    /// Whether both lists are empty (every tool is registered, read-only aside).
    pub fn is_unrestricted(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    /// The names to register, in the catalog's order. Read-only keeps only the reading tools;
    /// then the allow list (if any) keeps what it matches; then the deny list removes what it
    /// matches, so deny wins over allow. Every entry must match at least one tool of the
    /// catalog (read-only or not), else the error names it and lists the real names.
    pub fn resolve(&self, read_only: bool) -> Result<Vec<String>, FilterError> {
        let tools = catalog::names().collect::<Vec<_>>().join(", ");
        let lists = self
            .allow
            .iter()
            .flatten()
            .map(|entry| (FilterList::Allow, entry))
            .chain(self.deny.iter().map(|entry| (FilterList::Deny, entry)));
        for (list, entry) in lists {
            if !catalog::TOOLS
                .iter()
                .any(|tool| entry.selector.matches(tool))
            {
                return Err(FilterError::NoMatch {
                    list,
                    entry: entry.shown(),
                    tools,
                });
            }
        }
        let kept: Vec<String> = catalog::TOOLS
            .iter()
            .filter(|tool| !read_only || tool.reads())
            .filter(|tool| match &self.allow {
                Some(allow) => allow.iter().any(|entry| entry.selector.matches(tool)),
                None => true,
            })
            .filter(|tool| !self.deny.iter().any(|entry| entry.selector.matches(tool)))
            .map(|tool| tool.name.to_owned())
            .collect();
        if kept.is_empty() {
            return Err(FilterError::NothingLeft {
                read_only: if read_only {
                    " in read-only mode (only the reading tools exist)"
                } else {
                    ""
                },
                tools,
            });
        }
        Ok(kept)
    }
}

/// The tool-selection part of [`super::Config`].
pub(super) struct ToolSelection {
    pub(super) read_only: bool,
    pub(super) tools: ToolFilter,
}

impl ToolSelection {
    /// Reads read-only mode and the two lists. Only a bad `OPENGIST_READ_ONLY` fails here; the
    /// lists are checked against the tool names by [`ToolFilter::resolve`].
    pub(super) fn parse(source: &Source<'_>) -> Result<Self, ConfigError> {
        let read_only = parse_generous_bool(source.flag_or_env(var::OPENGIST_READ_ONLY))?;
        let tools = ToolFilter::parse(
            source.flag_or_env(var::OPENGIST_ALLOW_TOOLS).as_deref(),
            source.flag_or_env(var::OPENGIST_DENY_TOOLS).as_deref(),
        );
        Ok(Self { read_only, tools })
    }
}

/// `true`, `1`, `yes` (any case) or `false`, `0`, `no`, empty, unset.
fn parse_generous_bool(value: Option<String>) -> Result<bool, ConfigError> {
    let Some(value) = value else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" | "" => Ok(false),
        _ => Err(ConfigError::ReadOnly),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_shape() {
        assert!(catalog::names().all(is_name_shaped));
        assert!(is_name_shaped("get_*"));
        assert!(!is_name_shaped("Get_gist"));
        assert!(!is_name_shaped("og_0123"));
        assert!(!is_name_shaped(""));
        assert!(!is_name_shaped(&"a".repeat(65)));
    }
}
