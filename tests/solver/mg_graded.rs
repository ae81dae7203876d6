//! Multigrid on graded (non-uniform) grids, against independent references:
//! the size-graded coarsening (`linalg::mg::plan_graded`) is a chain of
//! tensor-product aggregations of pairs and singles that merges the narrow
//! cells first and equals plain halving on equal widths; its coarse operator
//! equals the Galerkin product PᵀAP with in-plane faces scaled by the
//! centre-distance ratio, computed here densely from the aggregate starts;
//! the cycle on such a hierarchy (whose coarse levels relax only the cells
//! near a change, tests/solver/mg_skip.rs) is symmetric and positive; PCG
//! iteration counts and smoothing work on the shipped graded stacks stay
//! near the uniform grid's.

use crate::util as common;

use common::mg::{
    self, assert_symmetric_positive, dense, dense_parts, load, mg_options, system, Dense,
};
use common::{random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::mg::{
    coarsen, plan, plan_graded, Coarsening, LevelReport, MgOptions, MgReport, Multigrid,
};
use cuth::stack::Stack;
use cuth::thermal::steady::solve_steady;

/// One axis: 16 cells of width 1 (a die) between cells growing by 1.2 up
/// to 8 (the overhang), as the mesher makes them.
fn graded_axis() -> Vec<f64> {
    let mut grow = vec![];
    let mut w: f64 = 1.2;
    while w < 8.0 {
        grow.push(w);
        w *= 1.2;
    }
    let mut axis: Vec<f64> = vec![8.0; 6];
    axis.extend(grow.iter().rev());
    axis.extend([1.0; 16]);
    axis.extend(&grow);
    axis.extend([8.0; 9]);
    axis
}

fn check_starts(s: &[usize], n: usize) {
    assert_eq!((s[0], *s.last().unwrap()), (0, n));
    assert!(
        s.windows(2).all(|p| p[1] > p[0] && p[1] - p[0] <= 2),
        "{s:?}"
    );
}

#[test]
fn graded_plan_merges_narrow_cells_first_and_ends_uniform() {
    let w = graded_axis();
    let steps = plan_graded(&w, &w, 4);
    assert!(steps.len() >= 3, "{}", steps.len());
    let mut widths = w.clone();
    for (l, c) in steps.iter().enumerate() {
        check_starts(&c.xstart, c.nx);
        check_starts(&c.ystart, c.ny);
        // Maps consistent with the starts.
        for (k, r) in c.xstart.windows(2).enumerate() {
            assert!((r[0]..r[1]).all(|x| c.xmap[x] == k));
        }
        let next: Vec<f64> = c
            .xstart
            .windows(2)
            .map(|r| widths[r[0]..r[1]].iter().sum())
            .collect();
        if l == 0 {
            // The first step pairs the die's cells and leaves the overhang.
            let die = widths.iter().position(|&v| v == 1.0).unwrap();
            assert_eq!(c.xmap[die], c.xmap[die + 1]);
            assert!(c
                .xstart
                .windows(2)
                .all(|r| r[1] - r[0] == 1 || widths[r[0]] < 8.0));
        }
        widths = next;
    }
    // Once the die's cells have caught up, the level is close to uniform.
    let k = steps.iter().position(|c| c.nxc <= 30).unwrap();
    let lvl: Vec<f64> = (0..=k).fold(w.clone(), |ws, l| {
        let c = &steps[l];
        c.xstart
            .windows(2)
            .map(|r| ws[r[0]..r[1]].iter().sum())
            .collect()
    });
    let (lo, hi) = lvl
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(hi / lo <= 3.0, "level {k}: widths {lvl:?}");
}

#[test]
fn graded_plan_of_equal_widths_is_halving() {
    for (nx, ny, nz) in [(64, 64, 3), (37, 23, 5), (1, 300, 2), (100, 7, 1)] {
        let (wx, wy) = (vec![2.5e-5; nx], vec![2.5e-5; ny]);
        assert_eq!(plan_graded(&wx, &wy, nz), plan(nx, ny, nz), "{nx}x{ny}");
    }
}

#[test]
fn graded_coarse_operator_is_the_rescaled_galerkin_product() {
    let mut rng = Rng::new(23);
    let (nx, ny, nz) = (11, 9, 3);
    let mut a = random_matrix(
        &mut rng,
        (nx, ny, nz),
        |r| r.uniform(1.0, 1e3),
        |r, i| {
            if i >= nx * ny * 2 {
                r.uniform(0.1, 1.0)
            } else {
                0.0
            }
        },
    );
    a.wx = (0..nx).map(|_| rng.uniform(0.2, 3.0)).collect();
    a.wy = (0..ny).map(|_| rng.uniform(0.2, 3.0)).collect();
    let (xs, ys) = (vec![0, 1, 3, 4, 6, 8, 9, 11], vec![0, 2, 3, 5, 6, 7, 9]);
    let c = Coarsening::from_starts(nz, xs.clone(), ys.clone());
    let got = dense(&coarsen(&a, &c));
    // Independent aggregation from the starts.
    let owner = |s: &[usize], v: usize| {
        s.windows(2)
            .position(|r| (r[0]..r[1]).contains(&v))
            .unwrap()
    };
    let (nxc, nyc) = (xs.len() - 1, ys.len() - 1);
    let parent = |i: usize| {
        let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
        owner(&xs, x) + nxc * (owner(&ys, y) + nyc * z)
    };
    let nc = nxc * nyc * nz;
    let galerkin = |m: &Dense| -> Dense {
        let mut out = vec![vec![0.0; nc]; nc];
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                out[parent(i)][parent(j)] += v;
            }
        }
        out
    };
    let [px, py, rest] = dense_parts(&a);
    let (gx, gy, mut want) = (galerkin(&px), galerkin(&py), galerkin(&rest));
    // In-plane coarse faces: × (w′ₗ + w′ᵣ)/(Wₗ + Wᵣ), fine widths at the face over
    // the coarse widths (sums of the children).
    let ratio = |w: &[f64], s: &[usize], k: usize| {
        let wc = |k: usize| -> f64 { w[s[k]..s[k + 1]].iter().sum() };
        (w[s[k + 1] - 1] + w[s[k + 1]]) / (wc(k) + wc(k + 1))
    };
    for i in 0..nc {
        let (xc, yc) = (i % nxc, (i / nxc) % nyc);
        for (g, j, f) in [
            (&gx, i + 1, (xc + 1 < nxc).then(|| ratio(&a.wx, &xs, xc))),
            (&gy, i + nxc, (yc + 1 < nyc).then(|| ratio(&a.wy, &ys, yc))),
        ] {
            if let Some(f) = f {
                let v = g[i][j] * f;
                want[i][j] += v;
                want[j][i] += v;
                want[i][i] -= v;
                want[j][j] -= v;
            }
        }
    }
    let scale = got.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..nc {
        for j in 0..nc {
            assert!(
                (got[i][j] - want[i][j]).abs() <= 1e-13 * scale,
                "({i},{j}): {} vs {}",
                got[i][j],
                want[i][j]
            );
        }
    }
}

