//! Output destinations through the CLI: one of the wrong type is an input
//! error (exit 2) that says what is there, found before any work; a
//! symbolic link to a file is written through, its target replaced.

use crate::util::cli::*;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

fn solve_into(out: &Path) -> std::process::Output {
    let mut a = vec!["solve", "configs/mol_f2f.toml", "--out", s(out)];
    a.extend(SMALL);
    cuth(&a)
}

/// Each destination fault has its own reason, and exit 2.
#[test]
fn wrong_destinations_are_input_errors_that_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let dir = tmp.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    for (dest, what) in [(&fifo, "it is a FIFO"), (&dir, "it is a directory")] {
        let o = cuth(&[
            "import",
            "3dice",
            "configs/3dice/two_dies.stk",
            "--out",
            s(dest),
            "--force",
            "-q",
        ]);
        fails_with(&o, 2, &[s(dest), what]);
    }
    // A link to nothing: refused before the solve (mkdir would fail after it).
    let dangling = tmp.path().join("dangling");
    symlink(tmp.path().join("nowhere"), &dangling).unwrap();
    fails_with(
        &solve_into(&dangling),
        2,
        &["--out", "which does not exist"],
    );
    let o = cuth(&[
        "import",
        "3dice",
        "configs/3dice/two_dies.stk",
        "--out",
        s(&dangling),
        "-q",
    ]);
    fails_with(&o, 2, &["which does not exist"]);
    // A regular file is called one.
    let file = write(tmp.path(), "file", "x");
    fails_with(
        &solve_into(&file),
        2,
        &["it is a regular file, not a directory"],
    );
    // A loop of links is named as such.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    symlink(&b, &a).unwrap();
    symlink(&a, &b).unwrap();
    fails_with(&solve_into(&a), 2, &["a loop of symbolic links"]);
    // A trace of a time column alone lacks blocks (not "a block `time`").
    let trace = write(tmp.path(), "t.csv", "time\n0\n1\n");
    let out = tmp.path().join("o");
    let mut args = vec![
        "transient",
        "configs/hotspot_ev6_3d.toml",
        "--dt",
        "1e-3",
        "--steps",
        "2",
        "--trace",
        s(&trace),
        "--out",
        s(&out),
    ];
    args.extend(SMALL);
    input_error(&args, &out, &["t.csv", "no block columns after `time`"]);
}

/// `--save-state` and `import --out --force` onto a symbolic link replace
/// the file it points to and keep the link.
#[test]
fn state_files_and_imports_are_written_through_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let real = write(tmp.path(), "real.state", "old");
    let link = tmp.path().join("link.state");
    symlink(&real, &link).unwrap();
    let out = tmp.path().join("o");
    let mut a = vec!["solve", "configs/mol_f2f.toml", "--out", s(&out)];
    a.extend(["--save-state", s(&link)]);
    a.extend(SMALL);
    ok(&cuth(&a));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(state(&real).0.starts_with("cuth-state 1"));

    let real = write(tmp.path(), "real.toml", "old");
    let link = tmp.path().join("link.toml");
    symlink(&real, &link).unwrap();
    ok(&cuth(&[
        "import",
        "3dice",
        "configs/3dice/two_dies.stk",
        "--out",
        s(&link),
        "--force",
        "-q",
    ]));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("[boundary]"));
}
