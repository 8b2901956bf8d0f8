//! `update_gist` as an Opengist operation: `PATCH /api/gists/:uuid` with metadata, file
//! writes and renames (never a deletion), asked about when the gist ends up not private and
//! the call widens its visibility or writes anything a reader sees.
//!
//! The request body ([`GistPatch`] of [`FileChange`]s), the guard target ([`UpdateGist`]:
//! its binding, its question and its condition), the check made before asking
//! ([`OpengistClient::check_can_update`]), and the client method that takes the guard's
//! clearance ([`OpengistClient::update_gist`]). The tool is `tools/update_gist/`.

use std::collections::{BTreeMap, BTreeSet};

use ask_first::fact::{Evidence, EvidenceItem};
use ask_first::{Binding, Clearance, Conditional, Fact, Question, Target};
use reqwest::Method;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::client::OpengistClient;
use super::error::{CallInfo, OpengistError, Scope};
use super::gist_evidence::FileNow;
use super::gist_facts::{GistFacts, gist_fact, visibility_fact};
use super::probes::Probe;
use super::requests::{
    GistId, MAX_FILES, RequestError, Visibility, check_metadata, filename_problem,
};
use super::responses::GistDetail;

/// The operation, as errors and the pre-ask check name it.
const OPERATION: &str = "update a gist";

ask_first::wording! {
    struct WordYes = "yes";
    struct WordNo = "no";
    struct UpdateHeadline = "This will change gist {}, which is {} now and will be {} afterwards.";
    struct UpdateFiles = "It writes {} file(s) ({} of new content) and renames {} file(s).";
    struct UpdateMetadata = "Title changes: {}. Description changes: {}.";
    struct UpdateWidens = "This widens who can read the gist.";
}

fn yes_no(value: bool) -> Fact {
    if value {
        Fact::word::<WordYes>()
    } else {
        Fact::word::<WordNo>()
    }
}

/// One change to a file of an existing gist. There is deliberately no "delete" here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Replace (or, when allowed, create) `filename` with `content`.
    Write {
        /// The file.
        filename: String,
        /// Its full new content, never empty.
        content: String,
    },
    /// Rename `filename` to `new_filename`, optionally replacing its content too.
    Rename {
        /// The current name.
        filename: String,
        /// The new name.
        new_filename: String,
        /// New content, if it changes as well; never empty.
        content: Option<String>,
    },
}

impl FileChange {
    /// The name of the file as it is now.
    pub fn filename(&self) -> &str {
        match self {
            Self::Write { filename, .. } | Self::Rename { filename, .. } => filename,
        }
    }

    /// The new content, if the change writes any.
    pub fn content(&self) -> Option<&str> {
        match self {
            Self::Write { content, .. } => Some(content),
            Self::Rename { content, .. } => content.as_deref(),
        }
    }
}

/// The body of `PATCH /api/gists/:uuid`, validated. It can change metadata and write or rename
/// files; it cannot delete a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GistPatch {
    title: Option<String>,
    description: Option<String>,
    visibility: Option<Visibility>,
    files: Vec<FileChange>,
}

impl GistPatch {
    /// Validates an update.
    pub fn new(
        title: Option<String>,
        description: Option<String>,
        visibility: Option<Visibility>,
        files: Vec<FileChange>,
    ) -> Result<Self, RequestError> {
        if title.is_none() && description.is_none() && visibility.is_none() && files.is_empty() {
            return Err(RequestError::EmptyUpdate);
        }
        if files.len() > MAX_FILES {
            return Err(RequestError::TooManyFiles(files.len()));
        }
        check_metadata(title.as_deref(), description.as_deref())?;
        let mut touched = BTreeSet::new();
        let mut resulting = BTreeSet::new();
        for (i, change) in files.iter().enumerate() {
            let index = i + 1;
            if let Some(why) = filename_problem(change.filename()) {
                return Err(RequestError::BadFilename { index, why });
            }
            if !touched.insert(change.filename()) {
                return Err(RequestError::DuplicateFilename(index));
            }
            if change.content() == Some("") {
                return Err(RequestError::EmptyContent(index));
            }
            let result_name = match change {
                FileChange::Write { filename, .. } => filename,
                FileChange::Rename {
                    filename,
                    new_filename,
                    ..
                } => {
                    if let Some(why) = filename_problem(new_filename) {
                        return Err(RequestError::BadFilename { index, why });
                    }
                    if new_filename == filename {
                        return Err(RequestError::RenameClash(index));
                    }
                    new_filename
                }
            };
            if !resulting.insert(result_name.as_str()) {
                return Err(RequestError::RenameClash(index));
            }
        }
        // A rename onto a name another operation touches would clobber it.
        for (i, change) in files.iter().enumerate() {
            if let FileChange::Rename { new_filename, .. } = change
                && touched.contains(new_filename.as_str())
            {
                return Err(RequestError::RenameClash(i + 1));
            }
        }
        Ok(Self {
            title,
            description,
            visibility,
            files,
        })
    }

