//! Backward-Euler transients against independent references, one body per
//! backend (`solver::transient` runs them on the CPU, `gpu::transient_device`
//! on CUDA): the discrete exact decay (1 + Δt/τ)^-n of a uniform layer; a
//! layered stack under uniform power against a hand-written tridiagonal
//! backward-Euler chain; a long run against the steady solver; the energy
//! account of every step; a trace's rows applied piecewise constant; a
//! capped step's error in the user's terms.

use super::{repo_path, stack};
use cuth::grid::Grid;
use cuth::linalg::{PrecondKind, SolveError};
use cuth::power::schedule::{cell_power, PowerSchedule};
use cuth::power::trace::parse_csv_trace;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use cuth::thermal::transient::{
    run_transient, InitState, StepView, TransientError, TransientOptions, TransientOutcome,
};
use std::path::Path;

fn base_power(s: &Stack) -> Vec<LayerPower> {
    let grid = Grid::from_stack(s);
    (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect()
}

fn options(s: &Stack, dt: f64, steps: usize, init: InitState, rtol: f64) -> TransientOptions {
    let mut solver = SteadyOptions::from_stack(s, PrecondKind::Chebyshev);
    solver.rtol = rtol;
    solver.max_iter = 100_000;
    TransientOptions {
        solver,
        dt,
        steps,
        init,
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    }
}

fn run<B: ThermalBackend + 'static>(
    be: &B,
    s: &Stack,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
) -> TransientOutcome {
    let mut observe = |_: &StepView| Ok(());
    run_transient(
        be,
        s,
        &cuth::grid::Grid::from_stack(s),
        schedule,
        opts,
        &mut observe,
    )
    .expect("transient runs")
}

pub fn uniform_layer_decays_as_discrete_backward_euler<B: ThermalBackend + 'static>(be: &B) {
    // One layer, one z cell, convective top only, no power: every cell sees
    // the same θ, no in-plane flux, so θn = θ0 (1 + Δt/τ)^-n exactly.
    let (k, c, dz, h, w, l) = (150.0, 1.7e6, 2e-4, 2e4, 3e-3, 2e-3);
    let s = stack(&format!(
        "[chip]\nwidth={w}\nlength={l}\n[grid]\nnx=5\nny=3\n[boundary]\nambient=300\nh_top={h}\n\
         [materials.si]\nk={k}\nheat_capacity={c}\n[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness={dz}\n"
    ));
    let cell_area = (w / 5.0) * (l / 3.0);
    let g = cell_area / (dz / (2.0 * k) + 1.0 / h);
    let tau = c * cell_area * dz / g;
    let theta0 = 25.0;
    let dt = tau / 7.0;
    let steps = 40;
    let field = vec![300.0 + theta0; 15];
    let out = run(
        be,
        &s,
        &PowerSchedule::constant(base_power(&s)),
        &options(&s, dt, steps, InitState::Field(field), 1e-13),
    );
    for r in &out.records {
        let want = theta0 * (1.0 + dt / tau).powi(-(r.step as i32));
        let got = r.layer_max_k[0] - 300.0;
        assert!(
            ((got - want) / want).abs() < 1e-10,
            "step {}: θ = {got}, exact {want}",
            r.step
        );
        let got_avg = r.layer_avg_k[0] - 300.0;
        assert!(((got_avg - want) / want).abs() < 1e-10);
    }
}

/// Backward Euler on the 1D chain of a stack whose powered layers are
/// uniform (adiabatic sides: no in-plane flux), per unit area, written
/// without cuth: tridiagonal (G + C/Δt) θⁿ⁺¹ = C/Δt θⁿ + p, Thomas algorithm.
fn chain_backward_euler(s: &Stack, layer_power_w: &[f64], dt: f64, steps: usize) -> Vec<Vec<f64>> {
    let area = s.width_m * s.length_m;
    let (mut dz, mut kz, mut cap, mut p) = (vec![], vec![], vec![], vec![]);
    for (i, layer) in s.layers.iter().enumerate() {
        for _ in 0..layer.cells {
            let d = layer.thickness_m / layer.cells as f64;
            dz.push(d);
            kz.push(layer.material.k[2]);
            cap.push(layer.material.heat_capacity * d / dt);
            p.push(layer_power_w[i] / area / layer.cells as f64);
        }
    }
    let n = dz.len();
    let g_up: Vec<f64> = (0..n - 1)
        .map(|j| 1.0 / (dz[j] / (2.0 * kz[j]) + dz[j + 1] / (2.0 * kz[j + 1])))
        .collect();
    let g_top = 1.0 / (dz[n - 1] / (2.0 * kz[n - 1]) + 1.0 / s.h_top);
    let (mut lower, mut diag, mut upper) = (vec![0.0; n], cap.clone(), vec![0.0; n]);
    for j in 0..n - 1 {
        diag[j] += g_up[j];
        diag[j + 1] += g_up[j];
        upper[j] = -g_up[j];
        lower[j + 1] = -g_up[j];
    }
    diag[n - 1] += g_top;
    let mut theta = vec![0.0; n];
    let mut out = vec![];
    for _ in 0..steps {
        let rhs: Vec<f64> = (0..n).map(|j| cap[j] * theta[j] + p[j]).collect();
        let (mut cc, mut d) = (vec![0.0; n], vec![0.0; n]);
        for j in 0..n {
            let m = diag[j] - if j > 0 { lower[j] * cc[j - 1] } else { 0.0 };
            cc[j] = upper[j] / m;
            d[j] = (rhs[j] - if j > 0 { lower[j] * d[j - 1] } else { 0.0 }) / m;
        }
        for j in (0..n).rev() {
            theta[j] = d[j] - if j + 1 < n { cc[j] * theta[j + 1] } else { 0.0 };
        }
        out.push(theta.clone());
    }
    out
}

