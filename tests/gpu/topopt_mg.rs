//! topopt's multigrid (`--precond mg`) on CUDA against the CPU backend: the
//! transfer kernels against the host reference (`topopt::mg::Transfer`),
//! one V- and W-cycle on a high-contrast operator, then the whole
//! mg-preconditioned solve; and the CPU's checks of mg solves
//! (`util::topopt_mg`) on CUDA. `#[ignore]`d (CI has no GPU):
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 topopt_mg::
//! ```

use crate::util::topopt_mg::{self, apply_mg, contrast_problem};
use crate::util::{gpu, shear_cantilever, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::Backend;
use cuth::linalg::{CgParams, PrecondKind, RefineMode, Stop};
use cuth::topopt::evaluate::uniform_compliance;
use cuth::topopt::mg::{plan_to, Transfer};
use cuth::topopt::optimize::SolveOptions;
use cuth::topopt::{ElasticBackend, Mesh};

#[test]
#[ignore]
fn transfer_kernels_equal_the_host_reference() {
    let g = gpu();
    let mut rng = Rng::new(7);
    // Even, odd and semi-coarsened directions; random fixed DOFs.
    for fine in [
        Mesh::new(20, 10, 6),
        Mesh::new(18, 7, 12),
        Mesh::new(64, 32, 30),
    ] {
        let levels = plan_to(fine, 2, 0);
        let coarse = levels[1].0;
        let fixed: Vec<bool> = (0..fine.dofs())
            .map(|_| rng.uniform(0.0, 1.0) < 0.1)
            .collect();
        let t = Transfer::new(fine, coarse, &fixed);
        let gt = g.elastic_transfer_new(&t).unwrap();
        let rf: Vec<f64> = (0..fine.dofs()).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let xc: Vec<f64> = (0..coarse.dofs()).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let mut rc = vec![0.0; coarse.dofs()];
        t.restrict(&rf, &mut rc);
        let mut xf = rf.clone();
        t.prolong_add(&xc, &mut xf);
        let (drf, dxc) = (g.upload(&rf).unwrap(), g.upload(&xc).unwrap());
        let mut drc = g.zeros(coarse.dofs()).unwrap();
        g.elastic_restrict(&gt, &drf, &mut drc).unwrap();
        let mut dxf = g.upload(&rf).unwrap();
        g.elastic_prolong_add(&gt, &dxc, &mut dxf).unwrap();
        let err = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        };
        let (e1, e2) = (
            err(&g.download(&drc).unwrap(), &rc),
            err(&g.download(&dxf).unwrap(), &xf),
        );
        println!("{fine:?} -> {coarse:?}: restrict {e1:.1e}, prolong {e2:.1e}");
        assert!(e1 < 1e-13 && e2 < 1e-13);
    }
}

#[test]
#[ignore]
fn cuda_mg_solve_equals_cpu() {
    let opts = |precond| SolveOptions {
        cg: CgParams {
            stop: Stop::relative(1e-9),
            max_iter: 20000,
            check_every: 1,
            ..CgParams::default()
        },
        mode: RefineMode::Mixed,
        precond,
        ..SolveOptions::default()
    };
    for n in [48, 96] {
        let p = shear_cantilever(n);
        let (cc, ic) =
            uniform_compliance(&CpuBackend::new(), &p, 0.5, &opts(PrecondKind::Multigrid)).unwrap();
        let (cg, ig) = uniform_compliance(gpu(), &p, 0.5, &opts(PrecondKind::Multigrid)).unwrap();
        let (cj, ij) = uniform_compliance(gpu(), &p, 0.5, &opts(PrecondKind::Jacobi)).unwrap();
        println!(
            "nelx {n}: mg cpu {cc} ({} its), mg cuda {cg} ({} its), jacobi cuda {cj} ({} its)",
            ic.iterations, ig.iterations, ij.iterations
        );
        assert!(((cg - cc) / cc).abs() < 1e-7 && ((cj - cc) / cc).abs() < 1e-7);
        assert!(ig.iterations <= ic.iterations + 3);
    }
}

/// One application of the preconditioner, V and W (`--mg-w-levels`), on a
/// high-contrast operator (E ∈ {1, 1e-9}): CUDA against the CPU backend, to
/// round-off (f64 operators; only summation order differs).
#[test]
#[ignore]
fn cuda_cycles_equal_cpu() {
    for mesh in [Mesh::new(32, 16, 8), Mesh::new(37, 19, 11)] {
        let (e, fixed) = contrast_problem(mesh);
        let mut rng = Rng::new(7);
        let r: Vec<f64> = (0..mesh.dofs())
            .map(|d| {
                if fixed[d] {
                    0.0
                } else {
                    rng.uniform(-0.5, 0.5)
                }
            })
            .collect();
        for w in [0, 2, 9] {
            let zc = apply_mg(
                &CpuBackend::new(),
                mesh,
                &e,
                &fixed,
                w,
                std::slice::from_ref(&r),
            );
            let zg = apply_mg(gpu(), mesh, &e, &fixed, w, std::slice::from_ref(&r));
            let num: f64 = zc[0].iter().zip(&zg[0]).map(|(a, b)| (a - b).powi(2)).sum();
            let den: f64 = zc[0].iter().map(|a| a * a).sum();
            let rel = (num / den).sqrt();
            println!(
                "{}x{}x{} w_levels {w}: |z_cuda − z_cpu| / |z_cpu| = {rel:.2e}",
                mesh.nelx, mesh.nely, mesh.nelz
            );
            assert!(rel < 1e-10, "{rel}");
        }
    }
}

#[test]
#[ignore]
fn mg_and_jacobi_give_the_same_compliance() {
    topopt_mg::mg_and_jacobi_give_the_same_compliance(gpu());
}

#[test]
#[ignore]
fn mg_iterations_stay_flat_under_refinement() {
    topopt_mg::mg_iterations_stay_flat_under_refinement(gpu());
}
