//! Liquid-cooled stacks on CUDA against the CPU: the coolant's kernels
//! (`kernels/advection.cu`) on random coolant lines, and the steady solve
//! of a 4RM two-die stack (BiCGStab over upwind multigrid), whose fields
//! must agree to 1e-9 K with the same energy balance.

use crate::util::{gpu, liquid, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::{Backend, QuadDiagOps};
use cuth::matrix::advection::{Advection, INLET, OUTLET};
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};

/// `lines` coolant lines of random lengths over n rows, each row used
/// once; with `central` downstream couplings and a diagonal taken back.
fn random_lines(rng: &mut Rng, n: usize, lines: usize, central: bool) -> Advection {
    let mut rows: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        rows.swap(i, j);
    }
    let mut a = Advection::default();
    let mut at = 0;
    for _ in 0..lines {
        let len = 1 + (rng.next_u64() % (2 * n / (3 * lines)) as u64) as usize;
        for k in 0..len {
            a.cell.push(rows[at + k]);
            a.up.push(if k == 0 { INLET } else { rows[at + k - 1] });
            a.w.push(rng.uniform(0.5, 1.5));
        }
        if central {
            for k in 0..len {
                let last = k + 1 == len;
                a.down.push(if last { OUTLET } else { rows[at + k + 1] });
                a.w_down
                    .push(if last { 0.0 } else { rng.uniform(0.5, 1.5) });
                a.w_self.push(rng.uniform(0.0, 0.5));
            }
        }
        at += len;
    }
    a
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn advection_kernels_match_cpu() {
    let (g, c) = (gpu(), CpuBackend::new());
    let mut rng = Rng::new(7);
    for (n, lines, central) in [(300, 7, false), (70_001, 333, false), (70_001, 333, true)] {
        let adv = random_lines(&mut rng, n, lines, central);
        let x = rng.vec(n, -0.5, 0.5);
        // Diagonally dominant chains: the line solve's pivots stay large.
        let d = rng.vec(n, 4.0, 5.0);
        let y0 = rng.vec(n, 0.0, 1.0);
        let (ga, ca) = (
            g.upload_advection(&adv).unwrap(),
            c.upload_advection(&adv).unwrap(),
        );
        let run = |be: &dyn Fn(&mut Vec<f64>, &mut Vec<f64>)| {
            let (mut y, mut z) = (y0.clone(), y0.clone());
            be(&mut y, &mut z);
            (y, z)
        };
        let (cy, cz) = run(&|y, z| {
            c.add_couplings(&ca, -0.75, &x, y).unwrap();
            c.line_solve(&ca, &d, &x, z).unwrap();
        });
        let (gy, gz) = run(&|y, z| {
            let (gx, gd) = (g.upload(&x).unwrap(), g.upload(&d).unwrap());
            let (mut dy, mut dz) = (g.upload(y).unwrap(), g.upload(z).unwrap());
            g.add_couplings(&ga, -0.75, &gx, &mut dy).unwrap();
            g.line_solve(&ga, &gd, &gx, &mut dz).unwrap();
            *y = g.download(&dy).unwrap();
            *z = g.download(&dz).unwrap();
        });
        let err = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .fold(0.0f64, |m, (p, q)| m.max((p - q).abs() / q.abs().max(1.0)))
        };
        let (ey, ez) = (err(&gy, &cy), err(&gz, &cz));
        println!(
            "advection n {n} lines {lines} central {central}: add_couplings {ey:.1e}, \
             line_solve {ez:.1e}"
        );
        assert!(ey < 1e-14 && ez < 1e-14, "{ey:e} {ez:e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn liquid_steady_matches_cpu() {
    let stack = Stack::from_toml(
        &liquid::two_dies_4rm(100, 256),
        std::path::Path::new("4rm.toml"),
    )
    .unwrap();
    let opts = SteadyOptions {
        rtol: 1e-10,
        ..SteadyOptions::from_stack(&stack, cuth::linalg::PrecondKind::Multigrid)
    };
    let g = solve_steady(gpu(), &stack, &opts).unwrap();
    let c = solve_steady(&CpuBackend::new(), &stack, &opts).unwrap();
    let max_dt = (g.temperature_k.iter().zip(&c.temperature_k))
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let (gc, cc) = (&g.summary.coolant[0], &c.summary.coolant[0]);
    println!(
        "4rm 201x256x3: max |dT| {max_dt:.2e} K, outlet {:.6} / {:.6} K, balance {:.1e} / {:.1e}, \
         iterations gpu {} cpu {}",
        gc.outlet_mean_k,
        cc.outlet_mean_k,
        g.summary.energy.relative_error,
        c.summary.energy.relative_error,
        g.summary.solver.iterations,
        c.summary.solver.iterations
    );
    assert!(max_dt < 1e-9, "GPU and CPU differ by {max_dt:e} K");
    assert!(g.summary.energy.relative_error < 1e-10);
    // BiCGStab's iterates depend on the reductions' rounding more than
    // CG's: at rtol 1e-10 the two backends stop a few iterations apart
    // (GPU 42, CPU 40 on an H100) with the same answer; a different
    // preconditioner on one side would differ by far more.
    let (gi, ci) = (g.summary.solver.iterations, c.summary.solver.iterations);
    assert!(
        gi.abs_diff(ci) <= 2 + ci / 10,
        "iterations gpu {gi} cpu {ci}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn conductivity_law_in_a_liquid_stack_is_a_fixed_point() {
    liquid::conductivity_law_is_a_fixed_point(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn leakage_in_a_liquid_stack_is_taken_at_the_answer() {
    liquid::leakage_is_taken_at_the_answer(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn liquid_transient_settles_and_balances() {
    liquid::transient_settles_and_balances(gpu());
}

/// Adaptive TR-BDF2 on a liquid-cooled stack: the GPU takes the CPU's steps
/// and ends on its field.
#[test]
#[ignore = "needs a CUDA GPU"]
fn liquid_adaptive_trbdf2_matches_cpu() {
    use cuth::thermal::transient::{Scheme, Stepping};
    let stack = Stack::from_toml(
        &liquid::two_dies_4rm(50, 128),
        std::path::Path::new("4rm.toml"),
    )
    .unwrap();
    let mut opts = liquid::options(&stack, 0.01, 5, 1e-10);
    opts.stepping = Stepping {
        scheme: Scheme::TrBdf2,
        time_tol_k: Some(0.01),
    };
    let g = liquid::run(gpu(), &stack, &opts);
    let c = liquid::run(&CpuBackend::new(), &stack, &opts);
    let max_dt = (g.temperature_k.iter().zip(&c.temperature_k))
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!(
        "liquid TR-BDF2 101x128x3: steps gpu {} cpu {}, max |dT| {max_dt:.2e} K",
        g.step_ends_s.len(),
        c.step_ends_s.len()
    );
    assert_eq!(g.step_ends_s.len(), c.step_ends_s.len());
    assert!(max_dt < 1e-9, "{max_dt:e}");
}

/// 3D-ICE's central differencing (`advection = "central"`) on CUDA: the
/// field of the CPU to 1e-9 K, both balanced.
#[test]
#[ignore = "needs a CUDA GPU"]
fn central_liquid_steady_matches_cpu() {
    let text = liquid::two_dies_4rm(100, 256).replace(
        "direction = \"+y\"",
        "direction = \"+y\"\nadvection = \"central\"",
    );
    let stack = Stack::from_toml(&text, std::path::Path::new("4rm.toml")).unwrap();
    let opts = SteadyOptions {
        rtol: 1e-10,
        ..SteadyOptions::from_stack(&stack, cuth::linalg::PrecondKind::Multigrid)
    };
    let g = solve_steady(gpu(), &stack, &opts).unwrap();
    let c = solve_steady(&CpuBackend::new(), &stack, &opts).unwrap();
    let max_dt = (g.temperature_k.iter().zip(&c.temperature_k))
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!(
        "central 4rm 201x256x3: max |dT| {max_dt:.2e} K, balance {:.1e} / {:.1e}, iterations gpu {} cpu {}",
        g.summary.energy.relative_error,
        c.summary.energy.relative_error,
        g.summary.solver.iterations,
        c.summary.solver.iterations
    );
    assert!(max_dt < 1e-9, "GPU and CPU differ by {max_dt:e} K");
    assert!(g.summary.energy.relative_error < 1e-10);
}
