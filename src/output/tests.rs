//! End-to-end checks of the output stage on a hand-built 4 × 3 stack: every
//! file is written and readable, orientation and units are right, block
//! stats match a hand computation, and a failed write leaves nothing.

use super::*;
use crate::backend::DeviceReport;
use crate::linalg::PrecondReport;
use crate::power::{Block, Rect};
use crate::thermal::summary::{
    CellRef, EnergyBalance, GridSummary, LayerSummary, SolverReport, Summary,
};
use std::path::Path;

/// 4 mm × 3 mm, 4 × 3 cells of 1 mm; a 2-cell-thick die under a BEOL layer
/// whose name needs sanitizing.
const STACK: &str = r#"
[chip]
width = "4 mm"
length = "3 mm"

[grid]
nx = 4
ny = 3

[boundary]
ambient = 300.0
h_top = 1e4

[materials.si]
k = 150.0
heat_capacity = 1.6e6

[[layers]]
name = "die"
material = "si"
thickness = "100 um"
cells = 2

[[layers]]
name = "logic beol/1"
material = "si"
thickness = "10 um"
"#;

fn stack() -> crate::stack::Stack {
    crate::stack::Stack::from_toml(STACK, Path::new("test.toml")).expect("test stack parses")
}

/// T = 300 + 10 y + x + z K: rises with y, so the max-y row is the hottest
/// row. Layer 0 (z = 0, 1) averages to 300.5 + 10 y + x.
fn temperature(grid: &crate::grid::Grid) -> Vec<f64> {
    (0..grid.len())
        .map(|i| {
            let (x, y, z) = grid.coords(i);
            300.0 + 10.0 * y as f64 + x as f64 + z as f64
        })
        .collect()
}

/// On layer 0: x 0.5–2.0 mm, y 0.5–1.5 mm, straddling cells x 0–1, y 0–1.
fn powers() -> Vec<crate::power::LayerPower> {
    let rect = Rect {
        x0: 0.5e-3,
        y0: 0.5e-3,
        x1: 2.0e-3,
        y1: 1.5e-3,
    };
    let block = Block::new("alu", rect, 2.0);
    vec![
        crate::power::LayerPower {
            map_w: vec![0.0; 12],
            total_w: 2.0,
            blocks: vec![block],
            patches: vec![],
            outline: None,
        },
        crate::power::LayerPower::default(),
    ]
}

fn cell(layer: &str, t_k: f64) -> CellRef {
    CellRef {
        layer: layer.into(),
        x: 3,
        y: 2,
        z: 1,
        x_m: 3.5e-3,
        y_m: 2.5e-3,
        z_m: 75e-6,
        t_k,
        die: None,
    }
}

pub(super) fn summary() -> Summary {
    let layer = |name: &str, t_max_k: f64| LayerSummary {
        name: name.into(),
        material: "si".into(),
        z_bottom_m: 0.0,
        thickness_m: 100e-6,
        cells: 24,
        power_w: 2.0,
        t_min_k: 300.0,
        t_avg_k: 320.0,
        t_max_k,
        hottest: cell(name, t_max_k),
    };
    Summary {
        cuth_version: "0.1.0".into(),
        stack: "test.toml".into(),
        title: Some("unit test".into()),
        grid: GridSummary {
            nx: 4,
            ny: 3,
            nz: 3,
            cells: 36,
            dx_m: 1e-3,
            dy_m: 1e-3,
            graded: false,
        },
        ambient_k: 300.0,
        device: DeviceReport {
            backend: "cpu".into(),
            name: "test cpu".into(),
            detail: String::new(),
        },
        solver: SolverReport {
            method: "pcg".into(),
            precision: "f64".into(),
            precond: PrecondReport {
                name: "chebyshev".into(),
                params: [("degree".to_string(), 4.0)].into_iter().collect(),
                multigrid: None,
            },
            rtol: 1e-8,
            max_iter: 1000,
            iterations: 17,
            residual_replacements: 0,
            converged: true,
            stop_reason: "rtol reached".into(),
            final_true_residual: 3e-9,
            mixed: None,
        },
        energy: EnergyBalance {
            power_in_w: 2.0,
            heat_out_top_w: 2.0,
            heat_out_bottom_w: 0.0,
            heat_out_coolant_w: None,
            relative_error: 1e-10,
        },
        layers: vec![layer("die", 332.5), layer("logic beol/1", 350.0)],
        hottest: cell("logic beol/1", 350.0),
        warnings: Vec::new(),
        probes: Vec::new(),
        timings_s: vec![("solve".into(), 0.5), ("output".into(), 0.01)],
        timings_detail_s: Vec::new(),
        wall_s: None,
        started: None,
        coolant: Vec::new(),
        nonlinear: None,
        memory: None,
        host_peak_rss_bytes: None,
    }
}

