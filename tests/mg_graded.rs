//! Multigrid on graded (non-uniform) grids, against independent references:
//! the size-graded coarsening (`linalg::mg::plan_graded`) is a chain of
//! tensor-product aggregations of pairs and singles that merges the narrow
//! cells first and equals plain halving on equal widths; its coarse operator
//! equals the Galerkin product PᵀAP with in-plane faces scaled by the
//! centre-distance ratio, computed here densely from the aggregate starts;
//! the cycle on such a hierarchy is symmetric and positive; PCG iteration
//! counts on the shipped graded stacks stay at the uniform grid's level.

mod common;

use common::{random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::mg::{coarsen, plan, plan_graded, Coarsening, MgOptions, Multigrid};
use cuth::linalg::{PrecondKind, Preconditioner, QuadDiag, QuadDiagOperator};
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use std::path::Path;

type Dense = Vec<Vec<f64>>;

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

/// Dense A split into its x part, its y part and the rest (z, ambient).
fn dense_parts(a: &QuadDiag) -> [Dense; 3] {
    let n = a.len();
    let (nx, plane) = (a.nx, a.nx * a.ny);
    let mut parts = [
        vec![vec![0.0; n]; n],
        vec![vec![0.0; n]; n],
        vec![vec![0.0; n]; n],
    ];
    let mut couple = |p: usize, i: usize, j: usize, g: f64| {
        let m = &mut parts[p];
        m[i][j] -= g;
        m[j][i] -= g;
        m[i][i] += g;
        m[j][j] += g;
    };
    for i in 0..n {
        if i % nx + 1 < nx {
            couple(0, i, i + 1, a.gx[i]);
        }
        if (i % plane) / nx + 1 < a.ny {
            couple(1, i, i + nx, a.gy[i]);
        }
        if i + plane < n {
            couple(2, i, i + plane, a.gz[i]);
        }
    }
    for (i, row) in parts[2].iter_mut().enumerate() {
        row[i] += a.amb[i];
    }
    parts
}

/// The whole of A, dense.
fn dense(a: &QuadDiag) -> Dense {
    let [x, y, r] = dense_parts(a);
    (0..a.len())
        .map(|i| (0..a.len()).map(|j| x[i][j] + y[i][j] + r[i][j]).collect())
        .collect()
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
    let s = Stack::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    assert!(s.plane_widths.is_some(), "{rel}: not a graded grid");
    s
}

#[test]
fn graded_cycle_is_symmetric_and_positive() {
    let s = shipped("configs/hbm_2p5d.toml");
    let grid = cuth::grid::Grid::from_stack(&s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(&s, &grid, l).unwrap())
        .collect();
    let a = cuth::assemble::assemble(&s, &grid, &power).a;
    let be = CpuBackend::new();
    let mut m = Multigrid::new(&be, &a, &MgOptions::default()).unwrap();
    assert_eq!(m.mg_report().coarsening, "size_graded");
    let levels = &m.mg_report().levels;
    // Size-graded: the first step is not a plain halving.
    assert!(levels[1].nx != a.nx.div_ceil(2) || levels[1].ny != a.ny.div_ceil(2));
    let n = a.len();
    let mut op = QuadDiagOperator::new(&be, &a, n);
    let mut rng = Rng::new(9);
    let dot = |u: &[f64], v: &[f64]| -> f64 { u.iter().zip(v).map(|(a, b)| a * b).sum() };
    for _ in 0..3 {
        let (x, y) = (rng.vec(n, -1.0, 1.0), rng.vec(n, -1.0, 1.0));
        let mut mx = vec![f64::NAN; n];
        let mut my = vec![f64::NAN; n];
        m.apply(&be, &mut op, &x, &mut mx).unwrap();
        m.apply(&be, &mut op, &y, &mut my).unwrap();
        let (xmy, mxy) = (dot(&x, &my), dot(&mx, &y));
        let scale = dot(&mx, &mx).sqrt() * dot(&y, &y).sqrt();
        assert!((xmy - mxy).abs() <= 1e-12 * scale, "{xmy} vs {mxy}");
        assert!(dot(&x, &mx) > 0.0);
    }
}

/// Before the size-graded coarsening these took 94–132 PCG iterations
/// (BENCHMARKS.md, "Packages"); the uniform grid of the same geometry 10.
#[test]
fn shipped_graded_stacks_converge_like_uniform_grids() {
    for rel in [
        "configs/hbm_2p5d.toml",
        "configs/hotspot_ev6_3d.toml",
        "benchmarks/package/die_on_spreader_24mm.toml",
    ] {
        let s = shipped(rel);
        let mut o = SteadyOptions::from_stack(&s, PrecondKind::Multigrid);
        o.precond = PrecondKind::Multigrid;
        o.rtol = 1e-8;
        let out = solve_steady(&CpuBackend::new(), &s, &o).unwrap();
        let it = out.summary.solver.iterations;
        println!("{rel}: {it} iterations");
        assert!(out.summary.solver.converged);
        assert!(it <= 20, "{rel}: {it} iterations");
    }
}
