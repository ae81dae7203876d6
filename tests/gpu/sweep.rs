//! `thermal::sweep` on CUDA against the CPU, case by case. `#[ignore]`d (CI
//! has no GPU); on a GPU machine, from the repository root or a folder with
//! `configs/` and `powermaps/` beside it:
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 sweep::
//! ```
//!
//! One worker (one context, one upload, the hierarchy built once) solves the
//! cases back to back; each case's layer max/mean must match the CPU's to
//! 1e-6 K (both stop at rtol 1e-8), a case with a bad raster must fail alone.
//! Also prints cases/s at 128² × 18 (the GPU target is ≥ 1000/s).

use crate::util::sweep::sweep;
use crate::util::{mol_f2f, sweep_cases as cases};
use cuth::backend::cpu::CpuBackend;
use cuth::stack::Stack;
use cuth::thermal::sweep::SweepBase;
use std::time::Instant;

#[test]
#[ignore]
fn cuda_sweep_matches_cpu_case_by_case() {
    let gpu = crate::util::open_gpu();
    let stack = Stack::load(&mol_f2f()).unwrap().with_grid(96, 80).unwrap();
    let base = SweepBase::new(&stack).unwrap();
    let cases = cases(&stack, 12, Some(7));
    let (g, _) = sweep(&gpu, &stack, &base, &cases, None, false);
    let (c, _) = sweep(&CpuBackend::new(), &stack, &base, &cases, None, false);
    assert_eq!(g.len(), 12);
    let mut worst = 0.0f64;
    for (gr, cr) in g.iter().zip(&c) {
        match (&gr.outcome, &cr.outcome) {
            (Ok(gs), Ok(cs)) => {
                for ((gm, ga), (cm, ca)) in gs.layers.iter().zip(&cs.layers) {
                    worst = worst.max((gm - cm).abs()).max((ga - ca).abs());
                }
                println!(
                    "{}: iterations gpu {} cpu {}, true residual gpu {:.2e}",
                    gr.name, gs.iterations, cs.iterations, gs.true_residual
                );
                assert!(gs.true_residual <= 1e-7, "{}", gs.true_residual);
            }
            (Err(ge), Err(ce)) => {
                assert_eq!(gr.index, 7);
                assert_eq!(ge, ce);
                println!("{}: failed on both: {ge}", gr.name);
            }
            other => panic!("{}: gpu and cpu disagree: {other:?}", gr.name),
        }
    }
    println!("worst |dT| over layer max/mean, 11 cases: {worst:.3e} K (tol 1e-6)");
    assert!(worst < 1e-6, "GPU and CPU differ by {worst:e} K");
}

#[test]
#[ignore]
fn cuda_sweep_rate_128() {
    let gpu = crate::util::open_gpu();
    let stack = Stack::load(&mol_f2f())
        .unwrap()
        .with_grid(128, 128)
        .unwrap();
    let t0 = Instant::now();
    let base = SweepBase::new(&stack).unwrap();
    let setup = t0.elapsed().as_secs_f64();
    let cases = cases(&stack, 200, None);
    let (r, s) = sweep(&gpu, &stack, &base, &cases, None, false);
    assert!(r.iter().all(|r| r.outcome.is_ok()));
    let iters: usize = r
        .iter()
        .map(|r| r.outcome.as_ref().unwrap().iterations)
        .sum();
    println!(
        "cuda sweep 128x128x{}: {} cases in {s:.3} s = {:.1} cases/s (host set-up {setup:.3} s, \
         mean {:.1} iterations; rasters read per case)",
        base.grid.nz,
        r.len(),
        r.len() as f64 / s,
        iters as f64 / r.len() as f64
    );
}
