//! Liquid-cooled stacks through the command line: the shipped example's
//! power leaves through its coolant (the outlet's mixed temperature against
//! P / (ṁ c) from the stack file's own numbers), its coolant map and the
//! coolant cells of `field.vtr`; a transient settles on the steady state.

use crate::util::cli::{cuth, err, s};
use std::path::Path;

const EXAMPLE: &str = "configs/liquid_f2f.toml";
/// 4RM: one column per channel and wall; fewer rows along the flow.
const GRID: &str = "201x40";

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_example_sends_its_power_into_the_coolant() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = cuth(&[
        "solve",
        EXAMPLE,
        "--grid",
        GRID,
        "--device",
        "cpu",
        "--vtk",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{}", err(&r));
    let sum = json(&out.join("summary.json"));
    let e = &sum["energy"];
    assert!(e["relative_error"].as_f64().unwrap() < 1e-10, "{e}");
    let c = &sum["coolant"][0];
    assert_eq!(c["layer"], "channels");
    assert_eq!(c["model"], "4rm");
    // 50 + 10 W, no film to ambient: all of it in the water. The stack
    // file: 48 ml/min, 4.172638e6 J/(m³ K), inlet 300 K.
    let heat = c["heat_w"].as_f64().unwrap();
    assert!((heat - 60.0).abs() < 1e-8, "{heat}");
    let m_c = 48e-6 / 60.0 * 4.172638e6;
    let outlet = c["outlet_mean_k"].as_f64().unwrap();
    assert!((outlet - (300.0 + 60.0 / m_c)).abs() < 1e-8, "{outlet}");
    assert_eq!(c["channel_outlets_k"].as_array().unwrap().len(), 100);
    // The coolant's map: the channels' columns hold numbers, the walls'
    // (even columns, the first wall at x = 0) none.
    let csv = std::fs::read_to_string(out.join("coolant_03_channels.csv")).unwrap();
    let row: Vec<&str> = csv
        .lines()
        .find(|l| !l.starts_with('#'))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(row.len(), 201);
    assert_eq!(row[0], "NaN");
    assert!(
        row[1].parse::<f64>().is_ok_and(f64::is_finite),
        "{}",
        row[1]
    );
    assert!(out.join("coolant_03_channels.png").exists());
    let vtr = std::fs::read(out.join("field.vtr")).unwrap();
    let head = String::from_utf8_lossy(&vtr[..vtr.len().min(4096)]);
    assert!(head.contains("Name=\"coolant\""), "{head}");
}

#[test]
fn a_liquid_transient_settles_on_the_steady_state() {
    let tmp = tempfile::tempdir().unwrap();
    let (st, tr) = (tmp.path().join("st"), tmp.path().join("tr"));
    let common = ["--grid", GRID, "--device", "cpu", "--no-maps"];
    let mut a = vec!["solve", EXAMPLE, "--out", s(&st)];
    a.extend(common);
    let r = cuth(&a);
    assert!(r.status.success(), "{}", err(&r));
    let mut a = vec![
        "transient",
        EXAMPLE,
        "--dt",
        "0.05",
        "--steps",
        "30",
        "--out",
        s(&tr),
    ];
    a.extend(common);
    let r = cuth(&a);
    assert!(r.status.success(), "{}", err(&r));
    let (st, tr) = (
        json(&st.join("summary.json")),
        json(&tr.join("summary.json")),
    );
    assert!(
        tr["method"].as_str().unwrap().contains("BiCGStab"),
        "{}",
        tr["method"]
    );
    let worst = tr["energy"]["max_step_relative_imbalance"]
        .as_f64()
        .unwrap();
    assert!(worst < 1e-7, "{worst}");
    // 1.5 s is many times the stack's time constant (ms): each layer's
    // maximum is the steady one.
    for (a, b) in st["layers"]
        .as_array()
        .unwrap()
        .iter()
        .zip(tr["layers"].as_array().unwrap())
    {
        let (ts, tt) = (
            a["t_max_k"].as_f64().unwrap(),
            b["t_max_k"].as_f64().unwrap(),
        );
        assert!((ts - tt).abs() < 1e-6, "{}: {ts} vs {tt}", a["name"]);
    }
}

/// The example with silicon's k falling with temperature: `solve` iterates
/// on it (the outer iteration in the summary, the power still all in the
/// water, hotter than at constant k); `transient` refuses it, naming the
/// file, and writes nothing.
#[test]
fn temperature_dependent_silicon_solves_steady_and_is_refused_in_time() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    let maps = std::fs::canonicalize("powermaps").unwrap();
    let law = text
        .replacen(
            "[materials.silicon]\nk = 130.0",
            "[materials.silicon]\nk = { k300 = 130.0, exponent = -1.3 }",
            1,
        )
        .replace("../powermaps", s(&maps));
    assert_ne!(law, text, "the example's silicon is k = 130.0");
    let stack = tmp.path().join("liquid_kt.toml");
    std::fs::write(&stack, law).unwrap();
    let (kt, plain) = (tmp.path().join("kt"), tmp.path().join("plain"));
    let common = ["--grid", GRID, "--device", "cpu", "--no-maps"];
    for (file, out) in [(s(&stack), &kt), (EXAMPLE, &plain)] {
        let mut a = vec!["solve", file, "--out", s(out)];
        a.extend(common);
        let r = cuth(&a);
        assert!(r.status.success(), "{}", err(&r));
    }
    let (kt, plain) = (
        json(&kt.join("summary.json")),
        json(&plain.join("summary.json")),
    );
    assert!(
        kt["nonlinear"]["outer_iterations"].as_u64().unwrap() >= 2,
        "{}",
        kt["nonlinear"]
    );
    let heat = kt["coolant"][0]["heat_w"].as_f64().unwrap();
    assert!((heat - 60.0).abs() < 1e-8, "{heat}");
    assert!(kt["energy"]["relative_error"].as_f64().unwrap() < 1e-10);
    let (hot, cold) = (
        kt["hottest"]["t_k"].as_f64().unwrap(),
        plain["hottest"]["t_k"].as_f64().unwrap(),
    );
    assert!(hot > cold, "{hot} vs {cold}");
    let tr = tmp.path().join("tr");
    let mut a = vec![
        "transient",
        s(&stack),
        "--dt",
        "0.05",
        "--steps",
        "2",
        "--out",
        s(&tr),
    ];
    a.extend(common);
    let r = cuth(&a);
    assert_eq!(r.status.code(), Some(2), "{}", err(&r));
    assert!(
        err(&r).contains("liquid_kt.toml") && err(&r).contains("not stepped yet"),
        "{}",
        err(&r)
    );
    assert!(!tr.exists());
}
