//! `delete_gist_files` as an Opengist operation: a PATCH whose `files` entries are `null`,
//! always asked about, bound to the exact set of filenames.
//!
//! The request body ([`FileDeletion`], which only the target in this file can make), the
//! guard target ([`DeleteGistFiles`]: the checks of the names, the binding and the question),
//! the check made before asking ([`OpengistClient::check_can_delete_files`]), and the client
//! method that takes the person's approval ([`OpengistClient::delete_gist_files`]). The tool
//! is `tools/delete_gist_files.rs`.

use std::collections::{BTreeMap, BTreeSet};

use ask_first::fact::Evidence;
use ask_first::{Approved, Binding, Fact, Question, Target};
use reqwest::Method;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::client::OpengistClient;
use super::error::{CallInfo, OpengistError, Scope};
use super::gist_facts::{GistFacts, gist_fact, near_match, visibility_fact};
use super::probes::Probe;
use super::requests::{GistId, MAX_FILES};
use super::responses::GistDetail;

/// The operation, as errors and the pre-ask check name it.
const OPERATION: &str = "delete files of a gist";

ask_first::wording! {
    struct DeleteFilesHeadline = "This will delete {} file(s) ({}) from gist {} ({}); {} file(s) will remain.";
    struct DeleteFilesWarning = "The file contents are not recoverable from here.";
}

/// The body of a PATCH that deletes files: `{"files": {"name": null, ...}}`. Only the guarded
/// delete-files target makes one (its constructor is private to this file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDeletion {
    names: BTreeSet<String>,
}

impl FileDeletion {
    fn new(names: BTreeSet<String>) -> Self {
        Self { names }
    }

    /// The files to delete, sorted.
    pub fn names(&self) -> &BTreeSet<String> {
        &self.names
    }
}

impl Serialize for FileDeletion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let files: BTreeMap<&str, Option<()>> =
            self.names.iter().map(|n| (n.as_str(), None)).collect();
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("files", &files)?;
        map.end()
    }
}

/// Why a delete-files request cannot become a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeleteFilesError {
    /// No filenames.
    #[error("`filenames` is empty: name at least one file of the gist")]
    Empty,
    /// Too many.
    #[error("{0} filenames in one call; the limit is 50")]
    TooMany(usize),
    /// Names not in the gist.
    #[error("{}", unknown_message(.unknown, .suggestions))]
    Unknown {
        /// The names not found.
        unknown: Vec<String>,
        /// Case-insensitive near matches, by unknown name.
        suggestions: Vec<(String, String)>,
    },
    /// Every file would go.
    #[error(
        "this would delete every file of the gist; a gist needs at least one file: use delete_gist to delete the whole gist"
    )]
    AllFiles,
}

