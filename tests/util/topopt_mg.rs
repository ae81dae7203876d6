//! Shared by `solver::topopt_mg` and `gpu::topopt_mg`: one
//! application of topopt's multigrid preconditioner on any backend, a
//! high-contrast test problem for it, and the checks of mg-preconditioned
//! elastic solves written once over the backend (compliance equal to
//! Jacobi's, iterations flat under refinement).

use super::shear_cantilever;
use cuth::linalg::precond::Preconditioner;
use cuth::linalg::{CgParams, PrecondKind, RefineMode, Stop};
use cuth::topopt::design::DesignBackend;
use cuth::topopt::evaluate::uniform_compliance;
use cuth::topopt::mg::{CoarseSolver, ElasticMg};
use cuth::topopt::optimize::SolveOptions;
use cuth::topopt::{hex8_stiffness, ElasticBackend, ElasticOperator, Mesh, OperatorKind};

/// A block clamped at x = 0 with moduli 1 or 1e-9 in a fixed pseudo-random
/// pattern (solid fraction ~0.4), as a converged SIMP design has.
pub fn contrast_problem(mesh: Mesh) -> (Vec<f64>, Vec<bool>) {
    let e: Vec<f64> = (0..mesh.elements())
        .map(|k| if (k * 7919 + 13) % 5 < 2 { 1.0 } else { 1e-9 })
        .collect();
    let fixed: Vec<bool> = (0..mesh.dofs())
        .map(|d| mesh.node_coords(d / 3)[0] == 0)
        .collect();
    (e, fixed)
}

/// z = M r for each r of `rs`: the hierarchy with `w_levels` two-pass
/// coarse levels, built on `be` for moduli `e` (f64 operator throughout).
pub fn apply_mg<B: ElasticBackend>(
    be: &B,
    mesh: Mesh,
    e: &[f64],
    fixed: &[bool],
    w_levels: usize,
    rs: &[Vec<f64>],
) -> Vec<Vec<f64>> {
    let raw = be
        .elastic_new(
            &mesh,
            &hex8_stiffness(0.3),
            fixed,
            OperatorKind::NodeCentred,
        )
        .unwrap();
    let mut a = ElasticOperator::new(be, raw, mesh.dofs()).unwrap();
    be.elastic_set_moduli(&mut a.op, e).unwrap();
    a.refresh_diagonal(be).unwrap();
    let mut mg = ElasticMg::new(be, &mut a, mesh, fixed, 0.3, CoarseSolver::Dense)
        .unwrap()
        .with_w_levels(w_levels);
    rs.iter()
        .map(|r| {
            let rd = be.upload(r).unwrap();
            let mut z = be.zeros(mesh.dofs()).unwrap();
            mg.apply(be, &mut a, &rd, &mut z).unwrap();
            be.download(&z).unwrap()
        })
        .collect()
}

/// The optimizer's solve settings: `precond` in `mode` to `rtol`, the
/// residual checked every iteration.
pub fn options(rtol: f64, precond: PrecondKind, mode: RefineMode) -> SolveOptions {
    SolveOptions {
        cg: CgParams {
            stop: Stop::relative(rtol),
            max_iter: 20000,
            check_every: 1,
            ..CgParams::default()
        },
        mode,
        precond,
        ..SolveOptions::default()
    }
}

/// Uniform density on the shear cantilever at 24: mg and Jacobi PCG give
/// the same compliance to 1e-6, mg in a fifth of the iterations.
pub fn mg_and_jacobi_give_the_same_compliance<B: DesignBackend>(be: &B) {
    let p = shear_cantilever(24);
    let (cj, ij) = uniform_compliance(
        be,
        &p,
        0.5,
        &options(1e-10, PrecondKind::Jacobi, RefineMode::F64),
    )
    .unwrap();
    let (cm, im) = uniform_compliance(
        be,
        &p,
        0.5,
        &options(1e-10, PrecondKind::Multigrid, RefineMode::F64),
    )
    .unwrap();
    println!(
        "jacobi {cj} ({} its), mg {cm} ({} its)",
        ij.iterations, im.iterations
    );
    assert!(((cm - cj) / cj).abs() < 1e-6, "{cm} vs {cj}");
    assert!(im.iterations * 5 < ij.iterations);
}

/// mg-PCG iterations at nelx 96 stay within 1.5 times those at 48.
pub fn mg_iterations_stay_flat_under_refinement<B: DesignBackend>(be: &B) {
    let its: Vec<usize> = [48, 96]
        .iter()
        .map(|&n| {
            let p = shear_cantilever(n);
            let o = options(1e-6, PrecondKind::Multigrid, RefineMode::Mixed);
            let (_, info) = uniform_compliance(be, &p, 0.5, &o).unwrap();
            println!(
                "nelx {n} ({} elements): {} CG iterations",
                p.mesh.elements(),
                info.iterations
            );
            info.iterations
        })
        .collect();
    assert!(its[1] as f64 <= 1.5 * its[0] as f64, "{its:?}");
}
