//! The shared folder: turning a caller's path into a place inside the root (or an input error),
//! what a person is shown about a file, the three changing operations' targets, and the
//! operations themselves, each taking the guard's proof by value.
//!
//! # Paths
//!
//! A caller's path is relative to the root, `/`-separated. Refused before anyone is asked,
//! each with an error that says why and what to send instead:
//! - an absolute path (`/etc/passwd`), a `..` component, a NUL byte;
//! - a path through a symbolic link, wherever the link is on the path and wherever it leads:
//!   this server never follows a link, so a link can neither lead out of the root nor make a
//!   change land on another file than the one named.
//!
//! `.` and empty components are dropped. The question names the path as given, which is
//! exactly the file that will change.
//!
//! # Every access through a handle that a link cannot redirect
//!
//! The root is opened once, as a directory handle ([`cap_std::fs::Dir`]), and every file and
//! directory is reached from it one name at a time: each directory on the path is opened with
//! `O_NOFOLLOW | O_DIRECTORY` and each file with `O_NOFOLLOW`, relative to the handle of its
//! directory. No call here takes a whole path the kernel would resolve again, so nothing
//! planted on the path (a link, a directory swapped for a link) can send an operation
//! elsewhere. Each measure, and the attack it stops:
//!
//! - **A temporary file with a random name, created exclusively** (`O_CREAT | O_EXCL`, which
//!   never follows a link and never opens an existing file). A name derived from the target
//!   and the process id (`.<name>.tmp-<pid>`; the pid is 1 in a container) can be known
//!   in advance, and whatever is put there is written through: a file moved there without
//!   asking (a move to a free name asks no one) is overwritten and then renamed away, so its
//!   content is gone; a symbolic link sends the approved content out of the root; a hard link
//!   to another file changes that file. With `O_EXCL` and 128 random bits, the temporary file
//!   is always a new, empty file of this process.
//! - **Content written to the temporary file, then renamed into place**: a reader never sees
//!   a half-written file, and a failed write leaves the target as it was. The temporary file
//!   is synced before the rename, so a crash leaves the old content or the new, never an
//!   empty file; it is removed when anything fails before the rename (a crash can leave it
//!   behind, as a `.files-write-…` file nothing else uses).
//! - **Where the target must not exist, a rename that cannot replace** (`renameat2` with
//!   `RENAME_NOREPLACE`): a new file (`write_file` to a free name) and a move to a free name
//!   run without asking, so they must never replace a file that appeared after the check.
//!   The rename fails instead; nothing is replaced unasked. (Where the system has no such
//!   rename, a hard link, which fails when the name is taken, then an unlink of the old name.)
//! - **An overwrite replaces the name, not the file**: it renames a new file over the name,
//!   so a target that is one of several hard links to one file gets the new content under
//!   the name the person was asked about, and the file's other names keep the old content.
//!   Nothing is ever written into an existing file, so no hard link can carry a write to a
//!   name nobody was asked about.
//! - **The approval is bound to the file itself**: its device and inode numbers besides its
//!   size, modification time and SHA-256 ([`FileState`]). A file put in its place after the
//!   question, even with the same bytes and time, is another file: the framework asks again
//!   (it resolves the target again after the yes), and the operation refuses it.
//! - **Files are opened with `O_NONBLOCK`** (on Unix): a FIFO swapped in for a file between the
//!   check of its kind and the opening cannot block a call forever.
//!
//! # Time of check, time of use
//!
//! The guard asks about a file as it was when the call was resolved. Right before acting, each
//! operation finds the file again from the root (the same refusals) and reads its state again
//! through the opened file, and refuses to act if it differs from what was approved, device
//! and inode included. What remains: between that last check and the rename or unlink
//! (microseconds), a process that can write in the folder can still put another file under
//! the checked name, and the rename or unlink then takes that one. Nothing leaves the root and
//! no content is written into a file other than the new one; the other file's name is what is
//! replaced or removed. Run the server on a folder only trusted writers change behind its back
//! if that matters.

