//! 3D-ICE's own test stacks and examples (copies under
//! tests/data/3dice/peer, laid out as 3D-ICE ships them) import with no
//! edits from the folder the user runs in: floorplans written as rectangle
//! lists, floorplan paths taken from the working directory as 3D-ICE opens
//! them, `discretization` and per-element `material` lines, the `output:`
//! probes, the non-uniform grid and the transient command.

use crate::util::cli::{err, fails_with, ok, s, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn peer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/peer")
}

/// `cuth ARGS` run from `dir`.
fn cuth_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(crate::util::cli::cuth_path())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cuth runs")
}

fn import_in(dir: &Path, stk: &str, out: &Path) -> Output {
    cuth_in(dir, &["import", "3dice", stk, "--out", s(out), "--force"])
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

const SOLID: [&str; 3] = ["bothsink", "topsink", "bottomsink"];

#[test]
fn solid_cases_import_from_the_stk_folder_and_the_folders_above() {
    let tmp = tempfile::tempdir().unwrap();
    let test = peer().join("test");
    for kind in ["steady", "transient"] {
        for case in SOLID {
            let out = tmp.path().join(format!("{kind}_{case}.toml"));
            let runs = [
                (test.join("solid").join(kind), format!("{case}.stk")),
                (test.join("solid"), format!("{kind}/{case}.stk")),
                (test.clone(), format!("solid/{kind}/{case}.stk")),
            ];
            for (dir, stk) in &runs {
                let o = import_in(dir, stk, &out);
                ok(&o);
                let st = cuth::stack::Stack::load(&out).unwrap();
                assert_eq!(st.probes.len(), 2, "{stk} from {}", dir.display());
            }
        }
    }
}

#[test]
fn steady_solid_cases_run_with_their_probes_and_balance_energy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = peer().join("test/solid/steady");
    for case in SOLID {
        let out = tmp.path().join(format!("{case}.toml"));
        let o = import_in(&dir, &format!("{case}.stk"), &out);
        ok(&o);
        assert!(
            err(&o).contains(&format!("next: cuth solve {}", out.display())),
            "{}",
            err(&o)
        );
        // background1 is five rectangles: one block of 12.5 W over them.
        let st = cuth::stack::Stack::load(&out).unwrap();
        let src = st.layers.iter().find(|l| l.name == "die2_source").unwrap();
        let Some(cuth::stack::PowerSpec::Blocks { blocks }) = &src.power else {
            panic!("die2_source has block power");
        };
        let named: Vec<_> = (blocks.iter())
            .filter(|b| b.name.starts_with("background1"))
            .collect();
        assert_eq!(named.len(), 1, "one block");
        let rects = named[0].rects();
        assert_eq!(rects.len(), 5);
        let area: f64 = rects.iter().map(|r| r.area()).sum();
        assert!((area - 25e-6).abs() < 1e-15, "{area}");
        assert_eq!(named[0].power, 12.5);
        let run = tmp.path().join(format!("run_{case}"));
        ok(&cuth_in(
            &dir,
            &[
                "solve",
                s(&out),
                "--device",
                "cpu",
                "--quiet",
                "--no-maps",
                "--out",
                s(&run),
            ],
        ));
        let j = json(&run.join("summary.json"));
        let e = &j["energy"];
        let p_in = e["power_in_w"].as_f64().unwrap();
        let p_out =
            e["heat_out_top_w"].as_f64().unwrap() + e["heat_out_bottom_w"].as_f64().unwrap();
        // 50 W in die1, 12.5 + 12.5 W in die2 (first slot).
        assert!((p_in - 75.0).abs() < 1e-9, "{p_in}");
        assert!((p_out - p_in).abs() < 1e-6 * p_in, "{p_out}");
        // The element is one row of blocks.csv, with its whole power.
        let blocks = std::fs::read_to_string(run.join("blocks.csv")).unwrap();
        let rows: Vec<&str> = (blocks.lines())
            .filter(|l| l.starts_with("die2_source,background1"))
            .collect();
        assert_eq!(rows.len(), 1, "{blocks}");
        assert!(
            rows[0].starts_with("die2_source,background1,12.5,"),
            "{}",
            rows[0]
        );
        let probes = std::fs::read_to_string(run.join("probes.csv")).unwrap();
        let suffix = case.trim_end_matches("sink");
        for (name, layer, x, y) in [
            ("node1", "die1_source", "5", "4.8"),
            ("node2", "die2_source", "0", "0"),
        ] {
            let row = format!("{name}_{suffix},{layer},{x},{y},");
            assert!(probes.contains(&row), "`{row}` missing from {probes}");
        }
    }
}

#[test]
fn transient_solid_case_names_its_transient_command_and_runs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = peer().join("test/solid/transient");
    let out = tmp.path().join("t.toml");
    let o = import_in(&dir, "bothsink.stk", &out);
    ok(&o);
    let e = err(&o);
    let trace = tmp.path().join("t.trace.csv");
    let want = format!(
        "next: cuth transient {} --trace {} --dt 0.002 --t-end 0.24",
        out.display(),
        trace.display()
    );
    assert!(e.contains(&want), "{e}");
    assert!(!e.contains("next: cuth solve"), "{e}");
    let run = tmp.path().join("run");
    ok(&cuth_in(
        &dir,
        &[
            "transient",
            s(&out),
            "--trace",
            s(&trace),
            "--dt",
            "0.002",
            "--t-end",
            "0.24",
            "--device",
            "cpu",
            "--quiet",
            "--no-maps",
            "--out",
            s(&run),
        ],
    ));
    let ts = std::fs::read_to_string(run.join("timeseries.csv")).unwrap();
    let mut lines = ts.lines().filter(|l| !l.starts_with('#'));
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    assert!(
        head.iter().any(|h| h.starts_with("probe.node1_both")),
        "{head:?}"
    );
    let last: Vec<f64> = lines
        .next_back()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(last[col("time_s")], 0.24);
    // The last slot's 75 W, settled: what comes in goes out (the slot is
    // long against the stack's time constant).
    let (p, q) = (last[col("power_w")], last[col("heat_out_w")]);
    assert!(
        (p - 75.0).abs() < 1e-9 && (q - p).abs() < 1e-3 * p,
        "{p} {q}"
    );
}