    /// The new title, if it changes.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The new description, if it changes.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The new visibility, if it changes.
    pub fn visibility(&self) -> Option<Visibility> {
        self.visibility
    }

    /// The file changes, in request order.
    pub fn files(&self) -> &[FileChange] {
        &self.files
    }

    /// Whether the patch writes anything a reader sees: content, a rename, a title or a
    /// description.
    pub fn writes_visible_content(&self) -> bool {
        self.title.is_some() || self.description.is_some() || !self.files.is_empty()
    }
}

struct ChangeEntry<'a>(&'a FileChange);

impl Serialize for ChangeEntry<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            FileChange::Write { content, .. } => map.serialize_entry("content", content)?,
            FileChange::Rename {
                new_filename,
                content,
                ..
            } => {
                map.serialize_entry("filename", new_filename)?;
                if let Some(content) = content {
                    map.serialize_entry("content", content)?;
                }
            }
        }
        map.end()
    }
}

impl Serialize for GistPatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        if let Some(description) = &self.description {
            map.serialize_entry("description", description)?;
        }
        if let Some(visibility) = self.visibility {
            map.serialize_entry("visibility", visibility.as_str())?;
        }
        if !self.files.is_empty() {
            let files: BTreeMap<&str, ChangeEntry<'_>> = self
                .files
                .iter()
                .map(|c| (c.filename(), ChangeEntry(c)))
                .collect();
            map.serialize_entry("files", &files)?;
        }
        map.end()
    }
}

/// Updating a gist. Asked about when the gist ends up not private and the call widens its
/// visibility or writes anything a reader sees.
#[derive(Debug)]
pub struct UpdateGist {
    id: GistId,
    patch: GistPatch,
    facts: GistFacts,
}

impl UpdateGist {
    /// The target for applying `patch` to `id`, whose current facts were just read.
    pub fn new(id: GistId, patch: GistPatch, facts: GistFacts) -> Self {
        Self { id, patch, facts }
    }

    /// The gist.
    pub fn gist_id(&self) -> &GistId {
        &self.id
    }

    /// The validated PATCH body.
    pub fn patch(&self) -> &GistPatch {
        &self.patch
    }

    /// The gist's newest revision before the change.
    pub fn previous_revision(&self) -> Option<&str> {
        self.facts.revision.as_deref()
    }

    /// What the result says about the topics this change drops.
    pub fn topics_note(&self) -> Option<String> {
        self.facts.topics_note()
    }

    /// The visibility after the change.
    pub fn resulting_visibility(&self) -> Visibility {
        self.patch.visibility().unwrap_or(self.facts.visibility)
    }

    /// Whether the change widens who can read the gist (private → unlisted → public).
    pub fn widens_visibility(&self) -> bool {
        self.resulting_visibility() > self.facts.visibility
    }

    /// The guard's condition: the gist ends up not private, and the call widens its
    /// visibility or writes anything a reader sees. Narrowing is never asked about.
    pub fn exposes_content(&self) -> bool {
        self.resulting_visibility() != Visibility::Private
            && (self.widens_visibility() || self.patch.writes_visible_content())
    }
}

impl Target for UpdateGist {
    const OPERATION: &'static str = "update_gist";

    fn bind(&self, binding: &mut Binding) {
        let patch = &self.patch;
        binding
            .text("gist_id", self.id.as_str())
            .optional_text("title", patch.title())
            .optional_text("description", patch.description())
            .optional_text("visibility", patch.visibility().map(Visibility::as_str))
            .number("file_ops", patch.files().len() as u64);
        for change in patch.files() {
            match change {
                FileChange::Write { filename, content } => {
                    binding.text("write", filename).text("content", content);
                }
                FileChange::Rename {
                    filename,
                    new_filename,
                    content,
                } => {
                    binding
                        .text("rename", filename)
                        .text("to", new_filename)
                        .optional_text("content", content.as_deref());
                }
            }
        }
        self.facts.bind(binding);
    }

