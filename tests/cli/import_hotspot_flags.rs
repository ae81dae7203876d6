//! `cuth import hotspot` given HotSpot's own command line, as its run.sh
//! writes it: the file flags, settings that override the config's, the
//! `-grid_map_mode` carried into `[output] block_map` (which `blocks.steady`
//! then follows unless `--block-map` is given), and the note on HotSpot 7.0's
//! detailed-3D package.

use crate::util::cli::*;
use std::path::Path;

/// HotSpot's example 4 run.sh line, with `-grid_map_mode` added.
fn import_run_sh(out: &Path, map_mode: &str) -> std::process::Output {
    cuth(&[
        "import",
        "hotspot",
        "--out",
        s(out),
        "-c",
        "configs/hotspot/example.config",
        "-p",
        "configs/hotspot/ev6_3D.ptrace",
        "-grid_layer_file",
        "configs/hotspot/ev6_3D.lcf",
        "-model_type",
        "grid",
        "-detailed_3D",
        "on",
        "-grid_map_mode",
        map_mode,
        "-grid_steady_file",
        "outputs/example.grid.steady",
        "-steady_file",
        "outputs/example.steady",
    ])
}

/// `blocks.csv` column `col` (°C → K) and, for each of its rows, the
/// `blocks.steady` value (HotSpot's layout: `<layer>_<unit>`, `%.2f` K).
fn steady_and_csv(dir: &Path, col: &str) -> (Vec<f64>, Vec<f64>) {
    let steady = std::fs::read_to_string(dir.join("blocks.steady")).unwrap();
    let steady: std::collections::HashMap<&str, f64> = steady
        .lines()
        .map(|l| {
            let (name, t) = l.split_once('\t').unwrap();
            (name, t.parse::<f64>().unwrap())
        })
        .collect();
    let mut csv = csv::Reader::from_path(dir.join("blocks.csv")).unwrap();
    let at = csv
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == col)
        .unwrap();
    let (mut from_steady, mut column) = (Vec::new(), Vec::new());
    for r in csv.records() {
        let r = r.unwrap();
        from_steady.push(steady[format!("{}_{}", &r[0], &r[1]).as_str()]);
        column.push(r[at].parse::<f64>().unwrap() + 273.15);
    }
    (from_steady, column)
}

/// Equal to `blocks.steady`'s two decimals.
fn assert_close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 0.005 + 1e-9, "{x} vs {y}");
    }
}

#[test]
fn hotspot_command_line_imports_and_grid_map_mode_drives_blocks_steady() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ev6.toml");
    let o = import_run_sh(&stack, "avg");
    ok(&o);
    let notes = err(&o);
    assert!(notes.contains("-grid_map_mode avg"), "{notes}");
    assert!(
        notes.contains("-detailed_3D on: expect HotSpot 7.0"),
        "{notes}"
    );
    let text = std::fs::read_to_string(&stack).unwrap();
    assert!(text.contains("[output]\nblock_map = \"avg\""), "{text}");
    assert_eq!(
        cuth::stack::Stack::load(&stack).unwrap().block_map,
        Some(cuth::stack::BlockMap::Avg)
    );

    // The stack's choice, then --block-map over it.
    for (flag, col) in [(None, "t_avg_c"), (Some("max"), "t_max_c")] {
        let out = tmp.path().join(col);
        let mut args = vec![
            "solve",
            s(&stack),
            "--grid",
            "32x32",
            "--quiet",
            "--no-maps",
        ];
        args.extend(["--out", s(&out)]);
        if let Some(f) = flag {
            args.extend(["--block-map", f]);
        }
        ok(&cuth(&args));
        let (steady, column) = steady_and_csv(&out, col);
        assert_close(&steady, &column);
    }
}

#[test]
fn a_setting_on_the_command_line_overrides_the_config() {
    // The config says -grid_map_mode center; the command line wins.
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ev6.toml");
    ok(&import_run_sh(&stack, "min"));
    let text = std::fs::read_to_string(&stack).unwrap();
    assert!(text.contains("block_map = \"min\""), "{text}");
}

#[test]
fn bad_hotspot_flags_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ev6.toml");
    fails_with(
        &import_run_sh(&stack, "hottest"),
        2,
        &[
            "-grid_map_mode",
            "`hottest`",
            "overridden on the command line",
        ],
    );
    let base = [
        "import",
        "hotspot",
        "--out",
        s(&stack),
        "-c",
        "configs/hotspot/example.config",
    ];
    let with = |extra: &[&'static str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        cuth(&a)
    };
    fails_with(
        &with(&["-frob", "1"]),
        2,
        &["unknown HotSpot setting `-frob`"],
    );
    fails_with(&with(&["-p"]), 2, &["`-p` has no value"]);
    fails_with(
        &with(&["stray", "x"]),
        2,
        &["expected `-name value`, found `stray`"],
    );
    fails_with(
        &cuth(&[
            "import",
            "hotspot",
            "--out",
            s(&stack),
            "--config",
            "configs/hotspot/example.config",
            "-c",
            "x.config",
        ]),
        2,
        &["`-c` and --config"],
    );
    fails_with(
        &cuth(&["import", "hotspot", "--out", s(&stack)]),
        2,
        &["configuration file"],
    );
    assert!(!stack.exists(), "nothing written on an error");
}
