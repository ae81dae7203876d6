//! The geometric multigrid preconditioner (`--precond mg`) against
//! independent references: coarse operators against a dense PᵀAP with the
//! in-plane part rescaled and against the stack assembled on the half grid;
//! the cycle's symmetry and positivity; flat iteration counts on the shipped
//! stacks and a stress stack; temperatures equal to Chebyshev's (steady and
//! transient).

use crate::util as common;

use common::mg::{assert_symmetric_positive, dense, dense_parts, repo_path, system, Dense};
use common::{is_positive_definite, random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::mg::{coarsen, Coarsening, MgCycle, MgOptions, Multigrid};
use cuth::linalg::{PrecondKind, QuadDiag};
use cuth::power::layer_power;
use cuth::power::schedule::PowerSchedule;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use cuth::thermal::transient::{run_transient, InitState, StepView, TransientOptions};

/// A shipped stack on the uniform n × n grid.
fn load(rel: &str, n: usize) -> Stack {
    common::mg::load(rel, Some((n, n)))
}

/// Pᵀ M P for the 0/1 aggregation P of 2 × 2 columns (written here from
/// the coordinates, independently of `Coarsening::parent`).
fn galerkin(m: &Dense, (nx, ny, nz): (usize, usize, usize)) -> (Dense, usize, usize) {
    let (nxc, nyc) = (nx.div_ceil(2), ny.div_ceil(2));
    let nc = nxc * nyc * nz;
    let parent = |i: usize| {
        let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
        x / 2 + nxc * (y / 2 + nyc * z)
    };
    let mut c = vec![vec![0.0; nc]; nc];
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            c[parent(i)][parent(j)] += v;
        }
    }
    (c, nxc, nyc)
}

/// A Laplacian part with its off-diagonals scaled by 2/(w_I + w_J), where w
/// is the width (in fine cells, along `dir`) of each coarse cell.
fn rescaled(c: &Dense, width: impl Fn(usize) -> f64) -> Dense {
    let n = c.len();
    let mut out = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && c[i][j] != 0.0 {
                let v = c[i][j] * 2.0 / (width(i) + width(j));
                out[i][j] = v;
                out[i][i] -= v;
            }
        }
    }
    out
}

fn check_coarse_operator(a: &QuadDiag) {
    let (nx, ny, nz) = (a.nx, a.ny, a.nz);
    let c = Coarsening::halve(nx, ny, nz);
    let got = dense(&coarsen(a, &c));
    let [px, py, rest] = dense_parts(a);
    let (gx, nxc, nyc) = galerkin(&px, (nx, ny, nz));
    let (gy, _, _) = galerkin(&py, (nx, ny, nz));
    let (gr, _, _) = galerkin(&rest, (nx, ny, nz));
    let wx = |i: usize| if 2 * (i % nxc) + 1 < nx { 2.0 } else { 1.0 };
    let wy = |i: usize| {
        if 2 * ((i / nxc) % nyc) + 1 < ny {
            2.0
        } else {
            1.0
        }
    };
    let (ex, ey) = (rescaled(&gx, wx), rescaled(&gy, wy));
    let scale = got.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..got.len() {
        for j in 0..got.len() {
            let want = ex[i][j] + ey[i][j] + gr[i][j];
            assert!(
                (got[i][j] - want).abs() <= 1e-13 * scale,
                "{nx}x{ny}x{nz} entry ({i},{j}): {} vs {want}",
                got[i][j]
            );
        }
    }
    assert!(is_positive_definite(&got), "{nx}x{ny}x{nz} coarse not SPD");
}

#[test]
fn coarse_operator_is_the_rescaled_galerkin_product() {
    let mut rng = Rng::new(11);
    for dims in [(7, 5, 3), (6, 9, 2), (4, 4, 4), (9, 2, 3)] {
        let a = random_matrix(
            &mut rng,
            dims,
            |r| r.uniform(1.0, 1e4),
            |r, i| if i % 3 == 0 { r.uniform(0.0, 0.5) } else { 0.0 },
        );
        check_coarse_operator(&a);
    }
    // Material patches (the TSV strips of the HotSpot example), odd sizes;
    // its chip-size version, without absent cells (whose identity rows the
    // coarsening leaves out of their aggregates, unlike PᵀAP).
    let s = Stack::load(&repo_path("tests/data/hotspot_ev6_3d_chipsize.toml"))
        .unwrap()
        .with_grid(13, 11)
        .unwrap();
    let a = system(&s);
    assert!(a.gz.iter().any(|g| *g > 0.0));
    check_coarse_operator(&a);
}

#[test]
fn coarse_operator_of_uniform_layers_is_the_half_grid_stack() {
    for (rel, n) in [("configs/mol_f2f.toml", 32), ("configs/mol_f2f.toml", 10)] {
        let fine = system(&load(rel, n));
        let half = system(&load(rel, n / 2));
        let got = coarsen(&fine, &Coarsening::halve(n, n, fine.nz));
        let arrays = [
            ("d", &got.d, &half.d),
            ("gx", &got.gx, &half.gx),
            ("gy", &got.gy, &half.gy),
            ("gz", &got.gz, &half.gz),
            ("amb", &got.amb, &half.amb),
        ];
        for (name, g, h) in arrays {
            let scale = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (i, (x, y)) in g.iter().zip(h.iter()).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-12 * scale,
                    "{rel} {n}: {name}[{i}] {x} vs {y}"
                );
            }
        }
    }
}