    fn question(&self) -> Question {
        let patch = &self.patch;
        let writes = patch
            .files()
            .iter()
            .filter(|c| c.content().is_some())
            .count() as u64;
        let renames = patch
            .files()
            .iter()
            .filter(|c| matches!(c, FileChange::Rename { .. }))
            .count() as u64;
        let bytes: u64 = patch
            .files()
            .iter()
            .filter_map(|c| c.content().map(|t| t.len() as u64))
            .sum();
        let question = Question::new::<UpdateHeadline>([
            gist_fact(&self.id),
            visibility_fact(self.facts.visibility),
            visibility_fact(self.resulting_visibility()),
        ]);
        let question = self
            .facts
            .owner_lines(&self.id, question)
            .line::<UpdateFiles>([
                Fact::count(writes),
                Fact::bytes(bytes),
                Fact::count(renames),
            ])
            .line::<UpdateMetadata>([
                yes_no(patch.title().is_some()),
                yes_no(patch.description().is_some()),
            ]);
        let question = self.facts.topics_line(question);
        if self.widens_visibility() {
            question.line::<UpdateWidens>([])
        } else {
            question
        }
    }

    /// The files readable after the change, each by name, size and digest, with the beginning
    /// of its content, and the gist's page: when the change widens who can read the gist,
    /// every file it will have; otherwise the files it writes or renames. None when the gist
    /// ends up private (nobody is asked).
    fn evidence(&self) -> Evidence {
        if self.resulting_visibility() == Visibility::Private {
            return Evidence::new();
        }
        let evidence = if self.widens_visibility() {
            Evidence::new().group(
                "Files that become readable",
                self.written().chain(self.kept()),
            )
        } else {
            Evidence::new().group("Files written, readable afterwards", self.written())
        };
        self.facts.with_page(&self.id, evidence)
    }
}

impl UpdateGist {
    /// The files the patch writes or renames, under their names afterwards, in request order.
    fn written(&self) -> impl Iterator<Item = EvidenceItem> + '_ {
        self.patch.files().iter().map(|change| {
            let shown = match change {
                FileChange::Write { filename, .. } => filename,
                FileChange::Rename { new_filename, .. } => new_filename,
            };
            match change.content() {
                Some(content) => FileNow::given(content).readable(shown),
                None => self.facts.readable_item(change.filename(), shown),
            }
        })
    }

    /// The gist's files the patch does not touch, as they are now.
    fn kept(&self) -> impl Iterator<Item = EvidenceItem> + '_ {
        self.facts
            .files
            .keys()
            .filter(|name| {
                !self
                    .patch
                    .files()
                    .iter()
                    .any(|c| c.filename() == name.as_str())
            })
            .map(|name| self.facts.readable_item(name, name))
    }
}

impl Conditional for UpdateGist {}

impl OpengistClient {
    /// Whether updating gist `id` can succeed now: the token works and holds `gist:write`,
    /// the gist is visible to it, owned by its account and not archived. Changes nothing.
    pub async fn check_can_update(&self, id: &GistId) -> Result<(), OpengistError> {
        self.check_probe(&Probe::change_gist(id, OPERATION)).await
    }

