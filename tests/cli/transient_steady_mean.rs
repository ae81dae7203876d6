//! `cuth transient --init steady-mean` starts from the steady state of the
//! trace's mean power (HotSpot's flow), each row weighted by how long it
//! holds: checked against `cuth solve` of the stack whose blocks carry that
//! mean power, on a stack that is linear in the power.

use crate::util::cli::*;
use std::path::Path;

/// Two blocks `a` (left half) and `b` (right half) with powers `pa`, `pb`.
fn stack(dir: &Path, name: &str, pa: f64, pb: f64) -> std::path::PathBuf {
    let blocks = format!(
        "power = {{ type = \"blocks\", blocks = [ \
         {{ name = \"a\", x = 0, y = 0, width = \"1 mm\", height = \"2 mm\", power = {pa:?} }}, \
         {{ name = \"b\", x = \"1 mm\", y = 0, width = \"1 mm\", height = \"2 mm\", power = {pb:?} }} ] }}"
    );
    write(dir, name, &die(&blocks))
}

/// The field after one step of 1e-12 s from `--init init`: the initial
/// state to within ~1e-9 K.
fn start(stack: &Path, trace: &Path, init: &str, dir: &Path) -> Vec<f64> {
    let st = dir.join(format!("{init}.state"));
    let out = dir.join(format!("out_{init}"));
    let args = [
        "transient",
        s(stack),
        "--trace",
        s(trace),
        "--init",
        init,
        "--dt",
        "1e-12",
        "--steps",
        "1",
        "--device",
        "cpu",
        "--quiet",
        "--no-maps",
        "--out",
        s(&out),
        "--save-state",
        s(&st),
    ];
    ok(&cuth(&args));
    state(&st).1
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn steady_mean_starts_from_the_steady_state_of_the_mean_power() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let stacked = stack(dir, "s.toml", 1.0, 1.0);
    // Rows of 1 ms, 3 ms and (the last: the mean of the others) 2 ms.
    let trace = write(dir, "t.csv", "time,a,b\n0,4,0\n0.001,0,2\n0.004,1,1\n");
    // Mean: a = (4·1 + 0·3 + 1·2) / 6 = 1, b = (0 + 2·3 + 1·2) / 6 = 4/3.
    let reference = stack(dir, "mean.toml", 1.0, 4.0 / 3.0);
    let (_, t_ref) = solve_state(&reference, dir, "mean");

    let t_mean = start(&stacked, &trace, "steady-mean", dir);
    assert!(
        max_diff(&t_mean, &t_ref) < 1e-6,
        "{}",
        max_diff(&t_mean, &t_ref)
    );
    // The first row's steady state is another field: the test tells them apart.
    let t_first = start(&stacked, &trace, "steady", dir);
    assert!(
        max_diff(&t_first, &t_ref) > 0.1,
        "{}",
        max_diff(&t_first, &t_ref)
    );
}