fn unknown_message(unknown: &[String], suggestions: &[(String, String)]) -> String {
    let mut text = format!(
        "{} of the filenames {} not in the gist: {}",
        unknown.len(),
        if unknown.len() == 1 { "is" } else { "are" },
        unknown
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    text.push('.');
    for (name, near) in suggestions {
        text.push_str(&format!(" Did you mean {near:?} for {name:?}?"));
    }
    text.push_str(" Nothing was changed: call get_gist with include_content=false to see the exact filenames.");
    text
}

/// Deleting some files of a gist. Always asked about; bound to the exact, sorted and
/// deduplicated set of filenames.
#[derive(Debug)]
pub struct DeleteGistFiles {
    id: GistId,
    deletion: FileDeletion,
    facts: GistFacts,
}

impl DeleteGistFiles {
    /// Validates `filenames` against the gist's current files: every name must exist, and at
    /// least one file must remain.
    pub fn new(
        id: GistId,
        filenames: &[String],
        facts: GistFacts,
    ) -> Result<Self, DeleteFilesError> {
        if filenames.is_empty() {
            return Err(DeleteFilesError::Empty);
        }
        if filenames.len() > MAX_FILES {
            return Err(DeleteFilesError::TooMany(filenames.len()));
        }
        let names: BTreeSet<String> = filenames.iter().cloned().collect();
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !facts.files.contains_key(*n))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            let suggestions = unknown
                .iter()
                .filter_map(|n| near_match(n, facts.files.keys()).map(|m| (n.clone(), m.clone())))
                .collect();
            return Err(DeleteFilesError::Unknown {
                unknown,
                suggestions,
            });
        }
        if names.len() >= facts.files.len() {
            return Err(DeleteFilesError::AllFiles);
        }
        Ok(Self {
            id,
            deletion: FileDeletion::new(names),
            facts,
        })
    }

    /// The gist.
    pub fn gist_id(&self) -> &GistId {
        &self.id
    }

    /// The PATCH body that deletes exactly the approved files.
    pub fn deletion(&self) -> &FileDeletion {
        &self.deletion
    }

    /// The gist's newest revision before the deletion.
    pub fn previous_revision(&self) -> Option<&str> {
        self.facts.revision.as_deref()
    }

    /// What the result says about the topics this change drops.
    pub fn topics_note(&self) -> Option<String> {
        self.facts.topics_note()
    }

    fn deleted_bytes(&self) -> u64 {
        self.deletion
            .names()
            .iter()
            .filter_map(|n| self.facts.files.get(n))
            .sum()
    }
}

impl Target for DeleteGistFiles {
    const OPERATION: &'static str = "delete_gist_files";

    fn bind(&self, binding: &mut Binding) {
        binding
            .text("gist_id", self.id.as_str())
            .set("filenames", self.deletion.names());
        self.facts.bind(binding);
    }

    fn question(&self) -> Question {
        let count = self.deletion.names().len() as u64;
        let question = Question::new::<DeleteFilesHeadline>([
            Fact::count(count),
            Fact::bytes(self.deleted_bytes()),
            gist_fact(&self.id),
            visibility_fact(self.facts.visibility),
            Fact::count((self.facts.files.len() as u64).saturating_sub(count)),
        ]);
        let question = self
            .facts
            .owner_lines(&self.id, question)
            .line::<DeleteFilesWarning>([]);
        self.facts.topics_line(question)
    }

    /// The files deleted and the files that stay, each by name, size and the digest of its
    /// content as Opengist holds it now, and the gist's page: two deletes of files of one
    /// size never read alike.
    fn evidence(&self) -> Evidence {
        let deleted = self.deletion.names();
        let stays = self
            .facts
            .files
            .keys()
            .filter(|name| !deleted.contains(*name));
        let evidence = Evidence::new()
            .group(
                "Files deleted",
                deleted.iter().map(|n| self.facts.file_item(n)),
            )
            .group("Files that stay", stays.map(|n| self.facts.file_item(n)));
        self.facts.with_page(&self.id, evidence)
    }
}

impl OpengistClient {
    /// Whether deleting files of gist `id` can succeed now: the token works and holds
    /// `gist:write`, the gist is visible to it, owned by its account and not archived.
    /// Changes nothing.
    pub async fn check_can_delete_files(&self, id: &GistId) -> Result<(), OpengistError> {
        self.check_probe(&Probe::change_gist(id, OPERATION)).await
    }

