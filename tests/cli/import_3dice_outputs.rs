//! The `output:` section of 3D-ICE's own stacks (copies under
//! tests/data/3dice/peer): a run writes each instruction's file under its
//! output folder, in 3D-ICE's layout, with `final`, `slot` and `step`
//! timing; a floorplan element drawn as several rectangles is reported over
//! their union.

use crate::util::cli::{err, ok, s, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn peer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/peer")
}

fn cuth_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(crate::util::cli::cuth_path())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cuth runs")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The data lines of a 3D-ICE output file (its header lines start `%`),
/// split on the tab separators.
fn rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .filter(|l| !l.starts_with('%') && !l.trim().is_empty())
        .map(|l| {
            l.split('\t')
                .filter_map(|v| v.trim().parse().ok())
                .collect()
        })
        .collect()
}

/// `blocks.csv` rows: (block, t_min_c, t_avg_c, t_max_c).
fn blocks_csv(run: &Path) -> Vec<(String, f64, f64, f64)> {
    read(&run.join("blocks.csv"))
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let f = |i: usize| c[i].parse::<f64>().unwrap();
            (c[1].to_string(), f(3), f(4), f(5))
        })
        .collect()
}

#[test]
fn steady_probes_are_written_where_3dice_writes_them_from_either_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let test = peer().join("test");
    for (dir, stk) in [
        (test.join("solid/steady"), "topsink.stk"),
        (test.clone(), "solid/steady/topsink.stk"),
    ] {
        let out = tmp.path().join("t.toml");
        ok(&cuth_in(
            &dir,
            &["import", "3dice", stk, "--out", s(&out), "--force"],
        ));
        let run = tmp.path().join("run");
        let o = cuth_in(
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
        );
        ok(&o);
        let probes = read(&run.join("probes.csv"));
        for (file, probe, element, x, y) in [
            ("node1_top.txt", "node1_top", "die1", "5000.000", "4800.000"),
            ("node2_top.txt", "node2_top", "die2", "0.000", "0.000"),
        ] {
            let text = read(&run.join("solid/steady").join(file));
            let head: Vec<&str> = text.lines().take(3).collect();
            assert_eq!(
                head[0],
                format!("% Cell temperature for the location [{element}, x={x},y={y}]")
            );
            assert!(
                head[1].starts_with("% Nearest [column, row] indices found= ["),
                "{text}"
            );
            assert_eq!(head[2], "% Time(s) \t Temperature(K)");
            let data = rows(&text);
            assert_eq!(data.len(), 1, "one final instant: {text}");
            let t_c: f64 = probes
                .lines()
                .find(|l| l.starts_with(&format!("{probe},")))
                .and_then(|l| l.rsplit(',').next())
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(data[0][0], 0.0);
            assert!(
                (data[0][1] - (t_c + 273.15)).abs() <= 6e-4,
                "{text} vs {t_c} C"
            );
        }
    }
}

