//! HotSpot's examples imported with their `run.sh` command lines, and the
//! files a HotSpot user's scripts read, in HotSpot 7.0's layouts
//! (`dump_temp_grid`, `dump_steady_temp_grid`, `dump_transient_temp_grid`
//! and `write_names`/`write_vals` in its sources; `split_grid_steady.py`
//! reads `Layer N:` then rows × cols `index value` lines per layer).

use crate::util::cli::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const EX2: &str = "tests/data/hotspot/example2";

/// Example 2's run.sh steady line, its paths under `EX2`.
fn import_example2(out: &Path) -> std::process::Output {
    let f = |name: &str| format!("{EX2}/{name}");
    let (c, flp, p, m) = (
        f("example.config"),
        f("ev6.flp"),
        f("gcc.ptrace"),
        f("example.materials"),
    );
    cuth(&[
        "import",
        "hotspot",
        "--out",
        s(out),
        "-c",
        &c,
        "-f",
        &flp,
        "-p",
        &p,
        "-materials_file",
        &m,
        "-model_type",
        "grid",
        "-steady_file",
        "outputs/gcc.steady",
        "-grid_steady_file",
        "outputs/gcc.grid.steady",
    ])
}

/// The unit names of a HotSpot floorplan, in file order.
fn flp_units(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// Unit rectangles (x0, y0, x1, y1, m) of a HotSpot floorplan.
fn flp_rects(path: &str) -> HashMap<String, [f64; 4]> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let v: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| v[i].parse::<f64>().unwrap();
            (v[0].to_string(), [n(3), n(4), n(3) + n(1), n(4) + n(2)])
        })
        .collect()
}

