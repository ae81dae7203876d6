//! End-to-end runs of `cuth transient`: the shipped example writes every
//! output and a state file that `--init` reads back; bad flags and bad
//! trace or state files exit with code 2, name the file and field, and
//! write nothing.

use crate::util::cli::cuth;
use std::path::Path;
use std::process::Output;

/// `cuth transient STACK --out OUT --device cpu [extra...]`.
fn transient(stack: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "transient",
        stack,
        "--out",
        out.to_str().unwrap(),
        "--device",
        "cpu",
    ];
    args.extend_from_slice(extra);
    cuth(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const EV6: &str = "configs/hotspot_ev6_3d.toml";

#[test]
fn ev6_with_a_csv_trace_writes_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ev6");
    let state = tmp.path().join("end.state");
    let o = transient(
        EV6,
        &out,
        &[
            "--grid",
            "16x16",
            "--dt",
            "1e-3",
            "--t-end",
            "0.02",
            "--trace",
            "configs/hotspot/ev6_burst.csv",
            "--snapshot-every",
            "10",
            "--save-state",
            state.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        o.stdout.is_empty() && o.stderr.is_empty(),
        "--quiet prints nothing"
    );
    for f in [
        "summary.json",
        "timeseries.csv",
        "temperature.png",
        "final/summary.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    for s in ["step_00010", "step_00020"] {
        assert!(
            out.join("snapshots")
                .join(s)
                .join("04_L4_cores.png")
                .is_file(),
            "{s}"
        );
    }
    assert!(!out.join(".transient.tmp").exists(), "staging removed");
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 21, "header, step 0 and 20 steps");
    assert!(lines[0].starts_with("step,time_s,trace_row,iterations,power_w"));
    assert!(
        lines[0].contains("L4_cores.IntExec_0_max_c"),
        "{}",
        lines[0]
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"], 20);
    assert_eq!(summary["trace_rows_used"], 4);
    assert!(
        summary["energy"]["max_step_relative_imbalance"]
            .as_f64()
            .unwrap()
            < 1e-6
    );

    // The saved state restarts a run: from it, a run with no time to relax
    // begins where the first ended.
    let out2 = tmp.path().join("again");
    let o = transient(
        EV6,
        &out2,
        &[
            "--grid",
            "16x16",
            "--dt",
            "1e-9",
            "--steps",
            "1",
            "--init",
            state.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s2: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (a, b) = (
        summary["layers"][4]["t_max_k"].as_f64().unwrap(),
        s2["layers"][4]["t_max_k"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 1e-3, "{a} vs {b}");
}

/// Runs a failing case: exit 2, the message contains every `needle`, and
/// the output directory is not created.
fn bad(extra: &[&str], needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("never");
    let o = transient(EV6, &out, extra);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{extra:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{extra:?}: `{n}` not in: {e}");
    }
    assert!(!out.exists(), "{extra:?}: wrote {}", out.display());
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &[u8]| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let g = ["--grid", "8x8"];
    bad(
        &[&g[..], &["--dt", "0", "--steps", "3"]].concat(),
        &["--dt"],
    );
    bad(
        &[&g[..], &["--dt", "-1e-3", "--steps", "3"]].concat(),
        &["--dt"],
    );
    bad(
        &[&g[..], &["--dt", "1e-3", "--steps", "3", "--t-end", "1"]].concat(),
        &["--t-end"],
    );
    bad(&[&g[..], &["--dt", "1e-3"]].concat(), &["--steps"]);
    bad(
        &[&g[..], &["--dt", "1e-3", "--steps", "0"]].concat(),
        &["--steps"],
    );
    bad(
        &[
            &g[..],
            &["--dt", "1e-3", "--steps", "2", "--sample-interval", "1"],
        ]
        .concat(),
        &["--trace"],
    );
    let unknown = write("unknown.csv", b"time,IntExec_0,NoSuchUnit\n0,1,2\n");
    bad(
        &[
            &g[..],
            &["--dt", "1e-3", "--steps", "2", "--trace", &unknown],
        ]
        .concat(),
        &["unknown.csv", "`NoSuchUnit`"],
    );
    let backwards = write("back.csv", b"time,IntExec_0\n0,1\n0.2,2\n0.1,3\n");
    bad(
        &[
            &g[..],
            &["--dt", "1e-3", "--steps", "2", "--trace", &backwards],
        ]
        .concat(),
        &["back.csv", "line 4", "must increase"],
    );
    bad(
        &[
            &g[..],
            &[
                "--dt",
                "1e-3",
                "--steps",
                "2",
                "--trace",
                &backwards,
                "--sample-interval",
                "1",
            ],
        ]
        .concat(),
        &["back.csv", "--sample-interval"],
    );
    let state = write("small.state", b"cuth-state 1 4 4 11\n");
    bad(
        &[&g[..], &["--dt", "1e-3", "--steps", "2", "--init", &state]].concat(),
        &["small.state", "[4, 4, 11]", "[8, 8, 11]"],
    );
    bad(
        &[
            &g[..],
            &["--dt", "1e-3", "--steps", "2", "--init", "no/such/file"],
        ]
        .concat(),
        &["no/such/file"],
    );
}

#[test]
fn a_steady_state_saved_by_solve_starts_a_transient_at_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("steady.state");
    let o = cuth(&[
        "solve",
        "configs/mol_f2f.toml",
        "--grid",
        "12x12",
        "--device",
        "cpu",
        "--out",
        tmp.path().join("s").to_str().unwrap(),
        "--save-state",
        state.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let steady: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = transient(
        "configs/mol_f2f.toml",
        &tmp.path().join("t"),
        &[
            "--grid",
            "12x12",
            "--dt",
            "0.1",
            "--steps",
            "3",
            "--init",
            state.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let t: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for l in 0..10 {
        let (a, b) = (
            steady["layers"][l]["t_max_k"].as_f64().unwrap(),
            t["layers"][l]["t_max_k"].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() < 1e-5,
            "layer {l}: steady {a}, after 3 steps {b}"
        );
    }
}

#[test]
fn pcg_details_only_with_verbose() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let args = [
            &["--grid", "8x8", "--dt", "1e-3", "--steps", "3"][..],
            extra,
        ]
        .concat();
        let o = transient(EV6, &tmp.path().join("o"), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let (plain, verbose) = (run(&[]), run(&["--verbose"]));
    // Thermal by default: iterations in one line, pointing at --verbose.
    assert!(
        plain.contains("iterations/step") && plain.contains("(--verbose for details)"),
        "{plain}"
    );
    assert!(
        !plain.contains("PCG (") && !plain.contains("rtol"),
        "{plain}"
    );
    assert!(
        verbose.contains("PCG (mg") && verbose.contains("rtol") && verbose.contains("s/step solve"),
        "{verbose}"
    );
    for text in [&plain, &verbose] {
        assert!(text.contains("energy:") && text.contains("peak"), "{text}");
    }
}

#[test]
fn scheme_flags_are_checked_and_reported() {
    let g = ["--grid", "8x8", "--dt", "1e-3", "--steps", "2"];
    bad(
        &[&g[..], &["--scheme", "rk4"]].concat(),
        &["--scheme", "rk4"],
    );
    for tol in ["0", "-1e-3", "nan"] {
        let flag = format!("--time-tol={tol}");
        bad(
            &[&g[..], &["--scheme", "trbdf2", &flag]].concat(),
            &["--time-tol", "positive"],
        );
    }
    bad(
        &[&g[..], &["--time-tol", "1e-3"]].concat(),
        &["--time-tol", "--scheme trbdf2"],
    );
    // An adaptive run reports its steps in summary.json.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tr");
    let o = transient(
        EV6,
        &out,
        &[
            &g[..],
            &[
                "--trace",
                "configs/hotspot/ev6_burst.csv",
                "--scheme",
                "trbdf2",
                "--time-tol",
                "1e-3",
                "--quiet",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["scheme"], "trbdf2");
    assert_eq!(s["time_tol_k"], 1e-3);
    assert_eq!(s["steps"], 2);
    let st = &s["stepping"];
    assert!(st["steps_taken"].as_u64().unwrap() >= 2, "{st}");
    assert!(st["max_dt_s"].as_f64().unwrap() <= 1e-3, "{st}");
    assert!(st["steps_rejected"].is_u64() && st["step_setups"].is_u64());
}
