//! `cuth import 3dice` end to end on small stacks written from 3D-ICE's
//! grammar (tests/data/3dice): unit conversion, layer order, the CSV trace,
//! a 1D series-resistance check, the flip for a bottom-only sink, and the
//! features cuth cannot represent (exit 2, file and line named).

use crate::util::cli::*;
use std::path::Path;
use std::process::Command;
use std::process::Output;

fn import_3dice(stk: &str, out: &Path) -> Output {
    cuth(&["import", "3dice", stk, "--out", s(out)])
}

#[test]
fn threedice_units_layers_and_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("two.toml");
    ok(&import_3dice("configs/3dice/two_dies.stk", &out));
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

/// The outermost layer on a side without a sink: cuth couples it to its
/// neighbour through half its height, 3D-ICE (`first_layer` of its thermal
/// grid) through all of it. docs/src/physics.md gives the difference as
/// `P dz / (2 kz A)`: here the powered 2 um source is the bottom layer, so
/// cuth's source is that much cooler than 3D-ICE's, and no more.
#[test]
fn threedice_outermost_layer_differs_by_the_stated_half_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/3dice");
    std::fs::copy(data.join("uniform.flp"), d.join("uniform.flp")).unwrap();
    let text = std::fs::read_to_string(data.join("uniform.stk")).unwrap();
    let text = text.replace("   layer  100 SILICON ;\n", "");
    assert!(!text.contains("layer  100"), "the bottom layer is removed");
    let stk = write(d, "o.stk", &text);
    let out = d.join("o.toml");
    let o = Command::new(crate::util::cli::cuth_path())
        .args(["import", "3dice", s(&stk), "--out", s(&out)])
        .current_dir(d)
        .output()
        .unwrap();
    ok(&o);
    let (_, t) = solve_state(&out, d, "o");
    let a = 4e-3 * 2e-3;
    let (k_si, k_beol, p) = (130.0, 2.25, 2.5);
    let half_source = 1e-6 / k_si / a;
    let r_cuth = 1.0 / (1e4 * a) + half_source + (10e-6 / k_beol + 300e-6 / k_si) / a;
    let cuth_k = 318.15 + p * r_cuth;
    for v in &t[..32] {
        // 3D-ICE's would be p * half_source (0.0024 K) hotter.
        assert!((v - cuth_k).abs() < 1e-6, "{v} vs {cuth_k}");
    }
    // docs/src/physics.md's figure for 3D-ICE's solid tests: 50 W through a
    // 2 um source over 10 x 10 mm, 1e-6 / (130 * 1e-4) K/W.
    let solid: f64 = 50.0 * 1e-6 / (130.0 * 1e-4);
    assert!((solid - 0.004).abs() < 2e-4, "{solid}");
}

#[test]
fn threedice_unsupported_and_malformed_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m.toml");
    fails_with(
        &import_3dice("tests/data/3dice/microchannel.stk", &out),
        2,
        &["microchannel.stk:9:", "do not fill the chip length"],
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
        ("chan.stk", base.replace("layer   LID      300 SILICON ;", "channel CAV ;"), "no `microchannel` or `pinfin` section"),
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
        let p = write(d, name, &text);
        fails_with(&import_3dice(s(&p), &out), 2, &[needle]);
        assert!(!out.exists());
    }
    let flp = write(
        d,
        "mat.flp",
        "All :\n position 0, 0 ;\n dimension 4000, 2000 ;\n material BEOL ;\n power values 1 ;\n",
    );
    let p = write(d, "mat.stk", &base.replace("./uniform.flp", s(&flp)));
    fails_with(
        &import_3dice(s(&p), &out),
        2,
        &["mat.flp:4:", "heterogeneous floorplan"],
    );
    let flp = write(
        d,
        "out.flp",
        "All :\n position 3000, 0 ;\n dimension 4000, 2000 ;\n power values 1 ;\n",
    );
    let p = write(d, "outside.stk", &base.replace("./uniform.flp", s(&flp)));
    fails_with(&import_3dice(s(&p), &out), 2, &["All"]);
}
