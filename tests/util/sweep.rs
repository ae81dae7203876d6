//! Sweep checks, one body per backend (`solver::sweep_batch` runs them on
//! the CPU, `gpu::sweep_batch` on CUDA): every case of a batched sweep
//! equals its own one-at-a-time solve (`run_worker`, the path `cuth solve`
//! shares) to 1e-9 K on every cell, with the same PCG iteration count; a
//! case whose map is bad fails alone, with the same reason; a batch that
//! cannot converge fails every case with the one-at-a-time reason. Also the
//! worker runner the GPU sweep tests time.

use cuth::backend::batch::BatchOps;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::sweep::{run_worker, CaseResult, SweepBase, SweepCase, SweepJob};
use cuth::thermal::sweep_batch::run_worker_batched;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Every case through one worker on `be` with `opts`, batched by `k` (one
/// at a time when `None`), by index; and the wall time in seconds.
pub fn run_cases<B: ThermalBackend + BatchOps + 'static>(
    be: &B,
    job: SweepJob<'_>,
    k: Option<usize>,
) -> (Vec<CaseResult>, f64) {
    let n = job.cases.len();
    let cursor = AtomicUsize::new(0);
    let next = || Some(cursor.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < n);
    let out = Mutex::new(Vec::new());
    let done = |r: CaseResult| out.lock().unwrap().push(r);
    let t0 = Instant::now();
    match k {
        Some(k) => {
            let t = run_worker_batched(be, job, k, &next, &done).unwrap();
            println!("  k = {k}: {t:?}");
        }
        None => run_worker(be, job, &next, &done).unwrap(),
    }
    let s = t0.elapsed().as_secs_f64();
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|r| r.index);
    (v, s)
}

/// The cases of `stack` under mg's default options, batched by `k` (one at
/// a time when `None`), fields kept when `keep`.
pub fn sweep<B: ThermalBackend + BatchOps + 'static>(
    be: &B,
    stack: &Stack,
    base: &SweepBase,
    cases: &[SweepCase],
    k: Option<usize>,
    keep: bool,
) -> (Vec<CaseResult>, f64) {
    let opts = SteadyOptions::from_stack(stack, PrecondKind::Multigrid);
    let job = SweepJob {
        stack,
        base,
        opts: &opts,
        cases,
        keep_fields: keep,
    };
    run_cases(be, job, k)
}

/// For every batch size in `ks`, every case of the batched sweep equals the
/// one-at-a-time sweep `single` (same backend, fields kept): the same
/// iterations, true residual ≤ 1e-8 and within 1e-3 of the single's, every
/// cell and block maximum within 1e-9 K; case `bad` fails on both with the
/// same reason. `cases` must come from `stack`.
pub fn batched_cases_equal_their_own_solves<B: ThermalBackend + BatchOps + 'static>(
    be: &B,
    stack: &Stack,
    cases: &[SweepCase],
    bad: usize,
    ks: &[usize],
) {
    let base = SweepBase::new(stack).unwrap();
    let (single, _) = sweep(be, stack, &base, cases, None, true);
    for &k in ks {
        let (batched, _) = sweep(be, stack, &base, cases, Some(k), true);
        assert_eq!(batched.len(), cases.len());
        let mut worst = 0.0f64;
        for (b, s) in batched.iter().zip(&single) {
            assert_eq!(b.index, s.index);
            match (&b.outcome, &s.outcome) {
                (Ok(bs), Ok(ss)) => {
                    assert_eq!(bs.iterations, ss.iterations, "k {k}, {}", b.name);
                    assert!(bs.true_residual <= 1e-8, "{}", bs.true_residual);
                    assert!(
                        (bs.true_residual - ss.true_residual).abs() <= 1e-3 * ss.true_residual,
                        "k {k}, {}: true residual {} vs {}",
                        b.name,
                        bs.true_residual,
                        ss.true_residual
                    );
                    let (bt, st) = (&bs.field.as_ref().unwrap().0, &ss.field.as_ref().unwrap().0);
                    for (x, y) in bt.iter().zip(st) {
                        worst = worst.max((x - y).abs());
                    }
                    assert_eq!(bs.blocks.len(), ss.blocks.len());
                    for ((bn, bm), (sn, sm)) in bs.blocks.iter().zip(&ss.blocks) {
                        assert_eq!(bn, sn);
                        assert!((bm.unwrap() - sm.unwrap()).abs() <= 1e-9);
                    }
                }
                (Err(be), Err(se)) => {
                    assert_eq!(b.index, bad);
                    assert_eq!(be, se);
                }
                other => panic!("k {k}, {}: batched and single disagree: {other:?}", b.name),
            }
        }
        println!(
            "k = {k}: worst |dT| over every cell of {} cases {worst:.2e} K",
            cases.len() - 1
        );
        assert!(worst <= 1e-9, "k {k}: {worst:e} K");
    }
}

/// With `max_iter` 2, a batch of the (good) `cases` fails every case, with
/// the reason each gets one at a time (naming `max_iter`).
pub fn a_batch_that_cannot_converge_fails_every_case_with_the_single_reason<
    B: ThermalBackend + BatchOps + 'static,
>(
    be: &B,
    stack: &Stack,
    cases: &[SweepCase],
) {
    let base = SweepBase::new(stack).unwrap();
    let mut opts = SteadyOptions::from_stack(stack, PrecondKind::Multigrid);
    opts.max_iter = 2;
    let run = |k: Option<usize>| {
        let job = SweepJob {
            stack,
            base: &base,
            opts: &opts,
            cases,
            keep_fields: false,
        };
        run_cases(be, job, k).0
    };
    let (b, s) = (run(Some(4)), run(None));
    assert_eq!(b.len(), cases.len());
    for (b, s) in b.iter().zip(&s) {
        let (Err(be), Err(se)) = (&b.outcome, &s.outcome) else {
            panic!(
                "{}: expected both to fail: {:?} {:?}",
                b.name, b.outcome, s.outcome
            );
        };
        assert!(be.contains("max_iter"), "{be}");
        assert_eq!(be, se);
    }
}
