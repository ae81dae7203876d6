//! CUDA backend against the CPU reference. Every test is `#[ignore]`d (CI has
//! no GPU); run them on a GPU machine with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 backend::
//! ```
//!
//! (Every kernel family's NVRTC compile is `tests/solver/kernels_nvrtc.rs`, run by
//! CI without a GPU.) The checks:
//! (a) each kernel on random Quad-Diag matrices whose sizes are not multiples
//! of the block size, outputs poisoned with NaN and checked fully written;
//! (b) PCG with every preconditioner; (c) the steady solve of
//! `configs/mol_f2f.toml` at 256×256. Each prints one line per check.

use crate::util::{gpu, mol_f2f, random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::QdSchedule;
use cuth::backend::{Backend, CgStep, ChebWork, ChebyshevBackend, QuadDiagOps, Ratio};
use cuth::linalg::{
    build_precond, pcg, CgParams, PrecondKind, PrecondOptions, QuadDiag, QuadDiagOperator, Stop,
};

/// Grids with n not a multiple of 256 (7·5·3 = 105, 33·17·5 = 2805,
/// 129·65·9 = 75465), and one (257·255·11 ≈ 7.2e5 rows) larger than the
/// reduction grid of an H200 × 256 threads, so reductions loop grid-stride.
const SIZES: [(usize, usize, usize); 4] = [(7, 5, 3), (33, 17, 5), (129, 65, 9), (257, 255, 11)];

/// max |a − b| / max |b|, after checking that `a` holds no NaN (every row
/// written over the NaN poison).
fn rel_err(what: &str, gpu: &[f64], cpu: &[f64]) -> f64 {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    let unwritten = gpu.iter().filter(|v| v.is_nan()).count();
    assert_eq!(
        unwritten, 0,
        "{what}: {unwritten} rows left unwritten (NaN)"
    );
    let scale = cpu
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    gpu.iter()
        .zip(cpu)
        .fold(0.0f64, |m, (g, c)| m.max((g - c).abs()))
        / scale
}

/// The thread schedule the matrix kernels run in on the shared backend.
fn schedule() -> &'static str {
    gpu().schedule().name()
}

/// Runs `f` once per thread schedule of the matrix kernels, then restores
/// the default.
fn for_each_schedule(mut f: impl FnMut()) {
    for s in [QdSchedule::Rows, QdSchedule::Columns] {
        gpu().set_schedule(s);
        f();
    }
    gpu().set_schedule(QdSchedule::Auto);
}

fn check(kernel: &str, dims: (usize, usize, usize), outs: &[(&str, &[f64], &[f64], f64)]) {
    let n = dims.0 * dims.1 * dims.2;
    for &(name, g, c, tol) in outs {
        let e = rel_err(&format!("{kernel} {name}"), g, c);
        let ok = e <= tol;
        println!(
            "{kernel:<20} {:<7} {:>3}x{:<3}x{:<2} n={n:<6} {name:<6} rel err {e:.2e} (tol {tol:.0e}) {}",
            schedule(),
            dims.0,
            dims.1,
            dims.2,
            if ok { "ok" } else { "FAIL" }
        );
        assert!(ok, "{kernel} {name}: rel err {e:e} > {tol:e} at {dims:?}");
    }
}

/// A reduction's result against the CPU's, relative to `scale` = Σ|terms|
/// (summation orders differ, so this is the meaningful yardstick when terms
/// cancel).
fn scalar_err(kernel: &str, dims: (usize, usize, usize), g: f64, c: f64, scale: f64, tol: f64) {
    let scale = scale.max(f64::MIN_POSITIVE);
    check(kernel, dims, &[("s[out]", &[g / scale], &[c / scale], tol)]);
}

/// Σ |x_i y_i|.
fn abs_dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a * b).abs()).sum()
}

const NAN: f64 = f64::NAN;

/// The inputs every kernel test draws from.
struct Case {
    dims: (usize, usize, usize),
    a: QuadDiag,
    v: [Vec<f64>; 4],
}

