//! The measurements: SpMV time per device (GPU: a batch of launches between
//! two CUDA events, and the same launches replayed from a CUDA graph, which
//! removes the host's launch cost; CPU: wall clock), host copy bandwidth,
//! and timed PCG solves with their memory-traffic floor.
//!
//! Bytes per row of one PCG iteration, f64, from the kernels' comments
//! (`kernels/*.cu`, summed in `src/linalg/pcg.rs`): spmv_dot 48 + cg_update
//! 48 + dot 16 + xpay 24 = 136, plus the preconditioner: none (copy) 16,
//! Jacobi 24, Chebyshev of degree k 40 + 80·(k − 1) (cheb_init reads r and
//! diag and writes res, d, z: 40 B; `precond/chebyshev.rs` says 32).

use super::report::{PcgRecord, SpmvRecord};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::{timing::median, CudaBackend, CudaMatrix};
use cuth::backend::{Backend, BackendError, ChebyshevBackend, QuadDiagOps};
use cuth::linalg::{
    CgParams, PrecondKind, PrecondOptions, QuadDiag, QuadDiagOperator, SolveError, Solver, Stop,
};
use rayon::prelude::*;
use std::time::Instant;

/// Bytes of one SpMV per row: 4 matrix values + x + y.
pub const SPMV_BYTES_PER_ROW: f64 = 48.0;

/// Bytes per row of one PCG iteration with `kind` (module doc).
pub fn pcg_bytes_per_row(kind: PrecondKind, degree: usize) -> f64 {
    let base = 136.0;
    base + match kind {
        PrecondKind::None => 16.0,
        PrecondKind::Jacobi => 24.0,
        PrecondKind::Chebyshev => 40.0 + 80.0 * degree.saturating_sub(1) as f64,
        // V(1,1) on the fine level (linalg::mg::cycle): two zebra sweeps
        // ~2 × 88 B, residual-restriction ~50 B, prolongation ~18 B; the
        // coarse levels add a third.
        PrecondKind::Multigrid => 4.0 / 3.0 * 244.0,
    }
}

/// Kernel launches per PCG iteration (for the launch-bound estimate).
fn launches_per_iter(kind: PrecondKind, degree: usize) -> f64 {
    4.0 + match kind {
        PrecondKind::None | PrecondKind::Jacobi => 1.0,
        PrecondKind::Chebyshev => degree.max(1) as f64,
        // Six per level, about eight levels.
        PrecondKind::Multigrid => 48.0,
    }
}

/// A deterministic vector in [0.5, 1.5) to multiply.
pub fn test_vector(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            0.5 + ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64
                / (1u64 << 53) as f64
        })
        .collect()
}

/// Host memory bandwidth, GB/s (bytes read + written), from a parallel copy
/// of two 256 MiB buffers, median of 5 after a warm-up.
pub fn cpu_copy_gb_per_s() -> f64 {
    let n = 32 << 20;
    let src = vec![1.0f64; n];
    let mut dst = vec![0.0f64; n];
    let mut copy = || {
        let t = Instant::now();
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        t.elapsed().as_secs_f64()
    };
    copy();
    let s = median((0..5).map(|_| copy()).collect());
    (2 * 8 * n) as f64 / s / 1e9
}

/// Common fields of an SpMV record.
fn spmv_record(device: &str, a: &QuadDiag, schedule: &str, us: f64, copy_gbs: f64) -> SpmvRecord {
    let gbs = SPMV_BYTES_PER_ROW * a.len() as f64 / (us * 1e-6) / 1e9;
    SpmvRecord {
        device: device.into(),
        nx: a.nx,
        ny: a.ny,
        nz: a.nz,
        cells: a.len(),
        schedule: schedule.into(),
        batch_us: us,
        graph_us: None,
        gb_per_s: gbs,
        copy_gb_per_s: copy_gbs,
        fraction_of_copy: gbs / copy_gbs,
        reps: 0,
    }
}