use std::io::{self, ErrorKind, Read, Write};
use std::path::Path;
use std::time::SystemTime;

use ask_first::{
    Approved, BindValue, Binding, Clearance, Conditional, InputError, Target,
    fact::{ByteSize, Evidence, EvidenceItem, Moment, PathName},
};
use cap_fs_ext::{DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::{Dir, File, OpenOptions, Permissions};
use sha2::{Digest, Sha256};

/// The largest file `read_file` returns and an operation hashes: 8 MiB.
pub(crate) const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// How many random temporary names are tried before giving up (each is 128 random bits: a
/// second try only happens when something is there already).
const TEMPORARY_TRIES: usize = 4;

/// The shared folder.
pub(crate) struct Folder {
    /// The root, opened once: every access starts from this handle.
    root: Dir,
}

/// A file's place: the handle of its directory (opened from the root without following a
/// link) and its name in it.
pub(crate) struct Place {
    /// The path relative to the root: what a person is shown.
    pub shown: PathName,
    dir: Dir,
    name: String,
}

/// What a person is shown about an existing file, and what binds an approval to it: its size
/// and modification time (shown), the SHA-256 of its content and its device and inode numbers
/// (bound, not shown).
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct FileState {
    /// Its size.
    pub size: u64,
    /// Its modification time.
    pub modified: SystemTime,
    /// The SHA-256 of its content.
    pub sha256: [u8; 32],
    /// The device it is on.
    pub device: u64,
    /// Its inode number on that device.
    pub inode: u64,
}

impl FileState {
    /// Whether `other` is the same file (not only the same content).
    pub(crate) fn same_file(&self, other: &FileState) -> bool {
        (self.device, self.inode) == (other.device, other.inode)
    }
}

impl FileState {
    /// The file at `path` as the approval page shows it below the question: its path, size
    /// and content digest, framed as the caller's.
    pub(crate) fn evidence(&self, path: &PathName) -> EvidenceItem {
        EvidenceItem::hashed(path.components().join("/"), self.size, &self.sha256)
    }
}

impl BindValue for FileState {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        let nanos = self
            .modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        binding
            .number(&format!("{name}.size"), self.size)
            .bytes(&format!("{name}.modified"), &nanos.to_be_bytes())
            .bytes(&format!("{name}.sha256"), &self.sha256)
            .number(&format!("{name}.device"), self.device)
            .number(&format!("{name}.inode"), self.inode);
    }
}

impl Folder {
    /// The folder at `root`, which must be an existing directory.
    pub(crate) fn open(root: &Path) -> Result<Self, String> {
        let meta = std::fs::metadata(root).map_err(|error| {
            format!(
                "the root {} cannot be opened ({error}): give an existing directory with --root DIR or FILES_ROOT",
                root.display()
            )
        })?;
        if !meta.is_dir() {
            return Err(format!(
                "the root {} is not a directory: give one with --root DIR or FILES_ROOT",
                root.display()
            ));
        }
        let root = Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(|error| {
            format!(
                "the root {} cannot be opened ({error}): give a directory this user can read with --root DIR or FILES_ROOT",
                root.display()
            )
        })?;
        Ok(Self { root })
    }

    /// An existing directory (`""` or `.` is the root), opened.
    pub(crate) fn directory(&self, raw: &str) -> Result<(PathName, Dir), InputError> {
        let parts = components(raw)?;
        let dir = self.walk(raw, &parts)?;
        Ok((PathName::new(parts), dir))
    }

    /// An existing regular file and its state.
    pub(crate) fn file(&self, raw: &str) -> Result<(Place, FileState), InputError> {
        match self.file_or_new(raw)? {
            (place, Some(state)) => Ok((place, state)),
            (_, None) => Err(no_such(raw)),
        }
    }

