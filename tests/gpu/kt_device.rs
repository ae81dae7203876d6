//! k(T) on the device (`thermal::device::nonlinear`): the law kernel
//! against `Law::eval` for every law kind, the device-assembled A(T), C(T)
//! and shifted right-hand side (with leakage) against the host's
//! `assemble_cells` / `LeakageModel::eval` / `Offset` at a non-uniform
//! temperature field, re-assembled in place over a system built at another
//! field (`nl_reassemble`), and a block-leakage (region) solve on CUDA
//! against the CPU. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 kt_device::

use crate::util::kt::{self, max_rel as rel, mol_f2f_kt_leaky, units_kt};
use crate::util::{gpu, Rng};
use cuth::assemble::{assemble_cells, cell_materials};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::{Backend, QuadDiagOps};
use cuth::grid::Grid;
use cuth::linalg::{Offset, PrecondKind};
use cuth::power::layer_power;
use cuth::stack::{Law, Stack};
use cuth::thermal::device::nonlinear::{NlContext, NonlinearOps};
use cuth::thermal::nonlinear::leakage::LeakageModel;
use cuth::thermal::steady::{solve_steady, SteadyOptions};

#[test]
#[ignore = "needs a CUDA GPU"]
fn law_kernel_matches_host_for_every_kind() {
    let laws = [
        Law::Constant(148.0),
        Law::PowerLaw {
            v300: 148.0,
            exponent: -1.3,
        },
        Law::Polynomial(vec![210.0, -0.41, 2.3e-4, -1e-8]),
        Law::Table(vec![
            [280.0, 160.0],
            [320.0, 140.0],
            [400.0, 100.0],
            [500.0, 80.0],
        ]),
    ];
    let mut rng = Rng::new(17);
    let mut t = rng.vec(5000, 250.0, 600.0);
    // The table's own points and ends, exactly.
    t.extend([250.0, 280.0, 320.0, 400.0, 500.0, 700.0, 300.0]);
    for law in &laws {
        let dev = gpu().eval_law(law, &t).unwrap();
        let host: Vec<f64> = t.iter().map(|&v| law.eval(v)).collect();
        let r = rel(&dev, &host);
        let differ = dev.iter().zip(&host).filter(|(a, b)| a != b).count();
        println!("{law:?}: max rel {r:.2e}, {differ} of {} differ", t.len());
        // pow may differ from the host's libm by an ulp or two; the rest is
        // rounded as the host's, bit for bit.
        match law {
            Law::PowerLaw { .. } => assert!(r <= 1e-15, "{r:e}"),
            _ => assert_eq!(differ, 0, "{law:?}"),
        }
    }
}