#[test]
fn floorplan_outputs_take_each_element_over_the_union_of_its_rectangles() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for f in ["four_elements.flp", "background.flp"] {
        std::fs::copy(peer().join("test").join(f), d.join(f)).unwrap();
    }
    let stk = read(&peer().join("test/solid/steady/bothsink.stk"))
        + "  Tflp ( die2, \"flp_max.txt\", maximum ) ;\n\
           Tflp ( die2, \"flp_avg.txt\", average, final ) ;\n\
           Tflpel ( die2.background4, \"el_min.txt\", minimum ) ;\n\
           Tmap ( die2, \"maps/die2.txt\" ) ;\n\
           Pmap ( die2, \"die2_power.txt\" ) ;\n\
           Tcoolant ( die2, \"coolant.txt\", maximum ) ;\n";
    let p = write(d, "b.stk", &stk);
    let out = d.join("b.toml");
    let o = cuth_in(d, &["import", "3dice", s(&p), "--out", s(&out)]);
    ok(&o);
    assert!(
        err(&o).contains("coolant.txt") && err(&o).contains("not a channel"),
        "{}",
        err(&o)
    );
    let run = d.join("run");
    ok(&cuth_in(
        d,
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
    assert!(!run.join("coolant.txt").exists());
    // The reference: the cells of the Tmap (3 decimals, K) whose centres
    // lie in the element's rectangles (they follow the 50 x 200 µm cells'
    // lines): min, mean (equal cells) and max over the union.
    let tmap: Vec<Vec<f64>> = (read(&run.join("maps/die2.txt")).lines())
        .skip(1)
        .take(50)
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    let centres = |f: &str| -> Vec<f64> {
        (read(&run.join(f)).lines())
            .map(|v| v.trim().parse::<f64>().unwrap() * 1e-6)
            .collect()
    };
    let (xc, yc) = (centres("xaxis.txt"), centres("yaxis.txt"));
    let st = cuth::stack::Stack::load(&out).unwrap();
    let layer = st.layers.iter().find(|l| l.name == "die2_source").unwrap();
    let Some(cuth::stack::PowerSpec::Blocks { blocks: specs }) = &layer.power else {
        panic!("inline blocks")
    };
    let union = |el: &str| -> (f64, f64, f64) {
        let spec = specs.iter().find(|x| x.name == el).unwrap();
        let rects = spec.rects();
        let inside =
            |x: f64, y: f64| (rects.iter()).any(|r| r.x0 < x && x < r.x1 && r.y0 < y && y < r.y1);
        let mut v = Vec::new();
        for (j, y) in yc.iter().enumerate() {
            for (i, x) in xc.iter().enumerate() {
                if inside(*x, *y) {
                    v.push(tmap[j][i]);
                }
            }
        }
        let min = v.iter().copied().fold(f64::MAX, f64::min);
        let max = v.iter().copied().fold(f64::MIN, f64::max);
        (min, v.iter().sum::<f64>() / v.len() as f64, max)
    };
    let blocks = blocks_csv(&run);
    let max = read(&run.join("flp_max.txt"));
    assert!(max.starts_with("% Maximum temperatures for the floorplan of the die die2\n"));
    assert!(max.contains("% Time(s) \t background1(K) \t background2(K) \t background3(K) \t background4(K) \t \n"), "{max}");
    let avg = rows(&read(&run.join("flp_avg.txt")));
    let max = rows(&max);
    for (k, el) in ["background1", "background2", "background3", "background4"]
        .iter()
        .enumerate()
    {
        let (want_min, want_avg, want_max) = union(el);
        assert!(
            (max[0][k + 1] - want_max).abs() <= 1e-3,
            "{el}: {:?} vs {want_max}",
            max[0]
        );
        assert!(
            (avg[0][k + 1] - want_avg).abs() <= 1e-3,
            "{el}: {:?} vs {want_avg}",
            avg[0]
        );
        // blocks.csv: the element is one block, over the same union (°C).
        let row: Vec<_> = blocks.iter().filter(|b| b.0 == *el).collect();
        assert_eq!(row.len(), 1, "{el}: {blocks:?}");
        let (_, lo, mean, hi) = row[0];
        for (got, want) in [(lo, want_min), (mean, want_avg), (hi, want_max)] {
            assert!((got + 273.15 - want).abs() <= 1e-3, "{el}: {row:?}");
        }
    }
    // background4 is six rectangles: one column, its coolest cell.
    let el = read(&run.join("el_min.txt"));
    assert!(el.contains("% Time(s) \t die2.background4(K)\n"), "{el}");
    let want_min = union("background4").0;
    assert!((rows(&el)[0][1] - want_min).abs() <= 1e-3);
    // The map: one line per row of cells (50 rows of 200), a blank line after;
    // its axes in um; the power map sums to the die's 25 W (first slot).
    let map = read(&run.join("maps/die2.txt"));
    let lines: Vec<&str> = map.lines().skip(1).collect();
    assert_eq!(lines.len(), 51);
    assert!(lines[..50]
        .iter()
        .all(|l| l.split_whitespace().count() == 200));
    assert_eq!(lines[50], "");
    assert_eq!(read(&run.join("xaxis.txt")).lines().next(), Some("25.00"));
    assert_eq!(read(&run.join("yaxis.txt")).lines().count(), 50);
    let power: f64 = read(&run.join("die2_power.txt"))
        .lines()
        .skip(1)
        .flat_map(|l| {
            l.split_whitespace()
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    assert!((power - 25.0).abs() < 0.05, "{power}");
}

#[test]
fn transient_outputs_keep_their_step_slot_and_final_timing() {
    let tmp = tempfile::tempdir().unwrap();
    // Every step: 120 instants of 2 ms.
    let dir = peer().join("test/solid/transient");
    let out = tmp.path().join("t.toml");
    ok(&cuth_in(
        &dir,
        &["import", "3dice", "bothsink.stk", "--out", s(&out)],
    ));
    let run = tmp.path().join("run");
    let trace = tmp.path().join("t.trace.csv");
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
    let data = rows(&read(&run.join("solid/transient/node1_both.txt")));
    assert_eq!(data.len(), 120);
    assert_eq!((data[0][0], data[119][0]), (0.002, 0.24));
    // 3D-ICE's server example: per slot (5 steps of 10 ms), maps included,
    // through the snapshots the `next:` line asks for: one instant, not 5.
    let bin = peer().join("bin");
    let out = tmp.path().join("s.toml");
    let o = cuth_in(&bin, &["import", "3dice", "stack.stk", "--out", s(&out)]);
    ok(&o);
    let e = err(&o);
    assert!(e.contains("have no `power values`"), "{e}");
    let next = e
        .lines()
        .find_map(|l| l.strip_prefix("cuth: next: cuth "))
        .unwrap();
    assert!(next.ends_with("--snapshot-every 5"), "{next}");
    let run = tmp.path().join("srun");
    let mut args: Vec<&str> = next.split_whitespace().collect();
    args.extend(["--device", "cpu", "--quiet", "--out", s(&run)]);
    ok(&cuth_in(&bin, &args));
    let t = rows(&read(&run.join("output1.txt")));
    // Two probes share the file: at the slot's end, one line each.
    let times: Vec<f64> = t.iter().map(|r| r[0]).collect();
    assert_eq!(times, [0.05, 0.05]);
    let map = read(&run.join("output2.txt"));
    assert_eq!(
        map.lines().filter(|l| l.is_empty()).count(),
        1,
        "one slot, one frame"
    );
    assert_eq!(map.lines().count(), 1 + 106 + 1);
    let el = rows(&read(&run.join("output5.txt")));
    assert_eq!(el.len(), 1);
}

/// 3D-ICE's liquid-cooled example: its `Tcoolant` instruction (the top
/// channel's hottest outlet, `final`) is written by `solve` at time 0 and by
/// `transient` at the run's end, each the outlet the summary reports.
#[test]
fn tcoolant_is_written_from_the_solved_coolant() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/liquid/bin");
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("example.toml");
    ok(&cuth_in(
        &data,
        &["import", "3dice", "example_steady.stk", "--out", s(&toml)],
    ));
    let (st, tr) = (tmp.path().join("st"), tmp.path().join("tr"));
    let run = cuth_in(
        &data,
        &[
            "solve",
            s(&toml),
            "--device",
            "cpu",
            "--no-maps",
            "--out",
            s(&st),
        ],
    );
    assert!(run.status.success(), "{}", err(&run));
    let args = [
        "--device",
        "cpu",
        "--dt",
        "0.01",
        "--steps",
        "3",
        "--no-maps",
        "--out",
    ];
    let mut a = vec!["transient", s(&toml)];
    a.extend(args);
    a.push(s(&tr));
    let run = cuth_in(&data, &a);
    assert!(run.status.success(), "{}", err(&run));
    let summary: serde_json::Value = serde_json::from_str(&read(&st.join("summary.json"))).unwrap();
    let top = (summary["coolant"].as_array().unwrap().iter())
        .find(|c| c["layer"] == "TOP_CHANNEL")
        .expect("the top channel's report");
    let max_k = top["outlet_max_k"].as_f64().unwrap();
    let text = read(&st.join("output5.txt"));
    assert!(
        text.starts_with("% Maximum temperatures for the outlet of the channel TOP_CHANNEL"),
        "{text}"
    );
    let r = rows(&text);
    assert_eq!(r.len(), 1, "{text}");
    assert_eq!(r[0][0], 0.0);
    assert!((r[0][1] - max_k).abs() < 6e-4, "{} vs {max_k}", r[0][1]);
    let r = rows(&read(&tr.join("output5.txt")));
    assert_eq!(r.len(), 1, "final: one line");
    assert!((r[0][0] - 0.03).abs() < 1e-9, "{:?}", r[0]);
}
