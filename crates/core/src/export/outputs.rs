//! Output files: every path is judged before any work starts (never an input, never named
//! twice, a regular file or nothing yet, in a folder that exists), and the files of one command
//! are written together or not at all: each goes to a temporary file beside its target, and
//! only when all are complete are they renamed into place.
//!
//! Decisions: an output that is a symbolic link, a device or a pipe is refused (a rename would
//! replace the link or the node by a regular file, which is not what anyone writing to
//! `/dev/stdout` or through a link meant); `-` means standard output where an option allows it.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: is also an input; refusing to overwrite it (give another output path)", .0.display())]
    IsInput(PathBuf),
    #[error("{}: named as two outputs; give each output its own path", .0.display())]
    Twice(PathBuf),
    #[error("{}: the folder {} does not exist", .path.display(), .folder.display())]
    NoFolder { path: PathBuf, folder: PathBuf },
    #[error("{}: is a folder, not a file", .0.display())]
    IsFolder(PathBuf),
    #[error(
        "{}: is a symbolic link; outputs are written as regular files, so give the link's target \
         ({}) instead",
        .path.display(), .target.display()
    )]
    Symlink { path: PathBuf, target: PathBuf },
    #[error(
        "{}: is not a regular file (a device, pipe or socket); use - for standard output where the \
         option allows it",
        .0.display()
    )]
    NotRegular(PathBuf),
    /// The folder exists but this user may not make files in it.
    #[error("{}: the folder {} is not writable", .path.display(), .folder.display())]
    ReadOnly { path: PathBuf, folder: PathBuf },
    /// Writing failed; names the path the user gave, never the temporary file.
    #[error("cannot write {}: {reason}", .path.display())]
    Write { path: PathBuf, reason: String },
}

/// The identity of an existing file (its canonical path), None for a path with nothing there.
fn identity(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// Where `p` will be once written: its folder's canonical path and its name.
fn destination(p: &Path, to_create: &[PathBuf]) -> Result<PathBuf, OutputError> {
    let folder = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = p.file_name().ok_or_else(|| OutputError::IsFolder(p.to_path_buf()))?;
    let no_folder = || OutputError::NoFolder { path: p.to_path_buf(), folder: folder.to_path_buf() };
    let dir = match std::fs::canonicalize(folder) {
        Ok(d) if d.is_dir() => d,
        Ok(_) => return Err(no_folder()),
        // A folder the command creates once every output has passed holds no file yet.
        Err(_) if to_create.iter().any(|c| c == folder) => {
            std::path::absolute(folder).map_err(|_| no_folder())?
        }
        Err(_) => return Err(no_folder()),
    };
    // Where the file (or the folder to hold it) will be made: the folder, or the nearest
    // existing folder above one still to create. Judged now, not after the work.
    if let Some(existing) = dir.ancestors().find(|a| a.is_dir())
        && !writable(existing)
    {
        return Err(OutputError::ReadOnly { path: p.to_path_buf(), folder: existing.to_path_buf() });
    }
    Ok(dir.join(name))
}

/// Whether this user may make files in `folder` (access(2) with W_OK; root passes, as the
/// kernel lets it, except on a read-only file system).
fn writable(folder: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(folder.as_os_str().as_bytes()) else { return true };
    // SAFETY: access reads a NUL-terminated path this frame owns.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

/// Judges `outputs` against `inputs` (every file a command reads) before any work starts.
/// Outputs may lie in the folders `to_create`, which the command makes only after this check,
/// so that a refused command leaves no folder behind.
pub fn check(inputs: &[PathBuf], outputs: &[PathBuf], to_create: &[PathBuf]) -> Result<(), OutputError> {
    let inputs: Vec<PathBuf> = inputs.iter().filter_map(|p| identity(p)).collect();
    let mut seen = std::collections::HashSet::new();
    for out in outputs {
        if let Ok(meta) = std::fs::symlink_metadata(out) {
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(out).unwrap_or_default();
                return Err(OutputError::Symlink { path: out.clone(), target });
            }
            if meta.is_dir() {
                return Err(OutputError::IsFolder(out.clone()));
            }
            if !meta.is_file() {
                return Err(OutputError::NotRegular(out.clone()));
            }
            if identity(out).is_some_and(|id| inputs.contains(&id)) {
                return Err(OutputError::IsInput(out.clone()));
            }
        }
        if !seen.insert(destination(out, to_create)?) {
            return Err(OutputError::Twice(out.clone()));
        }
    }
    Ok(())
}

/// The reason an I/O error gives, without the temporary file's name that `tempfile` puts in
/// its messages.
fn reason(e: &std::io::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(code) = s.downcast_ref::<std::io::Error>().and_then(|io| io.raw_os_error()) {
            return std::io::Error::from_raw_os_error(code).to_string();
        }
        source = s.source();
    }
    match e.kind() {
        std::io::ErrorKind::Other => e.to_string(),
        kind => kind.to_string(),
    }
}