    /// A file that may not exist yet: its directory must exist inside the root; when it exists
    /// it must be a regular file. Returns the place and, when a file is there, its state.
    pub(crate) fn file_or_new(&self, raw: &str) -> Result<(Place, Option<FileState>), InputError> {
        let place = self.place(raw)?;
        let state = match place.dir.symlink_metadata(&place.name) {
            Err(error) if error.kind() == ErrorKind::NotFound => None,
            Err(error) => return Err(InputError::new(format!("{raw:?} cannot be read: {error}"))),
            Ok(meta) if meta.is_symlink() => return Err(through_link(raw)),
            Ok(meta) if !meta.is_file() => {
                return Err(InputError::new(format!(
                    "{raw:?} is a directory (or not a regular file): give a file's path"
                )));
            }
            Ok(_) => {
                let mut file = open_file(&place.dir, &place.name, raw)?;
                Some(state_of(&mut file)?)
            }
        };
        Ok((place, state))
    }

    /// A file's path and text, for `read_file`.
    pub(crate) fn read(&self, raw: &str) -> Result<(PathName, String), InputError> {
        let (place, _) = self.file(raw)?;
        let mut file = open_file(&place.dir, &place.name, raw)?;
        let cannot =
            |error: io::Error| InputError::new(format!("the file cannot be read: {error}"));
        let size = file.metadata().map_err(cannot)?.len();
        if size > MAX_FILE_BYTES {
            return Err(InputError::new(format!(
                "the file is {size} bytes; read_file returns files up to {MAX_FILE_BYTES} bytes"
            )));
        }
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(InputError::new(format!(
                "the file grew past {MAX_FILE_BYTES} bytes while it was read: read_file returns files up to that size"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            InputError::new("the file is not UTF-8 text: read_file returns text files only")
        })?;
        Ok((place.shown, text))
    }

    /// The place of a file path (its directory opened, its name split off).
    fn place(&self, raw: &str) -> Result<Place, InputError> {
        let parts = components(raw)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(InputError::new(
                "the path names the shared folder itself: give a file's path, e.g. notes/todo.txt",
            ));
        };
        let dir = self.walk(raw, dirs)?;
        Ok(Place {
            name: name.clone(),
            dir,
            shown: PathName::new(parts),
        })
    }

    /// Opens the directories `dirs` from the root, one name at a time, none through a link.
    fn walk(&self, raw: &str, dirs: &[String]) -> Result<Dir, InputError> {
        let cannot =
            |error: io::Error| InputError::new(format!("{raw:?} cannot be opened: {error}"));
        let mut dir = self.root.try_clone().map_err(cannot)?;
        for part in dirs {
            let meta = dir.symlink_metadata(part).map_err(|error| {
                if error.kind() == ErrorKind::NotFound {
                    no_such(raw)
                } else {
                    cannot(error)
                }
            })?;
            if meta.is_symlink() {
                return Err(through_link(raw));
            }
            if !meta.is_dir() {
                return Err(InputError::new(format!(
                    "{part:?} in {raw:?} is not a directory: give a path whose directories exist (list_dir shows what is there)"
                )));
            }
            // A link swapped in since the look above fails here (O_NOFOLLOW), not followed.
            dir = dir.open_dir_nofollow(part).map_err(cannot)?;
        }
        Ok(dir)
    }

    /// The file a target names, found again from the root and read again, or why it cannot be
    /// acted on: anything but exactly the approved file (or still no file, for a new one).
    fn recheck(&self, shown: &PathName, approved: Option<&FileState>) -> Result<Place, String> {
        let raw = shown.components().join("/");
        let (place, state) = self
            .file_or_new(&raw)
            .map_err(|rejection| format!("{}: nothing was changed", rejection.message()))?;
        if state.as_ref() != approved {
            return Err(format!(
                "{raw:?} changed after the question was asked: nothing was changed; call again to be asked about it as it is now"
            ));
        }
        Ok(place)
    }

    /// Deletes exactly the approved file.
    pub(crate) fn delete(&self, approved: Approved<DeleteFile>) -> Result<PathName, String> {
        let target = approved.into_target();
        let place = self.recheck(&target.path, Some(&target.state))?;
        place
            .dir
            .remove_file(&place.name)
            .map_err(|error| format!("the file could not be deleted: {error}"))?;
        Ok(target.path)
    }