/// `name\tvalue` lines, in order.
fn pairs(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .map(|l| {
            let (n, v) = l.split_once('\t').expect("tab-separated");
            (n.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// A grid file read as `split_grid_steady.py` reads it: per layer a
/// `Layer N:` line, then rows × cols `index value` lines, indices in order.
fn split_grid(lines: &mut std::str::Lines, layers: usize, cells: usize) -> Vec<Vec<f64>> {
    (0..layers)
        .map(|n| {
            assert_eq!(lines.next(), Some(format!("Layer {n}:").as_str()));
            (0..cells)
                .map(|i| {
                    let line = lines.next().expect("a grid line");
                    let (idx, v) = line.split_once('\t').expect("index\\tvalue");
                    assert_eq!(idx.parse::<usize>().unwrap(), i);
                    assert_eq!(v.split_once('.').map(|(_, d)| d.len()), Some(2), "{line}");
                    v.parse().unwrap()
                })
                .collect()
        })
        .collect()
}

#[test]
fn imported_example_writes_hotspots_steady_files() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ex2.toml");
    let o = import_example2(&stack);
    ok(&o);
    // The next line names the map mode blocks.steady follows.
    let next = err(&o);
    let next = next.lines().find(|l| l.contains("next:")).unwrap();
    assert!(
        next.contains("cuth solve") && next.contains("-grid_map_mode avg"),
        "{next}"
    );
    let out = tmp.path().join("out");
    ok(&cuth(&[
        "solve",
        s(&stack),
        "--quiet",
        "--no-maps",
        "--out",
        s(&out),
    ]));

    // blocks.steady: HotSpot's default layers (chip, interface, spreader,
    // sink, all on the chip's floorplan), then the twelve package nodes.
    let flp = format!("{EX2}/ev6.flp");
    let units = flp_units(&flp);
    let mut expected: Vec<String> = Vec::new();
    for prefix in ["", "iface_", "hsp_", "hsink_"] {
        expected.extend(units.iter().map(|u| format!("{prefix}{u}")));
    }
    expected.extend((0..12).map(|i| format!("inode_{i}")));
    let steady = pairs(&std::fs::read_to_string(out.join("blocks.steady")).unwrap());
    let names: Vec<&String> = steady.iter().map(|(n, _)| n).collect();
    assert_eq!(names, expected.iter().collect::<Vec<_>>());
    let t: HashMap<&str, f64> = steady.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    // Heat flows up and out: spreader overhang > sink under it > sink's own
    // overhang > ambient, side by side (west, east, north, south).
    for side in 0..4 {
        let node = |i: usize| t[format!("inode_{i}").as_str()];
        assert!(node(side) > node(4 + side), "{side}");
        assert!(node(4 + side) > node(8 + side), "{side}");
        assert!(node(8 + side) > 318.15, "{side}");
    }

    // hotspot.grid.steady: 4 layers of 64 x 64, row 0 at the chip's top.
    let text = std::fs::read_to_string(out.join("hotspot.grid.steady")).unwrap();
    let mut lines = text.lines();
    let grid = split_grid(&mut lines, 4, 64 * 64);
    assert_eq!(lines.next(), None);
    // Each unit's cells (centres inside it) average to its avg in
    // blocks.steady; rows counted from the bottom would not.
    let rects = flp_rects(&flp);
    let (w, h) = rects
        .values()
        .fold((0.0_f64, 0.0_f64), |a, r| (a.0.max(r[2]), a.1.max(r[3])));
    let worst = |flip: bool| {
        let mut worst = 0.0_f64;
        for u in &units {
            let r = rects[u];
            let (mut sum, mut n) = (0.0, 0);
            for i in 0..64 {
                for j in 0..64 {
                    let row = if flip { 63 - i } else { i };
                    let (x, y) = (
                        (j as f64 + 0.5) * w / 64.0,
                        h - (row as f64 + 0.5) * h / 64.0,
                    );
                    if x > r[0] && x < r[2] && y > r[1] && y < r[3] {
                        sum += grid[0][i * 64 + j];
                        n += 1;
                    }
                }
            }
            if n >= 4 {
                worst = worst.max((sum / n as f64 - t[u.as_str()]).abs());
            }
        }
        worst
    };
    assert!(worst(true) > 3.0, "rows from the bottom: {} K", worst(true));
    assert!(
        worst(false) < 1.0,
        "unit vs its grid cells: {} K",
        worst(false)
    );
}

#[test]
fn imported_transient_writes_hotspots_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ex2.toml");
    let o = import_example2(&stack);
    ok(&o);
    // The suggested transient resolves the swing with TR-BDF2.
    let notes = err(&o);
    assert!(
        notes.contains("--scheme trbdf2 --dt 0.01 --time-tol 0.01"),
        "{notes}"
    );
    let out = tmp.path().join("tr");
    let trace = format!("{EX2}/gcc.ptrace");
    let o = cuth(&[
        "transient",
        s(&stack),
        "--trace",
        &trace,
        "--sample-interval",
        "0.01",
        "--dt",
        "0.005",
        "--t-end",
        "0.03",
        "--no-maps",
        "--device",
        "cpu",
        "--out",
        s(&out),
    ]);
    ok(&o);
    // Without --init, stderr says which start applies and names HotSpot's.
    assert!(err(&o).contains("starting from ambient"), "{}", err(&o));
    assert!(err(&o).contains("--init steady-mean"), "{}", err(&o));

    // .ttrace: the trace's header, then one row per trace row (3 rows in
    // 0.03 s), HotSpot's `%.2f` K.
    let ptrace = std::fs::read_to_string(&trace).unwrap();
    let header = ptrace
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>();
    let tt = std::fs::read_to_string(out.join("hotspot.ttrace")).unwrap();
    let mut lines = tt.lines();
    assert_eq!(
        lines.next().unwrap().split('\t').collect::<Vec<_>>(),
        header
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split('\t').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    // From ambient, the chip warms row by row.
    assert!(rows[0][0] > 318.15 && rows[2][0] > rows[0][0], "{rows:?}");

    // .grid.ttrace: per row `t = <row start>` and the four layers' grids.
    let gt = std::fs::read_to_string(out.join("hotspot.grid.ttrace")).unwrap();
    let mut lines = gt.lines();
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(
            lines.next(),
            Some(format!("t = {:.6}", k as f64 * 0.01).as_str())
        );
        let grid = split_grid(&mut lines, 4, 64 * 64);
        // The hottest unit's row value lies within the chip layer's grid range.
        let (lo, hi) = grid[0]
            .iter()
            .fold((f64::MAX, f64::MIN), |a, v| (a.0.min(*v), a.1.max(*v)));
        let top = row.iter().cloned().fold(f64::MIN, f64::max);
        assert!(top >= lo && top <= hi + 0.01, "{top} outside {lo}..{hi}");
    }
    assert_eq!(lines.next(), None);
}

/// Steady block averages of the chip layer of `stack`, K.
fn chip_blocks(stack: &Path, dir: &Path, tag: &str) -> Vec<f64> {
    let out = dir.join(tag);
    ok(&cuth(&[
        "solve",
        s(stack),
        "--quiet",
        "--no-maps",
        "--out",
        s(&out),
    ]));
    let mut csv = csv::Reader::from_path(out.join("blocks.csv")).unwrap();
    csv.records()
        .map(|r| r.unwrap())
        .filter(|r| &r[0] == "chip")
        .map(|r| r[4].parse::<f64>().unwrap())
        .collect()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn imported_package_z_cells_converge_steady_blocks_to_a_tenth_of_a_kelvin() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ex2.toml");
    ok(&import_example2(&stack));
    let text = std::fs::read_to_string(&stack).unwrap();
    assert!(!text.contains("refine the transient only"), "{text}");
    let cells = |sp: usize, hs: usize| -> PathBuf {
        let p = tmp.path().join(format!("z{sp}_{hs}.toml"));
        let t = text
            .replace("cells = 6\n", &format!("cells = {sp}\n"))
            .replace("cells = 10\n", &format!("cells = {hs}\n"));
        assert_ne!(t, text);
        std::fs::write(&p, t).unwrap();
        p
    };
    let default = chip_blocks(&stack, tmp.path(), "default");
    let fine = chip_blocks(&cells(24, 40), tmp.path(), "fine");
    let coarse = chip_blocks(&cells(2, 3), tmp.path(), "coarse");
    assert!(
        max_diff(&default, &fine) < 0.1,
        "{}",
        max_diff(&default, &fine)
    );
    // The old 2/3 cells were not converged: the check can tell.
    assert!(
        max_diff(&coarse, &fine) > 0.3,
        "{}",
        max_diff(&coarse, &fine)
    );
}

#[test]
fn run_sh_command_lines_of_examples_1_to_5_import() {
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n);
    let run = |name: &str, dir: &str, flags: &str| {
        let o = out(name);
        let mut args = vec!["import", "hotspot", "--out", s(&o)];
        let owned: Vec<String> = flags
            .split_whitespace()
            .map(|w| match w.strip_prefix('@') {
                Some(file) => format!("{dir}/{file}"),
                None => w.to_string(),
            })
            .collect();
        args.extend(owned.iter().map(String::as_str));
        let o = cuth(&args);
        ok(&o);
        err(&o)
    };
    // Example 1 names a materials file its folder lacks and no material.
    let e1 = "tests/data/hotspot/example1";
    let notes = run("e1a.toml", e1, "-c @example.config -f @ev6.flp -p @gcc.ptrace -materials_file @example.materials -model_type block -steady_file outputs/gcc.steady -o outputs/gcc.ttrace");
    assert!(notes.contains("not found"), "{notes}");
    run("e1b.toml", e1, "-c @example.config -init_file gcc.init -f @ev6.flp -p @gcc.ptrace -materials_file @example.materials -model_type block -o outputs/gcc.ttrace");
    run("e2a.toml", EX2, "-c @example.config -f @ev6.flp -p @gcc.ptrace -materials_file @example.materials -model_type grid -steady_file outputs/gcc.steady -grid_steady_file outputs/gcc.grid.steady");
    run("e2b.toml", EX2, "-c @example.config -init_file gcc.init -f @ev6.flp -p @gcc.ptrace -materials_file @example.materials -model_type grid -o outputs/gcc.ttrace -grid_transient_file outputs/gcc.grid.ttrace");
    let e3 = "tests/data/hotspot/example3";
    let notes = run("e3a.toml", e3, "-c @example.config -p @example.ptrace -grid_layer_file @example.lcf -materials_file @example.materials -model_type grid -detailed_3D on -steady_file outputs/example.steady -grid_steady_file outputs/example.grid.steady");
    let detailed: Vec<&str> = notes
        .lines()
        .filter(|l| l.contains("-detailed_3D on"))
        .collect();
    assert_eq!(detailed.len(), 1, "{notes}");
    assert!(
        detailed[0].contains("1.5 times") && detailed[0].contains("hotter"),
        "{notes}"
    );
    run("e3b.toml", e3, "-c @example.config -p @example.ptrace -grid_layer_file @example.lcf -materials_file @example.materials -model_type grid -detailed_3D on -o outputs/example.ttrace -grid_transient_file outputs/example.grid.ttrace");
    let e4 = "configs/hotspot";
    run("e4a.toml", e4, "-c @example.config -p @ev6_3D.ptrace -grid_layer_file @ev6_3D.lcf -model_type grid -detailed_3D on -grid_steady_file outputs/example.grid.steady -steady_file outputs/example.steady");
    run("e4b.toml", e4, "-c @example.config -p @ev6_3D.ptrace -grid_layer_file @ev6_3D.lcf -init_file example.init -model_type grid -detailed_3D on -o outputs/example.transient -grid_transient_file outputs/example.grid.ttrace");
    // -grid_rows/-grid_cols and -grid_map_mode on the command line reach the stack.
    let notes = run("e2c.toml", EX2, "-c @example.config -f @ev6.flp -p @gcc.ptrace -materials_file @example.materials -grid_rows 32 -grid_cols 16 -grid_map_mode max");
    let text = std::fs::read_to_string(out("e2c.toml")).unwrap();
    assert!(
        text.contains("hotspot = { rows = 32, cols = 16, layers = \"default\" }"),
        "{text}"
    );
    assert!(text.contains("block_map = \"max\""), "{text}");
    assert!(notes.contains("-grid_map_mode max"), "{notes}");

    // Example 5 is liquid-cooled: its microchannel layer becomes a cavity.
    let e5 = "tests/data/hotspot/example5";
    run("e5a.toml", e5, "-c @example.config -p @example.ptrace -materials_file @example.materials -grid_layer_file @example.lcf -model_type grid -detailed_3D on -use_microchannels 1 -grid_steady_file outputs/example.grid.steady -steady_file outputs/example.steady");
    let notes = run("e5b.toml", e5, "-c @example.config -p @example.ptrace -materials_file @example.materials -grid_layer_file @example.lcf -init_file example.init -model_type grid -detailed_3D on -use_microchannels 1 -o outputs/example.transient -grid_transient_file outputs/example.grid.ttrace");
    assert!(notes.contains("4RM cavity"), "{notes}");
}

#[test]
fn numbers_for_people_and_a_graded_grid_say_their_precision() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = tmp.path().join("ex2.toml");
    ok(&import_example2(&stack));
    // The import's non-uniform grid: the printed cell is the smallest.
    let out = tmp.path().join("s");
    let o = cuth(&["solve", s(&stack), "--no-maps", "--out", s(&out)]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("cells, smallest cell "), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["grid"]["graded"], serde_json::Value::Bool(true));

    // Times summed from steps of 0.01 s and energies print as people write them.
    let trace = format!("{EX2}/gcc.ptrace");
    let o = cuth(&[
        "transient",
        s(&stack),
        "--trace",
        &trace,
        "--sample-interval",
        "0.01",
        "--dt",
        "0.01",
        "--steps",
        "3",
        "--no-maps",
        "--device",
        "cpu",
        "--init",
        "steady-mean",
        "--out",
        s(&tmp.path().join("t")),
    ]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let peak = text.lines().find(|l| l.starts_with("peak")).unwrap();
    let t = peak.split("at t = ").nth(1).unwrap().trim_end_matches(" s");
    assert!(t.len() <= 6 && !t.contains('e'), "{peak}");
    assert!(text.contains("3 steps of 0.01 s to t = 0.03 s"), "{text}");
    let energy = text.lines().find(|l| l.starts_with("energy:")).unwrap();
    let joules = energy
        .split(" J")
        .next()
        .unwrap()
        .trim_start_matches("energy: in ");
    assert!(!joules.contains('e') && joules.len() <= 7, "{energy}");
}
