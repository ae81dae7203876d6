//! Liquid-cooled stacks on any backend (`solver::liquid` runs the bodies on
//! the CPU, `gpu::liquid` on CUDA): a transient settles on the steady
//! state of the same backend, and every step's energy account closes with
//! the coolant's enthalpy rise in the heat out.

use super::stack;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::schedule::PowerSchedule;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use cuth::thermal::transient::{
    run_transient, InitState, StepView, TransientOptions, TransientOutcome,
};

/// Two silicon dies (6 W and 1.2 W uniform) around a 4RM cavity of
/// `channels` channels, water at 48 ml/min, no other cooling.
pub fn two_dies_4rm(channels: usize, ny: usize) -> String {
    let width_um = 100 * channels;
    format!(
        r#"
[chip]
width = "{width_um} um"
length = "10 mm"
[grid]
nx = {nx}
ny = {ny}
[boundary]
ambient = 300
[materials]
si = {{ k = 130, heat_capacity = 1.628e6 }}
[[layers]]
name = "logic"
material = "si"
thickness = "50 um"
power = {{ type = "uniform", total = 6.0 }}
[[layers]]
name = "channels"
material = "si"
thickness = "100 um"
[layers.cavity]
model = "4rm"
channel_width = "50 um"
wall_width = "50 um"
first_wall_width = "25 um"
last_wall_width = "25 um"
flow = "48 ml/min"
direction = "+y"
inlet = "300 K"
coolant = {{ heat_capacity = 4.172638e6 }}
h = {{ side = 27132, top = 47132, bottom = 57132 }}
[[layers]]
name = "memory"
material = "si"
thickness = "50 um"
power = {{ type = "uniform", total = 1.2 }}
"#,
        nx = 2 * channels + 1
    )
}

pub fn options(s: &Stack, dt: f64, steps: usize, rtol: f64) -> TransientOptions {
    let mut solver = SteadyOptions::from_stack(s, PrecondKind::Multigrid);
    solver.rtol = rtol;
    TransientOptions {
        solver,
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    }
}

pub fn run<B: ThermalBackend + 'static>(
    be: &B,
    s: &Stack,
    opts: &TransientOptions,
) -> TransientOutcome {
    let mut observe = |_: &StepView| Ok(());
    let grid = Grid::from_stack(s);
    let power = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(s, &grid, l).expect("the stack's power"))
        .collect();
    let schedule = PowerSchedule::constant(power);
    run_transient(be, s, &grid, &schedule, opts, &mut observe).expect("transient runs")
}

/// From ambient under constant power: every step's energy balances (power
/// in = films + the coolant's ṁ·c (T_out − T_in) + heat stored), and after
/// many time constants the field is the steady solve's.
pub fn transient_settles_and_balances<B: ThermalBackend + 'static>(be: &B) {
    let s = stack(&two_dies_4rm(20, 32));
    let t = run(be, &s, &options(&s, 0.02, 40, 1e-10));
    for r in &t.records[1..] {
        let e = &r.energy;
        let scale = e.power_w * 0.02;
        assert!(
            e.imbalance_j.abs() < 1e-8 * scale,
            "step {}: imbalance {:e} J of {scale:e}",
            r.step,
            e.imbalance_j
        );
    }
    let first = &t.records[1].energy;
    assert!(first.stored_j > 0.1 * first.power_w * 0.02, "{first:?}");
    let opts = SteadyOptions {
        rtol: 1e-10,
        ..SteadyOptions::from_stack(&s, PrecondKind::Multigrid)
    };
    let steady = solve_steady(be, &s, &opts).unwrap();
    let max_dt = (t.temperature_k.iter().zip(&steady.temperature_k))
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("liquid transient 41x32x3, 40 steps of 20 ms: max |T - T_steady| {max_dt:.2e} K");
    assert!(max_dt < 1e-7, "{max_dt:e}");
}

/// [`two_dies_4rm`] with the logic die's conductivity `k` (a number or a
/// law) and its `leakage` (a TOML inline table, or empty).
pub fn two_dies_4rm_logic(channels: usize, ny: usize, k: &str, leakage: &str) -> String {
    let leak = match leakage {
        "" => String::new(),
        l => format!("leakage = {l}\n"),
    };
    two_dies_4rm(channels, ny)
        .replace(
            "[materials]\n",
            &format!("[materials]\nlogic_si = {{ k = {k}, heat_capacity = 1.628e6 }}\n"),
        )
        .replacen(
            "name = \"logic\"\nmaterial = \"si\"\n",
            &format!("name = \"logic\"\nmaterial = \"logic_si\"\n{leak}"),
            1,
        )
}

fn steady<B: ThermalBackend + 'static>(be: &B, s: &Stack) -> cuth::thermal::steady::SteadyOutcome {
    let mut opts = SteadyOptions {
        rtol: 1e-10,
        ..SteadyOptions::from_stack(s, PrecondKind::Multigrid)
    };
    opts.nonlinear.tol_k = 1e-9;
    solve_steady(be, s, &opts).expect("the liquid stack solves")
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// A law that is a constant takes the outer iteration and lands on the
/// linear solve's field.
pub fn constant_law_equals_the_linear_solve<B: ThermalBackend + 'static>(be: &B) {
    let linear = steady(be, &stack(&two_dies_4rm_logic(10, 24, "130", "")));
    let law_k = "{ k300 = 130.0, exponent = 0.0 }";
    let law = steady(be, &stack(&two_dies_4rm_logic(10, 24, law_k, "")));
    let nl = law
        .summary
        .nonlinear
        .as_ref()
        .expect("the outer iteration ran");
    assert!(linear.summary.nonlinear.is_none());
    let d = max_diff(&linear.temperature_k, &law.temperature_k);
    println!(
        "constant law: {} outer iterations, max |ΔT| {d:.2e} K",
        nl.outer_iterations
    );
    assert!(d < 1e-9, "{d:e}");
}

