//! A sweep worker that solves its cases k at a time (`cuth sweep --batch
//! K`): one upload of the matrix, one multigrid hierarchy,
//! and per batch one upload of the k right-hand sides (`[k][n]`), one batched
//! PCG ([`crate::linalg::batch`]) and one download of the k fields, through
//! page-locked host buffers ([`HostBuffer`]). The host work runs beside the
//! device in a three-stage pipeline: while the device solves batch i, one
//! thread reads the power of batch i + 1 and forms its right-hand sides,
//! another computes the statistics of batch i − 1 (each stage parallel over
//! its cases), with two buffers each way. Each case equals its own solve to rounding (same recurrence, same
//! stopping iteration); a case whose true residual misses rtol after the
//! recurrence converged is solved again alone, as `run_worker` would.
//! Batching applies to `--precond mg` (the default); other preconditioners
//! take `run_worker`'s one-at-a-time path.

use super::steady::{SteadyError, SteadyOptions};
use super::sweep::{case_power, failed, run_worker, solve_one, stats, CaseResult};
use super::sweep::{CaseStats, SweepBase, SweepJob};
use crate::assemble::power_rhs;
use crate::backend::batch::{BatchOps, HostBuffer};
use crate::backend::BackendError;
use crate::linalg::batch::mg::BatchMultigrid;
use crate::linalg::batch::{batch_pcg, BatchOutcome, BatchStops, BatchWork};
use crate::linalg::mg::cycle::LevelWork;
use crate::linalg::mg::Multigrid;
use crate::linalg::{Offset, PrecondKind, QuadDiagOperator, Solver, Stop};
use crate::power::LayerPower;
use crate::thermal::device::ThermalBackend;
use rayon::prelude::*;
use std::sync::mpsc::{channel, sync_channel};
use std::sync::Mutex;
use std::time::Instant;

/// Batch size on a GPU when the caller gives none (BENCHMARKS.md, sweeps);
/// on the CPU cases go one at a time.
pub const GPU_BATCH: usize = 32;

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

/// A batch on its way through the pipeline: per case its index, power and
/// shifted right-hand side (the device slot is the position).
type Cases = Vec<(usize, Vec<LayerPower>, Offset)>;

/// [`run_worker`] with the cases solved `k` at a time (see the module doc).
pub fn run_worker_batched<B: ThermalBackend + BatchOps + 'static>(
    be: &B,
    job: SweepJob<'_>,
    k: usize,
    next: &(dyn Fn() -> Option<usize> + Sync),
    done: &(dyn Fn(CaseResult) + Sync),
) -> Result<WorkerTimes, SteadyError> {
    if !batches(k, job.opts) {
        run_worker(be, job, next, done)?;
        return Ok(WorkerTimes::default());
    }
    BatchSweeper::new(be, job.base, job.opts, k)?.run(be, job, next, done)
}

/// What a batched worker holds on the device and in page-locked host
/// memory between its batches: the matrix, the f64 hierarchy, the batch's
/// vectors and two host buffers each way. Built once per base and batch
/// size, it serves any number of [`BatchSweeper::run`] calls on that base
/// (the Python package's sweep keeps one between calls: building it costs
/// more than solving a few batches at 128²).
pub struct BatchSweeper<B: ThermalBackend + BatchOps> {
    k: usize,
    n: usize,
    a: B::Matrix,
    mg: Multigrid<B>,
    /// The batched cycle's work vectors; taken while a run uses them.
    levels_work: Option<LevelWork<B>>,
    work: BatchWork<B>,
    x: B::Vector,
    b: B::Vector,
    /// Right-hand-side and field buffers, `k * n` each.
    host_in: Vec<B::HostBuffer>,
    host_out: Vec<B::HostBuffer>,
}