fn shipped(rel: &str) -> Stack {
    let s = load(rel, None);
    assert!(s.plane_edges.is_some(), "{rel}: not a graded grid");
    s
}

#[test]
fn graded_cycle_is_symmetric_and_positive() {
    let s = shipped("configs/hbm_2p5d.toml");
    let a = system(&s);
    let be = CpuBackend::new();
    let mut m = Multigrid::new(&be, &a, &MgOptions::default()).unwrap();
    assert_eq!(m.mg_report().coarsening, "size_graded");
    let levels = &m.mg_report().levels;
    // Size-graded: the first step is not a plain halving.
    assert!(levels[1].nx != a.nx.div_ceil(2) || levels[1].ny != a.ny.div_ceil(2));
    // Its coarse levels relax only the cells near a change (tests/solver/mg_skip.rs).
    assert!(levels[1..].iter().any(|l| l.relaxed_columns < l.nx * l.ny));
    assert_symmetric_positive(&mut m, &a, 9, "hbm_2p5d");
}

/// Before the size-graded coarsening these took 94–132 PCG iterations
/// (BENCHMARKS.md's git history, "Packages"); the uniform grid of the same geometry 10.
#[test]
fn shipped_graded_stacks_converge_like_uniform_grids() {
    mg::shipped_graded_stacks_converge_like_uniform_grids(&CpuBackend::new());
}