fn check_system(name: &str, s: &Stack, rise: f64) {
    let grid = Grid::from_stack(s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect();
    let leak = LeakageModel::new(s, &grid, &power);
    let cx = NlContext {
        stack: s,
        grid: &grid,
        power: &power,
        leak: &leak,
        capacity_laws: true,
    };
    let mut rng = Rng::new(3);
    let theta = rng.vec(grid.len(), 0.0, rise);
    let t: Vec<f64> = theta.iter().map(|v| v + s.ambient_k).collect();
    // Host.
    let cells = cell_materials(s, &grid, &power, &t).unwrap();
    let mut host = assemble_cells(s, &grid, &power, &cells);
    let lk = leak.eval(&grid, &t);
    host.rhs = host
        .rhs
        .iter()
        .zip(&lk.cell_w)
        .map(|(p, q)| p + q)
        .collect();
    let off = Offset::new(&host.a, &host.rhs);
    // Device: assembled at another field, then re-assembled in place at θ.
    let be = gpu();
    let mut ph = be.nl_physics(&cx, None).unwrap();
    let other = be.upload(&rng.vec(grid.len(), 0.0, 0.5 * rise)).unwrap();
    let mut sys = be.nl_assemble(&cx, &mut ph, &other).unwrap().unwrap();
    let th = be.upload(&theta).unwrap();
    be.nl_reassemble(&cx, &mut ph, &th, &mut sys)
        .unwrap()
        .unwrap();
    let mut rhs = be.zeros(grid.len()).unwrap();
    let pw = be.nl_power(&cx, &mut ph, &th, &mut rhs).unwrap();
    be.copy(&rhs, be.nl_rhs_mut(&mut sys)).unwrap();
    let mut b = be.zeros(grid.len()).unwrap();
    let offset = be.nl_shifted_rhs(&sys, pw.power_in_w, &mut b).unwrap();
    let a = be.host_matrix(be.nl_matrix(&sys)).unwrap().into_owned();
    let cap = be.download(be.tr_parts(&mut sys).unwrap().1).unwrap();
    let mut worst = 0.0f64;
    for (what, d, h) in [
        ("d", &a.d, &host.a.d),
        ("gx", &a.gx, &host.a.gx),
        ("gy", &a.gy, &host.a.gy),
        ("gz", &a.gz, &host.a.gz),
        ("amb", &a.amb, &host.a.amb),
        ("C", &cap, &host.capacity),
    ] {
        let r = rel(d, h);
        let differ = d.iter().zip(h.iter()).filter(|(x, y)| x != y).count();
        println!(
            "  {name} {what:4} max rel {r:.2e} ({differ} of {} differ)",
            h.len()
        );
        worst = worst.max(r);
    }
    assert!(
        worst <= 1e-15,
        "{name}: A(T), C(T) max relative difference {worst:e}"
    );
    let (mut top, mut bottom) = (Vec::new(), Vec::new());
    be.nl_coupling(&sys, &mut top, &mut bottom).unwrap();
    assert!(rel(&top, &host.g_top) <= 1e-15 && rel(&bottom, &host.g_bottom) <= 1e-15);
    let psum: f64 = host.rhs.iter().sum();
    assert!(
        (pw.power_in_w - psum).abs() <= 1e-13 * psum,
        "{name}: power in"
    );
    // Leakage per source, the shift and the shifted right-hand side.
    let lr = rel(&pw.leakage_w, &lk.per_source_w);
    let b = be.download(&b).unwrap();
    let bmax = off.rhs.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let berr = b
        .iter()
        .zip(&off.rhs)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / bmax;
    println!(
        "  {name} leakage {:?} W (rel {lr:.2e}), c {} vs {}, b max err / max |b| {berr:.2e}",
        pw.leakage_w, offset.c, off.c
    );
    assert!(lr <= 1e-13, "{name}: leakage {lr:e}");
    assert!((offset.c - off.c).abs() <= 1e-13 * off.c.abs().max(1e-300));
    assert!(berr <= 1e-12, "{name}: shifted rhs {berr:e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_a_of_t_matches_host_assemble_cells() {
    check_system("mol_f2f k(T) 96x64", &mol_f2f_kt_leaky(96, 64), 80.0);
    let dir = tempfile::tempdir().unwrap();
    check_system("units 24x20", &units_kt(dir.path()), 120.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn block_leakage_and_unit_laws_cuda_match_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let s = units_kt(dir.path());
    for precond in [PrecondKind::Multigrid, PrecondKind::Jacobi] {
        let mut opts = SteadyOptions::from_stack(&s, precond);
        opts.rtol = 1e-12;
        opts.nonlinear.tol_k = 1e-9;
        let c = solve_steady(&CpuBackend::new(), &s, &opts).unwrap();
        let g = solve_steady(gpu(), &s, &opts).unwrap();
        let (nc, ng) = (
            c.summary.nonlinear.as_ref().unwrap(),
            g.summary.nonlinear.as_ref().unwrap(),
        );
        let diff = c
            .temperature_k
            .iter()
            .zip(&g.temperature_k)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "{precond:?}: outer cpu {} gpu {}, leakage cpu {:?} gpu {:?}, max |ΔT| {diff:.3e} K",
            nc.outer_iterations, ng.outer_iterations, nc.leakage_w, ng.leakage_w
        );
        assert_eq!(nc.outer_iterations, ng.outer_iterations);
        assert!(diff <= 1e-8, "{precond:?}: {diff:e} K");
        for ((_, a), (_, b)) in nc.leakage_w.iter().zip(&ng.leakage_w) {
            assert!((a - b).abs() <= 1e-9 * a, "{a} vs {b}");
        }
        assert!(g.summary.energy.relative_error < 1e-9);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unit_laws_and_block_leakage_converge() {
    kt::unit_laws_and_block_leakage_converge(gpu());
}
