//! "No surprises" through the CLI, the messages of the
//! pictures' helpers: a missing stack reported once, `bench` from any
//! directory, `--trace` read by content and named, `--verbose` for solver
//! internals, power-density warnings for file-based power, and no progress
//! line when stderr is not a terminal.

use crate::util::cli::{cuth, die, err, fails_with, ok, s, write};
use std::process::Command;

fn out_text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_missing_stack_is_reported_once() {
    let transient = ["transient", "missing.toml", "--dt", "1e-3", "--steps", "1"];
    for args in [&["solve", "missing.toml"][..], &transient[..]] {
        let o = cuth(args);
        fails_with(&o, 2, &["missing.toml"]);
        let e = err(&o);
        assert_eq!(e.matches("missing.toml").count(), 1, "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    }
}

#[test]
fn bench_finds_its_stack_from_any_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(crate::util::cli::cuth_path())
        .args(["bench", "--sizes", "8", "--cpu-max", "8", "--cpu-only"])
        .args(["--degree-size", "0"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    ok(&o);
    assert!(out_text(&o).contains("mol_f2f.toml"), "{}", out_text(&o));
    // A --stack that is not there is named, exit 2.
    let o = Command::new(crate::util::cli::cuth_path())
        .args([
            "bench",
            "--stack",
            "nope.toml",
            "--sizes",
            "8",
            "--cpu-only",
        ])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    fails_with(&o, 2, &["nope.toml"]);
}

#[test]
fn trace_format_comes_from_the_content_and_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    // A CSV trace without .csv, and a HotSpot .ptrace named .csv.
    let csv = write(tmp.path(), "burst.trace", "time,IntExec_0\n0,1\n0.001,2\n");
    let ptrace = std::fs::read_to_string("configs/hotspot/ev6_3D.ptrace").unwrap();
    let ptrace = write(tmp.path(), "ev6.csv", &ptrace);
    let run = |trace: &std::path::Path, extra: &[&str]| {
        let out = tmp.path().join("out");
        let mut args = vec!["transient", "configs/hotspot_ev6_3d.toml", "--grid", "8x8"];
        args.extend(["--device", "cpu", "--dt", "1e-3", "--steps", "2"]);
        args.extend(["--out", s(&out), "--trace", s(trace)]);
        args.extend(extra);
        cuth(&args)
    };
    let o = run(&csv, &[]);
    ok(&o);
    assert!(
        err(&o).contains("burst.trace: read as a CSV trace"),
        "{}",
        err(&o)
    );
    let o = run(&ptrace, &["--sample-interval", "1e-3"]);
    ok(&o);
    assert!(
        err(&o).contains("ev6.csv: read as a HotSpot .ptrace"),
        "{}",
        err(&o)
    );
    // --quiet: nothing.
    let o = run(&csv, &["--quiet"]);
    ok(&o);
    assert!(o.stderr.is_empty(), "{}", err(&o));
}

#[test]
fn the_default_table_speaks_thermal_and_verbose_shows_the_solver() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(
        tmp.path(),
        "d.toml",
        &die("[layers.power]\ntype = \"uniform\"\ntotal = 0.5\n"),
    );
    let out = tmp.path().join("out");
    let args = [
        "solve",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--precond",
        "chebyshev",
    ];
    let o = cuth(&args);
    ok(&o);
    let plain = out_text(&o);
    assert!(plain.contains("converged in"), "{plain}");
    assert!(
        !plain.contains("lambda") && !plain.contains("preconditioner"),
        "{plain}"
    );
    let o = cuth(&[&args[..], &["--verbose"]].concat());
    ok(&o);
    let verbose = out_text(&o);
    assert!(verbose.contains("preconditioner chebyshev"), "{verbose}");
    assert!(verbose.contains("lambda_max="), "{verbose}");
    assert!(verbose.contains("timings"), "{verbose}");
}

#[test]
fn file_based_power_densities_warn_and_strict_makes_them_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // 10 W on a 0.5 × 0.5 mm block: 4 kW/cm².
    write(
        tmp.path(),
        "f.flp",
        "hot 0.0005 0.0005 0 0\ncool 0.001 0.001 0.001 0.001\n",
    );
    write(tmp.path(), "p.ptrace", "hot cool\n10 0.1\n");
    let fp = die("floorplan = \"f.flp\"\n[layers.power]\ntype = \"ptrace\"\nfile = \"p.ptrace\"\n");
    let st = write(tmp.path(), "fp.toml", &fp);
    // 50 W on one 1 mm² pixel of a 2 × 2 raster: 5 kW/cm².
    write(tmp.path(), "r.csv", "50,0\n0,0\n");
    let raster = die("[layers.power]\ntype = \"raster\"\nfile = \"r.csv\"\n");
    let rt = write(tmp.path(), "raster.toml", &raster);
    let out = tmp.path().join("out");
    for (stack, needles) in [
        (&st, ["power (ptrace) block `hot`", "4.000 kW/cm²"]),
        (&rt, ["power (raster) cell", "5.000 kW/cm²"]),
    ] {
        let o = cuth(&["solve", s(stack), "--out", s(&out), "--device", "cpu"]);
        ok(&o);
        let e = err(&o);
        for n in needles {
            assert!(e.contains(n), "`{n}` missing: {e}");
        }
        assert_eq!(e.matches("warning").count(), 1, "{e}");
        let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(json.contains("kW/cm"), "{json}");
        let strict = tmp.path().join("strict");
        let o = cuth(&[
            "solve",
            s(stack),
            "--out",
            s(&strict),
            "--device",
            "cpu",
            "--strict",
        ]);
        fails_with(&o, 2, &[needles[0], "--strict"]);
        assert!(!strict.exists());
    }
    // A modest trace stays silent.
    write(tmp.path(), "p.ptrace", "hot cool\n0.1 0.1\n");
    let o = cuth(&["solve", s(&st), "--out", s(&out), "--device", "cpu"]);
    ok(&o);
    assert!(!err(&o).contains("warning"), "{}", err(&o));
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    // Long enough (over a second on a small CPU) that a terminal would show it.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = cuth(&[
        "solve",
        "configs/mol_f2f.toml",
        "--grid",
        "384x384",
        "--device",
        "cpu",
        "--out",
        s(&out),
    ]);
    ok(&o);
    let e = err(&o);
    assert!(!e.contains("PCG iteration") && !e.contains('\r'), "{e}");
}
