//! The output transaction on its own: staging, stale entries of its kind,
//! external files, the lock, staging of killed runs, and drop.

use super::transaction::{Owned, Transaction};
use super::OutputError;
use std::path::Path;
use std::time::Duration;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn stale_entries_of_its_kind_go_others_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    std::fs::create_dir_all(out.join("snapshots/step_00001")).unwrap();
    for f in [
        "05_old.png",
        "05_old.csv",
        "notes.txt",
        "timeseries.csv",
        "9_x.png",
    ] {
        std::fs::write(out.join(f), "old").unwrap();
    }
    let txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.write(Path::new("00_a.png"), b"new").unwrap();
    txn.write(Path::new("final/summary.json"), b"{}").unwrap();
    txn.write(Path::new("summary.json"), b"{}").unwrap();
    let written = txn.commit().unwrap();
    let written: Vec<_> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        written,
        ["00_a.png", "final", "summary.json"],
        "order written"
    );
    // Not ours: notes.txt, and 9_x.png (one digit is not a layer map).
    assert_eq!(
        names(&out),
        ["00_a.png", "9_x.png", "final", "notes.txt", "summary.json"]
    );
    assert_eq!(std::fs::read(out.join("00_a.png")).unwrap(), b"new");
}

#[test]
fn external_files_land_with_the_commit_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let state = tmp.path().join("state.bin");
    let mut txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.write(Path::new("summary.json"), b"{}").unwrap();
    txn.stage_external(&state, b"cuth-state").unwrap();
    assert!(!state.exists(), "staged, not yet in place");
    drop(txn);
    assert_eq!(
        names(tmp.path()),
        Vec::<String>::new(),
        "dropped: nothing left"
    );

    let mut txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.stage_external(&state, b"cuth-state").unwrap();
    txn.commit().unwrap();
    assert_eq!(std::fs::read(&state).unwrap(), b"cuth-state");
    assert_eq!(names(tmp.path()), ["o", "state.bin"]);
}

#[cfg(unix)]
#[test]
fn external_files_get_the_mode_of_an_ordinary_new_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    std::fs::write(&plain, b"x").unwrap();
    let state = tmp.path().join("state.bin");
    let out = tmp.path().join("o");
    let mut txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.stage_external(&state, b"cuth-state").unwrap();
    txn.commit().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // Both under the same umask: 0644 under the usual 022, not tempfile's 0600.
    assert_eq!(mode(&state), mode(&plain));
}

#[test]
fn a_held_lock_makes_the_commit_wait_then_fail_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("summary.json"), "previous").unwrap();
    let holder = std::fs::File::open(&out).unwrap();
    rustix::fs::flock(&holder, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.write(Path::new("summary.json"), b"new").unwrap();
    let t0 = std::time::Instant::now();
    let err = txn.commit_waiting(Duration::from_millis(200)).unwrap_err();
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert!(matches!(err, OutputError::Locked { .. }), "{err}");
    assert_eq!(names(&out), ["summary.json"], "staging removed");
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        "previous"
    );
    drop(holder);
    let txn = Transaction::begin(&out, Owned::Thermal).unwrap();
    txn.write(Path::new("summary.json"), b"new").unwrap();
    txn.commit_waiting(Duration::from_millis(200)).unwrap();
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), b"new");
}

#[test]
fn staging_of_dead_runs_is_removed_by_the_next_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // A pid above the kernel's pid_max (2^22) never runs.
    let dead = out.join(".cuth-4999999-abc");
    let alive = out.join(format!(".cuth-{}-other", std::process::id()));
    std::fs::create_dir_all(dead.join("snapshots")).unwrap();
    std::fs::create_dir_all(&alive).unwrap();
    let txn = Transaction::begin(&out, Owned::Topopt).unwrap();
    txn.write(Path::new("density.vti"), b"x").unwrap();
    txn.commit().unwrap();
    let left = names(&out);
    assert!(!left.contains(&".cuth-4999999-abc".to_string()), "{left:?}");
    assert!(left.contains(&alive.file_name().unwrap().to_string_lossy().into_owned()));
}

#[test]
fn a_file_where_the_folder_should_be_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let err = Transaction::begin(&file, Owned::Thermal).err().unwrap();
    assert!(matches!(err, OutputError::NotRegular { .. }), "{err}");
    let err = Transaction::begin(Path::new("/dev/null"), Owned::Thermal)
        .err()
        .unwrap();
    assert!(err.to_string().contains("a device"), "{err}");
}

#[test]
fn an_out_linked_to_a_directory_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("scratch");
    std::fs::create_dir(&real).unwrap();
    let link = tmp.path().join("o");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let txn = Transaction::begin(&link, Owned::Thermal).unwrap();
    txn.write(Path::new("summary.json"), b"{}").unwrap();
    txn.commit().unwrap();
    assert_eq!(names(&real), ["summary.json"]);
}