    /// Deletes exactly the files the person approved. Returns the gist as it is afterwards.
    /// Like every update through Opengist's API, this clears the gist's topics.
    pub async fn delete_gist_files(
        &self,
        approved: Approved<DeleteGistFiles>,
    ) -> Result<GistDetail, OpengistError> {
        let target = approved.into_target();
        let id = target.gist_id();
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new(OPERATION, Scope::GistWrite, format!("gist {id}"));
        let response = self
            .send_write(Method::PATCH, url, Some(target.deletion()), &call)
            .await?;
        self.written_detail(response, id, &call).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::gist_facts::fixtures::{ID, SITE, facts, id};
    use super::super::requests::Visibility;
    use super::*;

    #[test]
    fn deletion_is_the_only_body_with_nulls() {
        let names: BTreeSet<String> = ["b".to_owned(), "a".to_owned()].into();
        assert_eq!(
            serde_json::to_value(FileDeletion::new(names)).expect("serializes"),
            json!({"files": {"a": null, "b": null}})
        );
    }

    #[test]
    fn delete_files_binds_the_exact_set() {
        let f = facts(Visibility::Private, &[("a", 1), ("b", 2), ("c", 3)]);
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let a = DeleteGistFiles::new(id(), &names(&["a"]), f.clone()).expect("valid");
        let aa = DeleteGistFiles::new(id(), &names(&["a", "a"]), f.clone()).expect("valid");
        let ab = DeleteGistFiles::new(id(), &names(&["a", "b"]), f.clone()).expect("valid");
        let ba = DeleteGistFiles::new(id(), &names(&["b", "a"]), f.clone()).expect("valid");
        assert_eq!(a.fingerprint(), aa.fingerprint());
        assert_ne!(a.fingerprint(), ab.fingerprint());
        assert_eq!(ab.fingerprint(), ba.fingerprint());
        assert_eq!(
            ab.question().render(),
            format!(
                "This will delete 2 file(s) (3 bytes) from gist {ID} (private); 1 file(s) will remain.\nIt belongs to the Opengist user alice.\nIts page on this Opengist: {SITE}/alice/{ID} (open it to see which gist this is).\nThe file contents are not recoverable from here.\nOpengist also removes the gist's topics, if it has any."
            )
        );
    }

    #[test]
    fn look_alike_deletes_differ_in_their_evidence() {
        let mut f = facts(
            Visibility::Private,
            &[("scratch.txt", 10), ("keep.txt", 10)],
        );
        f.contents.insert(
            "scratch.txt".to_owned(),
            super::super::gist_evidence::FileNow::given("temporary\n"),
        );
        f.contents.insert(
            "keep.txt".to_owned(),
            super::super::gist_evidence::FileNow::given("important\n"),
        );
        let one =
            |name: &str| DeleteGistFiles::new(id(), &[name.to_owned()], f.clone()).expect("valid");
        let (scratch, keep) = (one("scratch.txt"), one("keep.txt"));
        // The question reads alike: server facts only, no filename.
        assert_eq!(scratch.question().render(), keep.question().render());
        assert!(!scratch.question().render().contains("scratch"));
        // The evidence does not: which file goes, which stays, each with its digest.
        let summary = scratch.evidence().summary();
        assert!(
            summary.starts_with(
                "Files deleted:\n- «scratch.txt»: 10 bytes, SHA-256 da3309ab46d9facc7fcd\nFiles that stay:\n- «keep.txt»: 10 bytes, SHA-256 1fd84914aba013d0f579\n"
            ),
            "{summary}"
        );
        assert!(
            summary.contains(&format!("Link: {SITE}/alice/{ID}")),
            "{summary}"
        );
        assert_ne!(summary, keep.evidence().summary());
        // Deleted files show no content.
        assert!(
            scratch
                .evidence()
                .groups()
                .iter()
                .all(|g| g.items().iter().all(|i| i.excerpt().is_none()))
        );
    }

    #[test]
    fn delete_files_refuses_unknown_names_and_all_files() {
        let f = facts(Visibility::Private, &[("Readme.md", 1), ("b", 2)]);
        let err =
            DeleteGistFiles::new(id(), &["readme.md".to_owned()], f.clone()).expect_err("unknown");
        let text = err.to_string();
        assert!(
            text.contains("\"readme.md\"") && text.contains("Did you mean \"Readme.md\""),
            "{text}"
        );
        assert!(!text.contains("?."), "no `?.`: {text}");
        assert_eq!(
            DeleteGistFiles::new(id(), &["Readme.md".to_owned(), "b".to_owned()], f.clone()).err(),
            Some(DeleteFilesError::AllFiles)
        );
        assert_eq!(
            DeleteGistFiles::new(id(), &[], f).err(),
            Some(DeleteFilesError::Empty)
        );
    }
}
