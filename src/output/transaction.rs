//! One output transaction for every command (`solve`, `transient`, `topopt`,
//! `bench --out`): a run stages all its files in a private directory
//! `<out>/.cuth-<pid>-<random>/` (and a file meant for elsewhere, such as
//! `--save-state`, in a private temporary beside its destination), then
//! commits under an advisory lock on `<out>`:
//!
//! 1. every destination is checked: a file may only replace a regular file,
//!    a directory only a directory (devices, FIFOs and sockets are
//!    refused, and nothing has been moved yet);
//! 2. the staged entries are renamed into place (a directory replaces the old
//!    one of the same name);
//! 3. files and directories of the run's own [`Owned`] kind that it did not
//!    write are removed (stale `NN_*.png` layers, old snapshots), so `<out>`
//!    holds exactly one run's outputs.
//!
//! A second run that reaches its commit while the lock is held waits for it,
//! up to [`LOCK_WAIT`] (then it fails with exit code 1 and removes its
//! staging). Dropping an uncommitted transaction removes the staging (and
//! `<out>` when this run created it and it is empty); SIGINT, SIGTERM and
//! SIGHUP do the same through [`super::signals`] before the process exits.

mod owned;

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
/// rename simply replaces).
fn file_type(path: &Path) -> Result<Option<fs::FileType>, OutputError> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some(m.file_type())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, e)),
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
    } else {
        "not a regular file"
    }
}

/// A file destination (`--save-state FILE`, an output file): absent or a
/// regular file; anything else is refused.
pub fn check_file_target(path: &Path) -> Result<(), OutputError> {
    match file_type(path)? {
        Some(t) if !t.is_file() => Err(refused(path, describe(t))),
        _ => Ok(()),
    }
}

/// An output directory: absent or a directory.
pub fn check_dir_target(path: &Path) -> Result<(), OutputError> {
    match file_type(path)? {
        Some(t) if !t.is_dir() => Err(refused(path, describe(t))),
        _ => Ok(()),
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
    /// place by [`Transaction::commit`].
    pub fn stage_external(&mut self, dest: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        check_file_target(dest)?;
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

    /// Moves everything into place under the lock and removes stale entries
    /// of the run's kind; returns the paths written in `<out>`.
    pub fn commit(self) -> Result<Vec<PathBuf>, OutputError> {
        self.commit_waiting(LOCK_WAIT)
    }

    /// [`Transaction::commit`], waiting at most `wait` for the lock.
    pub fn commit_waiting(mut self, wait: Duration) -> Result<Vec<PathBuf>, OutputError> {
        let _lock = DirLock::acquire(&self.out, wait)?;
        // Signals wait until the renames are done (or not started).
        let mut registered = signals::hold();
        let staging = self.staging().to_path_buf();
        let mut entries: Vec<(String, bool)> = Vec::new();
        for e in fs::read_dir(&staging).map_err(|e| io(&staging, e))? {
            let e = e.map_err(|e| io(&staging, e))?;
            let is_dir = e.file_type().map_err(|er| io(&e.path(), er))?.is_dir();
            entries.push((e.file_name().to_string_lossy().into_owned(), is_dir));
        }
        // In the order first written, then anything staged otherwise by name
        // (hash lookups: a stack of 10 000 layers stages 20 000 files).
        let rank: std::collections::HashMap<String, usize> = self
            .order
            .borrow()
            .0
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let rank_of = |n: &str| rank.get(n).copied().unwrap_or(usize::MAX);
        entries.sort_by(|a, b| (rank_of(&a.0), &a.0).cmp(&(rank_of(&b.0), &b.0)));
        let staged: std::collections::HashSet<&str> =
            entries.iter().map(|(n, _)| n.as_str()).collect();
        // 1. Check every destination before moving anything.
        for (name, is_dir) in &entries {
            let dest = self.out.join(name);
            match file_type(&dest)? {
                Some(t) if *is_dir && !t.is_dir() => return Err(refused(&dest, describe(t))),
                Some(t) if !*is_dir && !t.is_file() => return Err(refused(&dest, describe(t))),
                _ => {}
            }
        }
        for x in &self.external {
            check_file_target(&x.dest)?;
        }
        // 2. Rename: external files first (a failure there leaves <out> as it was).
        for x in std::mem::take(&mut self.external) {
            let tmp = x.tmp.to_path_buf();
            x.tmp.persist(&x.dest).map_err(|e| io(&x.dest, e.error))?;
            registered.retain(|p| *p != tmp);
        }
        let mut written = Vec::with_capacity(entries.len());
        for (name, is_dir) in &entries {
            let (src, dest) = (staging.join(name), self.out.join(name));
            if *is_dir && dest.exists() {
                fs::remove_dir_all(&dest).map_err(|e| io(&dest, e))?;
            }
            fs::rename(&src, &dest).map_err(|e| io(&dest, e))?;
            written.push(dest);
        }
        // 3. Stale entries of our kind, and staging left by killed runs.
        for e in fs::read_dir(&self.out).map_err(|e| io(&self.out, e))? {
            let e = e.map_err(|e| io(&self.out, e))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let mine = staged.contains(name.as_str());
            if !mine && self.owned.owns(&name) {
                remove_any(&path)?;
            } else if path != staging && is_dead_staging(&name) {
                let _ = fs::remove_dir_all(&path);
            }
        }
        self.created_out = false;
        Ok(written)
    }
}

/// Removes a stale entry; a symlink is removed, never what it points to.
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
