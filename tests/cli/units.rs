//! The units rule (docs/src/outputs.md, "Units"): what a person reads is in °C, or K
//! with `--kelvin`, and says so in its header or column names; what
//! another tool reads (`summary.json`, `blocks.steady`, the peers' files)
//! is in K whatever `--kelvin` says.

use crate::util::cli::{cuth, ok, s};
use std::path::Path;

fn solve(out: &Path, extra: &[&str]) {
    let mut args = vec![
        "solve",
        "configs/3dice_two_dies.toml",
        "--grid",
        "16x16",
        "--device",
        "cpu",
        "--quiet",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    ok(&cuth(&args));
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The numbers of a layer CSV (its `#` lines left out).
fn values(text: &str) -> Vec<f64> {
    (text.lines())
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()))
        .collect()
}

#[test]
fn people_read_celsius_or_kelvin_tools_read_kelvin() {
    let tmp = tempfile::tempdir().unwrap();
    let (c, k) = (tmp.path().join("c"), tmp.path().join("k"));
    solve(&c, &[]);
    solve(&k, &["--kelvin"]);
    // Layer maps: the unit line, and values 273.15 apart.
    let map = "01_CORE_DIE_source.csv";
    let (mc, mk) = (read(&c, map), read(&k, map));
    assert_eq!(mc.lines().next(), Some("# unit: °C"));
    assert_eq!(mk.lines().next(), Some("# unit: K"));
    let (vc, vk) = (values(&mc), values(&mk));
    assert_eq!(vc.len(), 256);
    for (a, b) in vc.iter().zip(&vk) {
        assert!((b - a - 273.15).abs() < 2e-6, "{a} °C vs {b} K");
    }
    // Our tables name the unit in their columns.
    for (dir, u) in [(&c, "c"), (&k, "k")] {
        let blocks = read(dir, "blocks.csv");
        assert!(
            blocks.starts_with(&format!(
                "layer,block,power_w,t_min_{u},t_avg_{u},t_max_{u}\n"
            )),
            "{blocks}"
        );
        let probes = read(dir, "probes.csv");
        assert!(
            probes.lines().next().unwrap().ends_with(&format!(",t_{u}")),
            "{probes}"
        );
    }
    // Files for tools: kelvin either way, the same bytes.
    assert_eq!(read(&c, "blocks.steady"), read(&k, "blocks.steady"));
    let t_max = |dir: &Path| {
        let j: serde_json::Value = serde_json::from_str(&read(dir, "summary.json")).unwrap();
        j["hottest"]["t_k"].as_f64().unwrap()
    };
    assert_eq!(t_max(&c), t_max(&k));
    // blocks.steady's kelvin lie within each block's min and max in K.
    let csv_k = read(&k, "blocks.csv");
    for line in read(&c, "blocks.steady").lines() {
        let (name, t) = line.split_once('\t').unwrap();
        let t: f64 = t.parse().unwrap();
        let row: Vec<&str> = (csv_k.lines())
            .find(|r| {
                let mut c = r.split(',');
                name == format!("{}.{}", c.next().unwrap(), c.next().unwrap())
            })
            .unwrap_or_else(|| panic!("{name} in {csv_k}"))
            .split(',')
            .collect();
        let (lo, hi): (f64, f64) = (row[3].parse().unwrap(), row[5].parse().unwrap());
        assert!(
            lo - 1e-6 <= t && t <= hi + 1e-6,
            "{name}: {t} K outside [{lo}, {hi}]"
        );
    }
}