pub fn layered_stack_matches_backward_euler_chain<B: ThermalBackend + 'static>(be: &B) {
    let s = stack(
        "[chip]\nwidth=\"4 mm\"\nlength=\"3 mm\"\n[grid]\nnx=4\nny=3\n[boundary]\nambient=318.15\nh_top=8e3\n\
         [materials.si]\nk=130\nheat_capacity=1.63e6\n[materials.tim]\nk=3\nheat_capacity=3e6\n\
         [materials.cu]\nk=400\nheat_capacity=3.45e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"100 um\"\ncells=3\n\
         power = { type = \"uniform\", total = 2.0 }\n\
         [[layers]]\nname=\"tim\"\nmaterial=\"tim\"\nthickness=\"30 um\"\ncells=2\n\
         [[layers]]\nname=\"lid\"\nmaterial=\"cu\"\nthickness=\"1 mm\"\ncells=4\n",
    );
    let (dt, steps) = (2e-3, 25);
    let want = chain_backward_euler(&s, &[2.0, 0.0, 0.0], dt, steps);
    let out = run(
        be,
        &s,
        &PowerSchedule::constant(base_power(&s)),
        &options(&s, dt, steps, InitState::Ambient, 1e-11),
    );
    // Compare every z cell's temperature (all in-plane cells are equal).
    let plane = 12;
    let t_final: Vec<f64> = (0..9)
        .map(|z| out.temperature_k[z * plane + 5] - 318.15)
        .collect();
    let w = &want[steps - 1];
    for z in 0..9 {
        assert!(
            ((t_final[z] - w[z]) / w[z]).abs() < 1e-9,
            "z {z}: {} vs chain {}",
            t_final[z],
            w[z]
        );
    }
    // Die and lid over time through the records (layer max), to 1e-9 of
    // the step's largest rise (the lid barely moves in the first steps).
    for r in out.records.iter().skip(1) {
        let w = &want[r.step - 1];
        let scale = w.iter().cloned().fold(0.0, f64::max);
        for (layer, zs) in [(0, 0..3), (1, 3..5), (2, 5..9)] {
            let got = r.layer_max_k[layer] - 318.15;
            let max = w[zs].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(
                (got - max).abs() < 1e-9 * scale,
                "step {} layer {layer}: {got} vs chain {max}",
                r.step
            );
        }
    }
}

fn mol(grid: usize) -> Stack {
    Stack::load(&repo_path("configs/mol_f2f.toml"))
        .unwrap()
        .with_grid(grid, grid)
        .unwrap()
}

pub fn long_run_reaches_the_steady_solution<B: ThermalBackend + 'static>(be: &B) {
    let s = mol(16);
    let mut steady_opts = SteadyOptions::from_stack(&s, PrecondKind::Chebyshev);
    steady_opts.rtol = 1e-11;
    let steady = solve_steady(be, &s, &steady_opts).unwrap();
    // Δt far above the stack's slowest time constant (~10 s).
    let out = run(
        be,
        &s,
        &PowerSchedule::constant(base_power(&s)),
        &options(&s, 1e4, 12, InitState::Ambient, 1e-11),
    );
    let worst = out
        .temperature_k
        .iter()
        .zip(&steady.temperature_k)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-6, "max |T_transient − T_steady| = {worst} K");
    // Not trivially: after one step it is still far away.
    let first = out.records[1].layer_max_k[1];
    assert!(steady.summary.layers[1].t_max_k - first > 1e-3);
}

pub fn steady_init_stays_put<B: ThermalBackend + 'static>(be: &B) {
    let s = mol(12);
    let out = run(
        be,
        &s,
        &PowerSchedule::constant(base_power(&s)),
        &options(&s, 1e-3, 5, InitState::Steady, 1e-10),
    );
    let r0 = &out.records[0];
    for r in &out.records {
        for (a, b) in r.layer_max_k.iter().zip(&r0.layer_max_k) {
            assert!((a - b).abs() < 1e-6, "step {}: {a} vs {b}", r.step);
        }
    }
}