impl<B: ThermalBackend + BatchOps + 'static> BatchSweeper<B> {
    /// A worker for batches of up to `k` cases on `base`'s system.
    pub fn new(
        be: &B,
        base: &SweepBase,
        opts: &SteadyOptions,
        k: usize,
    ) -> Result<Self, SteadyError> {
        let n = base.grid.len();
        be.check_capacity_with(n, worker_vectors(k))?;
        be.prepare_quad_diag()?;
        be.prepare_batch()?;
        let a = be.upload_matrix(&base.sys.a)?;
        // The batched cycle has f64 kernels only: its hierarchy is f64 whatever
        // `--mg-precision` asks.
        let mg_opts = crate::linalg::mg::MgOptions {
            precision: crate::linalg::mg::MgPrecision::F64,
            ..opts.precond_opts.mg
        };
        let mg = Multigrid::new(be, &a, &mg_opts)?;
        let levels_work = Some(BatchMultigrid::new(be, &mg, k)?.into_work());
        let host = || {
            (0..2)
                .map(|_| be.host_buffer(k * n))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(BatchSweeper {
            k,
            n,
            work: BatchWork::new(be, k, n)?,
            x: be.zeros(k * n)?,
            b: be.zeros(k * n)?,
            host_in: host()?,
            host_out: host()?,
            a,
            mg,
            levels_work,
        })
    }

    /// The most cases a batch holds.
    pub fn batch_size(&self) -> usize {
        self.k
    }

    /// Solves the cases `next` hands out, `k` at a time, on the system this
    /// worker was built for (`job.base` must be the base given to
    /// [`BatchSweeper::new`]). After an error the worker may have lost
    /// buffers: drop it.
    pub fn run(
        &mut self,
        be: &B,
        job: SweepJob<'_>,
        next: &(dyn Fn() -> Option<usize> + Sync),
        done: &(dyn Fn(CaseResult) + Sync),
    ) -> Result<WorkerTimes, SteadyError> {
        let SweepJob { opts, .. } = job;
        let (k, n) = (self.k, self.n);
        let (a, x, b, work) = (&self.a, &mut self.x, &mut self.b, &mut self.work);
        let levels_work =
            self.levels_work
                .take()
                .ok_or(SteadyError::Backend(BackendError::Unsupported(
                    "a batched sweep worker used after an error",
                )))?;
        let mut bm = BatchMultigrid::with_work(&self.mg, levels_work)?;
        // A stage that stopped early may have dropped the buffers it held.
        for host in [&mut self.host_in, &mut self.host_out] {
            while host.len() < 2 {
                host.push(be.host_buffer(k * n)?);
            }
        }
        // Two buffers each way: one in the device's hands, one in the host's.
        let (free_in, inputs) = channel::<B::HostBuffer>();
        let (free_out, outputs) = channel::<B::HostBuffer>();
        for h in self.host_in.drain(..) {
            free_in.send(h).ok();
        }
        for h in self.host_out.drain(..) {
            free_out.send(h).ok();
        }
        let times = Mutex::new(WorkerTimes::default());
        let alone = Mutex::new(Vec::new());
        let (to_device, prepared) = sync_channel::<(Cases, B::HostBuffer)>(1);
        let (to_host, solved) = sync_channel::<(Cases, Vec<BatchOutcome>, B::HostBuffer)>(1);
        let device = std::thread::scope(|sc| {
            let times = &times;
            let alone = &alone;
            // Stage 1: the cases' power and right-hand sides, into a free
            // buffer. It hands its end of the free buffers back when done.
            let producer = sc.spawn(move || {
                let r = (|| -> Result<(), SteadyError> {
                    loop {
                        let t0 = Instant::now();
                        let ids: Vec<usize> = std::iter::from_fn(next).take(k).collect();
                        if ids.is_empty() {
                            return Ok(());
                        }
                        let batch = prepare(job, &ids, done);
                        if batch.is_empty() {
                            continue;
                        }
                        let Ok(mut host) = inputs.recv() else {
                            return Ok(()); // the device stage stopped
                        };
                        host.values_mut()?
                            .par_chunks_mut(n)
                            .enumerate()
                            .for_each(|(slot, dst)| match batch.get(slot) {
                                Some((_, _, offset)) => dst.copy_from_slice(&offset.rhs),
                                None => dst.fill(0.0),
                            });
                        times.lock().unwrap().prepare_s += t0.elapsed().as_secs_f64();
                        if to_device.send((batch, host)).is_err() {
                            return Ok(());
                        }
                    }
                })();
                (r, inputs)
            });
            // Stage 3: every case's statistics from the downloaded fields.
            let consumer = sc.spawn(move || -> Result<(), SteadyError> {
                for (batch, outcomes, host) in solved {
                    let t0 = Instant::now();
                    let fields = host.values()?;
                    for r in finish(job, batch, outcomes, fields) {
                        match r {
                            Ok(r) => done(r),
                            Err(again) => alone.lock().unwrap().push(again),
                        }
                    }
                    times.lock().unwrap().finish_s += t0.elapsed().as_secs_f64();
                    // The device stage may have finished and dropped its end:
                    // keep draining `solved` all the same (stopping here lost
                    // the last batch's results).
                    free_out.send(host).ok();
                }
                Ok(())
            });
            // Stage 2 (this thread, the only one on the device): upload, solve,
            // download.
            let run = (|| -> Result<(), SteadyError> {
                for (batch, host) in prepared {
                    let t0 = Instant::now();
                    be.upload_from(&host, b)?;
                    free_in.send(host).ok();
                    let stops: Vec<Option<Stop>> = (0..k)
                        .map(|slot| {
                            let (_, _, offset) = batch.get(slot)?;
                            Some(Stop::against(opts.rtol, offset.b_norm))
                        })
                        .collect();
                    let stop = BatchStops {
                        stops: &stops,
                        max_iter: opts.max_iter,
                        check_every: CHECK_EVERY,
                    };
                    let out = batch_pcg(be, a, &mut bm, b, x, work, stop)?;
                    let Ok(mut fields) = outputs.recv() else {
                        return Ok(()); // the host stage stopped
                    };
                    be.download_to(x, &mut fields)?;
                    let mut t = times.lock().unwrap();
                    t.batches += 1;
                    t.solve_s += t0.elapsed().as_secs_f64();
                    drop(t);
                    if to_host.send((batch, out, fields)).is_err() {
                        return Ok(());
                    }
                }
                Ok(())
            })();
            // Unblock and end the other stages whatever happened here.
            drop((free_in, to_host));
            let (p, inputs) = joined(producer);
            let c = joined(consumer);
            (run.and(p).and(c), inputs)
        });
        let (device, inputs) = device;
        // Every buffer is back in a free channel once the stages ended.
        self.host_in.extend(inputs.try_iter());
        self.host_out.extend(outputs.try_iter());
        device?;
        self.levels_work = Some(bm.into_work());
        solve_alone(be, job, a, alone.into_inner().unwrap(), done)?;
        Ok(times.into_inner().unwrap())
    }
}

