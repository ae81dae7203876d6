//! One output transaction for every command (`solve`, `transient`, `topopt`,
//! `sweep`, `bench --out`): a run stages all its files in a private
//! directory `<out>/.cuth-<pid>-<random>/` (and a file meant for elsewhere,
//! such as `--save-state`, in a private temporary beside its destination),
//! then commits under an advisory lock on `<out>`:
//!
//! 1. a commit of a run killed in its own commit is finished first
//!    (`manifest::repair`);
//! 2. every destination is checked: a file may only replace a regular file,
//!    and the folders on its way must be folders (devices, FIFOs and sockets
//!    are refused, and nothing has been moved yet);
//! 3. the staged files are renamed into place one by one (a user's own file
//!    in `final/` stays beside them), the files the previous run's manifest
//!    lists and this run did not write are removed, and the new manifest
//!    `.cuth-run.json` is written: journalled by `.cuth-commit.json`, so
//!    a SIGKILL at any point is finished by the next run (`manifest`).
//!
//! Only files a manifest lists are ever removed, so `<out>` holds one run's
//! outputs beside whatever the user keeps there.
//!
//! A second run that reaches its commit while the lock is held waits for it,
//! up to [`LOCK_WAIT`] (then it fails with exit code 1 and removes its
//! staging). Dropping an uncommitted transaction removes the staging (and
//! `<out>` when this run created it and it is empty); SIGINT, SIGTERM and
//! SIGHUP do the same through [`super::signals`] before the process exits.

mod manifest;
mod owned;

pub use manifest::{Manifest, INTENT, MANIFEST};
pub use owned::Owned;

use super::signals;
use super::OutputError;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a commit waits for another run's commit into the same `<out>`.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

fn io(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn refused(path: &Path, what: &str) -> OutputError {
    OutputError::NotRegular {
        path: path.to_path_buf(),
        what: what.to_string(),
    }
}

/// What is at `path`, following symlinks (an `--out` linked to a scratch
/// disk is a directory), or `None` (also for a dangling link, which a
/// rename simply replaces). A loop of links is refused by name: the bare
/// `ELOOP` would not say what is wrong with the path.
fn file_type(path: &Path) -> Result<Option<fs::FileType>, OutputError> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some(m.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Err(refused(path, "a loop of symbolic links"))
        }
        Err(e) => Err(io(path, e)),
    }
}

/// A user's destination (`--out`, `--save-state`, an imported stack) that
/// is a symbolic link to nothing: following it would create a file or
/// folder somewhere the user may not expect, and `mkdir` fails on the link
/// itself only after the run, so it is refused before any work.
fn refuse_dangling(path: &Path) -> Result<(), OutputError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && file_type(path)?.is_none() => {
            let to = fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
            Err(refused(
                path,
                &format!("a symbolic link to `{to}`, which does not exist"),
            ))
        }
        _ => Ok(()),
    }
}

fn describe(t: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// A file destination (`--save-state FILE`, an output file): absent or a
/// regular file (also through a symbolic link); anything else is refused.
pub fn check_file_target(path: &Path) -> Result<(), OutputError> {
    refuse_dangling(path)?;
    match file_type(path)? {
        Some(t) if !t.is_file() => Err(refused(path, describe(t))),
        _ => Ok(()),
    }
}

/// An output directory: absent or a directory (also through a symbolic link).
pub fn check_dir_target(path: &Path) -> Result<(), OutputError> {
    refuse_dangling(path)?;
    match file_type(path)? {
        Some(t) if t.is_file() => Err(refused(path, "a regular file, not a directory")),
        Some(t) if !t.is_dir() => Err(refused(path, describe(t))),
        _ => Ok(()),
    }
}

/// Where a file meant for `dest` is written: `dest` itself, or the file a
/// symbolic link at `dest` leads to, so that the link stays and its target
/// gets the new contents (as a shell's `>` does).
fn write_through(dest: &Path) -> Result<PathBuf, OutputError> {
    match fs::symlink_metadata(dest) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(dest).map_err(|e| io(dest, e)),
        _ => Ok(dest.to_path_buf()),
    }
}

/// A file staged for a destination outside `<out>`.
struct External {
    dest: PathBuf,
    tmp: tempfile::TempPath,
}

/// A run's outputs on their way into `<out>`; see the module doc.
pub struct Transaction {
    out: PathBuf,
    owned: Owned,
    staging: Option<tempfile::TempDir>,
    external: Vec<External>,
    created_out: bool,
    /// Top-level names in the order first written, the order of `commit`'s paths.
    order: std::cell::RefCell<(Vec<String>, std::collections::HashSet<String>)>,
}

