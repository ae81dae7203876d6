//! `cuth import hotspot` end to end on HotSpot's own examples: the ev6 3D
//! import (HotSpot's package: dies centred on the spreader and sink) solved
//! against the hand-written `configs/hotspot_ev6_3d.toml`, HotSpot's default
//! layers and materials files, the uniform-grid option, and the features
//! cuth cannot represent (exit 2, file and line named, nothing written).

use crate::util::cli::*;
use std::path::Path;

#[test]
fn hotspot_ev6_import_matches_the_hand_written_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = tmp.path().join("ev6.toml");
    ok(&import_ev6(&imported));
    let text = std::fs::read_to_string(&imported).unwrap();
    // The trace and floorplans are referenced, and the sampling interval is stated.
    assert!(text.contains("configs/hotspot/ev6_3D.ptrace"), "{text}");
    assert!(text.contains("--sample-interval 3.333e-6"), "{text}");

    // HotSpot's package: the 60 mm sink is the domain, the dies and TIM
    // layers have the chip's outline centred on it, the spreader its own.
    let st = cuth::stack::Stack::load(&imported).unwrap();
    assert_eq!((st.width_m, st.length_m), (0.06, 0.06));
    let (chip_w, chip_l) = (0.0124, 0.01276);
    for l in &st.layers[..6] {
        let o = l.outline.expect("die outline");
        assert!((o.x0 + o.x1 - 0.06).abs() < 1e-15 && (o.y0 + o.y1 - 0.06).abs() < 1e-15);
        assert!((o.x1 - o.x0 - chip_w).abs() < 1e-15 && (o.y1 - o.y0 - chip_l).abs() < 1e-15);
    }
    let sp = st.layers[6].outline.expect("spreader outline");
    assert_eq!([sp.x0, sp.y0, sp.x1, sp.y1], [0.015, 0.015, 0.045, 0.045]);
    assert!(st.layers[7].outline.is_none(), "the sink is the domain");
    // r_convec over the sink's face.
    assert!((1.0 / (st.h_top * 0.06 * 0.06) - 0.1).abs() < 1e-15);
    // HotSpot's 64 x 64 cells over the chip bound the grid's cells there.
    let (ex, ey) = st.plane_edges.as_ref().expect("non-uniform grid");
    let (wx, wy) = (&cuth::grid::widths_of(ex), &cuth::grid::widths_of(ey));
    let cell = chip_w / 64.0;
    let over_die = |w: &[f64], lo: f64, hi: f64| {
        let e = cuth::grid::edges_of(w);
        (0..w.len())
            .filter(|&i| e[i] >= lo - 1e-12 && e[i + 1] <= hi + 1e-12)
            .map(|i| w[i])
            .collect::<Vec<_>>()
    };
    let dx = over_die(wx, 0.0238, 0.0362);
    let dy = over_die(wy, 0.02362, 0.03638);
    assert!(dx.iter().sum::<f64>() > 0.0124 - 1e-12 && dy.iter().sum::<f64>() > 0.01276 - 1e-12);
    assert!(dx.iter().chain(&dy).all(|w| *w <= cell * (1.0 + 1e-12)));

    // configs/hotspot_ev6_3d.toml is the same model written by hand: the
    // same system, the same temperatures (to the bit: lengths with units
    // parse to the same doubles as the importer's metres).
    // The hand-written stack keeps HotSpot-like 2 and 3 z cells in the
    // package (its reference comparison); the import's finer z cells are
    // set back to those for this comparison.
    let coarse = tmp.path().join("ev6_coarse_z.toml");
    let z = text
        .replace("cells = 6\n", "cells = 2\n")
        .replace("cells = 10\n", "cells = 3\n");
    assert_ne!(z, text, "the import's package z cells");
    std::fs::write(&coarse, z).unwrap();
    let (dims_h, hand) = solve_state(Path::new("configs/hotspot_ev6_3d.toml"), tmp.path(), "hand");
    let (dims_i, imp) = solve_state(&coarse, tmp.path(), "imp");
    assert_eq!(dims_h, dims_i);
    assert_eq!(hand.len(), imp.len());
    let mut present = 0;
    let mut worst = 0.0_f64;
    for (a, b) in hand.iter().zip(&imp) {
        // Absent cells (around the dies and spreader) are NaN in both.
        assert_eq!(a.is_nan(), b.is_nan());
        if !a.is_nan() {
            present += 1;
            worst = worst.max((a - b).abs());
        }
    }
    assert!(present > hand.len() / 2, "{present} of {}", hand.len());
    assert!(worst <= 1e-9, "max |dT| = {worst} K");
}