/// Writes the test stack's outputs into `dir` in `unit`.
fn write(dir: &Path, unit: TempUnit) -> Result<Vec<std::path::PathBuf>, OutputError> {
    let stack = stack();
    let grid = crate::grid::Grid::from_stack(&stack);
    let t = temperature(&grid);
    let power = powers();
    let summary = summary();
    let view = SteadyView {
        stack: &stack,
        grid: &grid,
        temperature_k: &t,
        layer_maps: &[],
        block_stats: &[],
        power: &power,
        summary: &summary,
        coolant_cells: &[],
    };
    write_steady(
        dir,
        &view,
        &OutputOptions {
            unit,
            block_map: Default::default(),
            hotspot: None,
            vtk: false,
            maps: Default::default(),
            npy: None,
        },
    )
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect("file readable")
}

fn parse_csv(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').map(|v| v.parse().expect("number")).collect())
        .collect()
}

#[test]
fn writes_every_file_and_no_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let paths = write(&dir, TempUnit::Celsius).unwrap();
    let names: Vec<_> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "00_die.png",
            "00_die.csv",
            "01_logic_beol_1.png",
            "01_logic_beol_1.csv",
            "blocks.csv",
            "blocks.steady",
            "summary.json"
        ]
    );
    for p in &paths {
        assert!(
            std::fs::metadata(p).unwrap().len() > 0,
            "{} is empty",
            p.display()
        );
    }
    // Beside the outputs only the run's manifest, which lists them.
    let mut listed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".cuth-run.json")
        .collect();
    listed.sort();
    assert!(dir.join(".cuth-run.json").is_file(), "no manifest");
    assert_eq!(listed.len(), paths.len(), "stray files: {listed:?}");
    let json: serde_json::Value = serde_json::from_str(&read(&dir, "summary.json")).unwrap();
    assert_eq!(json["layers"][1]["name"], "logic beol/1");
}

#[test]
fn png_decodes_and_shows_the_map() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), TempUnit::Kelvin).unwrap();
    let img = image::load_from_memory(&std::fs::read(tmp.path().join("00_die.png")).unwrap())
        .unwrap()
        .to_rgb8();
    // 4 × 3 square 1 mm cells: a 512 × 384 map plus axes, bar and title.
    assert!(img.width() > 512 && img.height() > 384);
    // Layer 0 map: 300.5 + 10 y + x, from 300.5 to 323.5: both ends appear.
    let has = |t_k: f64| {
        let c = image::Rgb(colormap::inferno((t_k - 300.5) / 23.0));
        img.pixels().any(|p| *p == c)
    };
    assert!(has(300.5) && has(323.5));
}

#[test]
fn csv_is_ny_rows_of_nx_with_max_y_first() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), TempUnit::Kelvin).unwrap();
    let text = read(tmp.path(), "00_die.csv");
    // The unit, then cell centres in mm: nx columns left to right, ny rows
    // top first.
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# unit: K"));
    let x: Vec<&str> = lines.next().unwrap().split(',').collect();
    let y: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!((x.len(), y.len(), x[0], y[0]), (5, 4, "# x_mm", "# y_mm"));
    let (x1, y1): (f64, f64) = (x[1].parse().unwrap(), y[1].parse().unwrap());
    let (x4, y3): (f64, f64) = (x[4].parse().unwrap(), y[3].parse().unwrap());
    assert!(x1 < x4 && y1 > y3, "{x:?} {y:?}");
    let rows = parse_csv(&text);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.len() == 4));
    assert_eq!(rows[0], [320.5, 321.5, 322.5, 323.5]);
    assert_eq!(rows[2], [300.5, 301.5, 302.5, 303.5]);
    // Layer 1 is the single z cell z = 2.
    let rows = parse_csv(&read(tmp.path(), "01_logic_beol_1.csv"));
    assert_eq!(rows[0][0], 322.0);
}