    /// Writes the cleared file: a new one (exempt) or an approved overwrite. The content goes
    /// to a new temporary file first, so the check right before the rename is the last step.
    pub(crate) fn write(
        &self,
        clearance: Clearance<WriteFile>,
    ) -> Result<(PathName, bool), String> {
        let target = clearance.into_target();
        // Where the file will be (checked again below, after the content is written).
        let (place, _) = self
            .file_or_new(&target.path.components().join("/"))
            .map_err(|rejection| format!("{}: nothing was changed", rejection.message()))?;
        let permissions = match target.replaced {
            // The new content keeps the replaced file's permissions.
            Some(_) => place
                .dir
                .symlink_metadata(&place.name)
                .ok()
                .map(|meta| meta.permissions()),
            None => None,
        };
        let temporary = Temporary::write(&place.dir, target.content.as_bytes(), permissions)?;
        let place = self.recheck(&target.path, target.replaced.as_ref())?;
        match target.replaced {
            None => temporary.rename_no_replace(&place)?,
            Some(_) => temporary.replace(&place)?,
        }
        Ok((target.path, target.replaced.is_none()))
    }

    /// Moves the cleared file: onto a free name (exempt) or over an approved one.
    pub(crate) fn rename(&self, clearance: Clearance<MoveFile>) -> Result<MoveFile, String> {
        let target = clearance.into_target();
        let from = self.recheck(&target.from, Some(&target.from_state))?;
        let to = self.recheck(&target.to, target.replaced.as_ref())?;
        if target.replaced.is_some() {
            from.dir
                .rename(&from.name, &to.dir, &to.name)
                .map_err(|error| format!("the file could not be moved: {error}"))?;
        } else {
            rename_no_replace(&from.dir, &from.name, &to.dir, &to.name).map_err(|error| {
                format!("the file could not be moved: {error}; nothing was changed")
            })?;
        }
        Ok(target)
    }
}

/// A new file under a random name in a directory, removed unless it is renamed into place.
struct Temporary<'a> {
    dir: &'a Dir,
    name: String,
    placed: bool,
}

impl<'a> Temporary<'a> {
    /// Creates a new file (never an existing one, never through a link) holding `content`,
    /// synced to disk.
    fn write(
        dir: &'a Dir,
        content: &[u8],
        permissions: Option<Permissions>,
    ) -> Result<Self, String> {
        let failed = |error: io::Error| {
            format!("the file could not be written: {error}; nothing was changed")
        };
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .follow(FollowSymlinks::No);
        let mut tries = 0;
        let (name, mut file) = loop {
            let name = format!(".files-write-{:032x}", rand::random::<u128>());
            match dir.open_with(&name, &options) {
                Ok(file) => break (name, file),
                Err(error)
                    if error.kind() == ErrorKind::AlreadyExists && tries < TEMPORARY_TRIES =>
                {
                    tries += 1;
                }
                Err(error) => return Err(failed(error)),
            }
        };
        let temporary = Self {
            dir,
            name,
            placed: false,
        };
        if let Some(permissions) = permissions {
            file.set_permissions(permissions).map_err(failed)?;
        }
        file.write_all(content).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        Ok(temporary)
    }

    /// Renames it over the file at `place` (which the caller has just checked).
    fn replace(mut self, place: &Place) -> Result<(), String> {
        self.dir
            .rename(&self.name, &place.dir, &place.name)
            .map_err(|error| {
                format!("the file could not be replaced: {error}; nothing was changed")
            })?;
        self.placed = true;
        Ok(())
    }

