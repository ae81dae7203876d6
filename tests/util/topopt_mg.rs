//! Shared by `solver::topopt_mg` and `gpu::topopt_mg`: one
//! application of topopt's multigrid preconditioner on any backend, and a
//! high-contrast test problem for it.

use cuth::linalg::precond::Preconditioner;
use cuth::topopt::mg::{CoarseSolver, ElasticMg};
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