    /// Applies the update the guard cleared. Returns the gist as it is afterwards.
    ///
    /// Opengist's PATCH keeps the files it does not mention, makes a commit whenever `files`
    /// is sent, and clears the gist's topics on every update.
    pub async fn update_gist(
        &self,
        clearance: Clearance<UpdateGist>,
    ) -> Result<GistDetail, OpengistError> {
        let target = clearance.into_target();
        let id = target.gist_id();
        let url = self.endpoint(&["api", "gists", id.as_str()])?;
        let call = CallInfo::new(OPERATION, Scope::GistWrite, format!("gist {id}"));
        let response = self
            .send_write(Method::PATCH, url, Some(target.patch()), &call)
            .await?;
        self.written_detail(response, id, &call).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::gist_facts::fixtures::{ID, INJECTION, SITE, facts, id};
    use super::*;

    fn patch(
        title: Option<&str>,
        visibility: Option<Visibility>,
        files: Vec<FileChange>,
    ) -> GistPatch {
        GistPatch::new(title.map(str::to_owned), None, visibility, files).expect("valid patch")
    }

    fn write(name: &str, content: &str) -> FileChange {
        FileChange::Write {
            filename: name.to_owned(),
            content: content.to_owned(),
        }
    }

    #[test]
    fn patch_never_serializes_a_deleting_entry() {
        let patch = GistPatch::new(
            None,
            None,
            None,
            vec![
                FileChange::Write {
                    filename: "a".into(),
                    content: "x".into(),
                },
                FileChange::Rename {
                    filename: "b".into(),
                    new_filename: "c".into(),
                    content: None,
                },
            ],
        )
        .expect("valid");
        let body = serde_json::to_value(&patch).expect("serializes");
        assert_eq!(
            body,
            json!({"files": {"a": {"content": "x"}, "b": {"filename": "c"}}})
        );
        for entry in body["files"].as_object().expect("map").values() {
            assert!(entry.is_object() && !entry.as_object().expect("object").is_empty());
        }
    }

    #[test]
    fn patch_refuses_empty_updates_clashes_and_empty_content() {
        assert_eq!(
            GistPatch::new(None, None, None, vec![]),
            Err(RequestError::EmptyUpdate)
        );
        let w = |f: &str, c: &str| FileChange::Write {
            filename: f.into(),
            content: c.into(),
        };
        let r = |f: &str, n: &str| FileChange::Rename {
            filename: f.into(),
            new_filename: n.into(),
            content: None,
        };
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("a", "")]),
            Err(RequestError::EmptyContent(1))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("a", "x"), w("a", "y")]),
            Err(RequestError::DuplicateFilename(2))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![r("a", "a")]),
            Err(RequestError::RenameClash(1))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![r("a", "c"), r("b", "c")]),
            Err(RequestError::RenameClash(2))
        );
        assert_eq!(
            GistPatch::new(None, None, None, vec![w("b", "x"), r("a", "b")]),
            Err(RequestError::RenameClash(2))
        );
        assert!(GistPatch::new(None, None, Some(Visibility::Private), vec![]).is_ok());
    }

    #[test]
    fn questions_count_the_topics_an_update_drops_and_never_name_them() {
        let mut f = facts(Visibility::Public, &[("a", 1)]);
        f.topics = Some(vec![INJECTION.to_owned(), "beta".to_owned()]);
        let t = UpdateGist::new(id(), patch(Some("t"), None, vec![]), f.clone());
        let text = t.question().render();
        assert!(
            text.contains("Opengist also removes the gist's 2 topic(s)."),
            "{text}"
        );
        assert!(!text.contains("IGNORE") && !text.contains("beta"), "{text}");
        let note = t.topics_note().unwrap_or_default();
        assert!(
            note.contains("2 topic(s)") && note.contains("\"beta\""),
            "{note}"
        );
        let mut none = f.clone();
        none.topics = Some(vec![]);
        let t = UpdateGist::new(id(), patch(Some("t"), None, vec![]), none.clone());
        assert!(
            !t.question().render().contains("topic"),
            "no topics, no line"
        );
        assert_eq!(t.topics_note(), None);
        // Topics are bound: a change of topics makes an approval stale.
        let before = UpdateGist::new(id(), patch(Some("t"), None, vec![]), f).fingerprint();
        let after = UpdateGist::new(id(), patch(Some("t"), None, vec![]), none).fingerprint();
        assert_ne!(before, after);
    }

    #[test]
    fn update_condition_follows_the_rules() {
        let target =
            |now: Visibility, p: GistPatch| UpdateGist::new(id(), p, facts(now, &[("a", 1)]));
        // Private stays private: never asked.
        assert!(!target(Visibility::Private, patch(Some("t"), None, vec![])).exposes_content());
        // Widening: asked.
        assert!(
            target(
                Visibility::Private,
                patch(None, Some(Visibility::Unlisted), vec![])
            )
            .exposes_content()
        );
        assert!(
            target(
                Visibility::Unlisted,
                patch(None, Some(Visibility::Public), vec![])
            )
            .exposes_content()
        );
        // Writing content a reader sees on a non-private gist: asked.
        assert!(
            target(Visibility::Public, patch(None, None, vec![write("a", "x")])).exposes_content()
        );
        assert!(target(Visibility::Unlisted, patch(Some("t"), None, vec![])).exposes_content());
        // Narrowing, even with content in the same call: never asked.
        assert!(
            !target(
                Visibility::Public,
                patch(None, Some(Visibility::Private), vec![write("a", "x")])
            )
            .exposes_content()
        );
        // Narrowing public -> unlisted alone writes nothing visible: not asked.
        assert!(
            !target(
                Visibility::Public,
                patch(None, Some(Visibility::Unlisted), vec![])
            )
            .exposes_content()
        );
        // Same visibility restated, nothing else: not asked.
        assert!(
            !target(
                Visibility::Public,
                patch(None, Some(Visibility::Public), vec![])
            )
            .exposes_content()
        );
    }

    #[test]
    fn update_question_and_binding() {
        let t = UpdateGist::new(
            id(),
            patch(
                Some(INJECTION),
                Some(Visibility::Public),
                vec![write(INJECTION, "hello")],
            ),
            facts(Visibility::Private, &[("a", 1)]),
        );
        let text = t.question().render();
        assert_eq!(
            text,
            format!(
                "This will change gist {ID}, which is private now and will be public afterwards.\nIt belongs to the Opengist user alice.\nIts page on this Opengist: {SITE}/alice/{ID} (open it to see which gist this is).\nIt writes 1 file(s) (5 bytes of new content) and renames 0 file(s).\nTitle changes: yes. Description changes: no.\nOpengist also removes the gist's topics, if it has any.\nThis widens who can read the gist."
            )
        );
        let other = UpdateGist::new(
            id(),
            patch(
                Some(INJECTION),
                Some(Visibility::Public),
                vec![write(INJECTION, "hellO")],
            ),
            facts(Visibility::Private, &[("a", 1)]),
        );
        assert_ne!(t.fingerprint(), other.fingerprint());
    }

    #[test]
    fn the_evidence_is_what_becomes_readable() {
        let mut f = facts(Visibility::Private, &[("kept.txt", 6), ("old.txt", 3)]);
        f.contents
            .insert("kept.txt".to_owned(), FileNow::given("secret"));
        f.contents
            .insert("old.txt".to_owned(), FileNow::given("abc"));
        let rename = FileChange::Rename {
            filename: "old.txt".into(),
            new_filename: "new.txt".into(),
            content: None,
        };
        // Widening: every file the gist will have, with its content.
        let widen = UpdateGist::new(
            id(),
            patch(
                None,
                Some(Visibility::Public),
                vec![write("a.md", "hello"), rename.clone()],
            ),
            f.clone(),
        );
        let evidence = widen.evidence();
        let group = &evidence.groups()[0];
        assert_eq!(group.heading(), "Files that become readable");
        let shown: Vec<(&str, Option<&str>)> = group
            .items()
            .iter()
            .map(|i| (i.name(), i.excerpt().and_then(|e| e.text())))
            .collect();
        assert_eq!(
            shown,
            [
                ("«a.md»", Some("hello")),
                ("«new.txt»", Some("abc")),
                ("«kept.txt»", Some("secret"))
            ]
        );
        assert_eq!(evidence.link(), Some(format!("{SITE}/alice/{ID}").as_str()));
        // Already public: only what the call writes.
        let mut public = f.clone();
        public.visibility = Visibility::Public;
        let write_only = UpdateGist::new(
            id(),
            patch(None, None, vec![write("a.md", "hello")]),
            public,
        );
        let evidence = write_only.evidence();
        let group = &evidence.groups()[0];
        assert_eq!(group.heading(), "Files written, readable afterwards");
        assert_eq!(group.items().len(), 1);
        // Two contents of one length: the question alike, the evidence not.
        let other = UpdateGist::new(
            id(),
            patch(
                None,
                Some(Visibility::Public),
                vec![write("a.md", "HELLO"), rename],
            ),
            f.clone(),
        );
        assert_eq!(widen.question().render(), other.question().render());
        assert_ne!(widen.evidence().digest(), other.evidence().digest());
        // Ending private: nobody is asked, nothing shown.
        let narrow = UpdateGist::new(id(), patch(None, None, vec![write("a.md", "x")]), f);
        assert!(narrow.evidence().is_empty());
    }
}
