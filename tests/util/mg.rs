//! Multigrid test helpers shared by `solver::multigrid`, `solver::mg_graded`
//! and the GPU multigrid tests (`gpu::mg`, `gpu::mg_setup`):
//! paths of shipped stacks, the assembled system of a stack, a matrix as
//! dense parts (written independently of `linalg::mg`), and a mg solve on
//! the CPU against the same solve on the GPU. Then the checks of mg solves
//! written once over the backend (the CPU tests run them on the CPU, the
//! GPU tests on CUDA): flat iteration counts on the shipped stacks and a
//! stress stack, temperatures equal to Chebyshev's (steady and transient),
//! the shipped graded stacks in few iterations.

use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::mg::{MgOptions, Multigrid};
use cuth::linalg::{PrecondKind, Preconditioner, QuadDiag, QuadDiagOperator};
use cuth::power::layer_power;
use cuth::power::schedule::PowerSchedule;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions, SteadyOutcome};
use cuth::thermal::transient::{run_transient, InitState, StepView, TransientOptions};

pub type Dense = Vec<Vec<f64>>;

pub use super::repo_path;

/// A shipped stack, on an `nx × ny` uniform grid when given.
pub fn load(rel: &str, grid: Option<(usize, usize)>) -> Stack {
    let s = Stack::load(&repo_path(rel)).unwrap();
    match grid {
        Some((nx, ny)) => s.with_grid(nx, ny).unwrap(),
        None => s,
    }
}

/// The assembled system of `s` on the host.
pub fn system(s: &Stack) -> QuadDiag {
    let grid = cuth::grid::Grid::from_stack(s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(s, &grid, l).unwrap())
        .collect();
    cuth::assemble::assemble(s, &grid, &power).a
}

/// Steady options for a mg-preconditioned solve to `rtol`.
pub fn mg_options(s: &Stack, rtol: f64) -> SteadyOptions {
    let mut o = SteadyOptions::from_stack(s, PrecondKind::Multigrid);
    o.precond = PrecondKind::Multigrid;
    o.rtol = rtol;
    o
}

/// The matrix split by face direction: x faces, y faces, and the rest (z
/// faces and the coupling to ambient), each as a dense matrix.
pub fn dense_parts(a: &QuadDiag) -> [Dense; 3] {
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
pub fn dense(a: &QuadDiag) -> Dense {
    let [x, y, r] = dense_parts(a);
    (0..a.len())
        .map(|i| (0..a.len()).map(|j| x[i][j] + y[i][j] + r[i][j]).collect())
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Asserts that the preconditioner `m` of `a` is symmetric (⟨x, My⟩ =
/// ⟨Mx, y⟩ to 1e-12) and positive (⟨x, Mx⟩ > 0) on three random pairs.
pub fn assert_symmetric_positive(
    m: &mut Multigrid<CpuBackend>,
    a: &QuadDiag,
    seed: u64,
    what: &str,
) {
    let be = CpuBackend::new();
    let n = a.len();
    let mut op = QuadDiagOperator::new(&be, a, n);
    let mut apply = |v: &Vec<f64>| {
        let mut z = vec![f64::NAN; n];
        m.apply(&be, &mut op, v, &mut z).unwrap();
        z
    };
    let mut rng = super::Rng::new(seed);
    for _ in 0..3 {
        let (x, y) = (rng.vec(n, -1.0, 1.0), rng.vec(n, -1.0, 1.0));
        let (mx, my) = (apply(&x), apply(&y));
        let (xmy, mxy) = (dot(&x, &my), dot(&mx, &y));
        let scale = dot(&mx, &mx).sqrt() * dot(&y, &y).sqrt();
        assert!(
            (xmy - mxy).abs() <= 1e-12 * scale,
            "{what}: <x,My> {xmy} vs <Mx,y> {mxy}"
        );
        assert!(dot(&x, &mx) > 0.0, "{what}: not positive");
    }
}

/// Solves `s` with mg (rtol 1e-10) on the CPU and on the GPU; asserts the
/// same iterations (±1), the same absent (non-finite) cells and temperatures
/// within 1e-6 K elsewhere; returns (CPU, GPU).
pub fn mg_cpu_against_gpu(name: &str, s: &Stack) -> (SteadyOutcome, SteadyOutcome) {
    let o = mg_options(s, 1e-10);
    let c = solve_steady(&CpuBackend::new(), s, &o).unwrap();
    let g = solve_steady(super::gpu(), s, &o).unwrap();
    let (ic, ig) = (c.summary.solver.iterations, g.summary.solver.iterations);
    let (tc, tg) = (&c.temperature_k, &g.temperature_k);
    assert!(
        tc.iter()
            .zip(tg)
            .all(|(a, b)| a.is_finite() == b.is_finite()),
        "{name}: the absent cells differ"
    );
    let dt = tc
        .iter()
        .zip(tg)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("{name}: cpu {ic} it, cuda {ig} it, max |dT| {dt:.2e} K");
    assert!(ic.abs_diff(ig) <= 1, "{name}: iterations {ic} vs {ig}");
    assert!(dt < 1e-6, "{name}: {dt} K");
    (c, g)
}

fn solve<B: ThermalBackend + 'static>(
    be: &B,
    s: &Stack,
    kind: PrecondKind,
    mg: MgOptions,
    rtol: f64,
) -> (usize, Vec<f64>) {
    let mut o = SteadyOptions::from_stack(s, kind);
    o.precond = kind;
    o.rtol = rtol;
    o.precond_opts.mg = mg;
    let out = solve_steady(be, s, &o).unwrap();
    (out.summary.solver.iterations, out.temperature_k)
}

pub fn iterations_stay_flat_from_64_to_256<B: ThermalBackend + 'static>(be: &B) {
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
                    be,
                    &load(rel, Some((n, n))),
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

pub fn mg_equals_chebyshev_in_steady_state<B: ThermalBackend + 'static>(be: &B) {
    for rel in [
        "configs/mol_f2f.toml",
        "configs/hotspot_ev6_3d.toml",
        "tests/data/stress_mg/stress.toml",
    ] {
        let s = load(rel, Some((48, 48)));
        let (_, t_mg) = solve(be, &s, PrecondKind::Multigrid, MgOptions::default(), 1e-11);
        let (_, t_ch) = solve(be, &s, PrecondKind::Chebyshev, MgOptions::default(), 1e-11);
        let d = t_mg
            .iter()
            .zip(&t_ch)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(d < 1e-6, "{rel}: mg and chebyshev differ by {d} K");
    }
}

pub fn mg_equals_chebyshev_over_a_20_step_transient<B: ThermalBackend + 'static>(be: &B) {
    let s = load("configs/mol_f2f.toml", Some((32, 32)));
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
            step_field: Default::default(),
        };
        let mut observe = |_: &StepView| Ok(());
        let sched = PowerSchedule::constant(base.clone());
        run_transient(
            be,
            &s,
            &cuth::grid::Grid::from_stack(&s),
            &sched,
            &opts,
            &mut observe,
        )
        .unwrap()
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

