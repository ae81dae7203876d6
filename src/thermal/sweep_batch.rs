//! A sweep worker that solves its cases k at a time (`cuth sweep --batch
//! K`, issue 16 item 2): one upload of the matrix, one multigrid hierarchy,
//! and per batch one upload of the k right-hand sides ([k][n]), one batched
//! PCG ([`crate::linalg::batch`]) and one download of the k fields. The
//! host work around it (reading each case's power, forming its right-hand
//! side, the statistics of its field) runs in parallel over the batch's
//! cases. Each case equals its own solve to rounding (same recurrence, same
//! stopping iteration); a case whose true residual misses rtol after the
//! recurrence converged is solved again alone, as `run_worker` would.
//! Batching applies to `--precond mg` (the default); other preconditioners
//! take `run_worker`'s one-at-a-time path.

use super::steady::{SteadyError, SteadyOptions};
use super::sweep::{case_power, failed, run_worker, solve_one, stats, CaseResult, SweepBase};
use super::sweep::{CaseStats, SweepCase};
use crate::assemble::power_rhs;
use crate::backend::batch::BatchOps;
use crate::backend::ChebyshevBackend;
use crate::linalg::batch::mg::BatchMultigrid;
use crate::linalg::batch::{batch_pcg, BatchOutcome, BatchWork};
use crate::linalg::mg::Multigrid;
use crate::linalg::{build_thermal_precond, Offset, PcgWork, PrecondKind, QuadDiagOperator, Stop};
use crate::power::LayerPower;
use crate::stack::Stack;
use rayon::prelude::*;
use std::time::Instant;

/// Host reads of the batch's statuses: every this many PCG iterations
/// (a converged vector is frozen on the device, so this only decides how
/// many masked, empty iterations run after the last vector converged).
const CHECK_EVERY: usize = 2;

/// n-vectors one worker holds with batches of `k` (the solver's own set is
/// in `Backend::check_capacity`): the batch's vectors and its multigrid
/// work vectors (two per level, a third of the fine level together).
pub fn worker_vectors(k: usize) -> usize {
    match k {
        0 | 1 => 0,
        k => BatchWork::<crate::backend::cpu::CpuBackend>::vectors(k) + k,
    }
}

/// Fails early when `jobs` workers with batches of `k` on grids of `cells`
/// cannot fit in `be`'s memory together (each worker holds the solver's
/// vectors, its hierarchy and the batch's).
pub fn check_workers<B: crate::backend::Backend>(
    be: &B,
    cells: usize,
    jobs: usize,
    k: usize,
) -> Result<(), crate::backend::BackendError> {
    // `check_capacity` counts one solve (assembly included, ~20 vectors);
    // each further worker adds its own solver vectors (~12) and every
    // worker its batch.
    let jobs = jobs.max(1);
    be.check_capacity_with(cells, (jobs - 1) * 12 + jobs * worker_vectors(k))
}

/// Whether a worker with batch size `k` and these options batches.
pub fn batches(k: usize, opts: &SteadyOptions) -> bool {
    k > 1 && opts.precond == PrecondKind::Multigrid
}

/// Where a batched worker spent its time (seconds, summed over its batches):
/// the host's reading of the cases' power and forming of their right-hand
/// sides, the device's upload + batched PCG + download, and the host's
/// statistics of the fields (with the callbacks). Zero when not batched.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct WorkerTimes {
    pub batches: usize,
    pub prepare_s: f64,
    pub solve_s: f64,
    pub finish_s: f64,
}

impl std::ops::AddAssign for WorkerTimes {
    fn add_assign(&mut self, o: WorkerTimes) {
        self.batches += o.batches;
        self.prepare_s += o.prepare_s;
        self.solve_s += o.solve_s;
        self.finish_s += o.finish_s;
    }
}

