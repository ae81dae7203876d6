//! Temperature-dependent steady solves on CUDA against the CPU.
//! `#[ignore]`d: run on a GPU machine with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 nonlinear::
//! ```
//!
//! mol_f2f at 128² with silicon's k = 148·(T/300)^-1.3 and a per-cell
//! leakage on the logic raster: both backends converge the Picard iteration
//! to 1e-8 K and must agree to 1e-8 K, with the same outer iterations
//! and the same leakage to 1e-9 relative.

use crate::util::kt;

use crate::util::gpu;
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use kt::{base_power, max_abs, mol_f2f_kt_leaky};

/// mol_f2f with k(T) silicon and leakage on the logic die's raster, 128².
fn mol_f2f_nonlinear() -> Stack {
    mol_f2f_kt_leaky(128, 128)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nonlinear_steady_cuda_matches_cpu() {
    let stack = mol_f2f_nonlinear();
    assert!(stack.is_nonlinear() && stack.k_varies());
    for precond in [PrecondKind::Multigrid, PrecondKind::Chebyshev] {
        let mut opts = SteadyOptions::from_stack(&stack, precond);
        opts.rtol = 1e-10;
        opts.nonlinear.tol_k = 1e-8;
        let c = solve_steady(&CpuBackend::new(), &stack, &opts).unwrap();
        let g = solve_steady(gpu(), &stack, &opts).unwrap();
        let (nc, ng) = (
            c.summary.nonlinear.as_ref().unwrap(),
            g.summary.nonlinear.as_ref().unwrap(),
        );
        let diff = max_abs(&c.temperature_k, &g.temperature_k);
        println!(
            "{precond:?}: outer cpu {} gpu {}, inner cpu {:?} gpu {:?}, leakage cpu {:.9} W gpu {:.9} W, \
             peak {:.6} K, max |ΔT| {diff:.3e} K",
            nc.outer_iterations,
            ng.outer_iterations,
            nc.inner_iterations,
            ng.inner_iterations,
            nc.leakage_total_w,
            ng.leakage_total_w,
            c.summary.hottest.t_k
        );
        // The device re-assembles A(T) from the temperature on the device
        //: the same outer iterations, the same field to 1e-8 K.
        assert!(diff <= 1e-8, "{precond:?}: {diff:e} K");
        assert_eq!(nc.outer_iterations, ng.outer_iterations);
        assert!((nc.leakage_total_w - ng.leakage_total_w).abs() < 1e-9 * nc.leakage_total_w);
        assert!(g.summary.energy.relative_error < 1e-6);
    }
}

/// The CPU half, so that the case itself is checked where there is no GPU.
#[test]
fn nonlinear_case_converges_on_cpu() {
    let stack = mol_f2f_nonlinear().with_grid(32, 32).unwrap();
    let opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    let c = solve_steady(&CpuBackend::new(), &stack, &opts).unwrap();
    let nl = c.summary.nonlinear.unwrap();
    assert!(nl.leakage_total_w > 0.8, "{nl:?}");
    assert!(c.summary.energy.relative_error < 1e-6);
}

/// The iterated transient (`--nonlinear-iterations`) from the nonlinear
/// steady state under a power step, on `be`: per-step layer maxima and
/// solves per step.
fn iterated_transient<B: cuth::thermal::device::ThermalBackend + 'static>(
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
    };
    let out = kt::transient(be, stack, &PowerSchedule::constant(base), &opts);
    out.records
        .iter()
        .map(|r| (r.layer_max_k.clone(), r.outer_iterations))
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nonlinear_transient_cuda_matches_cpu() {
    let stack = mol_f2f_nonlinear().with_grid(64, 64).unwrap();
    let c = iterated_transient(&CpuBackend::new(), &stack);
    let g = iterated_transient(gpu(), &stack);
    let mut worst: f64 = 0.0;
    for ((mc, oc), (mg, og)) in c.iter().zip(&g) {
        for (a, b) in mc.iter().zip(mg) {
            worst = worst.max((a - b).abs());
        }
        assert!(
            oc.unwrap_or(0).abs_diff(og.unwrap_or(0)) <= 1,
            "{oc:?} vs {og:?}"
        );
    }
    println!(
        "iterated transient 64²: solves per step cpu {:?} gpu {:?}, max |ΔT| {worst:.3e} K",
        c.iter().map(|r| r.1).collect::<Vec<_>>(),
        g.iter().map(|r| r.1).collect::<Vec<_>>()
    );
    assert!(worst < 1e-6, "{worst:e} K");
}

/// The CPU half of the transient comparison, at a small grid.
#[test]
fn nonlinear_transient_case_runs_on_cpu() {
    let stack = mol_f2f_nonlinear().with_grid(16, 16).unwrap();
    let c = iterated_transient(&CpuBackend::new(), &stack);
    assert_eq!(c.len(), 6);
    assert!(c[1..].iter().all(|r| r.1.is_some_and(|o| o >= 2)), "{c:?}");
    // Heating up from the half-leakage steady state.
    assert!(c[5].0[1] > c[0].0[1]);
}
