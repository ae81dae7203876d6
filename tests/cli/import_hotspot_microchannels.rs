//! HotSpot 7's microchannel example (example 5) through `cuth import
//! hotspot`: its straight channels become a 4RM cavity whose flow comes from
//! HotSpot's pressure network, the written stack solves with its power
//! leaving through the coolant, and a geometry that is not straight
//! channels is refused by file, row and column.

use crate::util::cli::{cuth, err, fails_with, s};
use std::path::Path;

const E5: &str = "tests/data/hotspot/example5";

fn import(dir: &str, out: &Path) -> std::process::Output {
    let f = |n: &str| format!("{dir}/{n}");
    cuth(&[
        "import",
        "hotspot",
        "--out",
        s(out),
        "-c",
        &f("example.config"),
        "-p",
        &f("example.ptrace"),
        "-materials_file",
        &f("example.materials"),
        "-grid_layer_file",
        &f("example.lcf"),
        "-model_type",
        "grid",
        "-detailed_3D",
        "on",
        "-use_microchannels",
        "1",
    ])
}

/// ṁ·c of example 5's cavity from HotSpot's own numbers, independently of
/// the importer: 19 straight channels of 39 cells of 200 µm, 100 µm deep,
/// water (µ 8.89e-4 Pa·s, 4172638 J/(m³ K)) at 52000 Pa. Per link, a
/// 100 × 200 µm duct 200 µm long: G = (1 − 0.63/2)(1e-4)³(2e-4)/(12 µ 2e-4);
/// a channel is 38 links in series.
fn example5_m_c() -> f64 {
    let (a, b, l, mu) = (100e-6_f64, 200e-6_f64, 200e-6_f64, 8.89e-4);
    let g = (1.0 - 0.63 * a / b) * a.powi(3) * b / (12.0 * mu * l);
    let q = 19.0 * 52000.0 * g / 38.0;
    q * 4172638.0
}

#[test]
fn example5_imports_as_a_4rm_cavity_and_its_power_leaves_through_the_coolant() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("e5.toml");
    let r = import(E5, &stack);
    assert!(r.status.success(), "{}", err(&r));
    let text = std::fs::read_to_string(&stack).unwrap();
    for key in [
        "[layers.cavity]",
        "model = \"4rm\"",
        "direction = \"-x\"",
        "inlet = 298.15",
        "-pumping_pressure 52000 Pa",
        "-htc on every wetted face",
        "-coolant_material water",
    ] {
        assert!(text.contains(key), "{key} missing:\n{text}");
    }
    let out = tmp.path().join("out");
    let r = cuth(&["solve", s(&stack), "--device", "cpu", "--out", s(&out)]);
    assert!(r.status.success(), "{}", err(&r));
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let e = &sum["energy"];
    assert!(e["relative_error"].as_f64().unwrap() < 1e-10, "{e}");
    // The trace's mean power: heater (64 + 32 + 32 + 0)/4 W, DRAM 0.7 W.
    let p = 32.0 + 0.7;
    let c = &sum["coolant"][0];
    assert_eq!(c["model"], "4rm");
    assert_eq!(c["channel_outlets_k"].as_array().unwrap().len(), 19);
    // The film standing for HotSpot's package ("none" material) carries
    // microwatts: the coolant takes the power to 1e-6.
    let heat = c["heat_w"].as_f64().unwrap();
    assert!((heat - p).abs() < 1e-6 * p, "{heat}");
    let outlet = c["outlet_mean_k"].as_f64().unwrap();
    let want = 298.15 + p / example5_m_c();
    assert!((outlet - want).abs() < 1e-6, "{outlet} vs {want}");
}

