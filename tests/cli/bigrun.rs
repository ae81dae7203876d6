//! The pipeline around the solver for large runs, end to end
//! through the `cuth` binary: the memory plan refuses a run that does not
//! fit (exit 1, nothing written) and names the largest grid that does, which
//! then runs; `--layers`, `--no-maps` and `--npy` choose the outputs.

use crate::util::cli::cuth_env as cuth;
use std::path::Path;
use std::process::Output;

fn solve(out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec![
        "solve",
        "configs/mol_f2f.toml",
        "--device",
        "cpu",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    cuth(&args, env)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            // The run manifest is cuth's bookkeeping, not an output.
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".cuth-run.json")
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn memory_plan_refuses_and_names_a_grid_that_fits() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big");
    // 320 MB: the fixed overhead (256 MiB) leaves room for a small grid only.
    let cap = 320_000_000u64;
    let env = [("CUTH_HOST_MEMORY_BYTES", "320000000")];
    let o = solve(&out, &["--grid", "2048x1024"], &env);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("host memory: needs"), "{err}");
    assert!(!out.exists(), "nothing written");
    let grid = err
        .split("the largest grid that fits is --grid ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no grid advice: {err}"));
    let (nx, ny) = grid.split_once('x').unwrap();
    let (nx, ny): (usize, usize) = (nx.parse().unwrap(), ny.parse().unwrap());
    assert!(nx < 2048 && nx > 16, "{grid}");
    // Same aspect ratio as asked (2:1), to rounding.
    assert!((nx as f64 / ny as f64 - 2.0).abs() < 0.1, "{grid}");

    // The advised grid runs under the same cap, and its plan says so.
    let o = solve(&out, &["--grid", grid, "--no-maps"], &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&out);
    let host = &s["memory"]["host"];
    let total = host["total_bytes"].as_u64().unwrap();
    assert!(total <= cap, "{total}");
    assert_eq!(host["available_bytes"].as_u64(), Some(cap));
    assert!(s["host_peak_rss_bytes"].as_u64().unwrap() > 0);
    assert!(s["memory"].get("device").is_none(), "no device on the CPU");
}

#[test]
fn layers_and_no_maps_choose_the_maps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sel");
    let o = solve(
        &out,
        &["--grid", "24x16", "--layers", "logic_feol,heat_sink"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let maps: Vec<String> = files_in(&out)
        .into_iter()
        .filter(|f| f.ends_with(".png") || f.ends_with(".csv"))
        .collect();
    assert_eq!(
        maps,
        [
            "01_logic_feol.csv",
            "01_logic_feol.png",
            "09_heat_sink.csv",
            "09_heat_sink.png"
        ]
    );
    // --no-maps on the same folder: the old maps are removed with the run's
    // other stale files, the summary is still written.
    let o = solve(&out, &["--grid", "24x16", "--no-maps"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let files = files_in(&out);
    assert!(
        files
            .iter()
            .all(|f| !f.ends_with(".png") && !f.ends_with(".csv")),
        "{files:?}"
    );
    assert!(files.contains(&"summary.json".to_string()));
    // An unknown layer is bad input.
    let o = solve(&out, &["--layers", "nope"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("logic_feol"), "lists the layers");
}

/// `field.npy` against the CSV map of a one-cell layer and the summary.
#[test]
fn npy_holds_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("npy");
    let (nx, ny) = (20usize, 12usize);
    let o = solve(
        &out,
        &["--grid", "20x12", "--layers", "logic_feol", "--npy", "f64"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(out.join("field.npy")).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    let s = summary(&out);
    let nz = s["grid"]["nz"].as_u64().unwrap() as usize;
    assert!(
        header.contains(&format!("'shape': ({nz}, {ny}, {nx})")),
        "{header}"
    );
    assert!(header.contains("'<f8'"));
    let data: Vec<f64> = bytes[10 + hlen..]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(data.len(), nx * ny * nz);
    // logic_feol is layer 1, one z cell, z index 1; the CSV's first row is max y.
    let csv = std::fs::read_to_string(out.join("01_logic_feol.csv")).unwrap();
    // (after the two `#` lines of cell centres)
    for (r, line) in csv.lines().filter(|l| !l.starts_with('#')).enumerate() {
        let y = ny - 1 - r;
        for (x, v) in line.split(',').enumerate() {
            let v: f64 = v.parse().unwrap();
            let a = data[x + nx * (y + ny)];
            assert!((a - v).abs() <= 5e-7, "({x},{y}): npy {a} csv {v}");
        }
    }
    // The hottest cell of the summary, in °C.
    let max = data.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let t_max_k = s["hottest"]["t_k"].as_f64().unwrap();
    assert!((max - (t_max_k - 273.15)).abs() < 1e-9);
}
