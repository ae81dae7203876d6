//! Probes and block statistics through the CLI: `[[probes]]` in the table, `summary.json`,
//! `probes.csv` and `timeseries.csv`; per-block min/avg/max in the time
//! series; `--block-map` for `blocks.steady`. Every value is checked against
//! an independent source: the layer map CSV the same run wrote (cell by
//! cell) and `blocks.csv`.

use crate::util::cli::{cuth, err, s, write};
use std::path::Path;

/// 2 x 2 mm, 8 x 8 cells, two layers (die split in 2 z cells), two inline
/// blocks, three probes.
fn stack(probes: bool) -> String {
    let mut t = String::from(
        "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
         [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
         [materials.tim]\nk = 4\nheat_capacity = 2e6\n\
         [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"100 um\"\ncells = 2\n\
         [layers.power]\ntype = \"blocks\"\nblocks = [\n\
         { name = \"hot\", x = \"0.1 mm\", y = \"0.2 mm\", width = \"0.6 mm\", height = \"0.5 mm\", power = 2.0 },\n\
         { name = \"cool\", x = \"1.25 mm\", y = \"1.3 mm\", width = \"0.5 mm\", height = \"0.4 mm\", power = 0.1 },\n]\n\
         [[layers]]\nname = \"tim\"\nmaterial = \"tim\"\nthickness = \"20 um\"\n",
    );
    if probes {
        t.push_str(
            "[[probes]]\nname = \"p, hot\"\nx = \"0.4 mm\"\ny = \"0.4 mm\"\nlayer = \"die\"\n\
             [[probes]]\nname = \"top\"\nx = \"1.9 mm\"\ny = \"0.1 mm\"\nz = \"115 um\"\n",
        );
    }
    t
}

fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(p).unwrap();
    let h = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (h, rows)
}

/// Value of cell (x, y) in a layer map CSV (first row = max y).
fn map_value(p: &Path, x: usize, y: usize) -> f64 {
    let text = std::fs::read_to_string(p).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    let row = rows[rows.len() - 1 - y];
    row.split(',').nth(x).unwrap().parse().unwrap()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

#[test]
fn solve_reports_probes_everywhere_and_block_map_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "p.toml", &stack(true));
    let out = tmp.path().join("out");
    let o = cuth(&[
        "solve",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--kelvin",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("probes") && table.contains("p, hot"),
        "{table}"
    );
    assert!(table.contains("x 1.9 mm, y 0.1 mm, z 115 µm"), "{table}");

    // probes.csv against the layer maps the same run wrote: die is the mean
    // over its z cells (as the map), `top` at 115 µm lies in the tim layer.
    let (h, rows) = read_csv(&out.join("probes.csv"));
    assert_eq!(
        h,
        ["probe", "layer", "x_mm", "y_mm", "z_um", "cell_x", "cell_y", "t_k"]
    );
    assert_eq!(
        rows[0][..7],
        ["p, hot", "die", "0.4", "0.4", "50", "1", "1"]
    );
    assert_eq!(rows[1][..7], ["top", "tim", "1.9", "0.1", "115", "7", "0"]);
    let want0 = map_value(&out.join("00_die.csv"), 1, 1);
    let want1 = map_value(&out.join("01_tim.csv"), 7, 0);
    assert!(
        (num(&rows[0][7]) - want0).abs() < 2e-6,
        "{rows:?} vs {want0}"
    );
    assert!(
        (num(&rows[1][7]) - want1).abs() < 2e-6,
        "{rows:?} vs {want1}"
    );
    assert!(want0 > want1, "the probe on the hot block reads hotter");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let p = &json["probes"];
    assert_eq!(p.as_array().unwrap().len(), 2);
    assert_eq!(p[1]["name"], "top");
    assert!((p[0]["t_k"].as_f64().unwrap() - want0).abs() < 2e-6);

    // --block-map: blocks.steady holds the chosen column of blocks.csv.
    let (bh, brows) = read_csv(&out.join("blocks.csv"));
    let col = |name: &str| bh.iter().position(|c| c == name).unwrap();
    let steady = |mode: &str| -> Vec<f64> {
        let o2 = tmp.path().join(mode);
        let o = cuth(&[
            "solve",
            s(&st),
            "--out",
            s(&o2),
            "--device",
            "cpu",
            "--quiet",
            "--block-map",
            mode,
        ]);
        assert!(o.status.success(), "{}", err(&o));
        std::fs::read_to_string(o2.join("blocks.steady"))
            .unwrap()
            .lines()
            .map(|l| num(l.split('\t').nth(1).unwrap()))
            .collect()
    };
    for (mode, c) in [("max", "t_max_k"), ("avg", "t_avg_k"), ("min", "t_min_k")] {
        let got = steady(mode);
        for (g, r) in got.iter().zip(&brows) {
            assert!((g - num(&r[col(c)])).abs() < 2e-6, "{mode}: {g} vs {r:?}");
        }
    }
    // center: block `hot` is centred at (0.4, 0.45) mm: cell (1, 1).
    let center = steady("center");
    assert!((center[0] - want0).abs() < 2e-6, "{center:?} vs {want0}");
    let (lo, hi) = (
        num(&brows[0][col("t_min_k")]),
        num(&brows[0][col("t_max_k")]),
    );
    assert!(lo <= center[0] && center[0] <= hi);
}

#[test]
fn without_probes_outputs_are_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "p.toml", &stack(false));
    let out = tmp.path().join("out");
    let o = cuth(&[
        "solve",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!out.join("probes.csv").exists());
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!json.contains("\"probes\""), "{json}");
}

#[test]
fn transient_series_has_block_stats_and_probe_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "p.toml", &stack(true));
    let out = tmp.path().join("out");
    let o = cuth(&[
        "transient",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
        "--dt",
        "5e-3",
        "--steps",
        "4",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let (h, rows) = read_csv(&out.join("timeseries.csv"));
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("{name} missing from {h:?}"))
    };
    let (mn, av, mx) = (
        col("die.hot_min_c"),
        col("die.hot_avg_c"),
        col("die.hot_max_c"),
    );
    let (p0, p1) = (col("probe.p, hot_c"), col("probe.top_c"));
    assert_eq!(rows.len(), 5);
    // Times without float noise.
    let times: Vec<&str> = rows.iter().map(|r| r[col("time_s")].as_str()).collect();
    assert_eq!(times, ["0", "0.005", "0.01", "0.015", "0.02"]);
    for r in &rows[1..] {
        assert!(
            num(&r[mn]) <= num(&r[av]) && num(&r[av]) <= num(&r[mx]),
            "{r:?}"
        );
    }
    // The last row's probes equal the final maps' probes.csv.
    let (_, fin) = read_csv(&out.join("final").join("probes.csv"));
    let last = rows.last().unwrap();
    assert!((num(&last[p0]) - num(&fin[0][7])).abs() < 2e-6);
    assert!((num(&last[p1]) - num(&fin[1][7])).abs() < 2e-6);
    // The block's max and mean agree with blocks.csv of the final field
    // (transient max is over z cells, blocks.csv over the layer-mean map,
    // so max ≥ and mean equal).
    let (bh, b) = read_csv(&out.join("final").join("blocks.csv"));
    let bc = |n: &str| num(&b[0][bh.iter().position(|c| c == n).unwrap()]);
    assert!((num(&last[av]) - bc("t_avg_c")).abs() < 2e-6);
    assert!(num(&last[mx]) >= bc("t_max_c") - 2e-6);
}
