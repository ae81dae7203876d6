//! The multigrid preconditioner on the CUDA backend against the CPU
//! reference. `#[ignore]`d: run on a GPU machine with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 mg::
//! ```
//!
//! (a) each kernel of `kernels/mg.cu` against the CPU's on random matrices
//! whose sizes are not multiples of the block size (odd, 1-wide), outputs
//! poisoned with NaN where the operation must write them (the smoother also
//! relaxing only a level's changed cells); (b) one whole cycle z = M⁻¹ r on
//! a multi-level hierarchy, uniform and size-graded; (c) steady solves of
//! mol_f2f and the stress stack at 256² and of the shipped graded stacks on
//! both backends: same iterations (±1) and temperatures within 1e-6 K;
//! (d) the CPU's checks of mg solves (`util::mg`) on CUDA: flat iteration
//! counts, temperatures equal to Chebyshev's, graded stacks in few
//! iterations.

use crate::util::mg::{self, load, mg_cpu_against_gpu};
use crate::util::{gpu, max_rel_diff, random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::mg::{Guess, MultigridOps, Relax};
use cuth::backend::{Backend, QuadDiagOps};
use cuth::linalg::mg::{Coarsening, MgCycle, MgOptions, MgSmoother, Multigrid};
use cuth::linalg::{Preconditioner, QuadDiagOperator};

/// Aggregate starts of `nc` coarse columns: 4 pairs, 8 singles, repeated.
fn runs_of_singles(nc: usize) -> Vec<usize> {
    let mut s = vec![0];
    for k in 0..nc {
        s.push(s[k] + if (k / 4) % 3 == 0 { 2 } else { 1 });
    }
    s
}

/// Every multigrid operation on `be`, in a fixed sequence; the outputs.
fn mg_ops<B: MultigridOps>(be: &B, a: &cuth::linalg::QuadDiag, seed: u64) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut rng = Rng::new(seed);
    let pivots = be.upload(&cuth::linalg::mg::line_pivots(a)).unwrap();
    let ad = be.upload_matrix(a).unwrap();
    let b = be.upload(&rng.vec(n, -1.0, 1.0)).unwrap();
    let mut outs = Vec::new();
    // The level as made by a step of pairs and runs of singles, for the
    // smoother that relaxes only the changed cells (and their neighbours).
    let made = be
        .mg_transfer(&Coarsening::from_starts(
            a.nz,
            runs_of_singles(a.nx),
            runs_of_singles(a.ny),
        ))
        .unwrap();
    for only in [None, Some(&made)] {
        // From x = 0 (x poisoned: the first two half-sweeps must not read
        // it, and write every cell, skipped ones included).
        let mut x = be.upload(&vec![f64::NAN; n]).unwrap();
        let relax = |colour, guess| Relax {
            inv_pivots: &pivots,
            colour,
            guess,
            made_by: only,
        };
        be.mg_smooth(&ad, relax(0, Guess::Zero), &b, &mut x)
            .unwrap();
        be.mg_smooth(&ad, relax(1, Guess::ColourZero), &b, &mut x)
            .unwrap();
        for colour in [1, 0] {
            be.mg_smooth(&ad, relax(colour, Guess::Full), &b, &mut x)
                .unwrap();
        }
        outs.push(be.download(&x).unwrap());
    }
    // Pairs, and an irregular (size-graded) aggregation of singles and pairs.
    let irregular = |n: usize| -> Vec<usize> {
        let mut s = vec![0];
        while *s.last().unwrap() < n {
            let k = *s.last().unwrap();
            s.push((k + 1 + (k / 3) % 2).min(n));
        }
        s
    };
    let steps = [
        Coarsening::halve(a.nx, a.ny, a.nz),
        Coarsening::from_starts(a.nz, irregular(a.nx), irregular(a.ny)),
    ];
    for c in &steps {
        let t = be.mg_transfer(c).unwrap();
        let x = be.upload(&rng.vec(n, -1.0, 1.0)).unwrap();
        let mut bc = be.upload(&vec![f64::NAN; c.coarse_len()]).unwrap();
        be.mg_restrict_residual(&ad, &t, &b, &x, &mut bc).unwrap();
        outs.push(be.download(&bc).unwrap());
        let mut xf = be.upload(&rng.vec(n, -1.0, 1.0)).unwrap();
        be.mg_prolong_add(&t, &bc, &mut xf).unwrap();
        outs.push(be.download(&xf).unwrap());
    }
    let m = 37;
    let dense = be.upload(&rng.vec(m * m, -1.0, 1.0)).unwrap();
    let v = be.upload(&rng.vec(m, -1.0, 1.0)).unwrap();
    let mut out = be.upload(&vec![f64::NAN; m]).unwrap();
    be.mg_dense_apply(&dense, m, &v, &mut out).unwrap();
    outs.push(be.download(&out).unwrap());
    outs
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_kernels_match_cpu() {
    let mut rng = Rng::new(31);
    for dims in [(7, 5, 3), (1, 9, 4), (33, 17, 5), (257, 255, 11)] {
        let a = random_matrix(
            &mut rng,
            dims,
            |r| r.uniform(1.0, 1e4),
            |r, i| if i % 5 == 0 { r.uniform(0.1, 1.0) } else { 0.0 },
        );
        let cpu = mg_ops(&CpuBackend::new(), &a, 7);
        let gpu_out = mg_ops(gpu(), &a, 7);
        let names = [
            "line",
            "line (changed cells only)",
            "restrict (pairs)",
            "prolong (pairs)",
            "restrict (graded)",
            "prolong (graded)",
            "dense",
        ];
        assert_eq!(cpu.len(), names.len());
        for ((name, c), g) in names.iter().zip(&cpu).zip(&gpu_out) {
            assert!(
                g.iter().all(|v| v.is_finite()),
                "{dims:?} {name}: not finite"
            );
            let d = max_rel_diff(g, c);
            println!("{dims:?} {name}: max rel diff {d:.2e}");
            assert!(d < 1e-12, "{dims:?} {name}: {d}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_cycle_matches_cpu() {
    let mut rng = Rng::new(41);
    let a = random_matrix(
        &mut rng,
        (131, 67, 6),
        |r| r.uniform(1.0, 1e4),
        |r, i| {
            if i >= 131 * 67 * 5 {
                r.uniform(0.1, 1.0)
            } else {
                0.0
            }
        },
    );
    let n = a.len();
    let r = rng.vec(n, -1.0, 1.0);
    // The same matrix as a graded grid (widths growing 1.3 per cell from a
    // narrow middle band): size-graded levels that relax changed cells only.
    let mut graded = a.clone();
    let widths = |n: usize| -> Vec<f64> {
        (0..n)
            .map(|i| 1.3f64.powi((i as i32 - n as i32 / 2).abs().saturating_sub(8).min(12)))
            .collect()
    };
    (graded.wx, graded.wy) = (widths(a.nx), widths(a.ny));
    for (cycle, a) in [(MgCycle::V, &a), (MgCycle::W, &a), (MgCycle::V, &graded)] {
        let opts = MgOptions {
            cycle,
            sweeps: 1,
            smoother: MgSmoother::ZLine,
            ..MgOptions::default()
        };
        let cpu = CpuBackend::new();
        let mut mc = Multigrid::new(&cpu, a, &opts).unwrap();
        let mut zc = vec![0.0; n];
        mc.apply(&cpu, &mut QuadDiagOperator::new(&cpu, a, n), &r, &mut zc)
            .unwrap();
        let g = gpu();
        let ad = g.upload_matrix(a).unwrap();
        let mut mg = Multigrid::new(g, &ad, &opts).unwrap();
        let rd = g.upload(&r).unwrap();
        let mut zd = g.upload(&vec![f64::NAN; n]).unwrap();
        mg.apply(g, &mut QuadDiagOperator::new(g, &ad, n), &rd, &mut zd)
            .unwrap();
        let zg = g.download(&zd).unwrap();
        let d = max_rel_diff(&zg, &zc);
        let rep = mc.mg_report();
        println!(
            "{cycle:?} cycle, {} levels, {}: max rel diff {d:.2e}",
            rep.levels.len(),
            rep.coarsening
        );
        assert!(d < 1e-10, "{cycle:?}: {d}");
        if !a.wx.is_empty() {
            assert_eq!(rep.coarsening, "size_graded");
            assert!(rep.levels.iter().any(|l| l.relaxed_columns < l.nx * l.ny));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_solves_match_cpu() {
    for rel in ["configs/mol_f2f.toml", "tests/data/stress_mg/stress.toml"] {
        mg_cpu_against_gpu(rel, &load(rel, Some((256, 256))));
    }
}

/// Graded (non-uniform) grids: the size-graded hierarchy on the device
/// solves as on the CPU (configs from the working directory when there).
#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_solves_on_graded_grids_match_cpu() {
    for name in ["configs/hbm_2p5d.toml", "configs/hotspot_ev6_3d.toml"] {
        let s = load(name, None);
        assert!(s.plane_edges.is_some(), "{name}: not a graded grid");
        mg_cpu_against_gpu(name, &s);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn iterations_stay_flat_from_64_to_256() {
    mg::iterations_stay_flat_from_64_to_256(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_equals_chebyshev_in_steady_state() {
    mg::mg_equals_chebyshev_in_steady_state(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_equals_chebyshev_over_a_20_step_transient() {
    mg::mg_equals_chebyshev_over_a_20_step_transient(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shipped_graded_stacks_converge_like_uniform_grids() {
    mg::shipped_graded_stacks_converge_like_uniform_grids(gpu());
}

/// Cycles replayed from their recorded CUDA graph give the bits of cycles
/// launched one by one: steady solves with the f64 and the f32 hierarchy,
/// and adaptive TR-BDF2 steps, whose step changes re-form the matrix and
/// the fine pivots between solves (the recording must follow them).
#[test]
#[ignore = "needs a CUDA GPU"]
fn recorded_cycles_give_the_plain_cycles_bits() {
    use cuth::grid::Grid;
    use cuth::linalg::mg::MgPrecision;
    use cuth::power::{layer_power, schedule::PowerSchedule};
    use cuth::thermal::steady::solve_steady;
    use cuth::thermal::transient::{
        run_transient, InitState, Scheme, StepView, Stepping, TransientOptions,
    };
    let be = crate::util::open_gpu();
    be.set_sync_each_launch(false);
    let s = load("configs/mol_f2f.toml", Some((128, 128)));
    let mut runs = Vec::new();
    for graphs in [false, true] {
        be.set_graphs(graphs);
        let mut out = Vec::new();
        for precision in [MgPrecision::F64, MgPrecision::F32] {
            let mut o = mg::mg_options(&s, 1e-9);
            o.precond_opts.mg.precision = precision;
            let r = solve_steady(&be, &s, &o).unwrap();
            out.push((r.summary.solver.iterations, r.temperature_k));
        }
        let grid = Grid::from_stack(&s);
        let base: Vec<_> = (0..s.layers.len())
            .map(|l| layer_power(&s, &grid, l).unwrap())
            .collect();
        let opts = TransientOptions {
            solver: mg::mg_options(&s, 1e-9),
            dt: 2e-2,
            steps: 10,
            init: InitState::Ambient,
            snapshot_every: None,
            stepping: Stepping {
                scheme: Scheme::TrBdf2,
                time_tol_k: Some(0.05),
            },
            step_field: Default::default(),
        };
        let mut observe = |_: &StepView| Ok(());
        let sched = PowerSchedule::constant(base);
        let t = run_transient(&be, &s, &grid, &sched, &opts, &mut observe).unwrap();
        out.push((t.summary.iterations_total, t.temperature_k));
        runs.push(out);
    }
    be.set_graphs(true);
    for (k, (plain, replayed)) in runs[0].iter().zip(&runs[1]).enumerate() {
        let same = plain.1.len() == replayed.1.len()
            && plain
                .1
                .iter()
                .zip(&replayed.1)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        println!(
            "case {k}: {} iterations plain, {} replayed, same bits: {same}",
            plain.0, replayed.0
        );
        assert_eq!(plain.0, replayed.0, "case {k}: iterations");
        assert!(same, "case {k}: the temperatures differ");
    }
}