fn cases(seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    SIZES
        .iter()
        .map(|&dims| {
            let a = random_matrix(
                &mut rng,
                dims,
                |r| r.uniform(10.0, 1000.0),
                |r, _| r.uniform(0.5, 1.5),
            );
            let n = a.len();
            let v = [(); 4].map(|_| rng.vec(n, -1.0, 1.0));
            Case { dims, a, v }
        })
        .collect()
}

/// y = A x and its fused variants, run on backend `be`; returns the outputs
/// and the scalar buffer. Write-only outputs start as NaN.
fn quad_diag_ops<V, B: QuadDiagOps<Vector = V, Scalars = V>>(
    be: &B,
    c: &Case,
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let n = c.a.len();
    let a = be.upload_matrix(&c.a).unwrap();
    let x = be.upload(&c.v[0]).unwrap();
    let b = be.upload(&c.v[1]).unwrap();
    let poison = vec![NAN; n];
    let mut y = be.upload(&poison).unwrap();
    let mut q = be.upload(&poison).unwrap();
    let mut r = be.upload(&poison).unwrap();
    let mut s = be.upload(&[NAN; 4]).unwrap();
    be.spmv(&a, &x, &mut y).unwrap();
    be.spmv_dot(&a, &x, &mut q, &mut s, 1).unwrap();
    be.residual(&a, &b, &x, &mut r, &mut s, 3).unwrap();
    let outs = [&y, &q, &r].map(|v| be.download(v).unwrap()).to_vec();
    (outs, be.read_scalars(&s).unwrap())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn quad_diag_kernels_match_cpu() {
    for c in cases(1) {
        let (h, hs) = quad_diag_ops(&CpuBackend::new(), &c);
        for_each_schedule(|| {
            let (g, gs) = quad_diag_ops(gpu(), &c);
            check("qd_spmv_f64", c.dims, &[("y", &g[0], &h[0], 1e-14)]);
            check("qd_spmv_dot_f64", c.dims, &[("q", &g[1], &h[1], 1e-14)]);
            let scale = abs_dot(&c.v[0], &h[1]);
            scalar_err("qd_spmv_dot_f64", c.dims, gs[1], hs[1], scale, 1e-13);
            check("qd_residual_f64", c.dims, &[("r", &g[2], &h[2], 1e-14)]);
            scalar_err("qd_residual_f64", c.dims, gs[3], hs[3], hs[3], 1e-13);
            // Slots the kernels do not own stay untouched.
            assert!(gs[0].is_nan() && gs[2].is_nan(), "stray write to s: {gs:?}");
        });
    }
}

/// dot, cg_update (α from slots, and α = 0 when the denominator is 0), xpay,
/// axpby and jacobi (divide by A's diagonal) on backend `be`.
fn blas1_ops<V, B: QuadDiagOps<Vector = V, Scalars = V>>(be: &B, c: &Case) -> Vec<Vec<f64>> {
    let n = c.a.len();
    let a = be.upload_matrix(&c.a).unwrap();
    let [p, q, x0, r0] = c.v.each_ref().map(|v| be.upload(v).unwrap());
    // s = [dot, num, den, r·r, zero, r·r(α=0)]
    let mut s = be.upload(&[NAN, 0.37, 1.9, NAN, 0.0, NAN]).unwrap();
    be.dot(&p, &q, &mut s, 0).unwrap();
    let (mut x, mut r) = (x0, r0);
    let step = CgStep {
        p: &p,
        q: &q,
        x: &mut x,
        r: &mut r,
    };
    be.cg_update(Ratio { num: 1, den: 2 }, step, &mut s, 3)
        .unwrap();
    let (mut x2, mut r2) = (be.upload(&c.v[2]).unwrap(), be.upload(&c.v[3]).unwrap());
    let step = CgStep {
        p: &p,
        q: &q,
        x: &mut x2,
        r: &mut r2,
    };
    be.cg_update(Ratio { num: 1, den: 4 }, step, &mut s, 5)
        .unwrap();
    let mut pp = be.upload(&c.v[0]).unwrap();
    be.xpay(Ratio { num: 1, den: 2 }, &q, &mut pp, &s).unwrap();
    let mut z = be.upload(&vec![NAN; n]).unwrap();
    be.jacobi(&a, &p, &mut z).unwrap();
    // y = α x + β y, and with β = 0 over a NaN-poisoned y (not read).
    let mut y = be.upload(&c.v[1]).unwrap();
    be.axpby(0.75, &p, -1.25, &mut y).unwrap();
    let mut y0 = be.upload(&vec![NAN; n]).unwrap();
    be.axpby(-0.5, &p, 0.0, &mut y0).unwrap();
    let mut out: Vec<Vec<f64>> = [&x, &r, &x2, &r2, &pp, &z, &y, &y0]
        .map(|v| be.download(v).unwrap())
        .to_vec();
    out.push(be.read_scalars(&s).unwrap());
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blas1_kernels_match_cpu() {
    for c in cases(2) {
        let g = blas1_ops(gpu(), &c);
        let h = blas1_ops(&CpuBackend::new(), &c);
        let (gs, hs) = (&g[8], &h[8]);
        let scale = abs_dot(&c.v[0], &c.v[1]);
        scalar_err("blas1_dot_f64", c.dims, gs[0], hs[0], scale, 1e-13);
        check(
            "blas1_cg_update_f64",
            c.dims,
            &[("x", &g[0], &h[0], 1e-15), ("r", &g[1], &h[1], 1e-15)],
        );
        scalar_err("blas1_cg_update_f64", c.dims, gs[3], hs[3], hs[3], 1e-13);
        // α = s[1]/s[4] with s[4] = 0 must be 0: x and r unchanged.
        check(
            "cg_update(den=0)",
            c.dims,
            &[("x", &g[2], &c.v[2], 0.0), ("r", &g[3], &c.v[3], 0.0)],
        );
        scalar_err("cg_update(den=0)", c.dims, gs[5], hs[5], hs[5], 1e-13);
        check("blas1_xpay_f64", c.dims, &[("p", &g[4], &h[4], 1e-15)]);
        check("blas1_divide_f64", c.dims, &[("z", &g[5], &h[5], 1e-15)]);
        check(
            "blas1_axpby_f64",
            c.dims,
            &[("y", &g[6], &h[6], 1e-15), ("y(β=0)", &g[7], &h[7], 1e-15)],
        );
    }
}

/// cheb_init then two cheb_steps (swapping d and d_next) on backend `be`.
fn chebyshev_ops<B: ChebyshevBackend>(be: &B, c: &Case) -> Vec<Vec<f64>> {
    let n = c.a.len();
    let a = be.upload_matrix(&c.a).unwrap();
    let r = be.upload(&c.v[0]).unwrap();
    let poison = vec![NAN; n];
    let [res, d, d_next, mut z] = [(); 4].map(|_| be.upload(&poison).unwrap());
    let mut w = ChebWork {
        res,
        d,
        d_next,
        zhat: None,
    };
    be.cheb_init(be.diagonal(&a), 0.7, &r, &mut w, &mut z)
        .unwrap();
    let mut out: Vec<Vec<f64>> = [&w.res, &w.d, &z].map(|v| be.download(v).unwrap()).to_vec();
    for (alpha, beta) in [(0.3, 1.1), (0.45, 0.9)] {
        be.cheb_step(&a, alpha, beta, &mut w, &mut z).unwrap();
        std::mem::swap(&mut w.d, &mut w.d_next);
        out.extend([&w.res, &w.d, &z].map(|v| be.download(v).unwrap()));
    }
    out
}

/// The matrix-free later step (`cheb_update`, after q = A d) equals the
/// Quad-Diag fused one on the same data, on backend `be`.
fn cheb_update_ops<B: ChebyshevBackend>(be: &B, c: &Case) -> [Vec<f64>; 3] {
    let a = be.upload_matrix(&c.a).unwrap();
    let mut w = ChebWork {
        res: be.upload(&c.v[0]).unwrap(),
        d: be.upload(&c.v[1]).unwrap(),
        d_next: be.upload(&vec![NAN; c.a.len()]).unwrap(),
        zhat: None,
    };
    let mut z = be.upload(&c.v[2]).unwrap();
    let mut q = be.zeros(c.a.len()).unwrap();
    be.spmv(&a, &w.d, &mut q).unwrap();
    be.cheb_update(&q, be.diagonal(&a), 0.3, 1.1, &mut w, &mut z)
        .unwrap();
    [&w.res, &w.d_next, &z].map(|v| be.download(v).unwrap())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cheb_update_kernel_matches_cpu() {
    for c in cases(5) {
        let g = cheb_update_ops(gpu(), &c);
        let h = cheb_update_ops(&CpuBackend::new(), &c);
        let outs: Vec<_> = ["res", "d_next", "z"]
            .iter()
            .enumerate()
            .map(|(k, name)| (*name, &g[k][..], &h[k][..], 1e-13))
            .collect();
        check("cheb_update_f64", c.dims, &outs);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chebyshev_kernels_match_cpu() {
    for c in cases(3) {
        let h = chebyshev_ops(&CpuBackend::new(), &c);
        for_each_schedule(|| {
            let g = chebyshev_ops(gpu(), &c);
            let names = ["res", "d", "z"];
            for (step, kernel) in ["cheb_init_f64", "cheb_step_f64 #1", "cheb_step_f64 #2"]
                .iter()
                .enumerate()
            {
                let outs: Vec<_> = (0..3)
                    .map(|k| (names[k], &g[3 * step + k][..], &h[3 * step + k][..], 1e-13))
                    .collect();
                check(kernel, c.dims, &outs);
            }
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reductions_are_deterministic() {
    let c = &cases(4)[3];
    let be = gpu();
    let a = be.upload_matrix(&c.a).unwrap();
    let (p, x) = (be.upload(&c.v[0]).unwrap(), be.upload(&c.v[1]).unwrap());
    let mut q = be.zeros(c.a.len()).unwrap();
    let mut s = be.scalars(2).unwrap();
    for_each_schedule(|| {
        let mut first = None;
        for _ in 0..20 {
            be.dot(&p, &x, &mut s, 0).unwrap();
            be.spmv_dot(&a, &p, &mut q, &mut s, 1).unwrap();
            let v = be.read_scalars(&s).unwrap();
            assert_eq!(
                *first.get_or_insert(v.clone()),
                v,
                "reductions differ between runs"
            );
        }
        println!(
            "blas1_dot_f64, qd_spmv_dot_f64 {:<7} n={}: 20 runs bitwise equal",
            schedule(),
            c.a.len()
        );
    });
}

/// Solves A x = b with `kind` on `be`; returns x and the iteration count.
fn solve<B: ChebyshevBackend + 'static>(
    be: &B,
    a: &QuadDiag,
    b: &[f64],
    kind: PrecondKind,
) -> (Vec<f64>, usize) {
    let am = be.upload_matrix(a).unwrap();
    let bv = be.upload(b).unwrap();
    let mut x = be.zeros(a.len()).unwrap();
    let mut op = QuadDiagOperator::new(be, &am, a.len());
    let mut m = build_precond(kind, be, &mut op, Some(a), &PrecondOptions::default()).unwrap();
    let params = CgParams {
        stop: Stop::relative(1e-10),
        max_iter: 20_000,
        check_every: 1,
        ..CgParams::default()
    };
    let info = pcg(be, &mut op, m.as_mut(), &bv, &mut x, &params).unwrap();
    (be.download(&x).unwrap(), info.iterations)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pcg_matches_cpu_with_every_preconditioner() {
    let mut rng = Rng::new(5);
    for dims in [(33, 17, 5), (129, 65, 9)] {
        // Weak diagonal surplus (a weak film to ambient) as in the real
        // systems, so that CG needs a fair number of iterations.
        let a = random_matrix(
            &mut rng,
            dims,
            |r| r.uniform(10.0, 1000.0),
            |r, _| 1e-2 * r.uniform(0.5, 1.5),
        );
        let b = rng.vec(a.len(), 0.0, 1.0);
        for kind in [
            PrecondKind::None,
            PrecondKind::Jacobi,
            PrecondKind::Chebyshev,
        ] {
            let (xc, ic) = solve(&CpuBackend::new(), &a, &b, kind);
            for_each_schedule(|| {
                let (xg, ig) = solve(gpu(), &a, &b, kind);
                let e = rel_err("pcg x", &xg, &xc);
                println!(
                    "pcg {:<10} {:<7} {:>3}x{:<3}x{:<2} iterations gpu {ig} cpu {ic}, x rel diff {e:.2e}",
                    kind.name(),
                    schedule(),
                    dims.0,
                    dims.1,
                    dims.2
                );
                assert!(e < 1e-8, "{} x differs by {e:e}", kind.name());
                // Rounding differs (summation order), so counts may drift a little.
                assert!(
                    ig.abs_diff(ic) <= 2 + ic / 50,
                    "{}: {ig} vs {ic} iterations",
                    kind.name()
                );
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn steady_mol_f2f_256_matches_cpu() {
    use cuth::stack::Stack;
    use cuth::thermal::steady::{solve_steady, SteadyOptions};
    let stack = Stack::load(&mol_f2f())
        .unwrap()
        .with_grid(256, 256)
        .unwrap();
    let opts = |check_every| SteadyOptions {
        precond: PrecondKind::Chebyshev,
        rtol: 1e-9,
        max_iter: 20_000,
        precond_opts: PrecondOptions::default(),
        check_every,
        nonlinear: Default::default(),
    };
    let t0 = std::time::Instant::now();
    let g = solve_steady(gpu(), &stack, &opts(10)).unwrap();
    let tg = t0.elapsed().as_secs_f64();
    let t0 = std::time::Instant::now();
    let c = solve_steady(&CpuBackend::new(), &stack, &opts(1)).unwrap();
    let tc = t0.elapsed().as_secs_f64();
    let max_dt = g
        .temperature_k
        .iter()
        .zip(&c.temperature_k)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let tmax = c.temperature_k.iter().cloned().fold(f64::MIN, f64::max);
    println!(
        "steady mol_f2f 256x256x{}: max |dT| = {max_dt:.3e} K (tol 1e-6), T max {tmax:.4} K, \
         iterations gpu {} cpu {}, wall gpu {tg:.2} s cpu {tc:.2} s",
        g.grid.nz, g.summary.solver.iterations, c.summary.solver.iterations
    );
    assert!(
        max_dt < 1e-6,
        "GPU and CPU temperatures differ by {max_dt:e} K"
    );
}

// ---------------------------------------------------------------- transient

#[test]
#[ignore]
fn mul_add_matches_cpu() {
    let be = gpu();
    let mut rng = Rng::new(77);
    for (nx, ny, nz) in SIZES {
        let n = nx * ny * nz;
        let (w, x, b) = (
            rng.vec(n, 0.0, 5.0),
            rng.vec(n, -80.0, 80.0),
            rng.vec(n, -1.0, 1.0),
        );
        let mut want = vec![f64::NAN; n];
        CpuBackend::new().mul_add(&w, &x, &b, &mut want).unwrap();
        let (dw, dx, db) = (
            be.upload(&w).unwrap(),
            be.upload(&x).unwrap(),
            be.upload(&b).unwrap(),
        );
        let mut out = be.upload(&vec![f64::NAN; n]).unwrap();
        be.mul_add(&dw, &dx, &db, &mut out).unwrap();
        let got = be.download(&out).unwrap();
        // The GPU may fuse w·x + b into one FMA: one rounding less.
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, c)| (g - c).abs() / c.abs().max(1e-300))
            .fold(0.0, f64::max);
        println!("[mul_add] {nx}x{ny}x{nz}: max rel diff {worst:.2e}");
        assert!(worst < 1e-12, "{worst}");
    }
}

mod transient_gpu {
    use super::gpu;
    use crate::util::repo_path as path;
    use cuth::backend::cpu::CpuBackend;
    use cuth::grid::Grid;
    use cuth::linalg::PrecondKind;
    use cuth::power::layer_power;
    use cuth::power::schedule::PowerSchedule;
    use cuth::power::trace::read_time_trace;
    use cuth::stack::Stack;
    use cuth::thermal::device::ThermalBackend;
    use cuth::thermal::steady::SteadyOptions;
    use cuth::thermal::transient::{
        run_transient, InitState, StepView, TransientOptions, TransientOutcome,
    };
    use std::time::Instant;

    fn load(name: &str, grid: usize) -> Stack {
        let p = path(&format!("configs/{name}"));
        Stack::load(&p).unwrap().with_grid(grid, grid).unwrap()
    }

    fn run<B: ThermalBackend + 'static>(
        be: &B,
        s: &Stack,
        sched: &PowerSchedule,
        dt: f64,
        steps: usize,
    ) -> (TransientOutcome, f64) {
        let opts = TransientOptions {
            solver: SteadyOptions::from_stack(s, PrecondKind::Chebyshev),
            dt,
            steps,
            init: InitState::Ambient,
            snapshot_every: None,
            stepping: Default::default(),
            step_field: Default::default(),
        };
        let mut observe = |_: &StepView| Ok(());
        let t = Instant::now();
        let o = run_transient(
            be,
            s,
            &cuth::grid::Grid::from_stack(s),
            sched,
            &opts,
            &mut observe,
        )
        .unwrap();
        (o, t.elapsed().as_secs_f64())
    }

    fn compare(what: &str, s: &Stack, sched: &PowerSchedule, dt: f64, steps: usize) {
        let (g, tg) = run(gpu(), s, sched, dt, steps);
        let (c, tc) = run(&CpuBackend::new(), s, sched, dt, steps);
        let worst = g
            .temperature_k
            .iter()
            .zip(&c.temperature_k)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let worst_series = g
            .records
            .iter()
            .zip(&c.records)
            .flat_map(|(a, b)| a.layer_max_k.iter().zip(&b.layer_max_k))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "[transient] {what}: {steps} steps of {dt:e} s, max |T_gpu − T_cpu| final {worst:.3e} K, \
             layer-max series {worst_series:.3e} K; iterations gpu {} cpu {}; \
             solve/step gpu {:.3e} s cpu {:.3e} s; wall gpu {tg:.2} s cpu {tc:.2} s; \
             peak {:.3} K",
            g.summary.iterations_total,
            c.summary.iterations_total,
            g.summary.solve_s_per_step,
            c.summary.solve_s_per_step,
            g.summary.peak_t_k
        );
        assert!(
            worst < 1e-6 && worst_series < 1e-6,
            "{worst} {worst_series}"
        );
        assert!(g.summary.energy.max_step_relative_imbalance < 1e-6);
    }

    #[test]
    #[ignore]
    fn mol_f2f_256_50_steps_gpu_matches_cpu() {
        let s = load("mol_f2f.toml", 256);
        let grid = Grid::from_stack(&s);
        let base = (0..s.layers.len())
            .map(|l| layer_power(&s, &grid, l).unwrap())
            .collect();
        compare("mol_f2f 256²", &s, &PowerSchedule::constant(base), 1e-3, 50);
    }

    #[test]
    #[ignore]
    fn ev6_ptrace_rows_gpu_matches_cpu() {
        // Trace rows change every 2 steps: the source vector is re-uploaded.
        let s = load("hotspot_ev6_3d.toml", 96);
        let grid = Grid::from_stack(&s);
        let base = (0..s.layers.len())
            .map(|l| layer_power(&s, &grid, l).unwrap())
            .collect();
        let p = path("configs/hotspot/ev6_3D.ptrace");
        let trace = read_time_trace(&p, Some(2e-4), 1e-4).unwrap();
        let sched = PowerSchedule::with_trace(&s, &grid, base, trace).unwrap();
        compare("ev6 96² ptrace", &s, &sched, 1e-4, 24);
    }
}
