//! The `CUTH_*` environment knobs through the binary: a value that cannot
//! be read is bad input (exit 2) naming the variable, before anything is
//! written, for every command that reads them; a readable one runs.

use crate::util::cli::{cuth_env, fails_with, names, ok, s};

fn solve(out: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    let args = [
        "solve",
        "configs/mol_f2f.toml",
        "--grid",
        "16x16",
        "--device",
        "cpu",
        "--quiet",
        "--no-maps",
        "--out",
        s(out),
    ];
    cuth_env(&args, env)
}

#[test]
fn a_malformed_knob_is_bad_input_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let cases = [
        ("CUTH_QD_SCHEDULE", "diagonal", "auto, rows or columns"),
        ("CUTH_HOST_MEMORY_BYTES", "4GiB", "a number of bytes"),
        ("CUTH_DEVICE_MEMORY_BYTES", "-1", "a number of bytes"),
        ("CUTH_STAGE_MIB", "big", "a whole number of MiB"),
    ];
    for (var, value, expected) in cases {
        let o = solve(&out, &[(var, value)]);
        fails_with(&o, 2, &[var, value, expected]);
        assert!(names(tmp.path()).is_empty(), "{var}: nothing written");
    }
}

#[test]
fn every_command_that_reads_knobs_refuses_a_malformed_one() {
    let bad = [("CUTH_QD_SCHEDULE", "diagonal")];
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let transient = [
        "transient",
        "configs/mol_f2f.toml",
        "--grid",
        "8x8",
        "--device",
        "cpu",
        "--steps",
        "1",
        "--dt",
        "1e-3",
        "--out",
        s(&out),
    ];
    let topopt = ["topopt", "cantilever", "--device", "cpu", "--out", s(&out)];
    for args in [&["info"][..], &transient[..], &topopt[..]] {
        fails_with(&cuth_env(args, &bad), 2, &["CUTH_QD_SCHEDULE"]);
    }
    assert!(names(tmp.path()).is_empty(), "nothing written");
}

#[test]
fn readable_knobs_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let env = [
        ("CUTH_QD_SCHEDULE", "rows"),
        ("CUTH_STAGE_MIB", "64"),
        ("CUTH_HOST_MEMORY_BYTES", " 64000000000 "),
        ("CUTH_DEVICE_MEMORY_BYTES", ""),
        ("CUTH_HOST_ASSEMBLY", "1"),
        ("CUTH_PROFILE_SYNC", "1"),
    ];
    ok(&solve(&out, &env));
}
