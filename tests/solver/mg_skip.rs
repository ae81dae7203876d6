//! The size-graded hierarchy's coarse levels relax only the cells their
//! step changed and the neighbours of those (`linalg::mg::relaxed`), against
//! independent references: the smoother with a step given equals the
//! smoother without one on exactly the cells within one of a changed cell
//! (found here by brute force over the 3 × 3 neighbourhood, not per axis)
//! and leaves the others as they were (0 after a first half-sweep); the
//! skipping cycle stays symmetric and positive (a PCG preconditioner) on a
//! small graded grid, V and W; on the shipped graded stacks it takes the
//! same PCG iterations as relaxing every cell, with less smoothing work; a
//! batched sweep skips the same cells (equals its own solves).

use crate::util::mg::{assert_symmetric_positive, load, mg_options};
use crate::util::{random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::mg::{Guess, MultigridOps, Relax};
use cuth::linalg::mg::{Coarsening, MgCycle, MgOptions, Multigrid};
use cuth::linalg::{PrecondKind, QuadDiag};
use cuth::thermal::steady::solve_steady;

/// Aggregate starts of `nc` coarse columns: `pairs` pairs, then `singles`
/// singles, repeated.
fn runs(nc: usize, pairs: usize, singles: usize) -> Vec<usize> {
    let mut s = vec![0];
    for k in 0..nc {
        s.push(s[k] + if k % (pairs + singles) < pairs { 2 } else { 1 });
    }
    s
}

/// Whether cell (x, y) of the level made by `c` lies within one cell (in x,
/// y or both) of a cell whose aggregate is a pair in x or in y.
fn near_a_change(c: &Coarsening, x: usize, y: usize) -> bool {
    let pair = |s: &[usize], k: usize| s[k + 1] - s[k] == 2;
    let near = |k: usize, n: usize| k.saturating_sub(1)..(k + 2).min(n);
    near(x, c.nxc).any(|xx| near(y, c.nyc).any(|yy| pair(&c.xstart, xx) || pair(&c.ystart, yy)))
}

fn matrix(rng: &mut Rng, dims: (usize, usize, usize)) -> QuadDiag {
    let top = dims.0 * dims.1 * (dims.2 - 1);
    random_matrix(
        rng,
        dims,
        |r| r.uniform(1.0, 1e4),
        |r, i| if i >= top { r.uniform(0.1, 1.0) } else { 0.0 },
    )
}

#[test]
fn the_smoother_relaxes_exactly_the_cells_near_a_change() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(5);
    let a = matrix(&mut rng, (23, 17, 4));
    let (n, plane) = (a.len(), a.nx * a.ny);
    let pivots = cuth::linalg::mg::line_pivots(&a);
    let b = rng.vec(n, -1.0, 1.0);
    let c = Coarsening::from_starts(a.nz, runs(a.nx, 1, 7), runs(a.ny, 1, 6));
    let relaxed = |i: usize| near_a_change(&c, i % a.nx, (i % plane) / a.nx);
    let (kept, skipped) = (0..n).partition::<Vec<_>, _>(|&i| relaxed(i));
    assert!(
        kept.len() > n / 4 && skipped.len() > n / 4,
        "{}",
        kept.len()
    );
    let smooth = |colour, guess, only: Option<&Coarsening>, x: &mut Vec<f64>| {
        let relax = Relax {
            inv_pivots: &pivots,
            colour,
            guess,
            made_by: only,
        };
        be.mg_smooth(&a, relax, &b, x).unwrap()
    };
    let x0 = rng.vec(n, -1.0, 1.0);
    for colour in [0, 1] {
        let (mut all, mut some) = (x0.clone(), x0.clone());
        smooth(colour, Guess::Full, None, &mut all);
        smooth(colour, Guess::Full, Some(&c), &mut some);
        for i in 0..n {
            let want = if relaxed(i) { all[i] } else { x0[i] };
            assert_eq!(
                some[i].to_bits(),
                want.to_bits(),
                "colour {colour}: cell {i}"
            );
        }
    }
    // A first half-sweep from x = 0 (x poisoned): the skipped cells of
    // both colours are written 0, the relaxed ones of the other colour
    // not at all.
    let mut all = vec![0.0; n];
    smooth(0, Guess::Zero, None, &mut all);
    let mut some = vec![f64::NAN; n];
    smooth(0, Guess::Zero, Some(&c), &mut some);
    for i in 0..n {
        let colour0 = (i % a.nx + (i % plane) / a.nx).is_multiple_of(2);
        match (relaxed(i), colour0) {
            (true, true) => assert_eq!(some[i].to_bits(), all[i].to_bits(), "cell {i}"),
            (true, false) => assert!(some[i].is_nan(), "cell {i}"),
            (false, _) => assert_eq!(some[i], 0.0, "cell {i}"),
        }
    }
    // A step that does not make this level is refused.
    let wrong = Coarsening::halve(a.nx, a.ny, a.nz);
    let mut x = vec![0.0; n];
    let relax = Relax {
        inv_pivots: &pivots,
        colour: 0,
        guess: Guess::Full,
        made_by: Some(&wrong),
    };
    assert!(be.mg_smooth(&a, relax, &b, &mut x).is_err());
}

