//! Mixed precision's whole-solve check, one body per backend
//! (`solver::mixed` runs it on the CPU, `gpu::mixed` on CUDA): the
//! low-precision Chebyshev solve of mol_f2f meets the f64 rtol on the true
//! residual and matches the f64 solve's temperatures to 1e-4 K.

use super::mol_f2f;
use cuth::linalg::{PrecisionMode, PrecondKind};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions};

/// mol_f2f at `n`² with Chebyshev in f64 and in each of `modes`: the
/// low-precision solve's true residual ≤ rtol, max |ΔT| < 1e-4 K against
/// f64, and the summary reports the storage choice.
pub fn mixed_solve_of_mol_f2f_meets_rtol_and_matches_f64<B: ThermalBackend + 'static>(
    be: &B,
    n: usize,
    modes: &[PrecisionMode],
) {
    let stack = Stack::load(&mol_f2f()).unwrap().with_grid(n, n).unwrap();
    let run = |mode| {
        let mut o = SteadyOptions::from_stack(&stack, PrecondKind::Chebyshev);
        o.precond_opts.precision = mode;
        let t = std::time::Instant::now();
        let out = solve_steady(be, &stack, &o).unwrap();
        (out, t.elapsed().as_secs_f64())
    };
    let (f64_run, tf) = run(PrecisionMode::F64);
    for &mode in modes {
        let (low, tl) = run(mode);
        let s = &low.summary.solver;
        let dt = low
            .temperature_k
            .iter()
            .zip(&f64_run.temperature_k)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        println!(
            "mol_f2f {n}x{n}x{} {}: {} iterations (f64 {}), true res {:.2e} (f64 {:.2e}), \
             max |dT| {dt:.2e} K (tol 1e-4), wall {tl:.2} s (f64 {tf:.2} s), {}",
            f64_run.grid.nz,
            mode.name(),
            s.iterations,
            f64_run.summary.solver.iterations,
            s.final_true_residual,
            f64_run.summary.solver.final_true_residual,
            s.precision
        );
        assert!(s.final_true_residual <= s.rtol, "{}", s.final_true_residual);
        assert!(dt < 1e-4, "{}: max |dT| {dt} K", mode.name());
        assert!(s.mixed.is_some(), "summary reports the storage choice");
    }
}
