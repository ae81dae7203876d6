//! Temperature-dependent cases and their checks, one body per backend
//! (`solver::nonlinear_cases` runs them on the CPU, `gpu::nonlinear` and
//! `gpu::kt_device` on CUDA, where they are also compared with the CPU):
//! the shipped stacks with k(T) silicon and a per-cell leakage on the logic
//! raster, a stack of floorplan units with laws and leaking blocks, the
//! layers' power, a transient run on any backend, and field comparisons.

use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::schedule::PowerSchedule;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use cuth::thermal::transient::{run_transient, StepView, TransientOptions, TransientOutcome};
use std::path::{Path, PathBuf};

/// `configs/NAME` from the working directory, else from the source tree.
pub fn config(name: &str) -> PathBuf {
    super::repo_path(&format!("configs/{name}"))
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
    run_transient(
        be,
        s,
        &cuth::grid::Grid::from_stack(s),
        sched,
        opts,
        &mut observe,
    )
    .expect("transient runs")
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

/// Floorplan units with laws (power law, polynomial) overlapping, a layer
/// with a table law, and block leakage.
pub fn units_kt(dir: &Path) -> Stack {
    std::fs::write(
        dir.join("die.flp"),
        "left 3.75e-4 1e-3 0 0\nmid 4e-4 6e-4 4e-4 2e-4\n",
    )
    .unwrap();
    let text = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=24\nny=20\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.plain]\nk=20.0\nheat_capacity=1e6\n\
         [materials.kt]\nk={ k300 = 10.0, exponent = -1.3 }\nheat_capacity={ c300 = 1e6, exponent = 1.0 }\n\
         [materials.poly]\nk={ poly = [30.0, -0.05] }\nheat_capacity=1e6\n\
         [materials.tab]\nk={ table = [[300.0, 50.0], [340.0, 40.0], [400.0, 30.0]] }\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"plain\"\nthickness=1e-4\nfloorplan=\"die.flp\"\n\
         unit_materials={ left = \"kt\", mid = \"poly\" }\npower={ type=\"uniform\", total=0.05 }\n\
         [[layers]]\nname=\"top\"\nmaterial=\"tab\"\nthickness=1e-4\ncells=2\n\
         [layers.power]\ntype=\"blocks\"\nblocks=[\
         { name=\"core\", x=0.0, y=0.0, width=5e-4, height=4e-4, power=0.02, leakage={ p_ref=0.005, t_ref=320.0, beta=0.03 } },\
         { name=\"io\", x=6e-4, y=5e-4, width=3e-4, height=5e-4, power=0.01, leakage={ p_ref=0.002, t_ref=330.0, beta=0.02 } }]\n";
    Stack::from_toml(text, &dir.join("s.toml")).unwrap()
}

/// The iterated transient (`--nonlinear-iterations`) from the nonlinear
/// steady state under a power step, on `be`: per-step layer maxima and
/// solves per step.
pub fn iterated_transient<B: cuth::thermal::device::ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
) -> Vec<(Vec<f64>, Option<usize>)> {
    use cuth::power::schedule::PowerSchedule;
    use cuth::thermal::transient::{InitState, TransientOptions};
    let base = base_power(stack);
    let mut solver = SteadyOptions::from_stack(stack, PrecondKind::Multigrid);
    solver.rtol = 1e-10;
    solver.nonlinear.tol_k = 1e-7;
    solver.nonlinear.transient_iterations = 30;
    // Start from the steady state at half the power: the steps then heat up.
    let mut half = stack.clone();
    for l in &mut half.layers {
        if let Some(s) = &mut l.leakage {
            s.p_ref *= 0.5;
        }
    }
    let init = cuth::thermal::steady::solve_steady(be, &half, &solver).unwrap();
    let opts = TransientOptions {
        solver,
        dt: 2e-3,
        steps: 5,
        init: InitState::Field(init.temperature_k),
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    };
    let out = transient(be, stack, &PowerSchedule::constant(base), &opts);
    out.records
        .iter()
        .map(|r| (r.layer_max_k.clone(), r.outer_iterations))
        .collect()
}

/// mol_f2f with k(T) silicon and leakage at `n`², default options: the
/// Picard iteration converges with the leakage on (> 0.8 W, its p_ref at
/// 358 K) and the energy balance closes.
pub fn nonlinear_case_converges_with_leakage<B: ThermalBackend + 'static>(be: &B, n: usize) {
    let stack = mol_f2f_kt_leaky(n, n);
    assert!(stack.is_nonlinear() && stack.k_varies());
    let opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    let c = solve_steady(be, &stack, &opts).unwrap();
    let nl = c.summary.nonlinear.unwrap();
    assert!(nl.leakage_total_w > 0.8, "{nl:?}");
    assert!(c.summary.energy.relative_error < 1e-6);
}

/// The iterated transient of mol_f2f with k(T) and leakage at `n`², from
/// the steady state at half the leakage: every step iterates (≥ 2 solves)
/// and the stack heats up.
pub fn iterated_transient_heats_up_from_the_half_leakage_steady_state<
    B: ThermalBackend + 'static,
>(
    be: &B,
    n: usize,
) {
    let c = iterated_transient(be, &mol_f2f_kt_leaky(n, n));
    assert_eq!(c.len(), 6);
    assert!(c[1..].iter().all(|r| r.1.is_some_and(|o| o >= 2)), "{c:?}");
    assert!(c[5].0[1] > c[0].0[1]);
}

/// The unit-law stack is temperature-dependent and converges, reporting
/// the leakage of its two blocks; mol_f2f with k(T) varies its k.
pub fn unit_laws_and_block_leakage_converge<B: ThermalBackend + 'static>(be: &B) {
    let dir = tempfile::tempdir().unwrap();
    let s = units_kt(dir.path());
    assert!(s.k_varies() && s.is_nonlinear());
    let out = solve_steady(
        be,
        &s,
        &SteadyOptions::from_stack(&s, PrecondKind::Multigrid),
    )
    .unwrap();
    let nl = out.summary.nonlinear.unwrap();
    assert_eq!(nl.leakage_w.len(), 2);
    assert!(mol_f2f_kt_leaky(16, 12).k_varies());
}