#[test]
fn hotspot_uniform_grid_and_package_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = d.join("u.toml");
    let mut args = vec![
        "import",
        "hotspot",
        "--config",
        "tests/data/hotspot/example1/example.config",
        "--flp",
        "tests/data/hotspot/example1/ev6.flp",
        "--ptrace",
        "tests/data/hotspot/example1/gcc.ptrace",
        "--out",
        s(&out),
    ];
    args.push("--uniform-grid");
    ok(&cuth(&args));
    // 39 x 39 cells over the 16 mm ev6 chip: 0.41 mm; 60 mm / 0.41 mm = 146.25 -> 147.
    let st = cuth::stack::Stack::load(&out).unwrap();
    assert!(st.plane_edges.is_none());
    assert_eq!((st.nx, st.ny), (147, 147));
    assert!(st.width_m / st.nx as f64 <= 0.016 / 39.0);

    // A spreader narrower than the chip is refused, as HotSpot refuses it.
    let cfg = std::fs::read_to_string("tests/data/hotspot/example1/example.config").unwrap();
    let small = write(
        d,
        "small.config",
        &cfg.replace("-s_spreader\t\t\t0.03", "-s_spreader\t\t\t0.01"),
    );
    assert_ne!(cfg, std::fs::read_to_string(&small).unwrap());
    args.pop();
    args[3] = s(&small);
    fails_with(
        &cuth(&args),
        2,
        &[
            "small.config",
            "-s_spreader 0.01",
            "chip <= spreader <= sink",
        ],
    );
}

#[test]
fn hotspot_default_layers_and_materials_file() {
    let tmp = tempfile::tempdir().unwrap();
    // example1: no .lcf, HotSpot's default chip + interface layers on one floorplan.
    let ex1 = tmp.path().join("ex1.toml");
    ok(&cuth(&[
        "import",
        "hotspot",
        "--config",
        "tests/data/hotspot/example1/example.config",
        "--flp",
        "tests/data/hotspot/example1/ev6.flp",
        "--ptrace",
        "tests/data/hotspot/example1/gcc.ptrace",
        "--out",
        s(&ex1),
    ]));
    let st = cuth::stack::Stack::load(&ex1).unwrap();
    let names: Vec<&str> = st.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["chip", "interface", "spreader", "sink"]);
    assert_eq!(st.layers[0].material.k, [130.0; 3]); // -k_chip 130
    assert_eq!(st.layers[0].material.heat_capacity, 1630300.0);
    assert_eq!(st.layers[1].thickness_m, 2.0e-5);
    // The chip (16 mm ev6) centred on HotSpot's 60 mm sink, its interface too.
    for l in &st.layers[..2] {
        let o = l.outline.expect("chip outline");
        assert_eq!([o.x0, o.y0, o.x1, o.y1], [0.022, 0.022, 0.038, 0.038]);
    }
    assert!(st.plane_edges.is_some());

    // example3 names materials (-material_chip/-sink/-spreader): needs the materials file.
    let ex3 = tmp.path().join("ex3.toml");
    let args = [
        "import",
        "hotspot",
        "--config",
        "tests/data/hotspot/example3/example.config",
        "--lcf",
        "tests/data/hotspot/example3/example.lcf",
        "--ptrace",
        "tests/data/hotspot/example3/example.ptrace",
        "--out",
        s(&ex3),
    ];
    fails_with(
        &cuth(&args),
        2,
        &["example.config", "material `copper`", "--materials"],
    );
    assert!(!ex3.exists());
    let mut with = args.to_vec();
    with.extend([
        "--materials",
        "tests/data/hotspot/example3/example.materials",
    ]);
    ok(&cuth(&with));
    let st = cuth::stack::Stack::load(&ex3).unwrap();
    assert_eq!(st.layers.len(), 6);
    let sink = st.layers.last().unwrap();
    assert_eq!(
        (sink.material_name.as_str(), sink.material.k),
        ("copper", [400.0; 3])
    );
    let text = std::fs::read_to_string(&ex3).unwrap();
    assert!(
        text.contains("-material_chip silicon (not used with an .lcf"),
        "{text}"
    );
    // Importing again over it is refused without --force.
    fails_with(&cuth(&with), 2, &["exists", "--force"]);
    with.push("--force");
    ok(&cuth(&with));
}

