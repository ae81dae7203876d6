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
//! and the same leakage to 1e-9 relative. Also the CPU's checks of the
//! same cases (`util::kt`) on CUDA.

use crate::util::gpu;
use crate::util::kt::{self, iterated_transient, max_abs, mol_f2f_kt_leaky};
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::thermal::steady::{solve_steady, SteadyOptions};

#[test]
#[ignore = "needs a CUDA GPU"]
fn nonlinear_steady_cuda_matches_cpu() {
    let stack = mol_f2f_kt_leaky(128, 128);
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn nonlinear_transient_cuda_matches_cpu() {
    let stack = mol_f2f_kt_leaky(64, 64);
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn nonlinear_case_converges_with_leakage() {
    kt::nonlinear_case_converges_with_leakage(gpu(), 128);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn iterated_transient_heats_up_from_the_half_leakage_steady_state() {
    kt::iterated_transient_heats_up_from_the_half_leakage_steady_state(gpu(), 64);
}
