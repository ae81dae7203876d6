//! The output folder through the CLI: cuth removes only files it wrote
//! (its manifest), a file of the previous run it does not write again goes,
//! and an output path that is one of the run's inputs is refused.

use crate::util::cli::*;
use std::path::Path;

fn put(dir: &Path, rel: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "mine").unwrap();
}

#[test]
fn a_solve_keeps_user_files_that_look_like_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let user = [
        "00_my_analysis.csv",
        "99_plot.png",
        // Not `timeseries.csv`: the transient writes that name itself.
        "blocks.csv",
        "final/thesis.tex",
        "snapshots/notes.txt",
    ];
    for f in user {
        put(&out, f);
    }
    let mut a = vec!["solve", "configs/mol_f2f.toml", "-q", "--out", s(&out)];
    a.extend(SMALL);
    ok(&cuth(&a));
    let mut t = vec!["transient", "configs/mol_f2f.toml", "-q", "--out", s(&out)];
    t.extend(["--dt", "1e-3", "--steps", "2", "--snapshot-every", "1"]);
    t.extend(SMALL);
    ok(&cuth(&t));
    ok(&cuth(&a));
    for f in user {
        assert_eq!(
            std::fs::read_to_string(out.join(f)).unwrap(),
            "mine",
            "{f}: {:?}",
            names(&out)
        );
    }
    // The transient's own files are gone again.
    assert!(!out.join("temperature.png").exists());
    assert_eq!(names(&out.join("snapshots")), ["notes.txt"]);
}

#[test]
fn a_field_npy_not_written_again_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let base = ["solve", "configs/mol_f2f.toml", "-q", "--device", "cpu"];
    let mut a = base.to_vec();
    a.extend(["--grid", "16x16", "--npy", "f64", "--out", s(&out)]);
    ok(&cuth(&a));
    assert!(out.join("field.npy").exists());
    let mut b = base.to_vec();
    b.extend(["--grid", "8x8", "--out", s(&out)]);
    ok(&cuth(&b));
    assert!(!out.join("field.npy").exists(), "{:?}", names(&out));
}

#[test]
fn save_state_onto_an_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = write(tmp.path(), "stack.toml", &die(""));
    let out = tmp.path().join("o");
    let a = ["solve", s(&stack), "--device", "cpu", "--out", s(&out)];
    let mut b = a.to_vec();
    b.extend(["--save-state", s(&stack)]);
    input_error(&b, &out, &["--save-state", "the stack", "an input"]);
    assert_eq!(std::fs::read_to_string(&stack).unwrap(), die(""));

    let st = tmp.path().join("s.state");
    let mut c = a.to_vec();
    c.extend(["-q", "--save-state", s(&st)]);
    ok(&cuth(&c));
    let before = std::fs::read(&st).unwrap();
    let out2 = tmp.path().join("o2");
    let t = [
        "transient",
        s(&stack),
        "--device",
        "cpu",
        "--out",
        s(&out2),
        "--dt",
        "1e-3",
        "--steps",
        "1",
        "--init",
        s(&st),
        "--save-state",
        s(&st),
    ];
    input_error(&t, &out2, &["--save-state", "--init"]);
    assert_eq!(std::fs::read(&st).unwrap(), before);
}

/// A power raster the stack reads is an input too: overwriting it would
/// make the next run of the same stack read a state file as power.
#[test]
fn save_state_onto_a_stack_power_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let configs = tmp.path().join("configs");
    let maps = tmp.path().join("powermaps");
    std::fs::create_dir(&configs).unwrap();
    std::fs::create_dir(&maps).unwrap();
    let stack = configs.join("mol_f2f.toml");
    std::fs::copy("configs/mol_f2f.toml", &stack).unwrap();
    for m in ["mol_logic.csv", "mol_memory.csv"] {
        std::fs::copy(format!("powermaps/{m}"), maps.join(m)).unwrap();
    }
    let raster = maps.join("mol_logic.csv");
    let before = std::fs::read(&raster).unwrap();
    let out = tmp.path().join("o");
    // Named through another spelling of the same file.
    let spelled = configs.join("../powermaps/mol_logic.csv");
    let mut a = vec![
        "solve",
        s(&stack),
        "--out",
        s(&out),
        "--save-state",
        s(&spelled),
    ];
    a.extend(SMALL);
    input_error(&a, &out, &["--save-state", "power.file", "an input"]);
    assert_eq!(std::fs::read(&raster).unwrap(), before);
}
