//! The shared folder: turning a caller's path into a place inside the root (or an input error),
//! what a person is shown about a file, the three changing operations' targets, and the
//! operations themselves, each taking the guard's proof by value.
//!
//! # Paths
//!
//! A caller's path is relative to the root, `/`-separated. Refused before anyone is asked,
//! each with an error that says why and what to send instead:
//! - an absolute path (`/etc/passwd`), a `..` component, a NUL byte;
//! - a path that leads out of the root through a symbolic link: every path is resolved with
//!   [`std::fs::canonicalize`] (the file itself when it exists, else its directory) and must
//!   stay under the root's own canonical path.
//!
//! `.` and empty components are dropped. A path through a link that stays inside is resolved:
//! the question names the file that will change (its canonical path), not the link.
//!
//! # Time of check, time of use
//!
//! The guard asks about a file as it was when the call was resolved; the file can change, or a
//! directory on its path can be swapped for a link, before the operation runs. What this
//! server does about it:
//! - the approval is bound to the canonical path and the file's state: its size, modification
//!   time (to the nanosecond) and SHA-256 of its content ([`FileState`]), so a yes holds only
//!   for the file as shown (with the framework's re-check, the person is asked again);
//! - right before acting, each operation resolves the path again (the same checks) and reads
//!   the state again, and refuses to act if either differs from what was approved;
//! - a move that replaces nothing uses a hard link and an unlink, which fail if the
//!   destination appeared meanwhile, instead of a `rename` that would replace it; an
//!   overwrite writes a temporary file beside the target and renames it over.
//!
//! What remains: between that last check and the system call (microseconds), a process that
//! can write in the folder can still swap a directory on the path for a link leading out, or
//! change the file. Closing that needs directory-relative system calls that refuse to leave a
//! directory (`openat2` with `RESOLVE_BENEATH`, or a capability crate such as `cap-std`); this
//! example stays on `std` and does not. Run it on a folder only trusted writers can change
//! behind its back, or put it in a container whose only mount is the folder.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use ask_first::{
    Approved, BindValue, Binding, Clearance, Conditional, InputError, Target,
    fact::{ByteSize, Moment, PathName},
};
use sha2::{Digest, Sha256};

/// The largest file `read_file` returns and an operation hashes: 8 MiB.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The shared folder.
pub struct Folder {
    /// The root's canonical path: every path must stay under it.
    root: PathBuf,
}

/// A path inside the root, resolved.
pub struct Place {
    /// The canonical absolute path.
    pub absolute: PathBuf,
    /// The same, relative to the root: what a person is shown.
    pub shown: PathName,
}

/// What a person is shown about an existing file, and what binds an approval to it: its size
/// and modification time (shown) and the SHA-256 of its content (bound, not shown).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FileState {
    /// Its size.
    pub size: u64,
    /// Its modification time.
    pub modified: SystemTime,
    /// The SHA-256 of its content.
    pub sha256: [u8; 32],
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
            .bytes(&format!("{name}.sha256"), &self.sha256);
    }
}

impl Folder {
    /// The folder at `root`, which must be an existing directory.
    pub fn open(root: &Path) -> Result<Self, String> {
        let canonical = fs::canonicalize(root).map_err(|error| {
            format!(
                "the root {} cannot be opened ({error}): give an existing directory with --root DIR or FILES_ROOT",
                root.display()
            )
        })?;
        if !canonical.is_dir() {
            return Err(format!(
                "the root {} is not a directory: give one with --root DIR or FILES_ROOT",
                root.display()
            ));
        }
        Ok(Self { root: canonical })
    }

    /// An existing directory (`""` or `.` is the root).
    pub fn directory(&self, raw: &str) -> Result<Place, InputError> {
        let place = self.existing(raw)?;
        if !place.absolute.is_dir() {
            return Err(InputError::new(format!(
                "{raw:?} is not a directory: call list_dir with a directory's path, or read_file for a file"
            )));
        }
        Ok(place)
    }

    /// An existing regular file.
    pub fn file(&self, raw: &str) -> Result<Place, InputError> {
        let place = self.existing(raw)?;
        if !place.absolute.is_file() {
            return Err(InputError::new(format!(
                "{raw:?} is not a file: give the path of a file (list_dir shows what is there)"
            )));
        }
        Ok(place)
    }