#[test]
fn the_skipping_cycle_is_symmetric_and_positive_on_a_small_graded_grid() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(17);
    let mut a = matrix(&mut rng, (41, 37, 3));
    // Widths 1 over a middle band, growing by 1.25 a cell to 8 outside it.
    let widths = |n: usize| -> Vec<f64> {
        let d = |i: usize| (i as i32 - n as i32 / 2).unsigned_abs().saturating_sub(5);
        (0..n).map(|i| 1.25f64.powi(d(i) as i32).min(8.0)).collect()
    };
    (a.wx, a.wy) = (widths(a.nx), widths(a.ny));
    for cycle in [MgCycle::V, MgCycle::W] {
        let opts = MgOptions {
            cycle,
            ..MgOptions::default()
        };
        let mut m = Multigrid::new(&be, &a, &opts).unwrap();
        let r = m.mg_report().clone();
        assert_eq!(r.coarsening, "size_graded");
        let below = &r.levels[1..r.levels.len() - 1];
        assert!(below.len() >= 2, "{r:?}");
        // Some coarse level skips cells.
        assert!(
            below.iter().any(|l| l.relaxed_columns < l.nx * l.ny),
            "{r:?}"
        );
        assert_symmetric_positive(&mut m, &a, 3, &format!("{cycle:?}"));
    }
}

/// BENCHMARKS.md's git history, "Skipping unchanged cells": on every shipped graded
/// stack the same iterations as relaxing every cell (the one-cell halo
/// matters: without it the 24 mm package takes one more at 30 and 6 µm),
/// the same temperatures to the solver's tolerance, and less smoothing.
#[test]
fn skipping_costs_no_iterations_on_the_shipped_graded_stacks() {
    for rel in [
        "configs/hbm_2p5d.toml",
        "configs/hotspot_ev6_3d.toml",
        "benchmarks/inputs/die_on_spreader.toml",
        "benchmarks/inputs/die_on_spreader_24mm.toml",
    ] {
        let s = load(rel, None);
        assert!(s.plane_edges.is_some(), "{rel}: not a graded grid");
        let mut res = vec![];
        for skip in [true, false] {
            let mut o = mg_options(&s, 1e-8);
            o.precond_opts.mg.skip_unchanged = skip;
            assert_eq!(o.precond, PrecondKind::Multigrid);
            let out = solve_steady(&CpuBackend::new(), &s, &o).unwrap();
            assert!(out.summary.solver.converged, "{rel}");
            let r = out.summary.solver.precond.multigrid.clone().unwrap();
            res.push((
                out.summary.solver.iterations,
                r.relaxed_work(),
                out.temperature_k,
            ));
        }
        let [(is, ws, ts), (ia, wa, ta)] = [res.remove(0), res.remove(0)];
        let dt = ts
            .iter()
            .zip(&ta)
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        println!("{rel}: skipping {is} it, work {ws:.3}; every cell {ia} it, work {wa:.3}; max |dT| {dt:.1e} K");
        assert!(is <= ia, "{rel}: {is} against {ia} iterations");
        assert!(ws < wa, "{rel}: relaxed work {ws} against {wa}");
        assert!(dt < 1e-4, "{rel}: {dt} K");
    }
}

/// The batched cycle (`linalg::batch::mg`, `cuth sweep`) skips the same
/// cells: on a graded stack every batched case takes the iterations of its
/// own solve and matches its temperatures.
#[test]
fn batched_sweeps_on_a_graded_stack_equal_their_own_solves() {
    use cuth::stack::PowerSpec;
    use cuth::thermal::sweep::{run_worker, SweepBase, SweepCase, SweepJob};
    use cuth::thermal::sweep_batch::run_worker_batched;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let s = load("configs/hbm_2p5d.toml", None);
    let dies = s.layers.iter().position(|l| l.name == "dies").unwrap();
    let cases: Vec<SweepCase> = (0..3)
        .map(|i| SweepCase {
            name: format!("case{i}"),
            maps: Vec::new(),
            power: vec![(
                dies,
                PowerSpec::Uniform {
                    total: 20.0 + 15.0 * i as f64,
                },
            )],
        })
        .collect();
    let base = SweepBase::new(&s).unwrap();
    let opts = mg_options(&s, 1e-8);
    let run = |k: Option<usize>| {
        let cursor = AtomicUsize::new(0);
        let next = || Some(cursor.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < cases.len());
        let out = Mutex::new(Vec::new());
        let done = |r| out.lock().unwrap().push(r);
        let be = CpuBackend::new();
        let job = SweepJob {
            stack: &s,
            base: &base,
            opts: &opts,
            cases: &cases,
            keep_fields: true,
        };
        match k {
            Some(k) => {
                run_worker_batched(&be, job, k, &next, &done).unwrap();
            }
            None => run_worker(&be, job, &next, &done).unwrap(),
        }
        let mut v = out.into_inner().unwrap();
        v.sort_by_key(|r: &cuth::thermal::sweep::CaseResult| r.index);
        v
    };
    let (single, batched) = (run(None), run(Some(3)));
    for (b, o) in batched.iter().zip(&single) {
        let (b, o) = (b.outcome.as_ref().unwrap(), o.outcome.as_ref().unwrap());
        let (tb, to) = (&b.field.as_ref().unwrap().0, &o.field.as_ref().unwrap().0);
        let dt = tb
            .iter()
            .zip(to)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        println!(
            "batched {} it, single {} it, max |dT| {dt:.1e} K",
            b.iterations, o.iterations
        );
        assert_eq!(b.iterations, o.iterations);
        // (Relaxing every cell instead differs by ~7e-10 K: tolerance 1e-8.)
        assert!(dt < 1e-12, "{dt} K");
    }
}