/// The temporary files of every [`Staged`] not yet committed or dropped, for
/// [`remove_pending`]: a process ending on a signal runs no destructors.
static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the temporary file of every export under way: called when the process is ending on
/// a signal (SIGINT, SIGTERM), so that nothing is left behind.
pub fn remove_pending() {
    for p in pending().drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// A staged file: removed when dropped, and known to [`remove_pending`] until then.
struct Temp(Option<tempfile::NamedTempFile>);

impl Temp {
    fn new(file: tempfile::NamedTempFile) -> Temp {
        pending().push(file.path().to_path_buf());
        Temp(Some(file))
    }

    fn file(&self) -> &tempfile::NamedTempFile {
        self.0.as_ref().expect("a staged file until persisted")
    }

    /// Renames the file to `path`; on failure it stays staged, removed when dropped.
    fn persist(mut self, path: &Path) -> std::io::Result<()> {
        let file = self.0.take().expect("a staged file until persisted");
        let at = file.path().to_path_buf();
        match file.persist(path) {
            Ok(_) => {
                pending().retain(|p| *p != at);
                Ok(())
            }
            Err(e) => {
                self.0 = Some(e.file);
                Err(e.error)
            }
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        // Removed first, forgotten after: a signal between the two finds the name gone.
        if let Some(f) = self.0.take() {
            let at = f.path().to_path_buf();
            drop(f);
            pending().retain(|p| *p != at);
        }
    }
}

/// Files being written, renamed into place together by [`Staged::commit`]; dropped without a
/// commit, they leave nothing behind.
#[derive(Default)]
pub struct Staged {
    files: Vec<(PathBuf, Temp)>,
}

impl Staged {
    pub fn new() -> Staged {
        Staged::default()
    }

    /// Writes one output into a temporary file beside `path`: `fill` writes into a buffered
    /// writer, so a large export never has to exist whole in memory.
    pub fn add(
        &mut self,
        path: &Path,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), OutputError> {
        let failed = |e: std::io::Error| OutputError::Write { path: path.to_path_buf(), reason: reason(&e) };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = Temp::new(tempfile::Builder::new().prefix(".topoview-").tempfile_in(dir).map_err(failed)?);
        // Temporary files are private (0600); an export is an ordinary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.file().as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(failed)?;
        }
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.file().as_file());
        fill(&mut w).map_err(failed)?;
        w.flush().map_err(failed)?;
        drop(w);
        tmp.file().as_file().sync_all().map_err(failed)?;
        self.files.push((path.to_path_buf(), tmp));
        Ok(())
    }

    /// Renames every file into place and returns their paths, in the order they were added.
    /// (A rename that fails part way leaves the earlier ones in place: renames in one folder
    /// fail only when the disk or the folder goes away.)
    pub fn commit(self) -> Result<Vec<PathBuf>, OutputError> {
        let mut written = Vec::with_capacity(self.files.len());
        for (path, tmp) in self.files {
            tmp.persist(&path).map_err(|e| OutputError::Write { reason: reason(&e), path: path.clone() })?;
            written.push(path);
        }
        Ok(written)
    }
}

/// A text made safe for one line of a header or a summary: line breaks and other control
/// characters are escaped (a file name may hold a newline).
pub fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_judged_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("a.nrrd");
        std::fs::write(&input, b"x").unwrap();
        let out = dir.path().join("o.csv");
        assert!(check(std::slice::from_ref(&input), std::slice::from_ref(&out), &[]).is_ok());
        let e = check(std::slice::from_ref(&input), std::slice::from_ref(&input), &[]).unwrap_err();
        assert!(matches!(e, OutputError::IsInput(_)), "{e}");
        // The same file by another spelling.
        let other = dir.path().join(".").join("a.nrrd");
        assert!(matches!(check(std::slice::from_ref(&input), &[other], &[]), Err(OutputError::IsInput(_))));
        assert!(matches!(check(&[], &[out.clone(), out.clone()], &[]), Err(OutputError::Twice(_))));
        let missing = dir.path().join("no/such/o.csv");
        assert!(matches!(check(&[], std::slice::from_ref(&missing), &[]), Err(OutputError::NoFolder { .. })));
        // Unless the command makes that folder after the check.
        let made = missing.parent().unwrap().to_path_buf();
        assert!(check(&[], &[missing], &[made]).is_ok());
        assert!(matches!(check(&[], &[dir.path().to_path_buf()], &[]), Err(OutputError::IsFolder(_))));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.csv");
            std::os::unix::fs::symlink(&out, &link).unwrap();
            assert!(matches!(check(&[], &[link], &[]), Err(OutputError::Symlink { .. })));
            assert!(matches!(
                check(&[], &[PathBuf::from("/dev/null")], &[]),
                Err(OutputError::NotRegular(_))
            ));
        }
    }

    #[test]
    fn staged_files_appear_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        let mut s = Staged::new();
        s.add(&a, |w| w.write_all(b"a")).unwrap();
        let e = s.add(&b, |_| Err(std::io::Error::other("disk full"))).unwrap_err();
        assert!(e.to_string().contains("b.txt") && !e.to_string().contains(".topoview-"), "{e}");
        drop(s);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
        let mut s = Staged::new();
        s.add(&a, |w| w.write_all(b"a")).unwrap();
        s.add(&b, |w| w.write_all(b"b")).unwrap();
        assert!(!a.exists() && !b.exists());
        s.commit().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"a");
        assert_eq!(std::fs::read(&b).unwrap(), b"b");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(one_line("a\nb\tc.nrrd"), "a\\nb\\tc.nrrd");
        assert_eq!(one_line("plain é.nii"), "plain é.nii");
    }
}
