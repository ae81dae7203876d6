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
