//! Batched sweeps (`thermal::sweep_batch`, CPU): every case of a batched
//! sweep equals its own one-at-a-time solve (`run_worker`, the path `cuth
//! solve` shares) to 1e-9 K on every cell, with the same PCG iteration
//! count, for batch sizes that divide the cases, leave a partial last batch
//! and exceed them; a case whose map is bad fails alone, with the same
//! reason.

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::{PowerSpec, Stack};
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::sweep::{run_worker, CaseResult, SweepBase, SweepCase, SweepJob};
use cuth::thermal::sweep_batch::run_worker_batched;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn stack() -> Stack {
    Stack::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mol_f2f.toml"))
        .unwrap()
        .with_grid(24, 20)
        .unwrap()
}

/// `n` cases: the logic raster scaled, a block walking over the memory die;
/// case `bad` names a raster that does not exist.
fn cases(stack: &Stack, n: usize, bad: usize) -> Vec<SweepCase> {
    let layer = |name: &str| stack.layers.iter().position(|l| l.name == name).unwrap();
    let raster = Path::new(env!("CARGO_MANIFEST_DIR")).join("powermaps/mol_logic.csv");
    (0..n)
        .map(|i| SweepCase {
            name: format!("case{i}"),
            power: vec![
                (
                    layer("logic_feol"),
                    PowerSpec::Raster {
                        file: match i == bad {
                            true => raster.with_file_name("missing.csv"),
                            false => raster.clone(),
                        },
                        // Case 0 has no logic power at all.
                        total: Some(if i == 0 { 0.0 } else { 2.0 + 0.7 * i as f64 }),
                    },
                ),
                (
                    layer("memory_feol"),
                    PowerSpec::Uniform {
                        total: 0.2 + (i % 4) as f64 * 0.5,
                    },
                ),
            ],
        })
        .collect()
}

/// Every case through one worker (batched with `k`, or one at a time), by index.
fn sweep(
    stack: &Stack,
    base: &SweepBase,
    cases: &[SweepCase],
    k: Option<usize>,
) -> Vec<CaseResult> {
    let opts = SteadyOptions::from_stack(stack, PrecondKind::Multigrid);
    let cursor = AtomicUsize::new(0);
    let next = || Some(cursor.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < cases.len());
    let out = Mutex::new(Vec::new());
    let done = |r: CaseResult| out.lock().unwrap().push(r);
    let be = CpuBackend::new();
    let job = SweepJob {
        stack,
        base,
        opts: &opts,
        cases,
        keep_fields: true,
    };
    match k {
        Some(k) => {
            run_worker_batched(&be, job, k, &next, &done).unwrap();
        }
        None => run_worker(&be, job, &next, &done).unwrap(),
    }
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|r| r.index);
    v
}

#[test]
fn every_batched_case_equals_its_own_solve() {
    let stack = stack();
    let base = SweepBase::new(&stack).unwrap();
    let cases = cases(&stack, 7, 4);
    let single = sweep(&stack, &base, &cases, None);
    for k in [2, 3, 7, 16] {
        let batched = sweep(&stack, &base, &cases, Some(k));
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
                    assert_eq!(b.index, 4);
                    assert_eq!(be, se);
                }
                other => panic!("k {k}, {}: batched and single disagree: {other:?}", b.name),
            }
        }
        println!("k = {k}: worst |dT| over every cell of 6 cases {worst:.2e} K");
        assert!(worst <= 1e-9, "k {k}: {worst:e} K");
    }
}

#[test]
fn a_batch_that_cannot_converge_fails_every_case_with_the_single_reason() {
    let stack = stack();
    let base = SweepBase::new(&stack).unwrap();
    let cases = cases(&stack, 3, usize::MAX);
    let mut opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    opts.max_iter = 2;
    let run = |k: Option<usize>| {
        let cursor = AtomicUsize::new(0);
        let next = || Some(cursor.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < cases.len());
        let out = Mutex::new(Vec::new());
        let done = |r: CaseResult| out.lock().unwrap().push(r);
        let be = CpuBackend::new();
        let job = SweepJob {
            stack: &stack,
            base: &base,
            opts: &opts,
            cases: &cases,
            keep_fields: false,
        };
        match k {
            Some(k) => {
                run_worker_batched(&be, job, k, &next, &done).unwrap();
            }
            None => run_worker(&be, job, &next, &done).unwrap(),
        }
        let mut v = out.into_inner().unwrap();
        v.sort_by_key(|r| r.index);
        v
    };
    let (b, s) = (run(Some(4)), run(None));
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
