//! `cuth import hotspot|3dice` end to end: HotSpot's own examples and small
//! 3D-ICE stacks written from its grammar are imported, solved and checked
//! against the hand-written ev6 stack, a 1D series-resistance solution and
//! the unit conversions; unsupported features and bad files exit 2 naming
//! the file and line, and write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cuth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuth"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cuth runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "stderr: {}", stderr(o));
}

fn fails_with(o: &Output, code: i32, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` missing from: {e}");
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Reads a `--save-state` file: dimensions and temperatures (K).
fn state(p: &Path) -> (String, Vec<f64>) {
    let b = std::fs::read(p).unwrap();
    let nl = b.iter().position(|&c| c == b'\n').unwrap();
    let t = b[nl + 1..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (String::from_utf8(b[..nl].to_vec()).unwrap(), t)
}

fn solve_state(stack: &Path, dir: &Path, tag: &str) -> (String, Vec<f64>) {
    let st = dir.join(format!("{tag}.state"));
    let out = dir.join(format!("out_{tag}"));
    ok(&cuth(&[
        "solve",
        s(stack),
        "--device",
        "cpu",
        "--quiet",
        "--out",
        s(&out),
        "--save-state",
        s(&st),
    ]));
    state(&st)
}

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

    let (dims_h, hand) = solve_state(Path::new("configs/hotspot_ev6_3d.toml"), tmp.path(), "hand");
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

/// Writes `text` as a file in `dir` and returns its path.
fn put(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
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
    let lcf_ok = put(d, "ok.lcf", &lcf);
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
    let secondary = put(
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
    let leak = put(
        d,
        "leak.config",
        &cfg.replace("-leakage_used 0", "-leakage_used 1"),
    );
    fails_with(&run(&leak, &lcf_ok), 2, &["leak.config:", "leakage"]);
    let unknown = put(d, "unk.config", &format!("{cfg}\n-k_chipp 3\n"));
    fails_with(
        &run(&unknown, &lcf_ok),
        2,
        &["unk.config:", "unknown HotSpot setting `-k_chipp`"],
    );
    let cfg_ok = put(d, "ok.config", &cfg);
    // Layer 1 without lateral heat flow (its second field).
    let no_lat = put(d, "nolat.lcf", &lcf.replacen("1\nY\nN\n", "1\nN\nN\n", 1));
    fails_with(
        &run(&cfg_ok, &no_lat),
        2,
        &["nolat.lcf:25:", "without lateral heat flow"],
    );
    let bad = put(d, "bad.lcf", &lcf.replacen("0.00015", "thick", 1));
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
            "tests/data/3dice/two_dies.stk",
            "cuth import 3dice tests/data/3dice/two_dies.stk",
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

fn import_3dice(stk: &str, out: &Path) -> Output {
    cuth(&["import", "3dice", stk, "--out", s(out)])
}

#[test]
fn threedice_units_layers_and_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("two.toml");
    ok(&import_3dice("tests/data/3dice/two_dies.stk", &out));
    let st = cuth::stack::Stack::load(&out).unwrap();
    // chip length (x) 10000 um, width (y) 8000 um; cells 250 x 200 um.
    assert_eq!(
        (st.width_m, st.length_m, st.nx, st.ny),
        (0.01, 0.008, 40, 40)
    );
    assert_eq!((st.ambient_k, st.h_top, st.h_bottom), (300.0, 1e4, None));
    let names: Vec<&str> = st.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "CORE_DIE_0",
            "CORE_DIE_source",
            "CORE_DIE_2",
            "BOND",
            "MEMORY_DIE_0",
            "MEMORY_DIE_source",
            "LID_TIM"
        ]
    );
    let thick: Vec<f64> = st.layers.iter().map(|l| l.thickness_m).collect();
    assert_eq!(thick, [100e-6, 2e-6, 10e-6, 5e-6, 50e-6, 2e-6, 20e-6]);
    assert_eq!(st.layers[2].material.k, [2.25; 3]); // BEOL 2.25e-6 W/(um K)
    assert_eq!(st.layers[6].material.k, [4.0, 4.0, 2.0]);
    assert_eq!(st.layers[0].material.heat_capacity, 1.628e6);
    assert!(st.layers.iter().all(|l| l.cells == 1));
    let trace = std::fs::read_to_string(tmp.path().join("two.trace.csv")).unwrap();
    let rows: Vec<&str> = trace.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        rows,
        [
            "time,Bank0,Bank1,Core0,Core1,Cache",
            "0.0,0.5,0.5,3.0,2.0,1.0",
            "0.05,0.6,0.4,4.0,2.5,1.0",
            "0.1,0.5,0.5,2.0,1.0,1.0"
        ]
    );

    // The steady solve takes the first slot: 3 + 2 + 1 W in the core die, 0.5 + 0.5 W in memory.
    let sum = tmp.path().join("o");
    ok(&cuth(&[
        "solve",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
        "--out",
        s(&sum),
    ]));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sum.join("summary.json")).unwrap()).unwrap();
    let power: Vec<f64> = j["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["power_w"].as_f64().unwrap())
        .collect();
    assert!(
        (power[1] - 6.0).abs() < 1e-9 && (power[5] - 1.0).abs() < 1e-9,
        "{power:?}"
    );
    assert!((j["energy"]["heat_out_top_w"].as_f64().unwrap() - 7.0).abs() < 1e-6);
    // And the transient runs on the trace it wrote.
    ok(&cuth(&[
        "transient",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
        "--no-maps",
        "--trace",
        s(&tmp.path().join("two.trace.csv")),
        "--dt",
        "0.01",
        "--t-end",
        "0.15",
        "--out",
        s(&tmp.path().join("t")),
    ]));
}

#[test]
fn threedice_uniform_die_matches_series_resistances() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("u.toml");
    ok(&import_3dice("tests/data/3dice/uniform.stk", &out));
    let (_, t) = solve_state(&out, tmp.path(), "u");
    // 1D: the source cell sits at ambient + P (R_film + sum of half-cell
    // resistances up to the top face); 3D-ICE and cuth share this scheme.
    let a = 4e-3 * 2e-3;
    let (k_si, k_beol, p) = (130.0, 2.25, 2.5);
    let r = 1.0 / (1e4 * a)
        + (1e-6 / k_si + 5e-6 / k_beol + 5e-6 / k_beol + 150e-6 / k_si + 150e-6 / k_si) / a;
    let expected = 318.15 + p * r;
    let per_layer = 8 * 4;
    let source = &t[per_layer..2 * per_layer];
    for v in source {
        assert!((v - expected).abs() < 1e-6, "{v} vs {expected}");
    }
    // A bottom-only sink flips the stack: the cooled face becomes cuth's top.
    let flipped = tmp.path().join("b.toml");
    ok(&import_3dice("tests/data/3dice/bottom_sink.stk", &flipped));
    let st = cuth::stack::Stack::load(&flipped).unwrap();
    assert_eq!(st.layers.first().unwrap().name, "LID");
    assert_eq!(st.layers.last().unwrap().name, "DIE_0");
    assert_eq!((st.h_top, st.h_bottom), (1e4, None));
}

#[test]
fn threedice_unsupported_and_malformed_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m.toml");
    fails_with(
        &import_3dice("tests/data/3dice/microchannel.stk", &out),
        2,
        &["microchannel.stk:9:", "microchannel"],
    );
    assert!(!out.exists());
    let d = tmp.path();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/uniform.flp"),
        d.join("uniform.flp"),
    )
    .unwrap();
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice/uniform.stk"),
    )
    .unwrap();
    let cases = [
        ("chan.stk", base.replace("layer   LID      300 SILICON ;", "channel CAV ;"), "microchannel stack element"),
        ("typo.stk", base.replace("thermal conductivity     1.30e-4", "thermal conductance 1.30e-4"), "typo.stk:4: expected `thermal conductivity`"),
        ("unk.stk", base.replace("300 SILICON", "300 COPPER"), "unknown material `COPPER`"),
        ("nosink.stk",
            base.replace(
                "top heat sink :\n   heat transfer coefficient 1.0e-8 ;\n   temperature               318.15 ;\n",
                "",
            ),
            "no heat sink"),
        ("plug.stk", base.replace("top heat sink :", "top pluggable heat sink :"), "pluggable heat sink"),
    ];
    for (name, text, needle) in cases {
        let p = put(d, name, &text);
        fails_with(&import_3dice(s(&p), &out), 2, &[needle]);
        assert!(!out.exists());
    }
    let flp = put(d, "mat.flp", "All :\n position 0, 0 ;\n dimension 4000, 2000 ;\n material SILICON ;\n power values 1 ;\n");
    let p = put(d, "mat.stk", &base.replace("./uniform.flp", s(&flp)));
    fails_with(
        &import_3dice(s(&p), &out),
        2,
        &["mat.flp:4:", "heterogeneous floorplan"],
    );
    let flp = put(
        d,
        "out.flp",
        "All :\n position 3000, 0 ;\n dimension 4000, 2000 ;\n power values 1 ;\n",
    );
    let p = put(d, "outside.stk", &base.replace("./uniform.flp", s(&flp)));
    fails_with(&import_3dice(s(&p), &out), 2, &["All"]);
}
