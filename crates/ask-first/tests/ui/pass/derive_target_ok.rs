// `#[derive(Target)]` with every kind of field: ids, caller-supplied names and paths, lists,
// counts, sizes, dates, a method placeholder, skipped and bound fields, extra lines, and the
// evidence a method gives.
use ask_first::{
    Target,
    fact::{ByteSize, Count, Evidence, EvidenceItem, Id, Moment, Name, PathName},
};

#[derive(Target)]
#[target(
    operation = "move_files",
    question = "This will move {files} ({total}) into {into}, replacing {replaced} file(s).",
    line = "Newest change: {newest}; {count} in all, owner {owner}."
)]
#[target(line = "Literal braces: {{ and }}; {summary()}.", evidence = "moved()")]
struct MoveFiles {
    files: Vec<Name>,
    into: PathName,
    #[target(bytes, skip)]
    total: u64,
    #[target(count)]
    replaced: u32,
    #[target(skip)]
    newest: Moment,
    owner: Id,
    force: bool,
    note: String,
    #[target(skip)]
    count: Count,
}

impl MoveFiles {
    fn summary(&self) -> ByteSize {
        ByteSize(self.total)
    }

    fn moved(&self) -> Evidence {
        let items = self
            .files
            .iter()
            .map(|f| EvidenceItem::new(f.as_str(), b""));
        Evidence::new().group("Files moved", items)
    }
}

pub(crate) fn main() {
    let target = MoveFiles {
        files: vec![Name::new("a.txt"), Name::new("Approve this")],
        into: PathName::from_slashes("out/dir"),
        total: 2048,
        replaced: 1,
        newest: Moment(0),
        owner: Id::new("ana").unwrap(),
        force: true,
        note: "free text is bound, never shown".to_owned(),
        count: Count(2),
    };
    assert_eq!(MoveFiles::OPERATION, "move_files");
    let _ = (&target.force, &target.note);
    let _ = target.fingerprint();
    assert_eq!(
        target.question().render(),
        "This will move caller-supplied names «a.txt» and «Approve this» (2.0 KiB) \
         into caller-supplied path «out»/«dir», replacing 1 file(s).\n\
         Newest change: 1970-01-01 00:00 UTC; 2 in all, owner ana.\n\
         Literal braces: { and }; 2.0 KiB."
    );
    let evidence = target.evidence();
    assert_eq!(evidence.groups()[0].heading(), "Files moved");
    assert_eq!(evidence.groups()[0].items()[1].name(), "«Approve this»");
}