/// Cells of every level over the fine level's, from the report.
fn level_work(r: &MgReport) -> f64 {
    let cells = |l: &LevelReport| (l.nx * l.ny * l.nz) as f64;
    r.levels.iter().map(cells).sum::<f64>() / cells(&r.levels[0])
}

/// The per-cell cost of a graded grid, at two resolutions of the 24 mm package:
/// the graded grid against the uniform grid of the same cell count, solved
/// here. The cycle's work (cells over all levels) is measured at 1.97–2.04
/// of the fine level against 1.33 for halving (the overhang's wide cells
/// stay single while the die's catch up; BENCHMARKS.md's git history, "Graded
/// grids against uniform ones"), iterations at +4 (14 against 10); the bounds
/// catch a hierarchy or a cycle that gets worse than that. Each level's
/// memory is 56 bytes a cell below the coarsest (amb released).
#[test]
fn graded_hierarchy_and_iterations_stay_near_the_uniform_grid() {
    let text = std::fs::read_to_string(common::mg::repo_path(
        "benchmarks/inputs/die_on_spreader_24mm.toml",
    ))
    .unwrap();
    assert!(text.contains("cell = \"50 um\""));
    for cell in ["100 um", "50 um"] {
        let g = common::stack(&text.replace("cell = \"50 um\"", &format!("cell = \"{cell}\"")));
        assert!(g.plane_edges.is_some());
        let grid = cuth::grid::Grid::from_stack(&g);
        let u = g.clone().with_grid(grid.nx, grid.ny).unwrap();
        let mut res = vec![];
        for s in [&g, &u] {
            let out = solve_steady(&CpuBackend::new(), s, &mg_options(s, 1e-8)).unwrap();
            assert!(out.summary.solver.converged);
            let r = out
                .summary
                .solver
                .precond
                .multigrid
                .clone()
                .expect("mg report");
            let n = r.levels[0].nx * r.levels[0].ny * r.levels[0].nz;
            assert_eq!(
                n,
                grid.nx * grid.ny * grid.nz,
                "{cell}: the same cell count"
            );
            // Below the finest and above the coarsest: d, gx, gy, gz, pivots, b, x.
            for l in &r.levels[1..r.levels.len() - 1] {
                assert_eq!(l.memory_bytes, 56 * (l.nx * l.ny * l.nz) as u64);
                // Halving relaxes every column; a graded level skips some.
                match r.coarsening {
                    "halving" => assert_eq!(l.relaxed_columns, l.nx * l.ny),
                    _ => assert!(l.relaxed_columns <= l.nx * l.ny),
                }
            }
            assert_eq!(r.levels.last().unwrap().relaxed_columns, 0);
            let w = (level_work(&r), r.relaxed_work());
            res.push((out.summary.solver.iterations, w, r.coarsening));
        }
        let [(ig, (wg, rg), cg), (iu, (wu, ru), cu)] = [res[0], res[1]];
        println!(
            "{cell}: graded {ig} it, work {wg:.3}, relaxed {rg:.3}; \
             uniform {iu} it, work {wu:.3}, relaxed {ru:.3}"
        );
        assert_eq!((cg, cu), ("size_graded", "halving"));
        assert!(ig <= iu + 5, "{cell}: {ig} against {iu} iterations");
        assert!(wg <= 1.6 * wu, "{cell}: level work {wg} against {wu}");
        // Measured 1.66 and 1.65 against 1.31 and 1.33 (from 1.97 and 2.00
        // before the coarse levels skipped unchanged cells).
        assert!(rg <= 1.3 * ru, "{cell}: relaxed work {rg} against {ru}");
    }
}
