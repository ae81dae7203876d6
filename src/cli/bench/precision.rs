//! The mixed-precision ablation: Chebyshev-PCG to rtol with the
//! preconditioner in f64, fixed f32, fixed f16 storage and adaptive mixed, on
//! the same system and device: time, iterations, the final true residual
//! recomputed in f64, max |ΔT| against the f64 solution, and where the time
//! goes (the preconditioner's share, timed alone, and bytes per iteration).

use super::system::BenchSystem;
use anyhow::{Context, Result};
use cuth::backend::ChebyshevBackend;
use cuth::linalg::{
    CgInfo, CgParams, Offset, PrecisionMode, PrecondKind, PrecondOptions, QuadDiagOperator,
    SolveError, Solver, Stop,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct PrecisionRecord {
    pub device: String,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub cells: usize,
    /// `--precision`.
    pub mode: String,
    /// Preconditioner level at the end, with the storage of ĝx, ĝy, ĝz.
    pub final_level: String,
    /// (iteration, level) switches.
    pub switches: Vec<(usize, String)>,
    pub iterations: usize,
    pub converged: bool,
    pub stop: String,
    pub setup_s: f64,
    pub solve_s: f64,
    pub us_per_iter: f64,
    /// One preconditioner application timed alone (median of a batch), µs.
    pub precond_us: f64,
    /// Bytes per row of one iteration at the DRAM floor (module doc of pcg.rs).
    pub bytes_per_row_iter: f64,
    pub floor_us_per_iter: f64,
    /// ‖b − A x‖/‖b‖ recomputed in f64 from the final x.
    pub true_rel_residual: f64,
    /// max |T − T_f64| over every cell, K.
    pub max_abs_dt_k: f64,
    /// f64 solve time / this solve time.
    pub speedup_vs_f64: f64,
}

/// Bytes per row of a Chebyshev-PCG iteration of degree `k` whose
/// preconditioner reads `matrix` bytes of off-diagonals per row (None: f64).
pub fn bytes_per_row(k: usize, matrix: Option<usize>) -> f64 {
    let outer = 136.0;
    let k = k.max(1) as f64;
    outer
        + match matrix {
            None => 40.0 + 80.0 * (k - 1.0),
            Some(_) if k == 1.0 => 20.0,
            Some(m) => 24.0 + (k - 1.0) * (m as f64 + 24.0),
        }
}

/// What one device's ablation runs: the modes and the Chebyshev-PCG settings
/// shared by all of them.
pub struct AblationPlan<'a> {
    /// The device's name in the records ("cuda", "cpu").
    pub device: &'a str,
    pub modes: &'a [PrecisionMode],
    pub degree: usize,
    pub rtol: f64,
    pub max_iter: usize,
    pub check_every: usize,
    /// The device's copy bandwidth, GB/s, for the floor column.
    pub copy_gbs: f64,
}

/// Runs every mode of `plan` (f64 first, the reference) on `s`.
pub fn ablation<B: ChebyshevBackend + 'static>(
    be: &B,
    s: &BenchSystem,
    plan: &AblationPlan<'_>,
) -> Result<Vec<PrecisionRecord>> {
    let AblationPlan {
        device,
        modes,
        degree,
        rtol,
        max_iter,
        check_every,
        copy_gbs,
    } = *plan;
    let host = &s.sys.a;
    let n = host.len();
    let offset = Offset::new(host, &s.sys.rhs);
    be.check_capacity(n)?;
    be.prepare_quad_diag()?;
    let a = be.upload_matrix(host)?;
    let b = be.upload(&offset.rhs)?;
    let mut order = vec![PrecisionMode::F64];
    order.extend(modes.iter().filter(|m| **m != PrecisionMode::F64));
    let mut reference: Option<(Vec<f64>, f64)> = None;
    let mut out = Vec::new();
    for mode in order {
        let opts = PrecondOptions {
            chebyshev_degree: degree,
            precision: mode,
            ..PrecondOptions::default()
        };
        let mut x = be.zeros(n)?;
        be.synchronize()?;
        let t0 = Instant::now();
        let op = QuadDiagOperator::new(be, &a, n);
        let mut ksp = Solver::new(be, op, PrecondKind::Chebyshev, &opts, Some(host))?;
        be.synchronize()?;
        let setup_s = t0.elapsed().as_secs_f64();
        let level0 = ksp.precond().precision().map(|p| p.matrix_bytes_per_row);
        // The preconditioner alone, at the level the solve starts with.
        let precond_us = precond_apply_us(be, &mut ksp, &offset.rhs)?;
        ksp.set_params(CgParams {
            stop: Stop::against(rtol, offset.b_norm),
            max_iter,
            check_every,
            ..CgParams::default()
        });
        let t1 = Instant::now();
        let result = ksp.solve(&b, &mut x);
        be.synchronize()?;
        let solve_s = t1.elapsed().as_secs_f64();
        let (iterations, converged, stop, switches) =
            outcome(result).with_context(|| format!("{} solve", mode.name()))?;
        let true_rel = ksp.true_relative_residual(&b, &x, offset.rtol_scale)?;
        let xs = be.download(&x)?;
        let (max_abs_dt_k, speedup) = match &reference {
            None => (0.0, 1.0),
            Some((xr, t)) => (
                xs.iter()
                    .zip(xr)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0.0, f64::max),
                t / solve_s,
            ),
        };
        let final_level = ksp
            .precond()
            .precision()
            .map(|p| p.current)
            .unwrap_or_else(|| "f64".into());
        let bytes = bytes_per_row(degree, level0.filter(|_| mode != PrecisionMode::F64));
        let us_per_iter = solve_s * 1e6 / iterations.max(1) as f64;
        let rec = PrecisionRecord {
            device: device.into(),
            nx: s.nx,
            ny: s.ny,
            nz: s.nz,
            cells: n,
            mode: mode.name().into(),
            final_level,
            switches,
            iterations,
            converged,
            stop,
            setup_s,
            solve_s,
            us_per_iter,
            precond_us,
            bytes_per_row_iter: bytes,
            floor_us_per_iter: bytes * n as f64 / (copy_gbs * 1e9) * 1e6,
            true_rel_residual: true_rel,
            max_abs_dt_k,
            speedup_vs_f64: speedup,
        };
        log_record(&rec, s);
        if reference.is_none() {
            reference = Some((xs, solve_s));
        }
        out.push(rec);
    }
    Ok(out)
}

