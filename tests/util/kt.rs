//! Helpers of the temperature-dependent GPU tests (`gpu::kt_device`,
//! `gpu::nonlinear`, `gpu::transient_device`): the shipped stacks with k(T)
//! silicon and a per-cell leakage on the logic raster, the layers' power,
//! a transient run on any backend, and field comparisons.

use cuth::grid::Grid;
use cuth::power::schedule::PowerSchedule;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::transient::{run_transient, StepView, TransientOptions, TransientOutcome};
use std::path::{Path, PathBuf};

/// `configs/NAME` from the working directory, else from the source tree.
pub fn config(name: &str) -> PathBuf {
    let here = Path::new("configs").join(name);
    match here.exists() {
        true => here,
        false => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs")
            .join(name),
    }
}

/// The logic die's raster source in mol_f2f*.toml.
const LOGIC: &str = "file = \"../powermaps/mol_logic.csv\" }";

/// A mol_f2f stack text with a per-cell leakage on the logic raster
/// (p_ref 0.8 W at 358.15 K, β 0.017/K).
pub fn with_logic_leakage(text: &str) -> String {
    assert!(text.contains(LOGIC), "no logic raster in the stack");
    text.replacen(
        LOGIC,
        &format!("{LOGIC}\nleakage = {{ p_ref = 0.8, t_ref = 358.15, beta = 0.017 }}"),
        1,
    )
}

/// mol_f2f at `nx`×`ny` with k(T) silicon, k = 148·(T/300)^-1.3, and a
/// per-cell leakage on the logic raster.
pub fn mol_f2f_kt_leaky(nx: usize, ny: usize) -> Stack {
    let path = config("mol_f2f.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("k = 130.0"));
    let text = text.replacen("k = 130.0", "k = { k300 = 148.0, exponent = -1.3 }", 1);
    Stack::from_toml(&with_logic_leakage(&text), &path)
        .unwrap()
        .with_grid(nx, ny)
        .unwrap()
}

/// The layers' power of `s` on its own grid.
pub fn base_power(s: &Stack) -> Vec<LayerPower> {
    let grid = Grid::from_stack(s);
    (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect()
}

/// A transient run of `s` on `be` that must succeed.
pub fn transient<B: ThermalBackend + 'static>(
    be: &B,
    s: &Stack,
    sched: &PowerSchedule,
    opts: &TransientOptions,
) -> TransientOutcome {
    let mut observe = |_: &StepView| Ok(());
    run_transient(be, s, sched, opts, &mut observe).expect("transient runs")
}

/// Largest |a − b|.
pub fn max_abs(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Largest |a − b| / |b| (0 where equal).
pub fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| if x == y { 0.0 } else { (x - y).abs() / y.abs() })
        .fold(0.0, f64::max)
}