#[test]
fn floorplans_open_from_the_working_directory_first_then_beside_the_stk() {
    let tmp = tempfile::tempdir().unwrap();
    let (cwd, beside) = (tmp.path().join("run"), tmp.path().join("model"));
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&beside).unwrap();
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/uniform.stk"),
    )
    .unwrap();
    let stk = write(&beside, "u.stk", &base.replace("./uniform.flp", "p.flp"));
    let flp = |w: &str| {
        format!("All :\n position 0, 0 ;\n dimension 4000, 2000 ;\n power values {w} ;\n")
    };
    write(&beside, "p.flp", &flp("1.0"));
    let out = tmp.path().join("u.toml");
    let power = || {
        let st = cuth::stack::Stack::load(&out).unwrap();
        match &st
            .layers
            .iter()
            .find(|l| l.name == "DIE_source")
            .unwrap()
            .power
        {
            Some(cuth::stack::PowerSpec::Blocks { blocks }) => blocks[0].power,
            p => panic!("{p:?}"),
        }
    };
    ok(&import_in(&cwd, s(&stk), &out));
    assert_eq!(power(), 1.0);
    write(&cwd, "p.flp", &flp("2.0"));
    ok(&import_in(&cwd, s(&stk), &out));
    assert_eq!(
        power(),
        2.0,
        "the working directory's floorplan wins, as in 3D-ICE"
    );
    // Neither: both paths are named, nothing is written.
    let stk = write(&beside, "v.stk", &base.replace("./uniform.flp", "gone.flp"));
    let out = tmp.path().join("v.toml");
    let o = import_in(&cwd, s(&stk), &out);
    fails_with(
        &o,
        2,
        &[
            "v.stk:26: floorplan \"gone.flp\" not found",
            s(&cwd.join("gone.flp")),
            s(&beside.join("gone.flp")),
        ],
    );
    assert!(!out.exists());
}

#[test]
fn discretization_material_and_non_uniform_examples_import() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = peer().join("bin");
    // `non-uniform true` with 10 x 10 cells per 5000 um element: a graded
    // grid of 20 x 20 (every element's lines), not the 2 x 2 of the 5000 um
    // default cell; exact, so no note; per-element `material` lines that
    // name the source's material are accepted.
    let out = tmp.path().join("m.toml");
    let o = import_in(&bin, "example_steady_material.stk", &out);
    ok(&o);
    assert!(!err(&o).contains("--grid"), "{}", err(&o));
    assert!(err(&o).contains("output: 3 instruction(s)"), "{}", err(&o));
    let st = cuth::stack::Stack::load(&out).unwrap();
    assert_eq!((st.nx, st.ny), (20, 20));
    let (xe, _) = st.plane_edges.as_ref().expect("a graded grid");
    assert!(
        xe.windows(2).all(|w| (w[1] - w[0] - 5e-4).abs() < 1e-12),
        "{xe:?}"
    );
    assert_eq!(st.probes.len(), 1);
    assert_eq!((st.probes[0].x_m, st.probes[0].y_m), (5e-3, 3e-3));
    // `discretization N M` on a stack layer and a die, and per-element
    // discretization: every layer's lines, a note naming `--grid` where a
    // layer's cells are not the grid's.
    let out = tmp.path().join("n.toml");
    let o = import_in(&bin, "example_transient_nonuniform.stk", &out);
    ok(&o);
    let e = err(&o);
    assert!(
        e.contains("--grid NXxNY") && e.contains("CONN_TO_PCB"),
        "{e}"
    );
    assert!(
        e.contains("next: cuth transient") && e.contains("--dt 0.02"),
        "{e}"
    );
    let st = cuth::stack::Stack::load(&out).unwrap();
    let (xe, ye) = st.plane_edges.as_ref().expect("a graded grid");
    // The 1000 um default cell, TOP_DIE's 4 x 5, Hotspot1's 2 x 3 over
    // x 5000-10000 um and Hotspot2's 3 x 4 over y 5000-10000 um.
    let want: [(&Vec<f64>, &[f64]); 2] = [
        (xe, &[1e-3, 2.5e-3, 7.5e-3]),
        (ye, &[2e-3, 6.25e-3, 8.75e-3]),
    ];
    for (edges, lines) in want {
        for v in lines {
            assert!(
                edges.iter().any(|e| (e - v).abs() < 1e-12),
                "{v} in {edges:?}"
            );
        }
    }
    // Without `non-uniform true`, discretization is ignored, as by 3D-ICE.
    let text = std::fs::read_to_string(bin.join("example_transient_nonuniform.stk")).unwrap();
    let d = tmp.path();
    for f in ["mem.flp", "nonuniform.flp"] {
        std::fs::copy(bin.join(f), d.join(f)).unwrap();
    }
    let p = write(
        d,
        "u.stk",
        &text.replace("non-uniform true;", "non-uniform false;"),
    );
    let o = import_in(d, s(&p), &out);
    ok(&o);
    assert!(!err(&o).contains("--grid"), "{}", err(&o));
    assert!(err(&o).contains("discretization: ignored"), "{}", err(&o));
    let st = cuth::stack::Stack::load(&out).unwrap();
    assert_eq!((st.nx, st.ny), (10, 10));
}