/// GPU SpMV on `a` with the backend's current schedule: a batch of `reps`
/// launches between two events (what a solver without graphs sees), and a
/// CUDA graph of the same launches (the kernels back to back); median of 5
/// of each, per launch. Bandwidth is from the graph time.
pub fn gpu_spmv(
    be: &CudaBackend,
    host: &QuadDiag,
    a: &CudaMatrix,
    reps: usize,
    copy_gbs: f64,
) -> Result<SpmvRecord, BackendError> {
    let reps = reps.max(1);
    let x = be.upload(&test_vector(a.len()))?;
    let mut y = be.zeros(a.len())?;
    for _ in 0..5 {
        be.spmv(a, &x, &mut y)?;
    }
    be.synchronize()?;
    let mut batch = Vec::new();
    for _ in 0..5 {
        let ms = be.time_ms(|| (0..reps).try_for_each(|_| be.spmv(a, &x, &mut y)))?;
        batch.push(ms * 1e3 / reps as f64);
    }
    let batch_us = median(batch);
    let graph_us = be
        .capture(|| (0..reps).try_for_each(|_| be.spmv(a, &x, &mut y)))
        .and_then(|g| {
            be.time_graph_ms(&g)?; // upload and warm-up
            let t: Result<Vec<f64>, _> = (0..5)
                .map(|_| be.time_graph_ms(&g).map(|ms| ms * 1e3 / reps as f64))
                .collect();
            t.map(median)
        });
    let schedule = if be.uses_columns(a) {
        "columns"
    } else {
        "rows"
    };
    let mut r = spmv_record("cuda", host, schedule, batch_us, copy_gbs);
    r.reps = reps;
    if let Ok(g) = graph_us {
        r.graph_us = Some(g);
        r.gb_per_s = SPMV_BYTES_PER_ROW * a.len() as f64 / (g * 1e-6) / 1e9;
        r.fraction_of_copy = r.gb_per_s / copy_gbs;
    } else if let Err(e) = graph_us {
        eprintln!("bench: CUDA graph timing unavailable: {e}");
    }
    Ok(r)
}

/// GPU time of one call of `f`, µs: `reps` calls captured in a CUDA graph,
/// median of 3 replays (events around a plain batch if capture fails).
pub fn graph_time_us(
    g: &CudaBackend,
    reps: usize,
    mut f: impl FnMut() -> Result<(), BackendError>,
) -> anyhow::Result<f64> {
    for _ in 0..3 {
        f()?;
    }
    g.synchronize()?;
    let reps = reps.max(1);
    let batch = g.capture(|| (0..reps).try_for_each(|_| f()));
    let ms = match batch {
        Ok(graph) => {
            let mut t = Vec::new();
            for _ in 0..3 {
                t.push(g.time_graph_ms(&graph)?);
            }
            median(t)
        }
        Err(e) => {
            eprintln!("bench: graph capture failed ({e}); timing a batch of launches");
            g.time_ms(|| (0..reps).try_for_each(|_| f()))?
        }
    };
    Ok(ms * 1e3 / reps as f64)
}

/// CPU SpMV, median wall time of up to `reps` calls (at most ~2 s in all).
pub fn cpu_spmv(be: &CpuBackend, a: &QuadDiag, reps: usize, copy_gbs: f64) -> SpmvRecord {
    let x = test_vector(a.len());
    let mut y = vec![0.0; a.len()];
    let mut once = || {
        let t = Instant::now();
        be.spmv(a, &x, &mut y)
            .expect("CPU SpMV on matching lengths");
        t.elapsed().as_secs_f64()
    };
    let first = once();
    let reps = reps.clamp(1, ((2.0 / first.max(1e-9)) as usize).max(3));
    let us = median((0..reps).map(|_| once()).collect()) * 1e6;
    let mut r = spmv_record("cpu", a, "rows", us, copy_gbs);
    r.reps = reps;
    r
}

/// How one timed PCG solve is set up.
pub struct PcgPlan {
    pub kind: PrecondKind,
    pub degree: usize,
    pub rtol: f64,
    pub max_iter: usize,
    pub check_every: usize,
    /// Wall-clock budget; the iteration cap is lowered to fit it.
    pub budget_s: f64,
    /// Estimated seconds per iteration, to turn the budget into a cap.
    pub est_iter_s: f64,
    /// ‖b‖ / ‖b_offset‖ of `linalg::Offset`, so that the stop and the
    /// reported residual are relative to the original ‖b‖.
    pub rtol_scale: f64,
    /// The device's copy bandwidth, GB/s, for the floor column.
    pub copy_gbs: f64,
}

