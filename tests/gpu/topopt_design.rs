//! The design half of topopt's loop on CUDA (`topopt::design`,
//! `kernels/topopt_design.cu`) against the CPU backend: every operation on
//! random fields (odd sizes, passive elements, two filter radii), the coarse
//! moduli kernel, then the whole loop: the GPU's design after 10 iterations
//! equals the CPU's to round-off. `#[ignore]`d (CI has no GPU):
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 topopt_design::
//! ```

use crate::util::{gpu, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::Backend;
use cuth::linalg::{CgParams, PrecondKind, RefineMode, Stop};
use cuth::topopt::continuation::{Schedule, Stage};
use cuth::topopt::design::{DesignBackend, DesignMap, Fields, OcTrial};
use cuth::topopt::mg::{plan_to, Transfer};
use cuth::topopt::optimize::{optimize, OptimizeOptions, SolveOptions};
use cuth::topopt::presets::{self, LoadKind, MeshRequest};
use cuth::topopt::problem::Passive;
use cuth::topopt::{hex8_stiffness, ElasticBackend, Mesh, OperatorKind};

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Runs every design operation on `be` and returns the fields and scalars.
fn run_ops<B: DesignBackend>(
    be: &B,
    mesh: Mesh,
    rmin: f64,
    passive: &[Passive],
    x: &[f64],
    u: &[f64],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let fixed: Vec<bool> = (0..mesh.dofs()).map(|d| d % 11 == 0).collect();
    let ke = hex8_stiffness(0.3);
    let mut op = be
        .elastic_new(&mesh, &ke, &fixed, OperatorKind::Fused)
        .unwrap();
    let filter = be.design_filter(&mesh, rmin).unwrap();
    let mask = be.design_mask(passive).unwrap();
    let mut f = Fields::new(be, mesh.elements()).unwrap();
    let mut s = be.scalars(8).unwrap();
    let (xd, ud) = (be.upload(x).unwrap(), be.upload(u).unwrap());
    let (penal, beta) = (3.0, 4.0);
    let map = DesignMap {
        filter: &filter,
        mask: &mask,
        beta,
        penal,
    };
    be.design_physical(&map, &xd, &mut f, &mut op, &mut s, 0)
        .unwrap();
    be.design_sensitivities(&map, &ud, &mut f, &mut op, &mut s, 2)
        .unwrap();
    be.oc_prepare(&mask, &mut f, &mut s, 3).unwrap();
    let mut x_new = be.zeros(mesh.elements()).unwrap();
    let trial = OcTrial {
        x: &xd,
        root: &f.root,
        scale: 0.8,
        move_limit: 0.2,
    };
    be.oc_trial(&map, trial, &mut x_new, &mut s, 5).unwrap();
    be.max_abs_diff(&xd, &x_new, &mut s, 6).unwrap();
    be.design_volume(&map, &xd, &mut s, 7).unwrap();
    let mut diag = be.zeros(mesh.dofs()).unwrap();
    be.elastic_diagonal(&mut op, &mut diag).unwrap();
    let d = |v: &B::Vector| be.download(v).unwrap();
    let fields = vec![
        d(&f.filtered),
        d(&f.rho),
        d(&f.slope),
        d(&f.dc),
        d(&f.dv),
        d(&f.root),
        d(&x_new),
        d(&diag),
    ];
    (fields, be.read_scalars(&s).unwrap())
}

#[test]
#[ignore]
fn design_operations_equal_the_cpu() {
    let mut rng = Rng::new(5);
    let names = [
        "filtered", "rho", "slope", "dc", "dv", "root", "x_new", "diag(K)",
    ];
    for (mesh, rmin) in [(Mesh::new(13, 7, 5), 1.5), (Mesh::new(37, 19, 11), 2.3)] {
        let n = mesh.elements();
        let passive: Vec<Passive> = (0..n)
            .map(|i| match i % 17 {
                0 => Passive::Solid,
                1 => Passive::Void,
                _ => Passive::Design,
            })
            .collect();
        let x: Vec<f64> = (0..n).map(|_| rng.uniform(0.05, 0.95)).collect();
        let u: Vec<f64> = (0..mesh.dofs()).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let (fc, sc) = run_ops(&CpuBackend::new(), mesh, rmin, &passive, &x, &u);
        let (fg, sg) = run_ops(gpu(), mesh, rmin, &passive, &x, &u);
        for ((name, c), g) in names.iter().zip(&fc).zip(&fg) {
            let rel = max_diff(c, g) / max_abs(c).max(1e-300);
            println!("{mesh:?} rmin {rmin}: {name} max rel diff {rel:.1e}");
            assert!(rel < 1e-12, "{name}: {rel}");
        }
        // Σρ̄, Σρ̄(1−ρ̄), compliance, Σ ln ratio, count, trial volume,
        // change, volume.
        for (k, (c, g)) in sc.iter().zip(&sg).enumerate() {
            let rel = (c - g).abs() / c.abs().max(1e-300);
            println!("{mesh:?}: scalar {k}: cpu {c:.15e} gpu {g:.15e}");
            assert!(rel < 1e-11, "scalar {k}: {c} vs {g}");
        }
    }
}

#[test]
#[ignore]
fn coarse_moduli_kernel_equals_the_host() {
    let g = gpu();
    let mut rng = Rng::new(9);
    let ke = hex8_stiffness(0.3);
    // Even, odd (padded) and semi-coarsened.
    for fine in [
        Mesh::new(20, 10, 6),
        Mesh::new(25, 13, 7),
        Mesh::new(18, 7, 12),
    ] {
        let coarse = plan_to(fine, 2, 0)[1].0;
        let ff = vec![false; fine.dofs()];
        let t = Transfer::new(fine, coarse, &ff);
        let e: Vec<f64> = (0..fine.elements())
            .map(|_| rng.uniform(1e-9, 1.0))
            .collect();
        let gt = g.elastic_transfer_new(&t).unwrap();
        let mut opf = g
            .elastic_new(&fine, &ke, &ff, OperatorKind::NodeCentred)
            .unwrap();
        g.elastic_set_moduli(&mut opf, &e).unwrap();
        let mut opc = g
            .elastic_new(&coarse, &ke, &t.coarse_fixed, OperatorKind::NodeCentred)
            .unwrap();
        g.elastic_coarsen_moduli(&gt, &opf, &mut opc).unwrap();
        let mut dg = g.zeros(coarse.dofs()).unwrap();
        g.elastic_diagonal(&mut opc, &mut dg).unwrap();
        // The host: coarse moduli, then the same diagonal on the CPU.
        let cpu = CpuBackend::new();
        let mut oc = cpu
            .elastic_new(&coarse, &ke, &t.coarse_fixed, OperatorKind::NodeCentred)
            .unwrap();
        cpu.elastic_set_moduli(&mut oc, &t.coarse_moduli(&e))
            .unwrap();
        let mut dc = vec![0.0; coarse.dofs()];
        cpu.elastic_diagonal(&mut oc, &mut dc).unwrap();
        let rel = max_diff(&g.download(&dg).unwrap(), &dc) / max_abs(&dc);
        println!("{fine:?} -> {coarse:?}: coarse diag max rel diff {rel:.1e}");
        assert!(rel < 1e-13);
    }
}

#[test]
#[ignore]
fn gpu_loop_matches_the_cpu_loop_over_10_iterations() {
    let req = MeshRequest {
        nelx: Some(26),
        ..Default::default()
    };
    let mut p = presets::build("cantilever", &req, LoadKind::Patch).unwrap();
    // Some passive elements, so the mask takes part.
    for (i, v) in p.passive.iter_mut().enumerate() {
        let [x, y, _] = p.mesh.element_coords(i);
        if x < 2 && y < 2 {
            *v = Passive::Solid;
        } else if (10..13).contains(&x) && (5..7).contains(&y) {
            *v = Passive::Void;
        }
    }
    for precond in [PrecondKind::Jacobi, PrecondKind::Multigrid] {
        let opts = |check_every| OptimizeOptions {
            max_iterations: 10,
            operator: OperatorKind::Fused,
            cg: SolveOptions {
                cg: CgParams {
                    stop: Stop::relative(1e-11),
                    max_iter: 20000,
                    check_every,
                    ..SolveOptions::default().cg
                },
                mode: RefineMode::F64,
                precond,
                ..SolveOptions::default()
            },
            schedule: Schedule::fixed(Stage {
                penal: 3.0,
                beta: 2.0,
                rmin: 1.5,
                move_limit: 0.2,
            }),
        };
        let cpu = optimize(&CpuBackend::new(), &p, &opts(1), &mut |_| {}).unwrap();
        let be = gpu();
        let t0 = std::time::Instant::now();
        let got = optimize(be, &p, &opts(be.check_interval()), &mut |_| {}).unwrap();
        let secs = t0.elapsed().as_secs_f64();
        assert_eq!(got.history.len(), 10);
        assert_eq!(cpu.history.len(), 10);
        for (g, c) in got.history.iter().zip(&cpu.history) {
            let dc = (g.compliance / c.compliance - 1.0).abs();
            println!(
                "[gpu] {precond:?} it {}: compliance {:.12e} (cpu {:.12e}, rel {dc:.1e}), \
                 volume {:.12} ({:.12}), change {:.6e} ({:.6e}), CG {} ({})",
                g.iteration,
                g.compliance,
                c.compliance,
                g.volume,
                c.volume,
                g.change,
                c.change,
                g.cg_iterations,
                c.cg_iterations
            );
            // The OC search stops at |V − Vf| ≤ 1e-7: round-off may end it
            // one trial apart, which bounds how close the designs can be.
            assert!(dc < 1e-6, "it {}: compliance {dc}", g.iteration);
            assert!((g.volume - c.volume).abs() < 2.5e-7);
            assert!((g.change - c.change).abs() < 1e-5);
        }
        let d = max_diff(&got.best.rho, &cpu.best.rho);
        println!(
            "[gpu] {precond:?}: best iterate {} (cpu {}), max |rho_gpu - rho_cpu| {d:.2e}, \
             GPU loop {secs:.2} s",
            got.best.iteration, cpu.best.iteration
        );
        assert_eq!(got.best.iteration, cpu.best.iteration);
        assert!(d < 1e-5, "{precond:?}: {d}");
    }
}