#[test]
fn hotspot_features_cuth_cannot_represent_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/hotspot");
    let cfg = std::fs::read_to_string(root.join("example.config")).unwrap();
    let lcf = std::fs::read_to_string(root.join("ev6_3D.lcf")).unwrap();
    for f in [
        "ev6_3D_cache_1.flp",
        "ev6_3D_cache_2.flp",
        "ev6_3D_core_layer.flp",
        "ev6_3D_TIM.flp",
        "ev6_3D_TIM_TSV.flp",
        "ev6_3D.ptrace",
    ] {
        std::fs::copy(root.join(f), d.join(f)).unwrap();
    }
    let lcf_ok = write(d, "ok.lcf", &lcf);
    let run = |config: &Path, lcf: &Path| {
        cuth(&[
            "import",
            "hotspot",
            "--config",
            s(config),
            "--lcf",
            s(lcf),
            "--ptrace",
            s(&d.join("ev6_3D.ptrace")),
            "--out",
            s(&d.join("x.toml")),
        ])
    };
    let secondary = write(
        d,
        "sec.config",
        &cfg.replace("-model_secondary\t0", "-model_secondary\t1"),
    );
    let line = cfg
        .lines()
        .position(|l| l.contains("-model_secondary"))
        .unwrap()
        + 1;
    fails_with(
        &run(&secondary, &lcf_ok),
        2,
        &[&format!("sec.config:{line}:"), "secondary heat path"],
    );
    let leak = write(
        d,
        "leak.config",
        &cfg.replace("-leakage_used 0", "-leakage_used 1"),
    );
    fails_with(&run(&leak, &lcf_ok), 2, &["leak.config:", "leakage"]);
    let unknown = write(d, "unk.config", &format!("{cfg}\n-k_chipp 3\n"));
    fails_with(
        &run(&unknown, &lcf_ok),
        2,
        &["unk.config:", "unknown HotSpot setting `-k_chipp`"],
    );
    let cfg_ok = write(d, "ok.config", &cfg);
    // Layer 1 without lateral heat flow (its second field).
    let no_lat = write(d, "nolat.lcf", &lcf.replacen("1\nY\nN\n", "1\nN\nN\n", 1));
    fails_with(
        &run(&cfg_ok, &no_lat),
        2,
        &["nolat.lcf:25:", "without lateral heat flow"],
    );
    let bad = write(d, "bad.lcf", &lcf.replacen("0.00015", "thick", 1));
    fails_with(&run(&cfg_ok, &bad), 2, &["bad.lcf:20:", "thickness"]);
    // No trace for powered layers.
    let o = cuth(&[
        "import",
        "hotspot",
        "--config",
        s(&cfg_ok),
        "--lcf",
        s(&lcf_ok),
        "--out",
        s(&d.join("x.toml")),
    ]);
    fails_with(&o, 2, &["--ptrace"]);
    assert!(!d.join("x.toml").exists(), "nothing written on error");
}

#[test]
fn solve_points_other_tools_files_to_import() {
    for (f, hint) in [
        (
            "configs/hotspot/ev6_3D.lcf",
            "cuth import hotspot --lcf configs/hotspot/ev6_3D.lcf",
        ),
        (
            "configs/hotspot/example.config",
            "cuth import hotspot --config configs/hotspot/example.config",
        ),
        (
            "configs/3dice/two_dies.stk",
            "cuth import 3dice configs/3dice/two_dies.stk",
        ),
    ] {
        fails_with(&cuth(&["solve", f, "--device", "cpu"]), 2, &[hint]);
        fails_with(
            &cuth(&[
                "transient",
                f,
                "--dt",
                "1",
                "--steps",
                "1",
                "--device",
                "cpu",
            ]),
            2,
            &[hint],
        );
    }
}

/// The shipped imported examples are what the importer writes today
/// (regenerate with the commands in docs/src/examples.md if this fails).
#[test]
fn shipped_imported_examples_are_current() {
    use cuth::import::{hotspot, threedice};
    // Integration tests run in the package root, as the book's commands do.
    let inp = hotspot::HotspotInput {
        config: "configs/hotspot/example.config".into(),
        lcf: Some("configs/hotspot/ev6_3D.lcf".into()),
        flp: None,
        ptrace: Some("configs/hotspot/ev6_3D.ptrace".into()),
        materials: None,
        out: "configs/hotspot_ev6_3d_imported.toml".into(),
        uniform_grid: false,
        flags: Vec::new(),
    };
    let shipped = std::fs::read_to_string("configs/hotspot_ev6_3d_imported.toml").unwrap();
    assert_eq!(hotspot::import(&inp).unwrap().toml, shipped);
    let out = Path::new("configs/3dice_two_dies.toml");
    let imp = threedice::import(Path::new("configs/3dice/two_dies.stk"), out).unwrap();
    assert_eq!(imp.toml, std::fs::read_to_string(out).unwrap());
    let trace = std::fs::read_to_string("configs/3dice_two_dies.trace.csv").unwrap();
    assert_eq!(imp.extra[0].contents, trace);
}