    /// Renames it to the free name at `place`, failing if a file appeared there.
    fn rename_no_replace(mut self, place: &Place) -> Result<(), String> {
        rename_no_replace(self.dir, &self.name, &place.dir, &place.name).map_err(|error| {
            if error.kind() == ErrorKind::AlreadyExists {
                "a file appeared at that path after the check: nothing was changed; call again to be asked about replacing it".to_owned()
            } else {
                format!("the file could not be created: {error}; nothing was changed")
            }
        })?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for Temporary<'_> {
    fn drop(&mut self) {
        if !self.placed {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// Renames `from` in `from_dir` to `to` in `to_dir` unless something is at `to`
/// (`ErrorKind::AlreadyExists` then): atomic, so nothing that appears at `to` is replaced.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn rename_no_replace(from_dir: &Dir, from: &str, to_dir: &Dir, to: &str) -> io::Result<()> {
    rustix::fs::renameat_with(
        from_dir,
        from,
        to_dir,
        to,
        rustix::fs::RenameFlags::NOREPLACE,
    )
    .map_err(io::Error::from)
}

/// Renames `from` in `from_dir` to `to` in `to_dir` unless something is at `to`: where no
/// atomic no-replace rename exists, a hard link (which fails when `to` exists) and an unlink.
#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn rename_no_replace(from_dir: &Dir, from: &str, to_dir: &Dir, to: &str) -> io::Result<()> {
    from_dir.hard_link(from, to_dir, to)?;
    from_dir.remove_file(from)
}

/// Opens a file for reading without following a link (and, on Unix, without blocking on a
/// FIFO); refuses anything but a regular file.
fn open_file(dir: &Dir, name: &str, raw: &str) -> Result<File, InputError> {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = dir.open_with(name, &options).map_err(|error| {
        if error.kind() == ErrorKind::NotFound {
            no_such(raw)
        } else {
            // ELOOP: a link was swapped in since the check of its kind.
            InputError::new(format!("{raw:?} cannot be opened: {error}"))
        }
    })?;
    let meta = file
        .metadata()
        .map_err(|error| InputError::new(format!("{raw:?} cannot be read: {error}")))?;
    if !meta.is_file() {
        return Err(InputError::new(format!(
            "{raw:?} is not a regular file: give a file's path"
        )));
    }
    Ok(file)
}

/// The state of an opened file: size, modification time, SHA-256, device and inode, all read
/// through the same handle.
fn state_of(file: &mut File) -> Result<FileState, InputError> {
    let cannot = |error: io::Error| InputError::new(format!("the file cannot be read: {error}"));
    let meta = file.metadata().map_err(cannot)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(InputError::new(format!(
            "the file is {} bytes; this server changes files up to {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    let mut hasher = Sha256::new();
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer).map_err(cannot)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(FileState {
        size: meta.len(),
        modified: meta.modified().map_err(cannot)?.into_std(),
        sha256: hasher.finalize().into(),
        device: meta.dev(),
        inode: meta.ino(),
    })
}

/// The components of a caller's path, or why it is refused.
fn components(raw: &str) -> Result<Vec<String>, InputError> {
    if raw.contains('\0') {
        return Err(InputError::new(
            "the path contains a NUL byte: give a path relative to the shared folder, e.g. notes/todo.txt",
        ));
    }
    if raw.starts_with('/') {
        return Err(InputError::new(format!(
            "{raw:?} is an absolute path: give a path relative to the shared folder, e.g. notes/todo.txt"
        )));
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(InputError::new(format!(
                    "{raw:?} climbs out of the shared folder with `..`: give a path that stays inside, relative to it"
                )));
            }
            part => parts.push(part.to_owned()),
        }
    }
    Ok(parts)
}

fn no_such(raw: &str) -> InputError {
    InputError::new(format!(
        "there is no {raw:?} in the shared folder: call list_dir to see what is there"
    ))
}

fn through_link(raw: &str) -> InputError {
    InputError::new(format!(
        "{raw:?} goes through a symbolic link: refused, since this server never follows links (one could lead out of the shared folder or to another file); give the path of the file itself"
    ))
}

// ---------------------------------------------------------------------------------------------
// Targets: a path (a caller-supplied name, shown framed and escaped) and the file's state.
// ---------------------------------------------------------------------------------------------

/// Deleting one file, bound to its path and its state (the file itself: see [`FileState`]).
#[derive(Target)]
#[target(
    operation = "delete_file",
    question = "This will delete {path} ({size()}, modified {modified()}). It cannot be undone.",
    evidence = "changes()"
)]
pub(crate) struct DeleteFile {
    /// The file, relative to the root.
    pub path: PathName,
    /// Its state when the question was built.
    pub state: FileState,
}

