//! Cleanup on SIGINT, SIGTERM and SIGHUP: `Drop` does not run when a signal
//! ends the process, so every staging path of an output [`Transaction`]
//! is registered here, and a watcher thread removes them all before the
//! process exits with 128 + the signal number. A commit [`hold`]s the
//! registry while it renames, so a signal then waits for the commit to end
//! and never interrupts it half-way. SIGXFSZ (file size limit) is caught
//! and ignored, so an oversized write fails with `EFBIG` and the normal
//! error path cleans up instead of the process being killed.
//!
//! [`Transaction`]: super::transaction::Transaction

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

fn staged() -> MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the watcher thread (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
        let _ = signal_hook::flag::register(
            SIGXFSZ,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let paths = staged();
                for p in paths.iter() {
                    remove(p);
                }
                std::process::exit(128 + sig);
            }
        });
    });
}

/// Removes a staging path; retried because the main thread may still be
/// creating files in it.
fn remove(p: &Path) {
    for _ in 0..20 {
        let r = if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
        if r.is_ok() || !p.exists() {
            return;
        }
    }
}

/// Removes `path` if the process is ended by a signal.
pub fn register(path: &Path) {
    staged().push(path.to_path_buf());
}

/// `path` is committed or removed: no longer the watcher's business.
pub fn unregister(path: &Path) {
    staged().retain(|p| p != path);
}

/// Keeps a signal from acting until the guard is dropped.
pub fn hold() -> MutexGuard<'static, Vec<PathBuf>> {
    staged()
}
