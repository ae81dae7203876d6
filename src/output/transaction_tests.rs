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

fn commit(out: &Path, owned: Owned, files: &[&str]) -> Vec<String> {
    let txn = Transaction::begin(out, owned).unwrap();
    for f in files {
        txn.write(Path::new(f), f.as_bytes()).unwrap();
    }
    txn.commit()
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect()
}

fn tree(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    fn walk(d: &Path, pre: &str, v: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let n = format!("{pre}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{n}/"), v);
            } else {
                v.push(n);
            }
        }
    }
    walk(dir, "", &mut v);
    v.sort();
    v
}

#[test]
fn user_files_that_look_like_outputs_survive_every_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let user = [
        "00_my_analysis.csv",
        "99_plot.png",
        "blocks.csv",
        "timeseries.csv",
        "final/thesis.tex",
        "snapshots/notes.txt",
        "density.vti",
    ];
    for f in user {
        let p = out.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "mine").unwrap();
    }
    let written = commit(
        &out,
        Owned::Thermal,
        &["00_a.png", "final/summary.json", "summary.json"],
    );
    assert_eq!(
        written,
        ["00_a.png", "final", "summary.json"],
        "order written"
    );
    commit(&out, Owned::Thermal, &["01_b.png", "summary.json"]);
    commit(&out, Owned::Topopt, &["view_x.png", "summary.json"]);
    let left = tree(&out);
    for f in user {
        assert!(left.contains(&f.to_string()), "{f} removed: {left:?}");
        assert_eq!(std::fs::read_to_string(out.join(f)).unwrap(), "mine");
    }
    for f in ["00_a.png", "01_b.png", "final/summary.json"] {
        assert!(!left.contains(&f.to_string()), "{f} stale: {left:?}");
    }
}

#[test]
fn a_file_the_previous_run_wrote_and_this_one_does_not_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    commit(
        &out,
        Owned::Thermal,
        &["field.npy", "summary.json", "snapshots/step_1/a.csv"],
    );
    commit(&out, Owned::Thermal, &["summary.json"]);
    assert_eq!(tree(&out), [".cuth-run.json", "summary.json"]);
    let m = super::transaction::manifest_of(&out).unwrap();
    assert_eq!(m.files, ["summary.json"]);
}

#[test]
fn solve_then_topopt_then_sweep_leaves_only_the_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    commit(
        &out,
        Owned::Thermal,
        &[
            "00_die.png",
            "00_die.csv",
            "summary.json",
            "final/summary.json",
        ],
    );
    commit(&out, Owned::Topopt, &["density.vti", "summary.json"]);
    commit(
        &out,
        Owned::Sweep,
        &["sweep.csv", "summary.json", "cases/c0/x.csv"],
    );
    assert_eq!(
        tree(&out),
        [
            ".cuth-run.json",
            "cases/c0/x.csv",
            "summary.json",
            "sweep.csv"
        ]
    );
    assert_eq!(
        super::transaction::manifest_of(&out).unwrap().command,
        "sweep"
    );
}

#[test]
fn a_commit_killed_half_way_is_finished_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    commit(&out, Owned::Thermal, &["00_old.png", "summary.json"]);
    // What a SIGKILL after the intent and the first rename leaves: the
    // intent, one new file in place, the rest still staged.
    let staging = out.join(".cuth-4999999-killed");
    std::fs::create_dir_all(staging.join("final")).unwrap();
    std::fs::write(staging.join("summary.json"), "new").unwrap();
    std::fs::write(staging.join("final/summary.json"), "new").unwrap();
    std::fs::write(out.join("01_new.png"), "new").unwrap();
    let intent = serde_json::json!({
        "staging": ".cuth-4999999-killed",
        "run": {"command": "solve", "files": ["01_new.png", "final/summary.json", "summary.json"]},
    });
    std::fs::write(out.join(".cuth-commit.json"), intent.to_string()).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    // Any next run repairs before it commits; here one that writes nothing new.
    Transaction::begin(&out, Owned::Thermal).unwrap();
    assert_eq!(
        tree(&out),
        [
            ".cuth-run.json",
            "01_new.png",
            "final/summary.json",
            "notes.txt",
            "summary.json"
        ]
    );
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), b"new");
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
    assert_eq!(names(&real), [".cuth-run.json", "summary.json"]);
}