impl PcgPlan {
    /// Seconds per iteration expected from the traffic floor at `gb_per_s`
    /// (with a 1.2× allowance) plus `launch_s` per kernel launch.
    pub fn estimate(
        kind: PrecondKind,
        degree: usize,
        cells: usize,
        gb_per_s: f64,
        launch_s: f64,
    ) -> f64 {
        1.2 * pcg_bytes_per_row(kind, degree) * cells as f64 / (gb_per_s * 1e9)
            + launches_per_iter(kind, degree) * launch_s
    }
}

/// Builds the preconditioner and solves A x = b from x = 0 on `be`, timing
/// setup and solve separately; a solve stopped by the budget is recorded as
/// not converged with its residual at the stop. `b` is the offset right-hand
/// side of `linalg::Offset` (its norm ratio is the plan's `rtol_scale`), as
/// in `cuth solve`.
pub fn pcg_run<B: ChebyshevBackend + 'static>(
    be: &B,
    device: &str,
    host: &QuadDiag,
    a: &B::Matrix,
    b: &B::Vector,
    plan: &PcgPlan,
) -> Result<PcgRecord, SolveError> {
    let (rtol_scale, copy_gbs) = (plan.rtol_scale, plan.copy_gbs);
    let n = host.len();
    let opts = PrecondOptions {
        chebyshev_degree: plan.degree,
        ..PrecondOptions::default()
    };
    let budget_iters = (plan.budget_s / plan.est_iter_s.max(1e-9)) as usize;
    let cap = plan.max_iter.min(budget_iters.max(50));
    let mut x = be.zeros(n)?;
    be.synchronize()?;
    let t0 = Instant::now();
    let op = QuadDiagOperator::new(be, a, n);
    let mut ksp = Solver::new(be, op, plan.kind, &opts, Some(host))?;
    be.synchronize()?;
    let setup_s = t0.elapsed().as_secs_f64();
    ksp.set_params(CgParams {
        stop: Stop::relative(plan.rtol * rtol_scale),
        max_iter: cap,
        check_every: plan.check_every,
        ..CgParams::default()
    });
    let t1 = Instant::now();
    let result = ksp.solve(b, &mut x);
    be.synchronize()?;
    let solve_s = t1.elapsed().as_secs_f64();
    let (iterations, converged, stop) = match result {
        Ok(info) => (info.iterations, true, "rtol reached".to_string()),
        Err(SolveError::NoConvergence { iters, .. }) => {
            let why = if cap < plan.max_iter {
                "time budget"
            } else {
                "max_iter"
            };
            (
                iters,
                false,
                format!("capped at {iters} iterations ({why})"),
            )
        }
        Err(SolveError::Stagnated { iters, .. }) => (
            iters,
            false,
            format!("stagnated at {iters} iterations (rounding floor)"),
        ),
        Err(e) => return Err(e),
    };
    // True relative residual ‖b − A x‖/‖b‖, recomputed in f64.
    let true_rel = ksp.true_relative_residual(b, &x, rtol_scale)?;
    let bytes = pcg_bytes_per_row(plan.kind, plan.degree);
    let us_per_iter = solve_s * 1e6 / iterations.max(1) as f64;
    let floor_us = bytes * n as f64 / (copy_gbs * 1e9) * 1e6;
    Ok(PcgRecord {
        device: device.into(),
        nx: host.nx,
        ny: host.ny,
        nz: host.nz,
        cells: n,
        precond: plan.kind.name().into(),
        degree: (plan.kind == PrecondKind::Chebyshev).then_some(plan.degree),
        iterations,
        converged,
        stop,
        true_rel_residual: true_rel,
        setup_s,
        solve_s,
        us_per_iter,
        bytes_per_row_iter: bytes,
        floor_us_per_iter: floor_us,
        floor_fraction: floor_us / us_per_iter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_per_iteration_matches_the_kernel_comments() {
        assert_eq!(pcg_bytes_per_row(PrecondKind::Jacobi, 0), 160.0);
        assert_eq!(pcg_bytes_per_row(PrecondKind::None, 0), 152.0);
        // Degree 1 is a scaled Jacobi: init only.
        assert_eq!(pcg_bytes_per_row(PrecondKind::Chebyshev, 1), 176.0);
        assert_eq!(pcg_bytes_per_row(PrecondKind::Chebyshev, 4), 416.0);
    }

    #[test]
    fn test_vector_is_in_range() {
        assert!(test_vector(1000).iter().all(|v| (0.5..1.5).contains(v)));
    }
}