/// The second half of example 5's run.sh: the transient from the steady
/// state of the trace's mean power, as the import's note gives it. Every
/// step's energy balances with the coolant's enthalpy rise, the trace's
/// four rows are recorded, and the summary reports the coolant.
#[test]
fn example5_transient_runs_from_its_steady_state() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("e5.toml");
    let r = import(E5, &stack);
    assert!(r.status.success(), "{}", err(&r));
    let out = tmp.path().join("tr");
    let trace = format!("{E5}/example.ptrace");
    let r = cuth(&[
        "transient",
        s(&stack),
        "--trace",
        &trace,
        "--sample-interval",
        "0.01",
        "--scheme",
        "trbdf2",
        "--dt",
        "0.01",
        "--time-tol",
        "0.01",
        "--t-end",
        "0.04",
        "--init",
        "steady-mean",
        "--device",
        "cpu",
        "--no-maps",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let worst = sum["energy"]["max_step_relative_imbalance"]
        .as_f64()
        .unwrap();
    assert!(worst < 1e-7, "{}", sum["energy"]);
    assert_eq!(sum["coolant"][0]["model"], "4rm", "{}", sum["coolant"]);
    let records = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let rows = records.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(rows, 1 + 5, "header, t = 0 and four records:\n{records}");
}

#[test]
fn a_channel_that_bends_is_refused_by_file_row_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("e5");
    copy_dir(Path::new(E5), &dir);
    let csv = dir.join("microchannel_geometries/horizontal.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    // Row 3 (a wall) gets a fluid cell at column 20: the channel above turns.
    let mut rows: Vec<String> = text.lines().map(String::from).collect();
    let mut cells: Vec<&str> = rows[2].split(", ").collect();
    cells[19] = "1";
    rows[2] = cells.join(", ");
    std::fs::write(&csv, rows.join("\n") + "\n").unwrap();
    let stack = tmp.path().join("bend.toml");
    fails_with(
        &import(s(&dir), &stack),
        2,
        &["horizontal.csv:3:", "row 3, column 20", "straight channels"],
    );
    assert!(!stack.exists());
}

#[test]
fn a_geometry_needs_the_flag_and_hotspots_grid() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("e5.toml");
    let f = |n: &str| format!("{E5}/{n}");
    let (c, p, m, l) = (
        f("example.config"),
        f("example.ptrace"),
        f("example.materials"),
        f("example.lcf"),
    );
    let base = [
        "import",
        "hotspot",
        "--out",
        s(&out),
        "-c",
        &c,
        "-p",
        &p,
        "-materials_file",
        &m,
        "-grid_layer_file",
        &l,
    ];
    // Without -use_microchannels 1 HotSpot refuses the .csv layer too.
    fails_with(
        &cuth(&base),
        2,
        &[
            "example.lcf:",
            "microchannel layer 1",
            "-use_microchannels 1",
        ],
    );
    // HotSpot reads the map on its grid: 39 x 39 here.
    let mut args = base.to_vec();
    args.extend(["-use_microchannels", "1", "-grid_rows", "40"]);
    fails_with(
        &cuth(&args),
        2,
        &["horizontal.csv", "39 rows x 39 columns", "-grid_rows 40"],
    );
    assert!(!out.exists());
}

#[test]
fn example5_with_its_vertical_channels_flows_along_y() {
    // HotSpot's example also ships the map transposed: channels along y,
    // inlets (2) on the bottom row, so the coolant moves towards +y.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("e5");
    copy_dir(Path::new(E5), &dir);
    let lcf = dir.join("example.lcf");
    let text = std::fs::read_to_string(&lcf).unwrap();
    std::fs::write(&lcf, text.replace("horizontal.csv", "vertical.csv")).unwrap();
    let stack = tmp.path().join("v.toml");
    let r = import(s(&dir), &stack);
    assert!(r.status.success(), "{}", err(&r));
    let text = std::fs::read_to_string(&stack).unwrap();
    assert!(text.contains("direction = \"+y\""), "{text}");
    assert!(text.contains("(at x = 0)"), "{text}");
    let out = tmp.path().join("out");
    let r = cuth(&[
        "solve",
        s(&stack),
        "--device",
        "cpu",
        "--no-maps",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(sum["energy"]["relative_error"].as_f64().unwrap() < 1e-10);
    // Square cells: the same ducts, so the same flow as the rows.
    let outlet = sum["coolant"][0]["outlet_mean_k"].as_f64().unwrap();
    assert!(
        (outlet - (298.15 + 32.7 / example5_m_c())).abs() < 1e-6,
        "{outlet}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
