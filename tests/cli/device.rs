//! How every command opens its device: a GPU ordinal the machine lacks is a
//! failed run (exit 1) that writes nothing, whichever command asked, and
//! `--device auto` solves where it can, saying so when it falls back to the
//! CPU.

use crate::util::cli::{cuth, err, s};

#[test]
fn every_command_refuses_a_gpu_ordinal_it_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = s(&out);
    let ev6 = "configs/hotspot_ev6_3d.toml";
    let runs: [(&str, Vec<&str>); 4] = [
        ("solve", vec!["solve", ev6, "--grid", "16x16", "--out", o]),
        (
            "transient",
            vec![
                "transient",
                ev6,
                "--grid",
                "16x16",
                "--dt",
                "1e-3",
                "--steps",
                "2",
                "--out",
                o,
            ],
        ),
        (
            "topopt",
            vec!["topopt", "cantilever", "--nelx", "8", "--out", o],
        ),
        ("serve", vec!["serve", ev6, "--grid", "16x16"]),
    ];
    for (name, mut args) in runs {
        args.extend(["--device", "cuda:99"]);
        let r = cuth(&args);
        let e = err(&r);
        assert_eq!(r.status.code(), Some(1), "{name}: {e}");
        assert!(!out.exists(), "{name} wrote {}", out.display());
        assert!(!e.contains("panicked"), "{name}: {e}");
        // With CUDA present the message names the ordinal and the count;
        // without it, it says why CUDA cannot be used.
        if e.contains("CUDA device(s)") {
            assert!(e.contains("--device cuda:99"), "{name}: {e}");
        }
    }
}

#[test]
fn auto_says_when_it_falls_back_to_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = cuth(&[
        "solve",
        "configs/hotspot_ev6_3d.toml",
        "--grid",
        "16x16",
        "--device",
        "auto",
        // Chebyshev's precision depends on the device (mixed on a GPU).
        "--precond",
        "chebyshev",
        "--json",
        "--no-maps",
        "--out",
        s(&out),
    ]);
    let e = err(&r);
    assert!(r.status.success(), "{e}");
    let summary: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let backend = summary["device"]["backend"].as_str().unwrap().to_string();
    let noted = e.contains("solving on the CPU");
    assert_eq!(backend == "cpu", noted, "device {backend}, stderr: {e}");
    // After a fallback the solve runs at the CPU's default precision, not
    // at the GPU's mixed one that the plan intended.
    if noted {
        assert_eq!(summary["solver"]["precision"], "f64", "{summary}");
    }
}

/// A stack with a liquid-cooled cavity is refused by the command that does
/// not solve coolant yet (a sweep): exit 2, the cavity's field named,
/// nothing written.
#[test]
fn a_sweep_refuses_a_liquid_cooled_cavity_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let stack = crate::util::cli::write(
        tmp.path(),
        "liquid.toml",
        r#"
[chip]
width = "100 um"
length = "1 mm"
[grid]
nx = 3
ny = 8
[boundary]
ambient = 300
h_top = 1e4
[materials]
si = { kx = 150, ky = 150, kz = 150, heat_capacity = 1.6e6 }
[[layers]]
name = "die"
material = "si"
thickness = "50 um"
power = { type = "uniform", total = 0.5 }
[[layers]]
name = "cavity"
material = "si"
thickness = "100 um"
[layers.cavity]
model = "4rm"
channel_width = "50 um"
wall_width = "50 um"
first_wall_width = "25 um"
last_wall_width = "25 um"
flow = "10 ml/min"
direction = "+y"
inlet = "300 K"
coolant = { heat_capacity = 4.172638e6 }
h = { side = 2e4, top = 2e4, bottom = 2e4 }
[[layers]]
name = "lid"
material = "si"
thickness = "50 um"
"#,
    );
    let cases = crate::util::cli::write(
        tmp.path(),
        "cases.toml",
        "[[case]]\nname = \"a\"\npower.die = { type = \"uniform\", total = 0.25 }\n",
    );
    let out = tmp.path().join("out");
    let (st, o) = (s(&stack), s(&out));
    let args = ["sweep", st, s(&cases), "--device", "cpu", "--out", o];
    let r = cuth(&args);
    let e = err(&r);
    assert_eq!(r.status.code(), Some(2), "sweep: {e}");
    assert!(e.contains("(cavity).cavity"), "sweep: {e}");
    assert!(!out.exists(), "sweep wrote {}", out.display());
}
