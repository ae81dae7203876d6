//! The measurements at one grid size of the size table: the SpMV in each
//! schedule and PCG with Jacobi and Chebyshev, on the GPU (with the degree
//! sweep at its size) and on the CPU, each record logged as it is taken.
//! Split from `mod.rs`, which picks the sizes and writes the report.

use super::measure::{self, PcgPlan, SPMV_BYTES_PER_ROW};
use super::report::{BenchReport, PcgRecord};
use super::system::BenchSystem;
use super::BenchArgs;
use anyhow::{Context, Result};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::CudaBackend;
use cuth::backend::{Backend, QuadDiagOps};
use cuth::linalg::{Offset, PrecondKind};

/// GPU work at one size: SpMV in both schedules and PCG (size table), and
/// the degree sweep when this is its size.
pub(super) fn gpu_size(
    g: &CudaBackend,
    s: &BenchSystem,
    args: &BenchArgs,
    in_table: bool,
    rep: &mut BenchReport,
) -> Result<()> {
    use cuth::backend::cuda::QdSchedule;
    let copy = rep.bandwidth.gpu_copy_gb_per_s.unwrap_or(f64::NAN);
    g.check_capacity(s.sys.a.len())?;
    g.prepare_quad_diag()?;
    let a = g.upload_matrix(&s.sys.a)?;
    let offset = Offset::new(&s.sys.a, &s.sys.rhs);
    let b = g.upload(&offset.rhs)?;
    if in_table {
        for sched in [QdSchedule::Rows, QdSchedule::Columns] {
            g.set_schedule(sched);
            let r = measure::gpu_spmv(g, &s.sys.a, &a, args.reps, copy)?;
            eprintln!(
                "bench: cuda spmv {} {:<7} {:.1} µs ({:.0} GB/s)",
                s.label(),
                r.schedule,
                r.graph_us.unwrap_or(r.batch_us),
                r.gb_per_s
            );
            rep.spmv.push(r);
        }
        g.set_schedule(QdSchedule::Auto);
    }
    // Per-launch host cost seen at small sizes; 5 µs is typical of cudarc.
    let launch_s = 5e-6;
    let plan = |kind, degree| PcgPlan {
        kind,
        degree,
        rtol: args.rtol,
        max_iter: args.max_iter,
        check_every: args.check_every,
        budget_s: args.solve_budget_s,
        est_iter_s: PcgPlan::estimate(kind, degree, s.cells(), copy, launch_s),
        rtol_scale: offset.rtol_scale,
        copy_gbs: copy,
    };
    let solve = |kind, degree| -> Result<PcgRecord> {
        let r = measure::pcg_run(g, "cuda", &s.sys.a, &a, &b, &plan(kind, degree))
            .with_context(|| format!("GPU PCG ({}) at {}", kind.name(), s.label()))?;
        log_pcg(&r);
        Ok(r)
    };
    if in_table {
        rep.pcg.push(solve(PrecondKind::Jacobi, 0)?);
        rep.pcg.push(solve(PrecondKind::Chebyshev, args.degree)?);
    }
    if s.nx == args.degree_size {
        for &d in &args.degrees {
            rep.degree_sweep.push(solve(PrecondKind::Chebyshev, d)?);
        }
    }
    Ok(())
}

/// CPU work at one size: SpMV and PCG with Jacobi and Chebyshev.
pub(super) fn cpu_size(
    cpu: &CpuBackend,
    s: &BenchSystem,
    args: &BenchArgs,
    rep: &mut BenchReport,
) -> Result<()> {
    let copy = rep.bandwidth.cpu_copy_gb_per_s.unwrap_or(f64::NAN);
    let r = measure::cpu_spmv(cpu, &s.sys.a, args.reps, copy);
    eprintln!(
        "bench: cpu spmv {} {:.1} µs ({:.1} GB/s)",
        s.label(),
        r.batch_us,
        r.gb_per_s
    );
    // Effective CPU bandwidth from the SpMV, to turn the budget into a cap.
    let eff = SPMV_BYTES_PER_ROW * s.cells() as f64 / (r.batch_us * 1e-6) / 1e9;
    rep.spmv.push(r);
    let offset = Offset::new(&s.sys.a, &s.sys.rhs);
    for (kind, degree) in [
        (PrecondKind::Jacobi, 0),
        (PrecondKind::Chebyshev, args.degree),
    ] {
        let plan = PcgPlan {
            kind,
            degree,
            rtol: args.rtol,
            max_iter: args.max_iter,
            check_every: 1,
            budget_s: args.cpu_budget_s,
            est_iter_s: PcgPlan::estimate(kind, degree, s.cells(), eff, 0.0),
            rtol_scale: offset.rtol_scale,
            copy_gbs: copy,
        };
        let r = measure::pcg_run(cpu, "cpu", &s.sys.a, &s.sys.a, &offset.rhs, &plan)
            .with_context(|| format!("CPU PCG ({}) at {}", kind.name(), s.label()))?;
        log_pcg(&r);
        rep.pcg.push(r);
    }
    Ok(())
}

fn log_pcg(r: &PcgRecord) {
    eprintln!("{}", pcg_line(r));
}

/// The stderr line of one PCG record: the preconditioner with its degree
/// when it has one (`chebyshev 6`, `jacobi`), as the table writes it.
fn pcg_line(r: &PcgRecord) -> String {
    let precond = match r.degree {
        Some(d) => format!("{} {d}", r.precond),
        None => r.precond.to_string(),
    };
    format!(
        "bench: {} pcg {}x{}x{} {:<11}: {} iterations{} in {:.3} s ({:.1} µs/iter, floor {:.1})",
        r.device,
        r.nx,
        r.ny,
        r.nz,
        precond,
        r.iterations,
        if r.converged { "" } else { " (capped)" },
        r.solve_s,
        r.us_per_iter,
        r.floor_us_per_iter
    )
}