impl Transaction {
    /// Creates `<out>` if needed and the private staging directory in it.
    pub fn begin(out: &Path, owned: Owned) -> Result<Transaction, OutputError> {
        signals::install();
        check_dir_target(out)?;
        let created_out = file_type(out)?.is_none();
        // A concurrent run that created `<out>` and failed may remove it
        // (only when empty) between our two calls: retry a few times.
        let mut tries = 0;
        let staging = loop {
            fs::create_dir_all(out).map_err(|e| io(out, e))?;
            let made = tempfile::Builder::new()
                .prefix(&format!(".cuth-{}-", std::process::id()))
                .tempdir_in(out);
            match made {
                Ok(d) => break d,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 5 => tries += 1,
                Err(e) => return Err(io(out, e)),
            }
        };
        signals::register(staging.path());
        // A commit killed in `<out>` is finished now when no other run
        // holds the folder (else by the next commit, under the lock).
        if let Ok(_lock) = DirLock::acquire(out, Duration::ZERO) {
            manifest::repair(out)?;
        }
        Ok(Transaction {
            out: out.to_path_buf(),
            owned,
            staging: Some(staging),
            external: Vec::new(),
            created_out,
            order: Default::default(),
        })
    }

    /// The final directory.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// The private staging directory (what will become `<out>`'s entries).
    pub fn staging(&self) -> &Path {
        match &self.staging {
            Some(d) => d.path(),
            None => &self.out,
        }
    }

