//! The multigrid set-up on the device against the host's: every
//! coarse operator (d, gx, gy, gz and the widths; amb, released once the
//! next level is built, through d and that level), every level's z-line
//! pivots and the coarsest dense inverse must agree with the CPU backend's
//! hierarchy (`coarsen_with`, `line_pivots` on the host) to 1e-15 relative
//! per value (the kernels sum in the host's order and round every product as
//! it does, so in practice bit for bit). Inputs: shipped stacks assembled on
//! the device (uniform mol_f2f, the stress stack, the non-uniform 2.5D
//! package hbm_2p5d) and random matrices of odd sizes with non-uniform widths
//! and absent cells (identity rows). Then a mg solve of hbm_2p5d, CUDA
//! against CPU. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture mg_setup::

use crate::util::mg::{load, mg_cpu_against_gpu};
use crate::util::{gpu, random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::{Backend, QuadDiagOps};
use cuth::grid::Grid;
use cuth::linalg::mg::coarsen::fill_diagonal;
use cuth::linalg::mg::{MgOptions, Multigrid};
use cuth::linalg::QuadDiag;
use cuth::power::layer_power;
use cuth::thermal::assembly_input::AssemblyInput;
use cuth::thermal::device::ThermalOps;

/// Largest relative difference per value (0 where equal); asserts ≤ 1e-15.
fn compare(what: &str, dev: &[f64], host: &[f64]) -> f64 {
    assert_eq!(dev.len(), host.len(), "{what}: lengths");
    let mut worst = 0.0f64;
    let mut differ = 0usize;
    for (d, h) in dev.iter().zip(host) {
        assert!(d.is_finite(), "{what}: {d} on the device");
        if d != h {
            differ += 1;
            worst = worst.max((d - h).abs() / h.abs().max(f64::MIN_POSITIVE));
        }
    }
    if differ > 0 {
        println!(
            "    {what}: {differ} of {} differ, max rel {worst:.2e}",
            host.len()
        );
    }
    assert!(worst <= 1e-15, "{what}: max relative difference {worst:e}");
    worst
}

/// The hierarchy of `dev` (a matrix on the GPU) built on the GPU against the
/// CPU backend's from the same matrix on the host; the worst difference.
fn hierarchy_matches(name: &str, dev: &cuth::backend::cuda::CudaMatrix) -> f64 {
    let g = gpu();
    let host = g.host_matrix(dev).unwrap().into_owned();
    let opts = MgOptions::default();
    let cpu = CpuBackend::new();
    let mc = Multigrid::new(&cpu, &host, &opts).unwrap();
    let mg = Multigrid::new(g, dev, &opts).unwrap();
    let (pc, pg) = (mc.levels().unwrap(), mg.levels().unwrap());
    assert_eq!(pc.coarse.len(), pg.coarse.len(), "{name}: levels");
    let mut worst = 0.0f64;
    if let (Some(c), Some(d)) = (&pc.fine_pivots, &pg.fine_pivots) {
        worst = worst.max(compare("fine pivots", &g.download(d).unwrap(), c));
    }
    assert_eq!(pc.fine_pivots.is_some(), pg.fine_pivots.is_some());
    for (l, (c, d)) in pc.coarse.iter().zip(&pg.coarse).enumerate() {
        assert_eq!(c.a.is_some(), d.a.is_some(), "{name}: level {l}");
        if let (Some(ac), Some(ad)) = (&c.a, &d.a) {
            let ad = g.host_matrix(ad).unwrap();
            assert_eq!((ac.nx, ac.ny, ac.nz), (ad.nx, ad.ny, ad.nz));
            assert_eq!((&ac.wx, &ac.wy), (&ad.wx, &ad.wy), "{name}: widths");
            // amb was released on both once the level below was built
            // (it is in d = amb + Σ g, compared here, and in that level).
            assert!(ac.amb.is_empty() && ad.amb.len() <= 1, "{name}: amb kept");
            for (what, h, v) in [
                ("d", &ac.d, &ad.d),
                ("gx", &ac.gx, &ad.gx),
                ("gy", &ac.gy, &ad.gy),
                ("gz", &ac.gz, &ad.gz),
            ] {
                worst = worst.max(compare(&format!("level {} {what}", l + 1), v, h));
            }
        }
        if let (Some(c), Some(d)) = (&c.pivots, &d.pivots) {
            let what = format!("level {} pivots", l + 1);
            worst = worst.max(compare(&what, &g.download(d).unwrap(), c));
        }
    }
    let inv = g.download(&pg.inverse).unwrap();
    worst = worst.max(compare("coarsest inverse", &inv, &pc.inverse));
    println!(
        "{name}: {}x{}x{}, {} levels, max rel diff {worst:.2e}",
        host.nx,
        host.ny,
        host.nz,
        pc.coarse.len() + 1
    );
    worst
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_hierarchy_equals_host_on_shipped_stacks() {
    let g = gpu();
    let cases: [(&str, Option<(usize, usize)>); 4] = [
        ("configs/mol_f2f.toml", Some((256, 256))),
        ("configs/mol_f2f.toml", Some((301, 97))),
        ("tests/data/stress_mg/stress.toml", Some((80, 80))),
        ("configs/hbm_2p5d.toml", None),
    ];
    for (rel, grid) in cases {
        let stack = load(rel, grid);
        let grid = Grid::from_stack(&stack);
        let power: Vec<_> = (0..stack.layers.len())
            .map(|l| layer_power(&stack, &grid, l).unwrap())
            .collect();
        let input = AssemblyInput::new(&stack, &grid, &power);
        let dev = g
            .assemble_on_device(&input)
            .unwrap()
            .expect("device assembly");
        if rel.contains("hbm") {
            assert!(!dev.a.wx.is_empty(), "hbm_2p5d is meant to be non-uniform");
        }
        hierarchy_matches(rel, &dev.a);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_hierarchy_equals_host_on_random_matrices() {
    let mut rng = Rng::new(57);
    for dims in [(7, 5, 3), (1, 9, 4), (33, 17, 5), (131, 67, 6), (2, 1, 700)] {
        let mut a = random_matrix(
            &mut rng,
            dims,
            |r| r.uniform(1.0, 1e4),
            |r, i| if i % 7 == 0 { r.uniform(0.1, 1.0) } else { 0.0 },
        );
        // Absent cells: a block of columns in the lowest plane loses every
        // conductance and becomes identity rows (d = amb = 1).
        absent_block(&mut a, &mut rng);
        a.wx = rng.vec(a.nx, 1.0, 8.0);
        a.wy = rng.vec(a.ny, 1.0, 8.0);
        let dev = gpu().upload_matrix(&a).unwrap();
        hierarchy_matches(&format!("random {dims:?} graded"), &dev);
        a.wx.clear();
        a.wy.clear();
        let dev = gpu().upload_matrix(&a).unwrap();
        hierarchy_matches(&format!("random {dims:?} uniform"), &dev);
    }
}

/// Cuts the cells x < nx/2, y < ny/2 of plane 0 out of `a`.
fn absent_block(a: &mut QuadDiag, rng: &mut Rng) {
    let (nx, ny, plane) = (a.nx, a.ny, a.nx * a.ny);
    for y in 0..ny.div_ceil(2) {
        for x in 0..nx.div_ceil(2) {
            let i = x + nx * y;
            a.gx[i] = 0.0;
            a.gy[i] = 0.0;
            a.gz[i] = 0.0;
            a.amb[i] = 0.0;
            if x > 0 {
                a.gx[i - 1] = 0.0;
            }
            if y > 0 {
                a.gy[i - nx] = 0.0;
            }
        }
    }
    // Keep the rest SPD: every plane above couples to ambient somewhere.
    if a.nz > 1 {
        a.amb[plane + rng.next_u64() as usize % plane] += 1.0;
    }
    fill_diagonal(a);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mg_solve_of_a_graded_package_matches_cpu() {
    let (_, g) = mg_cpu_against_gpu("hbm_2p5d", &load("configs/hbm_2p5d.toml", None));
    // The set-up went through the device path (no host copy of A): the
    // hierarchy is reported with every level.
    let mg = g
        .summary
        .solver
        .precond
        .multigrid
        .as_ref()
        .expect("mg report");
    assert!(mg.levels.len() > 1);
}
