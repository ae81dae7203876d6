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