    /// A file that may not exist yet: its directory must exist inside the root; when it exists
    /// it must be a file. Returns the place and, when a file is there, its state.
    pub fn file_or_new(&self, raw: &str) -> Result<(Place, Option<FileState>), InputError> {
        let parts = components(raw)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(InputError::new(
                "the path names the shared folder itself: give a file's path, e.g. notes/todo.txt",
            ));
        };
        let dir = self.existing_parts(raw, dirs)?;
        if !dir.absolute.is_dir() {
            return Err(InputError::new(format!(
                "the directory of {raw:?} is not a directory: give a path whose directories exist"
            )));
        }
        let candidate = dir.absolute.join(name);
        match fs::symlink_metadata(&candidate) {
            Err(error) if error.kind() == ErrorKind::NotFound => {
                let mut shown = dir.shown.components().to_vec();
                shown.push(name.clone());
                Ok((
                    Place {
                        absolute: candidate,
                        shown: PathName::new(shown),
                    },
                    None,
                ))
            }
            Err(error) => Err(InputError::new(format!("{raw:?} cannot be read: {error}"))),
            Ok(_) => {
                let place = self.existing(raw)?;
                if !place.absolute.is_file() {
                    return Err(InputError::new(format!(
                        "{raw:?} is a directory (or not a regular file): give a file's path"
                    )));
                }
                let state = state_of(&place.absolute)?;
                Ok((place, Some(state)))
            }
        }
    }

    fn existing(&self, raw: &str) -> Result<Place, InputError> {
        let parts = components(raw)?;
        self.existing_parts(raw, &parts)
    }

    /// Resolves existing `parts` through links and checks the result stays in the root.
    fn existing_parts(&self, raw: &str, parts: &[String]) -> Result<Place, InputError> {
        let joined = parts
            .iter()
            .fold(self.root.clone(), |path, part| path.join(part));
        let canonical = fs::canonicalize(&joined).map_err(|error| {
            if error.kind() == ErrorKind::NotFound {
                InputError::new(format!(
                    "there is no {raw:?} in the shared folder: call list_dir to see what is there"
                ))
            } else {
                InputError::new(format!("{raw:?} cannot be resolved: {error}"))
            }
        })?;
        let Ok(relative) = canonical.strip_prefix(&self.root) else {
            return Err(InputError::new(format!(
                "{raw:?} leads out of the shared folder through a symbolic link: refused; give a path that stays inside"
            )));
        };
        let mut shown = Vec::new();
        for part in relative.components() {
            let Component::Normal(part) = part else {
                continue;
            };
            let Some(part) = part.to_str() else {
                return Err(InputError::new(format!(
                    "{raw:?} resolves to a name that is not UTF-8, which this server cannot show: rename it"
                )));
            };
            shown.push(part.to_owned());
        }
        Ok(Place {
            absolute: canonical,
            shown: PathName::new(shown),
        })
    }

    /// The file a target names, resolved again and read again, or why it cannot be acted on.
    fn recheck(&self, shown: &PathName, approved: Option<&FileState>) -> Result<PathBuf, String> {
        let raw = shown.components().join("/");
        let now = self
            .file_or_new(&raw)
            .map_err(|rejection| format!("{}: nothing was changed", rejection.message()))?;
        let (place, state) = now;
        if place.shown != *shown {
            return Err(format!(
                "{raw:?} now resolves elsewhere than when you were asked: nothing was changed; call again to be asked about it as it is now"
            ));
        }
        if state.as_ref() != approved {
            return Err(format!(
                "{raw:?} changed after the question was asked: nothing was changed; call again to be asked about it as it is now"
            ));
        }
        Ok(place.absolute)
    }

    /// Deletes exactly the approved file.
    pub fn delete(&self, approved: Approved<DeleteFile>) -> Result<PathName, String> {
        let target = approved.into_target();
        let path = self.recheck(&target.path, Some(&target.state))?;
        fs::remove_file(&path)
            .map_err(|error| format!("the file could not be deleted: {error}"))?;
        Ok(target.path)
    }

    /// Writes the cleared file: a new one (exempt) or an approved overwrite.
    pub fn write(&self, clearance: Clearance<WriteFile>) -> Result<(PathName, bool), String> {
        let target = clearance.into_target();
        let path = self.recheck(&target.path, target.replaced.as_ref())?;
        let created = target.replaced.is_none();
        if created {
            // `create_new` fails if a file appeared since the check: nothing is replaced unasked.
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|error| {
                    format!("the file could not be created: {error}; nothing was changed")
                })?;
            std::io::Write::write_all(&mut file, target.content.as_bytes())
                .map_err(|error| format!("the file could not be written: {error}"))?;
        } else {
            let temporary = temporary_beside(&path);
            fs::write(&temporary, target.content.as_bytes()).map_err(|error| {
                format!("the file could not be written: {error}; nothing was changed")
            })?;
            if let Err(error) = fs::rename(&temporary, &path) {
                let _ = fs::remove_file(&temporary);
                return Err(format!(
                    "the file could not be replaced: {error}; nothing was changed"
                ));
            }
        }
        Ok((target.path, created))
    }

    /// Moves the cleared file: onto a free name (exempt) or over an approved one.
    pub fn rename(&self, clearance: Clearance<MoveFile>) -> Result<MoveFile, String> {
        let target = clearance.into_target();
        let from = self.recheck(&target.from, Some(&target.from_state))?;
        let to = self.recheck(&target.to, target.replaced.as_ref())?;
        if target.replaced.is_some() {
            fs::rename(&from, &to)
                .map_err(|error| format!("the file could not be moved: {error}"))?;
        } else {
            // A hard link fails if the destination appeared since the check.
            fs::hard_link(&from, &to).map_err(|error| {
                format!("the file could not be moved: {error}; nothing was changed")
            })?;
            fs::remove_file(&from).map_err(|error| {
                format!("the file was copied to its new name but the old one could not be removed: {error}")
            })?;
        }
        Ok(target)
    }

    /// A file's text, for `read_file`.
    pub fn read(&self, place: &Place) -> Result<String, InputError> {
        let state_size = fs::metadata(&place.absolute)
            .map(|meta| meta.len())
            .unwrap_or(0);
        if state_size > MAX_FILE_BYTES {
            return Err(InputError::new(format!(
                "the file is {state_size} bytes; read_file returns files up to {MAX_FILE_BYTES} bytes"
            )));
        }
        let bytes = fs::read(&place.absolute)
            .map_err(|error| InputError::new(format!("the file cannot be read: {error}")))?;
        String::from_utf8(bytes).map_err(|_| {
            InputError::new("the file is not UTF-8 text: read_file returns text files only")
        })
    }
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