/// A pipeline stage's result (a stage that panicked takes the sweep down
/// with it, as a panic on this thread would).
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join()
        .unwrap_or_else(|_| panic!("a sweep pipeline stage panicked"))
}

/// The cases whose true residual missed rtol after the batch's recurrence
/// converged (index, power): solved one at a time on matrix `a`, as
/// `run_worker` solves every case.
fn solve_alone<B: ThermalBackend + 'static>(
    be: &B,
    job: SweepJob<'_>,
    a: &B::Matrix,
    alone: Vec<(usize, Vec<LayerPower>)>,
    done: &(dyn Fn(CaseResult) + Sync),
) -> Result<(), SteadyError> {
    if alone.is_empty() {
        return Ok(());
    }
    let (base, opts) = (job.base, job.opts);
    let n = base.grid.len();
    let op = QuadDiagOperator::new(be, a, n);
    let mut ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, Some(&base.sys.a))?;
    let (mut x1, zero) = (be.zeros(n)?, be.zeros(n)?);
    for (i, power) in alone {
        let outcome = solve_one(be, job, &mut ksp, &mut x1, &zero, power);
        done(CaseResult {
            index: i,
            name: job.cases[i].name.clone(),
            outcome,
        });
    }
    Ok(())
}

/// The power and shifted right-hand side of cases `ids`, in parallel; a
/// case whose power cannot be read is handed to `done` as failed.
fn prepare(job: SweepJob<'_>, ids: &[usize], done: &(dyn Fn(CaseResult) + Sync)) -> Cases {
    let SweepJob {
        stack, base, cases, ..
    } = job;
    type Prepared = (usize, Result<(Vec<LayerPower>, Offset), String>);
    let prepared: Vec<Prepared> = ids
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
    let mut batch = Vec::with_capacity(ids.len());
    for (i, p) in prepared {
        match p {
            Ok((power, offset)) => batch.push((i, power, offset)),
            Err(e) => done(failed(i, &cases[i], e)),
        }
    }
    batch
}

/// Each case's result from its outcome and field (slot order), in
/// parallel: `Err` gives back the cases to solve alone (index, power).
fn finish(
    job: SweepJob<'_>,
    batch: Cases,
    outcomes: Vec<BatchOutcome>,
    fields: &[f64],
) -> Vec<Result<CaseResult, (usize, Vec<LayerPower>)>> {
    let SweepJob {
        stack,
        base,
        cases,
        keep_fields,
        ..
    } = job;
    let n = base.grid.len();
    batch
        .into_par_iter()
        .zip(outcomes.into_par_iter())
        .zip(fields.par_chunks(n))
        .map(|(((i, power, offset), out), theta)| {
            let outcome: Result<CaseStats, String> = match out {
                BatchOutcome::Converged {
                    iterations,
                    true_rr,
                    bb,
                } => {
                    let rel = match bb > 0.0 {
                        true => (true_rr / bb).sqrt() / offset.rtol_scale,
                        false => 0.0,
                    };
                    // (θ + c) + ambient, as `solve_one` restores it.
                    let t: Vec<f64> = theta
                        .iter()
                        .map(|v| v + offset.c + stack.ambient_k)
                        .collect();
                    Ok(stats(
                        stack,
                        &base.grid,
                        t,
                        power,
                        iterations,
                        rel,
                        keep_fields,
                    ))
                }
                BatchOutcome::Failed(e) => Err(e.to_string()),
                BatchOutcome::Unconfirmed { .. } | BatchOutcome::Empty => return Err((i, power)),
            };
            Ok(CaseResult {
                index: i,
                name: cases[i].name.clone(),
                outcome,
            })
        })
        .collect()
}