/// [`run_worker`] with the cases solved `k` at a time (see the module doc).
#[allow(clippy::too_many_arguments)]
pub fn run_worker_batched<B: ChebyshevBackend + BatchOps + 'static>(
    be: &B,
    stack: &Stack,
    base: &SweepBase,
    opts: &SteadyOptions,
    cases: &[SweepCase],
    keep_fields: bool,
    k: usize,
    next: &(dyn Fn() -> Option<usize> + Sync),
    done: &(dyn Fn(CaseResult) + Sync),
) -> Result<WorkerTimes, SteadyError> {
    if !batches(k, opts) {
        run_worker(be, stack, base, opts, cases, keep_fields, next, done)?;
        return Ok(WorkerTimes::default());
    }
    let mut times = WorkerTimes::default();
    let n = base.grid.len();
    be.check_capacity_with(n, worker_vectors(k))?;
    be.prepare_quad_diag()?;
    be.prepare_batch()?;
    let a = be.upload_matrix(&base.sys.a)?;
    let mg = Multigrid::new(be, &base.sys.a, &opts.precond_opts.mg)?;
    let mut bm = BatchMultigrid::new(be, &mg, k)?;
    let mut work = BatchWork::new(be, k, n)?;
    let mut x = be.zeros(k * n)?;
    let mut host_b = vec![0.0; k * n];
    let mut host_x = vec![0.0; k * n];
    // The one-at-a-time solver, built only if a case needs it.
    let mut alone = None;
    loop {
        let t0 = Instant::now();
        let ids: Vec<usize> = std::iter::from_fn(next).take(k).collect();
        if ids.is_empty() {
            return Ok(times);
        }
        times.batches += 1;
        // Each case's power and shifted right-hand side, in parallel.
        let prepared: Vec<(usize, Result<(Vec<LayerPower>, Offset), String>)> = ids
            .par_iter()
            .map_init(
                || stack.clone(),
                |own, &i| {
                    let p = case_power(own, stack, base, &cases[i]).map(|power| {
                        let offset = Offset::new(&base.sys.a, &power_rhs(&base.grid, &power));
                        (power, offset)
                    });
                    (i, p)
                },
            )
            .collect();
        let mut batch = Vec::with_capacity(k);
        for (i, p) in prepared {
            match p {
                Ok((power, offset)) => batch.push((i, power, offset)),
                Err(e) => done(failed(i, &cases[i], e)),
            }
        }
        if batch.is_empty() {
            continue;
        }
        host_b
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(slot, dst)| match batch.get(slot) {
                Some((_, _, offset)) => dst.copy_from_slice(&offset.rhs),
                None => dst.fill(0.0),
            });
        let stops: Vec<Option<Stop>> = (0..k)
            .map(|slot| {
                let (_, _, offset) = batch.get(slot)?;
                Some(Stop::against(opts.rtol, offset.b_norm))
            })
            .collect();
        let t1 = Instant::now();
        times.prepare_s += (t1 - t0).as_secs_f64();
        let solved = be.upload(&host_b).map_err(SteadyError::from).and_then(|b| {
            let m = &mut bm;
            let out = batch_pcg(
                be,
                &a,
                m,
                &b,
                &mut x,
                &mut work,
                &stops,
                opts.max_iter,
                CHECK_EVERY,
            )?;
            be.download_into(&x, &mut host_x)?;
            Ok(out)
        });
        let t2 = Instant::now();
        times.solve_s += (t2 - t1).as_secs_f64();
        let outcomes = match solved {
            Ok(o) => o,
            Err(e) => {
                for (i, _, _) in batch {
                    done(failed(i, &cases[i], e.to_string()));
                }
                continue;
            }
        };
        let finished: Vec<(usize, Option<Result<CaseStats, String>>, Vec<LayerPower>)> = batch
            .into_par_iter()
            .zip(outcomes.into_par_iter())
            .zip(host_x.par_chunks(n))
            .map(|(((i, power, offset), out), theta)| match out {
                BatchOutcome::Converged {
                    iterations,
                    true_rr,
                    bb,
                } => {
                    let rel = match bb > 0.0 {
                        true => (true_rr / bb).sqrt() / offset.rtol_scale,
                        false => 0.0,
                    };
                    let t: Vec<f64> = theta
                        .iter()
                        .map(|v| v + offset.c + stack.ambient_k)
                        .collect();
                    let s = stats(stack, &base.grid, t, power, iterations, rel, keep_fields);
                    (i, Some(Ok(s)), Vec::new())
                }
                BatchOutcome::Failed(e) => (i, Some(Err(e.to_string())), Vec::new()),
                BatchOutcome::Unconfirmed { .. } | BatchOutcome::Empty => (i, None, power),
            })
            .collect();
        for (i, outcome, power) in finished {
            let outcome = match outcome {
                Some(o) => o,
                None => {
                    let (op, m, w, x1, zero) = match &mut alone {
                        Some(s) => s,
                        None => alone.insert((
                            QuadDiagOperator::new(be, &a, n),
                            None,
                            PcgWork::new(be, n)?,
                            be.zeros(n)?,
                            be.zeros(n)?,
                        )),
                    };
                    let m = match m {
                        Some(m) => m,
                        None => m.insert(build_thermal_precond(
                            opts.precond,
                            be,
                            op,
                            &base.sys.a,
                            &opts.precond_opts,
                        )?),
                    };
                    solve_one(
                        be,
                        stack,
                        base,
                        opts,
                        op,
                        m.as_mut(),
                        w,
                        x1,
                        zero,
                        power,
                        keep_fields,
                    )
                }
            };
            done(CaseResult {
                index: i,
                name: cases[i].name.clone(),
                outcome,
            });
        }
        times.finish_s += t2.elapsed().as_secs_f64();
    }
}