/// A file's state: size, modification time and the SHA-256 of its content.
pub fn state_of(path: &Path) -> Result<FileState, InputError> {
    let cannot =
        |error: std::io::Error| InputError::new(format!("the file cannot be read: {error}"));
    let mut file = fs::File::open(path).map_err(cannot)?;
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
        modified: meta.modified().map_err(cannot)?,
        sha256: hasher.finalize().into(),
    })
}

fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.files-write-{}", std::process::id()))
}

// ---------------------------------------------------------------------------------------------
// Targets: a path (a caller-supplied name, shown framed and escaped) and the file's state.
// ---------------------------------------------------------------------------------------------

/// Deleting one file, bound to its canonical path and its state.
#[derive(Target)]
#[target(
    operation = "delete_file",
    question = "This will delete {path} ({size()}, modified {modified()}). It cannot be undone."
)]
pub struct DeleteFile {
    /// The file, relative to the root.
    pub path: PathName,
    /// Its state when the question was built.
    pub state: FileState,
}

impl DeleteFile {
    /// The size shown.
    pub fn size(&self) -> ByteSize {
        ByteSize(self.state.size)
    }

    /// The modification time shown.
    pub fn modified(&self) -> Moment {
        Moment::of(self.state.modified)
    }
}

/// Writing a file, bound to its path, the exact new content and the state of the file it
/// replaces (none: a new file, written without asking).
#[derive(Target)]
#[target(
    operation = "write_file",
    question = "This will overwrite {path} ({old_size()}, modified {old_modified()}) with {new_size()} of new content."
)]
pub struct WriteFile {
    /// The file, relative to the root.
    pub path: PathName,
    /// The whole new content (bound, never shown).
    pub content: String,
    /// The file it replaces.
    pub replaced: Option<FileState>,
}

impl WriteFile {
    /// The guard's condition: an existing file would be replaced.
    pub fn overwrites(&self) -> bool {
        self.replaced.is_some()
    }

    /// The replaced file's size.
    pub fn old_size(&self) -> ByteSize {
        ByteSize(self.replaced.as_ref().map_or(0, |state| state.size))
    }

    /// The replaced file's modification time.
    pub fn old_modified(&self) -> Moment {
        Moment::of(
            self.replaced
                .as_ref()
                .map_or(SystemTime::UNIX_EPOCH, |state| state.modified),
        )
    }

    /// The new content's size.
    pub fn new_size(&self) -> ByteSize {
        ByteSize(self.content.len() as u64)
    }
}

impl Conditional for WriteFile {}

/// Moving a file, bound to both paths, the moved file's state and the state of the file it
/// replaces (none: a free name, moved without asking).
#[derive(Target)]
#[target(
    operation = "move_file",
    question = "This will move {from} ({moved_size()}) onto {to}, replacing the file there ({to_size()}, modified {to_modified()})."
)]
pub struct MoveFile {
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
    pub fn replaces(&self) -> bool {
        self.replaced.is_some()
    }

    /// The moved file's size.
    pub fn moved_size(&self) -> ByteSize {
        ByteSize(self.from_state.size)
    }

    /// The replaced file's size.
    pub fn to_size(&self) -> ByteSize {
        ByteSize(self.replaced.as_ref().map_or(0, |state| state.size))
    }

    /// The replaced file's modification time.
    pub fn to_modified(&self) -> Moment {
        Moment::of(
            self.replaced
                .as_ref()
                .map_or(SystemTime::UNIX_EPOCH, |state| state.modified),
        )
    }
}

impl Conditional for MoveFile {}