#[test]
fn cycle_is_symmetric_and_positive() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(5);
    let random = random_matrix(
        &mut rng,
        (37, 23, 5),
        |r| r.uniform(1.0, 1e4),
        |r, i| {
            if i >= 37 * 23 * 4 {
                r.uniform(0.1, 1.0)
            } else {
                0.0
            }
        },
    );
    let hotspot = system(
        &Stack::load(&repo_path("configs/hotspot_ev6_3d.toml"))
            .unwrap()
            .with_grid(45, 33)
            .unwrap(),
    );
    for a in [&random, &hotspot] {
        for cycle in [MgCycle::V, MgCycle::W] {
            let opts = MgOptions {
                cycle,
                sweeps: 1,
                ..MgOptions::default()
            };
            let mut m = Multigrid::new(&be, a, &opts).unwrap();
            assert!(m.mg_report().levels.len() >= 3, "{:?}", m.mg_report());
            let what = format!("{cycle:?}");
            assert_symmetric_positive(&mut m, a, rng.next_u64(), &what);
        }
    }
}

fn solve(s: &Stack, kind: PrecondKind, mg: MgOptions, rtol: f64) -> (usize, Vec<f64>) {
    let mut o = SteadyOptions::from_stack(s, kind);
    o.precond = kind;
    o.rtol = rtol;
    o.precond_opts.mg = mg;
    let out = solve_steady(&CpuBackend::new(), s, &o).unwrap();
    (out.summary.solver.iterations, out.temperature_k)
}

#[test]
fn iterations_stay_flat_from_64_to_256() {
    let cases = [
        ("configs/mol_f2f.toml", 15),
        ("configs/hotspot_ev6_3d.toml", 15),
        ("tests/data/stress_mg/stress.toml", 25),
    ];
    for (rel, cap) in cases {
        let its: Vec<usize> = [64, 128, 256]
            .iter()
            .map(|&n| {
                solve(
                    &load(rel, n),
                    PrecondKind::Multigrid,
                    MgOptions::default(),
                    1e-8,
                )
                .0
            })
            .collect();
        println!("{rel}: mg iterations at 64², 128², 256²: {its:?}");
        let (lo, hi) = (its.iter().min().unwrap(), its.iter().max().unwrap());
        assert!(*hi <= cap, "{rel}: {its:?} above {cap}");
        assert!(*hi as f64 <= 1.5 * *lo as f64, "{rel}: {its:?} not flat");
    }
}

#[test]
fn mg_equals_chebyshev_in_steady_state() {
    for rel in [
        "configs/mol_f2f.toml",
        "configs/hotspot_ev6_3d.toml",
        "tests/data/stress_mg/stress.toml",
    ] {
        let s = load(rel, 48);
        let (_, t_mg) = solve(&s, PrecondKind::Multigrid, MgOptions::default(), 1e-11);
        let (_, t_ch) = solve(&s, PrecondKind::Chebyshev, MgOptions::default(), 1e-11);
        let d = t_mg
            .iter()
            .zip(&t_ch)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(d < 1e-6, "{rel}: mg and chebyshev differ by {d} K");
    }
}

#[test]
fn mg_equals_chebyshev_over_a_20_step_transient() {
    let s = load("configs/mol_f2f.toml", 32);
    let grid = Grid::from_stack(&s);
    let base: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(&s, &grid, l).unwrap())
        .collect();
    let run = |kind| {
        let mut solver = SteadyOptions::from_stack(&s, kind);
        solver.precond = kind;
        solver.rtol = 1e-11;
        let opts = TransientOptions {
            solver,
            dt: 1e-2,
            steps: 20,
            init: InitState::Ambient,
            snapshot_every: None,
            stepping: Default::default(),
        };
        let mut observe = |_: &StepView| Ok(());
        let sched = PowerSchedule::constant(base.clone());
        run_transient(&CpuBackend::new(), &s, &sched, &opts, &mut observe).unwrap()
    };
    let (mg, ch) = (run(PrecondKind::Multigrid), run(PrecondKind::Chebyshev));
    let d = mg
        .temperature_k
        .iter()
        .zip(&ch.temperature_k)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let rise = mg.temperature_k.iter().fold(0.0f64, |m, t| m.max(*t)) - 300.0;
    assert!(rise > 1.0, "the transient heats up ({rise} K)");
    assert!(d < 1e-6, "mg and chebyshev differ by {d} K after 20 steps");
    let (im, ic) = (mg.summary.iterations_total, ch.summary.iterations_total);
    println!("20 steps: mg {im} iterations, chebyshev {ic}");
    assert!(im < ic);
}

#[test]
fn mg_is_chosen_by_name_and_reported() {
    let text = std::fs::read_to_string(repo_path("configs/mol_f2f.toml")).unwrap()
        + "\n[solver]\nprecond = \"mg\"\n";
    let s = Stack::from_toml(&text, &repo_path("configs/mol_f2f.toml")).unwrap();
    assert_eq!(s.solver.precond, Some(PrecondKind::Multigrid));
    let out = solve_steady(
        &CpuBackend::new(),
        &s,
        &SteadyOptions::from_stack(&s, PrecondKind::Chebyshev),
    )
    .unwrap();
    let json = serde_json::to_value(&out.summary).unwrap();
    let p = &json["solver"]["precond"];
    assert_eq!(p["name"], "mg");
    let levels = p["multigrid"]["levels"].as_array().unwrap();
    assert_eq!(levels[0]["nx"], 64);
    assert_eq!(levels[1]["nx"], 32);
    assert_eq!(p["multigrid"]["cycle"], "V(1,1)");
    assert_eq!(p["multigrid"]["coarsening"], "halving");
    assert!(p["multigrid"]["hierarchy_bytes"].as_u64().unwrap() > 0);
}
