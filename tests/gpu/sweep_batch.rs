//! Batched sweeps on CUDA (`thermal::sweep_batch`, `kernels/batch.cu`).
//! `#[ignore]`d (CI has no GPU); on a GPU machine, from the repository root
//! or a folder with `configs/` and `powermaps/` beside it:
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 sweep_batch::
//! ```
//!
//! - the CPU's checks (`util::sweep`) on CUDA: every case of a batched
//!   sweep equals its own one-at-a-time solve (`run_worker`) to 1e-9 K on
//!   every cell, with the same iteration count; a bad case fails alone; a
//!   batch that cannot converge fails every case with the single reason;
//! - every case of a batched CUDA sweep equals the CPU's to 1e-6 K;
//! - cases/s at 128² × 18: one at a time against batches of k = 8 … 128
//!   (whole worker: rasters read, right-hand sides formed, solved, field
//!   statistics), and the batched PCG alone (right-hand sides prepared).

use crate::util::sweep::{self, sweep};
use crate::util::{mol_f2f, sweep_cases as cases};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::CudaBackend;
use cuth::backend::{Backend, QuadDiagOps};
use cuth::linalg::batch::mg::BatchMultigrid;
use cuth::linalg::batch::{batch_pcg, BatchOutcome, BatchStops, BatchWork};
use cuth::linalg::mg::Multigrid;
use cuth::linalg::{Offset, PrecondKind, Stop};
use cuth::stack::Stack;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::sweep::{CaseResult, SweepBase};
use std::time::Instant;

fn stack(n: (usize, usize)) -> Stack {
    Stack::load(&mol_f2f())
        .unwrap()
        .with_grid(n.0, n.1)
        .unwrap()
}

fn gpu() -> CudaBackend {
    crate::util::open_gpu()
}

#[test]
#[ignore]
fn batched_cases_equal_their_own_solves() {
    let stack = stack((96, 80));
    let cases = cases(&stack, 12, Some(7));
    sweep::batched_cases_equal_their_own_solves(&gpu(), &stack, &cases, 7, &[5, 12, 32]);
}

#[test]
#[ignore]
fn a_batch_that_cannot_converge_fails_every_case_with_the_single_reason() {
    let stack = stack((96, 80));
    let cases = cases(&stack, 5, None);
    sweep::a_batch_that_cannot_converge_fails_every_case_with_the_single_reason(
        &gpu(),
        &stack,
        &cases,
    );
}

/// Every case of a batched CUDA sweep against the CPU's one-at-a-time
/// solve: every cell within 1e-6 K (both stop at rtol 1e-8), the bad case
/// failing on both.
#[test]
#[ignore]
fn cuda_batched_cases_equal_cpu() {
    let be = gpu();
    let stack = stack((96, 80));
    let base = SweepBase::new(&stack).unwrap();
    let cases = cases(&stack, 12, Some(7));
    let (cpu, _) = sweep(&CpuBackend::new(), &stack, &base, &cases, None, true);
    for k in [5, 12, 32] {
        let (batched, _) = sweep(&be, &stack, &base, &cases, Some(k), true);
        assert_eq!(batched.len(), 12);
        let mut worst_cpu = 0.0f64;
        for (b, c) in batched.iter().zip(&cpu) {
            match (&b.outcome, &c.outcome) {
                (Ok(bs), Ok(cs)) => {
                    let bt = &bs.field.as_ref().unwrap().0;
                    for (x, y) in bt.iter().zip(&cs.field.as_ref().unwrap().0) {
                        worst_cpu = worst_cpu.max((x - y).abs());
                    }
                }
                (Err(be), Err(ce)) => {
                    assert_eq!(b.index, 7);
                    assert_eq!(be, ce);
                }
                other => panic!("k {k}, {}: outcomes differ: {other:?}", b.name),
            }
        }
        println!(
            "k = {k}: worst |dT| on every cell of 11 cases: batched CUDA vs single CPU \
             {worst_cpu:.3e} K (tol 1e-6)"
        );
        assert!(worst_cpu <= 1e-6, "{worst_cpu:e}");
    }
}

/// Cases/s of the whole worker, and of the batched PCG alone, at 128² × 18.
#[test]
#[ignore]
fn cuda_batch_rate_128() {
    let be = gpu();
    let stack = stack((128, 128));
    let base = SweepBase::new(&stack).unwrap();
    let nz = base.grid.nz;
    let many = cases(&stack, 1024, None);
    // Warm-up: kernels compiled, allocations made once.
    sweep(&be, &stack, &base, &many[..64], Some(64), false);
    sweep(&be, &stack, &base, &many[..4], None, false);
    let report = |what: String, r: &[CaseResult], s: f64| {
        assert!(r.iter().all(|r| r.outcome.is_ok()));
        let it: usize = r
            .iter()
            .map(|r| r.outcome.as_ref().unwrap().iterations)
            .sum();
        println!(
            "RATE {what} 128x128x{nz}: {} cases in {s:.3} s = {:.1} cases/s (mean {:.1} iterations)",
            r.len(),
            r.len() as f64 / s,
            it as f64 / r.len() as f64
        );
    };
    let (r, s) = sweep(&be, &stack, &base, &many[..128], None, false);
    report("sequential k=1".into(), &r, s);
    for k in [8, 32, 64, 128, 256] {
        let (r, s) = sweep(&be, &stack, &base, &many, Some(k), false);
        report(format!("batched k={k}"), &r, s);
    }
    // The batched PCG alone: the right-hand sides formed once.
    let opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    let n = base.grid.len();
    let a = be.upload_matrix(&base.sys.a).unwrap();
    let mg = Multigrid::new(&be, &a, &opts.precond_opts.mg).unwrap();
    let offset = Offset::new(&base.sys.a, &base.sys.rhs);
    for k in [8, 32, 64, 128, 256] {
        let mut bm = BatchMultigrid::new(&be, &mg, k).unwrap();
        let mut work = BatchWork::new(&be, k, n).unwrap();
        let host: Vec<f64> = (0..k)
            .flat_map(|j| offset.rhs.iter().map(move |v| v * (1.0 + 0.01 * j as f64)))
            .collect();
        let b = be.upload(&host).unwrap();
        let mut x = be.zeros(k * n).unwrap();
        let stops = vec![Some(Stop::against(opts.rtol, offset.b_norm)); k];
        let stop = BatchStops {
            stops: &stops,
            max_iter: 1000,
            check_every: 2,
        };
        let mut run = || batch_pcg(&be, &a, &mut bm, &b, &mut x, &mut work, stop).unwrap();
        run();
        let reps = (512 / k).max(2);
        let t0 = Instant::now();
        let mut its = 0;
        for _ in 0..reps {
            for o in run() {
                let BatchOutcome::Converged { iterations, .. } = o else {
                    panic!("{o:?}");
                };
                its += iterations;
            }
        }
        let s = t0.elapsed().as_secs_f64();
        println!(
            "RATE pcg-only k={k} 128x128x{nz}: {} solves in {s:.3} s = {:.1} solves/s \
             (mean {:.1} iterations)",
            reps * k,
            (reps * k) as f64 / s,
            its as f64 / (reps * k) as f64
        );
    }
}
