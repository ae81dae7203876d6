//! What a commit wrote, recorded in `<out>/.cuth-run.json`, and the commit
//! itself as a roll-forward journal.
//!
//! A later commit removes only the files the previous manifest lists and it
//! does not write again, so a file in `<out>` that cuth did not write (a
//! user's `notes.txt`, `final/thesis.tex`, a `blocks.csv` of their own) is
//! never deleted, whatever its name. A folder without a manifest (empty, a
//! user's, or from a cuth before manifests) loses nothing.
//!
//! The commit first writes its intent, `<out>/.cuth-commit.json` (the
//! staging directory, the command, every file), by an atomic rename; then it
//! moves the staged files into place, removes the previous run's leftovers,
//! renames the new manifest into place and removes the intent last. A
//! process killed anywhere in between (SIGKILL, the OOM killer) leaves the
//! intent and the rest of its staging, and the next cuth run into `<out>`
//! finishes that commit ([`repair`]) before doing anything else, so `<out>`
//! holds the old run, or the new one once repaired, never a mix that stays.

use super::super::OutputError;
use std::collections::HashSet;
use std::fs;
use std::path::Path;

/// The manifest of the run `<out>` holds.
pub const MANIFEST: &str = ".cuth-run.json";
/// The intent of a commit in progress (present only while one runs, or
/// after a killed one until the next run repairs it).
pub const INTENT: &str = ".cuth-commit.json";

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The command that wrote the run (`solve`, `topopt`, `sweep`).
    pub command: String,
    /// Every file of the run, relative to `<out>` with `/` separators.
    pub files: Vec<String>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct Intent {
    /// The staging directory's name in `<out>`.
    staging: String,
    run: Manifest,
}

fn io(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The previous run's manifest; `None` when there is none or it cannot be
/// read as one (then nothing is removed: a foreign file is never trusted).
pub fn read(out: &Path) -> Option<Manifest> {
    let text = fs::read(out.join(MANIFEST)).ok()?;
    let m: Manifest = serde_json::from_slice(&text).ok()?;
    m.files.iter().all(|f| is_safe_rel(f)).then_some(m)
}

/// A relative path that stays under `<out>`: no `..`, no root, no empty
/// component (a hand-edited manifest must not make cuth delete elsewhere).
pub fn is_safe_rel(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.starts_with('/')
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && rel != MANIFEST
        && rel != INTENT
}

/// Writes `bytes` to `out/name` by a rename of a temporary beside it, so a
/// reader sees the old content or the new, never a part.
fn write_atomic(out: &Path, name: &str, bytes: &[u8]) -> Result<(), OutputError> {
    let dest = out.join(name);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".cuth-{}-", std::process::id()))
        .suffix(".json")
        .tempfile_in(out)
        .map_err(|e| io(&dest, e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| io(&dest, e))?;
    tmp.as_file().sync_all().map_err(|e| io(&dest, e))?;
    tmp.persist(&dest).map_err(|e| io(&dest, e.error))?;
    Ok(())
}

/// Commits the staging directory `staging` (a name in `out`) as `run`:
/// writes the intent, then [`finish`]es it.
pub fn commit(out: &Path, staging: &str, run: Manifest) -> Result<(), OutputError> {
    let intent = Intent {
        staging: staging.to_string(),
        run,
    };
    let json = serde_json::to_vec(&intent).expect("an intent serializes");
    write_atomic(out, INTENT, &json)?;
    finish(out, &intent)
}

/// Finishes a commit whose intent is in `out`, if any (a run killed during
/// its commit). Called under the folder's lock.
pub fn repair(out: &Path) -> Result<(), OutputError> {
    let path = out.join(INTENT);
    let Ok(text) = fs::read(&path) else {
        return Ok(());
    };
    match serde_json::from_slice::<Intent>(&text) {
        Ok(i) if i.run.files.iter().all(|f| is_safe_rel(f)) && is_safe_rel(&i.staging) => {
            finish(out, &i)
        }
        // Not ours to interpret (truncated cannot happen: it is renamed
        // into place whole); leave the folder as it is.
        _ => fs::remove_file(&path).map_err(|e| io(&path, e)),
    }
}

/// Every step is idempotent, so a repair may run it again after a kill at
/// any point: a file already moved is no longer in the staging; the
/// previous manifest is replaced only after the leftovers are gone.
fn finish(out: &Path, intent: &Intent) -> Result<(), OutputError> {
    let staging = out.join(&intent.staging);
    for rel in &intent.run.files {
        let (src, dest) = (staging.join(rel), out.join(rel));
        if fs::symlink_metadata(&src).is_err() {
            continue;
        }
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        fs::rename(&src, &dest).map_err(|e| io(&dest, e))?;
    }
    let new: HashSet<&str> = intent.run.files.iter().map(String::as_str).collect();
    if let Some(old) = read(out) {
        for rel in old.files.iter().filter(|f| !new.contains(f.as_str())) {
            remove_file_and_empty_parents(out, rel)?;
        }
    }
    let json = serde_json::to_vec_pretty(&intent.run).expect("a manifest serializes");
    write_atomic(out, MANIFEST, &json)?;
    let path = out.join(INTENT);
    fs::remove_file(&path).map_err(|e| io(&path, e))?;
    let _ = fs::remove_dir_all(&staging);
    Ok(())
}

/// Removes `out/rel` when it is a file (a symlink is removed, never its
/// target; a directory put there since is left), then each parent folder
/// up to `out` that is left empty (a user file in it keeps it).
fn remove_file_and_empty_parents(out: &Path, rel: &str) -> Result<(), OutputError> {
    let path = out.join(rel);
    match fs::symlink_metadata(&path) {
        Ok(m) if !m.is_dir() => match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&path, e)),
        },
        _ => return Ok(()),
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == out || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}
