//! Steady state over MPI ranks (feature `mpi`): the linear path of
//! [`super::steady::solve_steady_for`] with the solve split in y slabs
//! (`backend::mpi`). Every rank reads the stack, rasterizes the power and
//! assembles the whole system, then keeps its own slab's rows: the
//! assembly is not distributed yet, only the solve (memory per rank is
//! still the whole system's during assembly). PCG runs on the ranks with
//! the z-line preconditioner (`--precond jacobi` or `none` as asked;
//! multigrid and Chebyshev are not distributed). The solution is gathered
//! onto rank 0 a slab at a time, and rank 0 alone computes the statistics
//! and returns the outcome the outputs are written from.

use super::steady::{heat_reaches_ambient, rasterize_layers, KeepField, LayerMaps};
use super::steady::{PowerSums, SteadyError, SteadyOptions, SteadyOutcome};
use super::steady_device::{field_summary, Assembled};
use super::summarize::{summary_of, ThermalProblem};
use super::summary::SolverReport;
use crate::assemble::assemble;
use crate::backend::cpu::CpuBackend;
use crate::backend::mpi::{RankBackend, Slab, SlabMatrix, SlabOperator, ZLine};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::linalg::pcg::{pcg, true_relative_residual};
use crate::linalg::precond::{jacobi::Jacobi, Identity, Preconditioner};
use crate::linalg::{Offset, PrecondKind, Stop};
use crate::stack::Stack;
use ::mpi::traits::*;
use std::time::Instant;

/// What the ranks' solve did, beside the outcome: for the report.
#[derive(Clone, Copy, Debug)]
pub struct RanksReport {
    pub ranks: usize,
    pub iterations: usize,
    /// Halo bytes sent by all ranks together, per iteration.
    pub halo_bytes_per_iteration: f64,
    /// Global reductions per iteration (each an all-gather of one f64).
    pub reductions_per_iteration: f64,
    /// Seconds of the PCG loop (the slowest rank's).
    pub solve_s: f64,
}

/// Solves the steady field of a linear stack over the ranks of `be`;
/// `Some` on rank 0, `None` on the others.
pub fn solve_steady_ranks(
    be: &RankBackend,
    stack: &Stack,
    grid: &Grid,
    opts: &SteadyOptions,
    keep: &KeepField,
) -> Result<Option<(SteadyOutcome, LayerMaps, RanksReport)>, SteadyError> {
    if stack.is_nonlinear() || stack.has_cavities() {
        return Err(BackendError::Unsupported(
            "over MPI ranks only linear stacks without cavities are solved yet",
        )
        .into());
    }
    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &str, timings: &mut Vec<(String, f64)>| {
        timings.push((name.to_string(), clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };
    let power = rasterize_layers(stack, grid)?;
    heat_reaches_ambient(stack, grid, &power)?;
    let sums = PowerSums::new(grid, &power);
    lap("power", &mut timings);

    let sys = assemble(stack, grid, &power);
    crate::assemble::check_system(&sys, grid).map_err(SteadyError::Internal)?;
    let offset = Offset::new(&sys.a, &sys.rhs);
    let slab = Slab::of(grid.nx, grid.ny, grid.nz, be.rank(), be.size())?;
    let m = SlabMatrix::new(&sys.a, slab);
    let b = slab.extract(&offset.rhs);
    let mut x = vec![0.0; slab.rows()];
    lap("assemble", &mut timings);

    let mut op = SlabOperator::new(&m);
    let mut pc: Box<dyn Preconditioner<RankBackend, SlabOperator>> = match opts.precond {
        PrecondKind::None => Box::new(Identity),
        PrecondKind::Jacobi => Box::new(Jacobi),
        PrecondKind::Chebyshev | PrecondKind::Multigrid => Box::new(ZLine::new(&m)?),
    };
    lap("precond_setup", &mut timings);

    let params = opts.cg_params(be, pc.as_ref(), Stop::against(opts.rtol, offset.b_norm));
    let (sent0, red0) = (be.sent_bytes(), be.reductions());
    be.comm().barrier();
    let t_solve = Instant::now();
    let info = pcg(be, &mut op, pc.as_mut(), &b, &mut x, &params)?;
    let solve_s = be.global_max(t_solve.elapsed().as_secs_f64());
    lap("solve", &mut timings);
    let sent = be.global_sum((be.sent_bytes() - sent0) as f64);
    let reductions = (be.reductions() - red0) as f64;
    let true_rel = true_relative_residual(be, &mut op, &b, &x, offset.rtol_scale)?;
    let per_iter = |v: f64| v / info.iterations.max(1) as f64;
    let report = RanksReport {
        ranks: be.size(),
        iterations: info.iterations,
        halo_bytes_per_iteration: per_iter(sent),
        reductions_per_iteration: per_iter(reductions),
        solve_s,
    };
    let solver = SolverReport {
        method: "pcg".into(),
        precision: "f64".into(),
        precond: pc.report(),
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations: info.iterations,
        residual_replacements: info.replacements,
        converged: true,
        stop_reason: "rtol reached".into(),
        final_true_residual: true_rel,
        mixed: None,
    };
    drop((pc, op));

    let Some(whole) = gather(be, &slab, &x) else {
        return Ok(None);
    };
    lap("gather", &mut timings);
    let problem = ThermalProblem::new(stack, grid, &power);
    let sys = Assembled::Host(Box::new(sys));
    let mut stats = field_summary(&CpuBackend::new(), problem, &sys, &whole, offset.c, keep)?;
    lap("download", &mut timings);
    let temperature_k = stats.whole.take().unwrap_or_default();
    let maps = LayerMaps {
        maps: std::mem::take(&mut stats.maps),
        blocks: std::mem::take(&mut stats.blocks),
    };
    let mut summary = summary_of(stack, grid, &sums, &stats, be, solver, timings);
    summary.device.detail = format!(
        "{}; {:.0} halo bytes and {:.0} reductions per iteration",
        summary.device.detail, report.halo_bytes_per_iteration, report.reductions_per_iteration
    );
    let outcome = SteadyOutcome {
        grid: grid.clone(),
        temperature_k,
        power,
        summary,
        coolant: None,
    };
    Ok(Some((outcome, maps, report)))
}

/// The whole field on rank 0, received a slab at a time in rank order;
/// `None` on the other ranks, which send theirs.
fn gather(be: &RankBackend, mine: &Slab, x: &[f64]) -> Option<Vec<f64>> {
    let comm = be.comm();
    if be.rank() != 0 {
        comm.process_at_rank(0).send(x);
        return None;
    }
    let mut whole = vec![0.0; mine.nx * mine.ny * mine.nz];
    mine.insert(x, &mut whole);
    let mut buf = Vec::new();
    for r in 1..be.size() {
        let s = Slab::of(mine.nx, mine.ny, mine.nz, r, be.size()).expect("a slab per rank");
        buf.resize(s.rows(), 0.0);
        comm.process_at_rank(r as i32).receive_into(&mut buf[..]);
        s.insert(&buf, &mut whole);
    }
    Some(whole)
}