/// k(T) falling with T (k = 130 (T/300)^-1.3 in the logic die): the field
/// is the fixed point of its own system (re-assembled here at the answer's
/// temperatures, the residual of the answer in it), hotter than with k at
/// 300 K everywhere, and the energy balance holds with the coolant.
pub fn conductivity_law_is_a_fixed_point<B: ThermalBackend + 'static>(be: &B) {
    let s = stack(&two_dies_4rm_logic(
        10,
        24,
        "{ k300 = 130.0, exponent = -1.3 }",
        "",
    ));
    let out = steady(be, &s);
    let cold = steady(be, &stack(&two_dies_4rm_logic(10, 24, "130", "")));
    let nl = out
        .summary
        .nonlinear
        .as_ref()
        .expect("the outer iteration ran");
    let e = &out.summary.energy;
    assert!(e.relative_error < 1e-10, "{e:?}");
    let (hot, cold) = (out.summary.hottest.t_k, cold.summary.hottest.t_k);
    assert!(
        hot > cold + 1e-3,
        "k falls with T, so hotter: {hot} vs {cold}"
    );
    let rel = fixed_point_residual(&s, &out.temperature_k);
    println!(
        "k(T) liquid: {} outer iterations, Tmax {hot:.6} K (k at 300 K: {cold:.6} K), \
         residual of the answer in its own A(T) {rel:.2e}",
        nl.outer_iterations
    );
    assert!(rel < 1e-8, "{rel:e}");
}

/// ‖b(T) − A(T) θ‖ / ‖b(T)‖ with A(T), b(T) assembled on the host at the
/// answer's own temperatures `t_k`, coolant included.
fn fixed_point_residual(s: &Stack, t_k: &[f64]) -> f64 {
    let grid = Grid::from_stack(s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(s, &grid, l).unwrap())
        .collect();
    let cells = cuth::assemble::cell_materials(s, &grid, &power, t_k).unwrap();
    let mut sys = cuth::assemble::assemble_cells(s, &grid, &power, &cells);
    let leak = cuth::thermal::nonlinear::leakage::LeakageModel::new(s, &grid, &power);
    let q = leak.eval(&grid, t_k).cell_w;
    sys.rhs.iter_mut().zip(&q).for_each(|(b, q)| *b += q);
    let coolant = cuth::assemble::cavity::add_cavities(s, &grid, &mut sys)
        .unwrap()
        .unwrap();
    let theta: Vec<f64> = t_k.iter().map(|t| t - s.ambient_k).collect();
    let mut ax: Vec<f64> = (0..theta.len())
        .map(|i| sys.a.row_apply(&theta, i))
        .collect();
    coolant.advection.add_couplings(-1.0, &theta, &mut ax);
    let r2: f64 = (sys.rhs.iter().zip(&ax))
        .map(|(b, a)| (b - a) * (b - a))
        .sum();
    let b2: f64 = sys.rhs.iter().map(|b| b * b).sum();
    (r2 / b2).sqrt()
}

/// Leakage in the logic die: its power is p_ref·exp(β (T̄ − T_ref)) at the
/// answer's mean logic temperature (computed here from the field), and the
/// coolant carries the dynamic power plus that leakage away.
pub fn leakage_is_taken_at_the_answer<B: ThermalBackend + 'static>(be: &B) {
    let leakage = "{ p_ref = 1.5, t_ref = 300.0, beta = 0.03 }";
    let s = stack(&two_dies_4rm_logic(10, 24, "130", leakage));
    let out = steady(be, &s);
    let nl = out
        .summary
        .nonlinear
        .as_ref()
        .expect("the outer iteration ran");
    let grid = Grid::from_stack(&s);
    let z = grid.layer_z[0].clone();
    let plane = grid.plane();
    // The leakage's temperature: each column's mean over the layer's z
    // cells, averaged over the die by area (the 4RM walls are not all as
    // wide as the channels).
    let area: f64 = (0..plane).map(|j| grid.cell_area(j)).sum();
    let mean = (0..plane)
        .map(|j| {
            let col: f64 = z.clone().map(|k| out.temperature_k[k * plane + j]).sum();
            grid.cell_area(j) * col / z.len() as f64
        })
        .sum::<f64>()
        / area;
    let expect = 1.5 * (0.03 * (mean - 300.0)).exp();
    let e = &out.summary.energy;
    println!(
        "leaking liquid stack: {} outer iterations, leakage {:.9} W (from the field {expect:.9} W), \
         balance {:.1e}",
        nl.outer_iterations, nl.leakage_total_w, e.relative_error
    );
    assert!(
        (nl.leakage_total_w - expect).abs() < 1e-8 * expect,
        "{nl:?}"
    );
    assert!(
        (e.power_in_w - 7.2 - nl.leakage_total_w).abs() < 1e-9,
        "{e:?}"
    );
    assert!(e.relative_error < 1e-10, "{e:?}");
    let coolant = e.heat_out_coolant_w.unwrap();
    assert!(
        (coolant - e.power_in_w).abs() < 1e-9 * e.power_in_w,
        "{e:?}"
    );
}