/// Every shipped graded stack converges (rtol 1e-8) in at most 20 PCG
/// iterations with mg.
pub fn shipped_graded_stacks_converge_like_uniform_grids<B: ThermalBackend + 'static>(be: &B) {
    for rel in [
        "configs/hbm_2p5d.toml",
        "configs/hotspot_ev6_3d.toml",
        "benchmarks/inputs/die_on_spreader_24mm.toml",
    ] {
        let s = load(rel, None);
        assert!(s.plane_edges.is_some(), "{rel}: not a graded grid");
        let out = solve_steady(be, &s, &mg_options(&s, 1e-8)).unwrap();
        let it = out.summary.solver.iterations;
        println!("{rel}: {it} iterations");
        assert!(out.summary.solver.converged);
        assert!(it <= 20, "{rel}: {it} iterations");
    }
}

/// The shipped configs (`configs/*.toml`), sorted.
pub fn shipped_configs() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo_path("configs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

/// How far an f32-hierarchy solve may land from the f64 one: both stop at
/// ‖b − A x‖ ≤ rtol ‖b‖, so each is within ‖A⁻¹‖ rtol ‖b‖ of the answer;
/// ‖A⁻¹‖ ‖b‖ is bounded by the rise over ambient times the ratio of A's
/// largest to smallest eigenvalue along the smooth error a stopped PCG
/// leaves, ≤ 10³ on these stacks (f64 at rtol against f64 at 1e-13).
pub const RISE_FACTOR: f64 = 1e3;

/// Solves every shipped config at `n`² (or its own grid, where the
/// geometry fixes it) with the f64 hierarchy on
/// `reference` and the f32 one (`precision`) on `be`, to `rtol`: both reach
/// a true residual ≤ rtol, and the temperatures differ by at most
/// [`RISE_FACTOR`] · rtol · (largest rise over ambient). Prints the
/// iterations; returns (config, f64 iterations, f32 iterations).
pub fn f32_mg_agrees_with_f64<R: ThermalBackend + 'static, B: ThermalBackend + 'static>(
    reference: &R,
    be: &B,
    n: usize,
    rtol: f64,
    precision: cuth::linalg::mg::MgPrecision,
) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for path in shipped_configs() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // A stack whose grid is fixed by its geometry (a liquid cavity's
        // channels) keeps its own grid.
        let file = Stack::load(&path).unwrap();
        let s = file.clone().with_grid(n, n).unwrap_or(file);
        let o64 = mg_options(&s, rtol);
        let mut o32 = o64.clone();
        o32.precond_opts.mg.precision = precision;
        let r = solve_steady(reference, &s, &o64).unwrap();
        let l = solve_steady(be, &s, &o32).unwrap();
        let (sr, sl) = (&r.summary.solver, &l.summary.solver);
        for (what, sv) in [("f64", sr), ("f32", sl)] {
            assert!(
                sv.converged && sv.final_true_residual <= rtol,
                "{name} {what}: true residual {:e} after {} it",
                sv.final_true_residual,
                sv.iterations
            );
        }
        let amb = s.ambient_k;
        let rise = r
            .temperature_k
            .iter()
            .filter(|t| t.is_finite())
            .fold(0.0f64, |m, t| m.max(t - amb));
        let dt = r
            .temperature_k
            .iter()
            .zip(&l.temperature_k)
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        let g = Grid::from_stack(&s);
        println!(
            "{name} {}x{}: f64 {} it, f32 {} it (res {:.1e} / {:.1e}), max |dT| {dt:.2e} K of {rise:.1} K rise",
            g.nx, g.ny, sr.iterations, sl.iterations, sr.final_true_residual, sl.final_true_residual
        );
        assert!(
            dt <= RISE_FACTOR * rtol * rise,
            "{name}: |dT| {dt} K > {RISE_FACTOR} · {rtol} · {rise} K"
        );
        out.push((name, sr.iterations, sl.iterations));
    }
    out
}
