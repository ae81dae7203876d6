//! "No surprises" through the CLI: plausibility warnings (stderr and
//! `summary.json`, errors with `--strict`), temperatures with units, and
//! `cuth transient` naming both ways to give its length.

use crate::util::cli::{cuth, err, input_error, s, write};

fn stack(ambient: &str, thickness: &str) -> String {
    format!(
        "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
         [boundary]\nambient = {ambient}\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
         [materials.cu]\nk = 400\nheat_capacity = 3.4e6\n\
         [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = {thickness}\n\
         [layers.power]\ntype = \"uniform\"\ntotal = 1.0\n\
         [[layers]]\nname = \"heat sink\"\nmaterial = \"cu\"\nthickness = 0.02\n"
    )
}

#[test]
fn unit_slips_warn_and_strict_makes_them_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "w.toml", &stack("45.0", "0.015"));
    let out = tmp.path().join("out");
    let o = cuth(&["solve", s(&st), "--out", s(&out), "--device", "cpu"]);
    assert!(o.status.success(), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("warning") && e.contains("boundary.ambient") && e.contains("\"45 C\""),
        "{e}"
    );
    assert!(e.contains("layers[0] (die).thickness"), "{e}");
    // The 2 cm sink is package: no warning for it.
    assert!(!e.contains("heat sink"), "{e}");
    assert_eq!(e.matches("warning").count(), 2, "{e}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["warnings"].as_array().unwrap().len(), 2);

    let strict = tmp.path().join("strict");
    input_error(
        &[
            "solve",
            s(&st),
            "--out",
            s(&strict),
            "--device",
            "cpu",
            "--strict",
        ],
        &strict,
        &["boundary.ambient", "--strict"],
    );
}

#[test]
fn temperatures_with_units_and_clean_stacks_are_silent() {
    let tmp = tempfile::tempdir().unwrap();
    for (amb, want) in [
        ("\"45 C\"", 318.15),
        ("\"318.15 K\"", 318.15),
        ("\"113 F\"", 318.15),
        ("300", 300.0),
    ] {
        let st = write(tmp.path(), "t.toml", &stack(amb, "\"150 um\""));
        let out = tmp.path().join("out");
        let o = cuth(&[
            "solve",
            s(&st),
            "--out",
            s(&out),
            "--device",
            "cpu",
            "--strict",
            "--json",
        ]);
        assert!(o.status.success(), "{amb}: {}", err(&o));
        assert!(!err(&o).contains("warning"), "{}", err(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            (json["ambient_k"].as_f64().unwrap() - want).abs() < 1e-9,
            "{amb}"
        );
        assert!(json.get("warnings").is_none());
    }
    let st = write(tmp.path(), "t.toml", &stack("\"45 degrees\"", "\"150 um\""));
    let out = tmp.path().join("bad");
    input_error(
        &["solve", s(&st), "--out", s(&out)],
        &out,
        &["line 8", "not a temperature", "\"45 C\""],
    );
}

#[test]
fn shipped_configs_raise_no_warnings() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let st = cuth::stack::Stack::load(&p).unwrap();
            assert!(st.warnings.is_empty(), "{}: {:?}", p.display(), st.warnings);
            n += 1;
        }
    }
    assert!(n >= 3);
}

#[test]
fn transient_without_a_length_names_steps_and_t_end() {
    let o = cuth(&["transient", "configs/mol_f2f.toml", "--dt", "1e-3"]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(e.contains("--steps") && e.contains("--t-end"), "{e}");
    assert!(!e.contains("panicked"));
}

/// `cuth solve ... | head` must not panic when the reader goes away: cuth
/// ends quietly (SIGPIPE, as other filters do) with its outputs complete.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_no_panic() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let mut child = Command::new(crate::util::cli::cuth_path())
        .args(["solve", "configs/mol_f2f.toml", "--grid", "16x16"])
        .args(["--device", "cpu", "--out", s(&out)])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before cuth prints
    let o = child.wait_with_output().unwrap();
    let e = err(&o);
    assert!(!e.contains("panicked"), "{e}");
    assert_ne!(o.status.code(), Some(101), "{e}");
    assert!(out.join("summary.json").exists(), "outputs not committed");
}