impl DeleteFile {
    /// The size shown.
    pub(crate) fn size(&self) -> ByteSize {
        ByteSize(self.state.size)
    }

    /// The modification time shown.
    pub(crate) fn modified(&self) -> Moment {
        Moment::of(self.state.modified)
    }

    /// The page's evidence: the file deleted, by digest.
    pub(crate) fn changes(&self) -> Evidence {
        Evidence::new().group("File deleted", [self.state.evidence(&self.path)])
    }
}

/// Writing a file, bound to its path, the exact new content and the state of the file it
/// replaces (none: a new file, written without asking).
#[derive(Target)]
#[target(
    operation = "write_file",
    question = "This will overwrite {path} ({old_size()}, modified {old_modified()}) with {new_size()} of new content.",
    evidence = "changes()"
)]
pub(crate) struct WriteFile {
    /// The file, relative to the root.
    pub path: PathName,
    /// The whole new content (bound, never shown).
    pub content: String,
    /// The file it replaces.
    pub replaced: Option<FileState>,
}

impl WriteFile {
    /// The guard's condition: an existing file would be replaced.
    pub(crate) fn overwrites(&self) -> bool {
        self.replaced.is_some()
    }

    /// The replaced file's size.
    pub(crate) fn old_size(&self) -> ByteSize {
        ByteSize(self.replaced.as_ref().map_or(0, |state| state.size))
    }

    /// The replaced file's modification time.
    pub(crate) fn old_modified(&self) -> Moment {
        Moment::of(
            self.replaced
                .as_ref()
                .map_or(SystemTime::UNIX_EPOCH, |state| state.modified),
        )
    }

    /// The new content's size.
    pub(crate) fn new_size(&self) -> ByteSize {
        ByteSize(self.content.len() as u64)
    }

    /// The page's evidence: the file replaced, by digest, and the new content, readable.
    pub(crate) fn changes(&self) -> Evidence {
        let replaced = self.replaced.iter().map(|state| state.evidence(&self.path));
        let name = self.path.components().join("/");
        Evidence::new().group("File replaced", replaced).group(
            "New content",
            [EvidenceItem::readable(name, self.content.as_bytes())],
        )
    }
}

impl Conditional for WriteFile {}

/// Moving a file, bound to both paths, the moved file's state and the state of the file it
/// replaces (none: a free name, moved without asking).
#[derive(Target)]
#[target(
    operation = "move_file",
    question = "This will move {from} ({moved_size()}) onto {to}, replacing the file there ({to_size()}, modified {to_modified()}).",
    evidence = "changes()"
)]
pub(crate) struct MoveFile {
    /// The file moved.
    pub from: PathName,
    /// Its state.
    pub from_state: FileState,
    /// Its new path.
    pub to: PathName,
    /// The file there now.
    pub replaced: Option<FileState>,
}

impl MoveFile {
    /// The guard's condition: an existing file would be replaced.
    pub(crate) fn replaces(&self) -> bool {
        self.replaced.is_some()
    }

    /// The moved file's size.
    pub(crate) fn moved_size(&self) -> ByteSize {
        ByteSize(self.from_state.size)
    }

    /// The page's evidence: the file moved and the file it replaces, by digest.
    pub(crate) fn changes(&self) -> Evidence {
        let replaced = self.replaced.iter().map(|state| state.evidence(&self.to));
        Evidence::new()
            .group("File moved", [self.from_state.evidence(&self.from)])
            .group("File replaced", replaced)
    }

    /// The replaced file's size.
    pub(crate) fn to_size(&self) -> ByteSize {
        ByteSize(self.replaced.as_ref().map_or(0, |state| state.size))
    }

    /// The replaced file's modification time.
    pub(crate) fn to_modified(&self) -> Moment {
        Moment::of(
            self.replaced
                .as_ref()
                .map_or(SystemTime::UNIX_EPOCH, |state| state.modified),
        )
    }
}

impl Conditional for MoveFile {}