pub fn every_step_balances_energy_to_solver_tolerance<B: ThermalBackend + 'static>(be: &B) {
    let s = mol(16);
    let rtol = 1e-9;
    let sched = PowerSchedule::constant(base_power(&s));
    let grid = Grid::from_stack(&s);
    let p = cell_power(&grid, &sched.layer_maps(None));
    let p_norm = p.iter().map(|v| v * v).sum::<f64>().sqrt();
    let total: f64 = p.iter().sum();
    for dt in [1e-5, 1e-2, 10.0] {
        let out = run(
            be,
            &s,
            &sched,
            &options(&s, dt, 8, InitState::Ambient, rtol),
        );
        for r in out.records.iter().skip(1) {
            let e = &r.energy;
            assert!((e.power_w - total).abs() < 1e-12 * total);
            // Σ residual ≤ √n ‖r‖ ≤ √n rtol ‖P‖ (W), over Δt; plus rounding.
            let bound = (grid.len() as f64).sqrt() * rtol * p_norm * dt + 1e-12 * total * dt;
            assert!(
                e.imbalance_j.abs() <= bound,
                "dt {dt} step {}: (P − Q)Δt − ΔE = {:e} J > {bound:e} J (stored {:e})",
                r.step,
                e.imbalance_j,
                e.stored_j
            );
            // The balance is not vacuous: heat is stored and, later, leaves.
            assert!(e.stored_j.abs() > 0.0 || e.heat_out_w > 0.0);
        }
    }
}

pub fn trace_rows_apply_piecewise_constant<B: ThermalBackend + 'static>(be: &B) {
    let s = stack(
        "[chip]\nwidth=\"2 mm\"\nlength=\"2 mm\"\n[grid]\nnx=8\nny=8\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.si]\nk=130\nheat_capacity=1.63e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"100 um\"\n\
         [layers.power]\ntype=\"blocks\"\n\
         [[layers.power.blocks]]\nname=\"a\"\nx=0\ny=0\nwidth=\"1 mm\"\nheight=\"2 mm\"\npower=0.5\n\
         [[layers.power.blocks]]\nname=\"b\"\nx=\"1 mm\"\ny=0\nwidth=\"1 mm\"\nheight=\"2 mm\"\npower=0.25\n",
    );
    let grid = Grid::from_stack(&s);
    // Block b follows the trace; a keeps its 0.5 W.
    let trace =
        parse_csv_trace("time,b\n0,1.0\n0.0025,0\n0.005,2.0\n", Path::new("t.csv")).unwrap();
    let sched = PowerSchedule::with_trace(&s, &grid, base_power(&s), trace).unwrap();
    let out = run(
        be,
        &s,
        &sched,
        &options(&s, 1e-3, 8, InitState::Ambient, 1e-10),
    );
    // Step k covers (k−1)Δt..kΔt, sampled at its midpoint.
    let want = [1.5, 1.5, 0.5, 0.5, 0.5, 2.5, 2.5, 2.5];
    for (r, w) in out.records.iter().skip(1).zip(want) {
        assert!(
            (r.energy.power_w - w).abs() < 1e-12,
            "step {}: {} W",
            r.step,
            r.energy.power_w
        );
    }
    assert_eq!(out.records[3].trace_row, Some(1));
    // Hot where the power is: b's max exceeds a's once b runs at 2 W.
    let last = out.records.last().unwrap();
    assert!(last.blocks[1].max_k > last.blocks[0].max_k);
    assert!(last
        .blocks
        .iter()
        .all(|b| b.min_k <= b.avg_k && b.avg_k <= b.max_k));
    assert_eq!(out.block_names, ["die.a", "die.b"]);

    // A column that names no block is an input error naming the file.
    let bad = parse_csv_trace("time,c\n0,1\n", Path::new("t.csv")).unwrap();
    let m = PowerSchedule::with_trace(&s, &grid, base_power(&s), bad)
        .err()
        .unwrap()
        .to_string();
    assert!(m.contains("t.csv") && m.contains("`c`"), "{m}");
}

pub fn a_capped_step_reports_the_users_rtol<B: ThermalBackend + 'static>(be: &B) {
    // PCG works on ‖r‖/‖b‖ with an internal tolerance; the error must speak
    // of ‖r‖/‖P‖ and the rtol that was asked for. At Δt = 1e-5 s, ‖b‖ ≈
    // ‖C/Δt θ‖ is far from ‖P‖, so the two differ by orders of magnitude.
    let s = mol(12);
    let rtol = 1e-9;
    let mut opts = options(&s, 1e-5, 3, InitState::Ambient, rtol);
    opts.solver.max_iter = 2;
    let mut observe = |_: &StepView| Ok(());
    let sched = PowerSchedule::constant(base_power(&s));
    let err = match run_transient(
        be,
        &s,
        &cuth::grid::Grid::from_stack(&s),
        &sched,
        &opts,
        &mut observe,
    ) {
        Err(e) => e,
        Ok(_) => panic!("two iterations cannot reach rtol {rtol}"),
    };
    match err {
        TransientError::Step {
            step: 1,
            source: SolveError::NoConvergence { rtol: r, rel, .. },
            ..
        } => {
            assert_eq!(r, rtol);
            assert!(rel > rtol && rel.is_finite(), "rel {rel}");
        }
        e => panic!("unexpected error: {e:?}"),
    }
}