/// One preconditioner application timed alone (the mean of 20 after one
/// warm-up), µs, at the level the solve starts with.
fn precond_apply_us<B: ChebyshevBackend + 'static>(
    be: &B,
    ksp: &mut Solver<'_, B>,
    rhs: &[f64],
) -> Result<f64> {
    let r = be.upload(rhs)?;
    let mut z = be.zeros(rhs.len())?;
    ksp.precondition(&r, &mut z)?;
    be.synchronize()?;
    let reps = 20;
    let t = Instant::now();
    for _ in 0..reps {
        ksp.precondition(&r, &mut z)?;
    }
    be.synchronize()?;
    Ok(t.elapsed().as_secs_f64() * 1e6 / reps as f64)
}

/// Iterations, whether the solve converged, why it stopped and its
/// precision switches; a solve that stops short is a row of the table, any
/// other failure an error.
type Outcome = (usize, bool, String, Vec<(usize, String)>);

fn outcome(result: Result<CgInfo, SolveError>) -> Result<Outcome, SolveError> {
    match result {
        Ok(info) => Ok((
            info.iterations,
            true,
            "rtol reached".to_string(),
            info.precision_switches,
        )),
        Err(SolveError::NoConvergence { iters, rel, .. }) => {
            Ok((iters, false, format!("max_iter at {rel:.1e}"), vec![]))
        }
        Err(SolveError::Stagnated { iters, rel, .. }) => {
            Ok((iters, false, format!("stagnated at {rel:.1e}"), vec![]))
        }
        Err(e) => Err(e),
    }
}

fn log_record(rec: &PrecisionRecord, s: &BenchSystem) {
    eprintln!(
        "bench: {} precision {} {:<5} {} its in {:.3} s ({:.1} µs/iter, precond {:.1} µs), \
         true res {:.2e}, max|ΔT| {:.2e} K, {:.2}× vs f64, {}",
        rec.device,
        s.label(),
        rec.mode,
        rec.iterations,
        rec.solve_s,
        rec.us_per_iter,
        rec.precond_us,
        rec.true_rel_residual,
        rec.max_abs_dt_k,
        rec.speedup_vs_f64,
        rec.final_level
    );
}

/// The ablation as a markdown table.
pub fn markdown(out: &mut String, rows: &[PrecisionRecord], rtol: f64) {
    let _ = writeln!(
        out,
        "\n### Mixed-precision ablation, Chebyshev PCG to rtol {rtol:.0e}\n"
    );
    out.push_str(
        "| device | grid | precision | final level | switches | iterations | solve s | µs/iter | \
         precond µs | B/row/iter | floor µs | true rel res | max abs ΔT K | vs f64 |\n\
         |---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let sw: Vec<String> = r
            .switches
            .iter()
            .map(|(i, l)| format!("{l} @{i}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {}x{}x{} | {} | {} | {} | {}{} | {:.3} | {:.1} | {:.1} | {:.0} | {:.1} | {:.1e} | {:.1e} | {:.2}× |",
            r.device,
            r.nx,
            r.ny,
            r.nz,
            r.mode,
            r.final_level,
            if sw.is_empty() { "-".into() } else { sw.join("; ") },
            r.iterations,
            if r.converged { "" } else { " (not converged)" },
            r.solve_s,
            r.us_per_iter,
            r.precond_us,
            r.bytes_per_row_iter,
            r.floor_us_per_iter,
            r.true_rel_residual,
            r.max_abs_dt_k,
            r.speedup_vs_f64
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_matches_the_kernel_comments() {
        // f64: 136 + 40 + 5·80 (pcg.rs, chebyshev.cu).
        assert_eq!(bytes_per_row(6, None), 576.0);
        // f16 storage: 136 + 24 + 5·30 (mixed.cu).
        assert_eq!(bytes_per_row(6, Some(6)), 310.0);
        assert_eq!(bytes_per_row(6, Some(12)), 340.0);
    }
}