#[test]
fn celsius_is_kelvin_minus_273_15() {
    let (k, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(k.path(), TempUnit::Kelvin).unwrap();
    write(c.path(), TempUnit::Celsius).unwrap();
    let rk = parse_csv(&read(k.path(), "00_die.csv"));
    let rc = parse_csv(&read(c.path(), "00_die.csv"));
    for (a, b) in rk.iter().flatten().zip(rc.iter().flatten()) {
        assert!((a - 273.15 - b).abs() < 2e-6, "{a} K vs {b} °C");
    }
    assert!(
        read(c.path(), "blocks.csv").starts_with("layer,block,power_w,t_min_c,t_avg_c,t_max_c\n")
    );
    assert!(
        read(k.path(), "blocks.csv").starts_with("layer,block,power_w,t_min_k,t_avg_k,t_max_k\n")
    );
    // .steady is kelvin whatever the display unit.
    assert_eq!(
        read(c.path(), "blocks.steady"),
        read(k.path(), "blocks.steady")
    );
}

#[test]
fn block_stats_match_hand_computation() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), TempUnit::Kelvin).unwrap();
    // Overlaps (mm²): (0,0) 0.25, (1,0) 0.5, (0,1) 0.25, (1,1) 0.5 of a
    // map 300.5 + 10 y + x.
    let avg = (0.25 * 300.5 + 0.5 * 301.5 + 0.25 * 310.5 + 0.5 * 311.5) / 1.5;
    let csv = read(tmp.path(), "blocks.csv");
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[..3], ["die", "alu", "2"]);
    let v: Vec<f64> = row[3..].iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(v[0], 300.5);
    assert!((v[1] - avg).abs() < 1e-6, "{} vs {avg}", v[1]);
    assert_eq!(v[2], 311.5);
    assert_eq!(csv.lines().count(), 2, "only layers with blocks have rows");
    assert_eq!(read(tmp.path(), "blocks.steady"), "die.alu\t311.500000\n");
}

#[test]
fn failed_write_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not_a_dir");
    std::fs::write(&file, "x").unwrap();
    let err = write(&file.join("out"), TempUnit::Celsius).unwrap_err();
    assert!(matches!(err, OutputError::Io { .. }), "{err}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn a_destination_of_the_wrong_type_is_refused_before_anything_moves() {
    // `summary.json` is taken by a directory: the commit refuses it after
    // staging everything, and neither a map nor the staging is left behind.
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join("summary.json");
    std::fs::create_dir(&blocker).unwrap();
    let err = write(tmp.path(), TempUnit::Celsius).unwrap_err();
    assert!(
        matches!(&err, OutputError::NotRegular { path, .. } if path == &blocker),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["summary.json"]);
}

#[test]
fn inconsistent_view_is_an_error_not_a_panic() {
    let stack = stack();
    let grid = crate::grid::Grid::from_stack(&stack);
    let summary = summary();
    let short = vec![300.0; 5];
    let view = SteadyView {
        stack: &stack,
        grid: &grid,
        temperature_k: &short,
        layer_maps: &[],
        block_stats: &[],
        power: &[],
        summary: &summary,
        coolant_cells: &[],
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    assert!(write_steady(
        &dir,
        &view,
        &OutputOptions {
            unit: TempUnit::Kelvin,
            block_map: Default::default(),
            hotspot: None,
            vtk: false,
            maps: Default::default(),
            npy: None,
        }
    )
    .is_err());
    assert!(!dir.exists());
}

#[test]
fn sanitized_names() {
    assert_eq!(write::sanitize("logic beol/1"), "logic_beol_1");
    assert_eq!(write::sanitize("../x"), "___x");
    assert_eq!(write::sanitize("Tîm-2"), "T_m-2");
    assert_eq!(write::sanitize(""), "layer");
}