    /// Writes `bytes` to `rel` under the staging directory (parents created).
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        use std::io::Write;
        let mut f = self.create(rel)?;
        f.write_all(bytes).map_err(|e| io(&self.out.join(rel), e))
    }

    /// Creates `rel` under the staging directory (parents created) for a
    /// caller that streams a large file into it; it is committed with the
    /// rest (nothing half-written ever appears under `<out>`).
    pub fn create(&self, rel: &Path) -> Result<fs::File, OutputError> {
        let path = self.staging().join(rel);
        if let Some(std::path::Component::Normal(top)) = rel.components().next() {
            let top = top.to_string_lossy().into_owned();
            let mut order = self.order.borrow_mut();
            if order.1.insert(top.clone()) {
                order.0.push(top);
            }
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        fs::File::create(&path).map_err(|e| io(&self.out.join(rel), e))
    }

    /// Stages `bytes` for `dest`, a file outside `<out>` (`--save-state`),
    /// in a private temporary in `dest`'s directory; it is renamed into
    /// place by [`Transaction::commit`]. A symbolic link at `dest` is
    /// written through: its target is replaced, the link kept.
    pub fn stage_external(&mut self, dest: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        check_file_target(dest)?;
        let dest = &write_through(dest)?;
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let prefix = format!(".cuth-{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        // The file becomes the user's (a state file, an imported stack), so
        // it gets `File::create`'s mode (0666 less the umask), not the
        // temporary's private 0600.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let mut tmp = builder.tempfile_in(parent).map_err(|e| io(dest, e))?;
        signals::register(tmp.path());
        std::io::Write::write_all(&mut tmp, bytes).map_err(|e| io(dest, e))?;
        self.external.push(External {
            dest: dest.to_path_buf(),
            tmp: tmp.into_temp_path(),
        });
        Ok(())
    }

    /// Moves everything into place under the lock and removes what the
    /// previous run wrote and this one did not; returns the top-level
    /// paths written in `<out>`, in the order first written.
    pub fn commit(self) -> Result<Vec<PathBuf>, OutputError> {
        self.commit_waiting(LOCK_WAIT)
    }

    /// [`Transaction::commit`], waiting at most `wait` for the lock.
    pub fn commit_waiting(mut self, wait: Duration) -> Result<Vec<PathBuf>, OutputError> {
        let _lock = DirLock::acquire(&self.out, wait)?;
        // Signals wait until the renames are done (or not started).
        let mut registered = signals::hold();
        manifest::repair(&self.out)?;
        let staging = self.staging().to_path_buf();
        let files = self.staged_files(&staging)?;
        // 1. Check every destination before moving anything.
        for rel in &files {
            self.check_destination(rel)?;
        }
        for x in &self.external {
            check_file_target(&x.dest)?;
        }
        // 2. External files first (a failure there leaves <out> as it was).
        for x in std::mem::take(&mut self.external) {
            let tmp = x.tmp.to_path_buf();
            x.tmp.persist(&x.dest).map_err(|e| io(&x.dest, e.error))?;
            registered.retain(|p| *p != tmp);
        }
        // 3. The commit proper (see `manifest`): journalled, so a SIGKILL
        //    in it is finished by the next run.
        let staging_name = staging
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(command) = self.owned.command() {
            let run = manifest::Manifest {
                command: command.to_string(),
                files: files.clone(),
            };
            manifest::commit(&self.out, &staging_name, run)?;
        } else {
            for rel in &files {
                let dest = self.out.join(rel);
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
                }
                fs::rename(staging.join(rel), &dest).map_err(|e| io(&dest, e))?;
            }
        }
        // 4. Staging left by killed runs.
        for e in fs::read_dir(&self.out).map_err(|e| io(&self.out, e))? {
            let e = e.map_err(|e| io(&self.out, e))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path() != staging && is_dead_staging(&name) {
                let _ = remove_any(&e.path());
            }
        }
        self.created_out = false;
        let mut written: Vec<PathBuf> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for rel in &files {
            let top = rel.split('/').next().unwrap_or(rel);
            if seen.insert(top) {
                written.push(self.out.join(top));
            }
        }
        Ok(written)
    }

    /// Every staged file, relative with `/`, in the order their top-level
    /// entries were first written (then by name: a stack of 10 000 layers
    /// stages 20 000 files, so hash lookups), each directory's files sorted.
    fn staged_files(&self, staging: &Path) -> Result<Vec<String>, OutputError> {
        let rank: std::collections::HashMap<String, usize> = self
            .order
            .borrow()
            .0
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let rank_of = |n: &str| rank.get(n).copied().unwrap_or(usize::MAX);
        let mut files = Vec::new();
        collect_files(staging, "", &mut files)?;
        files.sort_by(|a, b| {
            let top = |s: &str| s.split('/').next().unwrap_or("").to_string();
            let (ta, tb) = (top(a), top(b));
            (rank_of(&ta), ta, a).cmp(&(rank_of(&tb), tb, b))
        });
        Ok(files)
    }

    /// A staged file may replace only a regular file, and every folder on
    /// its way must be absent or a folder (devices, FIFOs, sockets and a
    /// directory where a file goes are refused before anything moves).
    fn check_destination(&self, rel: &str) -> Result<(), OutputError> {
        let mut dest = self.out.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            dest.push(part);
            let last = i + 1 == parts.len();
            match file_type(&dest)? {
                None => return Ok(()),
                Some(t) if last && !t.is_file() => return Err(refused(&dest, describe(t))),
                Some(t) if !last && !t.is_dir() => return Err(refused(&dest, describe(t))),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Appends the files under `dir` (relative to the staging root, `prefix`
/// so far) to `out`.
fn collect_files(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), OutputError> {
    for e in fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let e = e.map_err(|e| io(dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if e.file_type().map_err(|er| io(&e.path(), er))?.is_dir() {
            collect_files(&e.path(), &rel, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// The manifest of the run `out` holds, if any.
pub fn manifest_of(out: &Path) -> Option<Manifest> {
    manifest::read(out)
}

/// Removes a dead run's staging; a symlink is removed, never what it points to.
fn remove_any(path: &Path) -> Result<(), OutputError> {
    let r = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => Ok(()),
    };
    r.map_err(|e| io(path, e))
}

/// `.cuth-<pid>-*` whose process no longer runs (killed with SIGKILL).
fn is_dead_staging(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(".cuth-") else {
        return false;
    };
    let Some((pid, _)) = rest.split_once('-') else {
        return false;
    };
    match pid.parse::<u32>() {
        Ok(pid) => pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists(),
        Err(_) => false,
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        for x in &self.external {
            signals::unregister(&x.tmp);
        }
        self.external.clear();
        if let Some(d) = self.staging.take() {
            signals::unregister(d.path());
            let _ = d.close();
        }
        if self.created_out {
            // Only succeeds when empty: removes nothing but our own directory.
            let _ = fs::remove_dir(&self.out);
        }
    }
}

/// An exclusive `flock` on a directory, released on drop.
struct DirLock {
    _file: fs::File,
}

impl DirLock {
    fn acquire(dir: &Path, wait: Duration) -> Result<DirLock, OutputError> {
        use rustix::fs::{flock, FlockOperation};
        let file = fs::File::open(dir).map_err(|e| io(dir, e))?;
        let t0 = Instant::now();
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(DirLock { _file: file }),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {
                    if t0.elapsed() >= wait {
                        return Err(OutputError::Locked {
                            path: dir.to_path_buf(),
                            waited_s: wait.as_secs(),
                        });
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(io(dir, e.into())),
            }
        }
    }
}
