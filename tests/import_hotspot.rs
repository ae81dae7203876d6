//! `cuth import hotspot` end to end on HotSpot's own examples: the ev6 3D
//! import solved against the hand-written chip-size transcription
//! `tests/data/hotspot_ev6_3d_chipsize.toml` (the import approximates the
//! package by chip-size layers; `configs/hotspot_ev6_3d.toml` is the real one),
//! HotSpot's default layers and materials files, and the features cuth
//! cannot represent (exit 2, file and line named, nothing written).

mod cli_util;
use cli_util::*;
use std::path::Path;
use std::process::Output;

fn import_ev6(out: &Path) -> Output {
    cuth(&[
        "import",
        "hotspot",
        "--config",
        "configs/hotspot/example.config",
        "--lcf",
        "configs/hotspot/ev6_3D.lcf",
        "--ptrace",
        "configs/hotspot/ev6_3D.ptrace",
        "--out",
        s(out),
    ])
}

/// Mean total power of a HotSpot trace (the steady input), W.
fn ptrace_mean_total(p: &str) -> f64 {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap();
    let rows: Vec<f64> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split_whitespace()
                .map(|v| v.parse::<f64>().unwrap())
                .sum()
        })
        .collect();
    rows.iter().sum::<f64>() / rows.len() as f64
}

#[test]
fn hotspot_ev6_import_matches_the_hand_written_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = tmp.path().join("ev6.toml");
    ok(&import_ev6(&imported));
    let text = std::fs::read_to_string(&imported).unwrap();
    // The trace and floorplans are referenced, and the sampling interval is stated.
    assert!(text.contains("configs/hotspot/ev6_3D.ptrace"), "{text}");
    assert!(text.contains("--sample-interval 3.333e-6"), "{text}");

    let (dims_h, hand) = solve_state(
        Path::new("tests/data/hotspot_ev6_3d_chipsize.toml"),
        tmp.path(),
        "hand",
    );
    let (dims_i, imp) = solve_state(&imported, tmp.path(), "imp");
    assert_eq!(dims_h, dims_i);

    // The only difference: the hand-written file rounds h_top = 1/(r_convec A)
    // to 63201.5. With all heat leaving through h_top, every temperature moves
    // by P (1/(h_hand A) - 1/(h_exact A)).
    let area = 0.0124 * 0.01276;
    let h_exact = 1.0 / (0.1 * area);
    let shift = ptrace_mean_total("configs/hotspot/ev6_3D.ptrace")
        * (1.0 / (63201.5 * area) - 1.0 / (h_exact * area));
    assert!(shift > 1e-6, "{shift}");
    // Two different systems, each solved to rtol 1e-8: agree with the shift to
    // well under 1 % of it (measured: 1.5e-8 K of 8.6e-6 K).
    for (a, b) in hand.iter().zip(&imp) {
        assert!(
            ((a - b) - shift).abs() < 0.01 * shift,
            "hand {a}, imported {b}, expected shift {shift}"
        );
    }

    // With the hand-written h_top the two stacks are the same model: same temperatures.
    let patched = tmp.path().join("ev6_h.toml");
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("h_top =") {
                "h_top = 63201.5".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&patched, text).unwrap();
    let (_, same) = solve_state(&patched, tmp.path(), "patched");
    let worst = hand
        .iter()
        .zip(&same)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-9, "max |dT| = {worst} K");
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
    assert_eq!((st.nx, st.ny), (39, 39));

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
/// (regenerate with the commands in README.md if this fails).
#[test]
fn shipped_imported_examples_are_current() {
    use cuth::import::{hotspot, threedice};
    // Integration tests run in the package root, as the README's commands do.
    let inp = hotspot::HotspotInput {
        config: "configs/hotspot/example.config".into(),
        lcf: Some("configs/hotspot/ev6_3D.lcf".into()),
        flp: None,
        ptrace: Some("configs/hotspot/ev6_3D.ptrace".into()),
        materials: None,
        out: "configs/hotspot_ev6_3d_imported.toml".into(),
    };
    let shipped = std::fs::read_to_string("configs/hotspot_ev6_3d_imported.toml").unwrap();
    assert_eq!(hotspot::import(&inp).unwrap().toml, shipped);
    let out = Path::new("configs/3dice_two_dies.toml");
    let imp = threedice::import(Path::new("configs/3dice/two_dies.stk"), out).unwrap();
    assert_eq!(imp.toml, std::fs::read_to_string(out).unwrap());
    let trace = std::fs::read_to_string("configs/3dice_two_dies.trace.csv").unwrap();
    assert_eq!(imp.extra[0].contents, trace);
}
