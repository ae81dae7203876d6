//! topopt's multigrid preconditioner (`--precond mg`, `topopt::mg`) on the
//! CPU: the rediscretised coarse operator against an independent Galerkin
//! PᵀKP, its SPD-ness, CG iterations under refinement, and the compliance
//! against Jacobi-PCG; the W-cycle option (`--mg-w-levels`) symmetric and
//! positive, and iteration counts under refinement of an optimized design.
//! (The compliance and refinement bodies, shared with the GPU tests, are in
//! `util::topopt_mg`.)

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::{PrecondKind, RefineMode};

use crate::util::is_positive_definite;
use crate::util::topopt_mg::{self, apply_mg, contrast_problem, options};
use cuth::topopt::element::hex8_box_stiffness;
use cuth::topopt::evaluate::Evaluator;
use cuth::topopt::filter::DensityFilter;
use cuth::topopt::mg::{plan_to, Transfer};
use cuth::topopt::optimize::SolveOptions;
use cuth::topopt::optimize::{optimize, OptimizeOptions};
use cuth::topopt::presets::{self, LoadKind, MeshRequest};
use cuth::topopt::{hex8_stiffness, ElasticBackend, Mesh, OpPrecision, OperatorKind};

/// The dense matrix of the matrix-free operator on `mesh` with element
/// matrix `ke`, moduli `e` and fixed mask `fixed`, column by column.
fn dense(mesh: Mesh, ke: &cuth::topopt::ElementMatrix, e: &[f64], fixed: &[bool]) -> Vec<Vec<f64>> {
    let be = CpuBackend::new();
    let mut op = be
        .elastic_new(&mesh, ke, fixed, OperatorKind::NodeCentred)
        .unwrap();
    be.elastic_set_moduli(&mut op, e).unwrap();
    let n = mesh.dofs();
    let mut cols = Vec::with_capacity(n);
    let mut s = vec![0.0; 1];
    for j in 0..n {
        let mut x = vec![0.0; n];
        x[j] = 1.0;
        let mut y = vec![0.0; n];
        be.elastic_apply_dot(&mut op, OpPrecision::F64, &x, &mut y, &mut s, 0)
            .unwrap();
        cols.push(y);
    }
    // cols[j][i] = K[i][j]; K symmetric up to the fixed rows checked below.
    (0..n)
        .map(|i| (0..n).map(|j| cols[j][i]).collect())
        .collect()
}

/// PᵀKP with P built column by column from the transfer, identity on the
/// coarse fixed DOFs (as the coarse operator acts there).
fn galerkin(t: &Transfer, kf: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let (nf, nc) = (t.fine.dofs(), t.coarse.dofs());
    let p: Vec<Vec<f64>> = (0..nc)
        .map(|j| {
            let mut xc = vec![0.0; nc];
            xc[j] = 1.0;
            let mut xf = vec![0.0; nf];
            t.prolong_add(&xc, &mut xf);
            xf
        })
        .collect(); // p[j] = column j of P
    let kp: Vec<Vec<f64>> = p
        .iter()
        .map(|col| {
            (0..nf)
                .map(|i| (0..nf).map(|k| kf[i][k] * col[k]).sum())
                .collect()
        })
        .collect(); // kp[j] = K P e_j
    (0..nc)
        .map(|i| {
            (0..nc)
                .map(|j| {
                    if t.coarse_fixed[i] || t.coarse_fixed[j] {
                        f64::from(u8::from(i == j))
                    } else {
                        (0..nf).map(|k| p[i][k] * kp[j][k]).sum()
                    }
                })
                .collect()
        })
        .collect()
}

fn max_rel_diff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    let scale = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let d = a
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    d / scale
}

#[test]
fn rediscretised_coarse_operator_is_spd_and_matches_galerkin_at_uniform_density() {
    let (nu, fine) = (0.3, Mesh::new(4, 2, 2));
    let levels = plan_to(fine, 2, 0);
    let (coarse, size) = levels[1];
    assert_eq!([coarse.nelx, coarse.nely, coarse.nelz], [2, 1, 1]);
    // Clamped at x = 0 (fixed nodes coincide with coarse nodes).
    let fixed: Vec<bool> = (0..fine.dofs())
        .map(|d| fine.node_coords(d / 3)[0] == 0)
        .collect();
    let t = Transfer::new(fine, coarse, &fixed);
    let ke_c = hex8_box_stiffness(nu, size);
    let ke = hex8_stiffness(nu);
    // Uniform density: the coarse Q1 space is a subspace of the fine one and
    // 2-point Gauss is exact, so PᵀKP equals the rediscretisation.
    let e = vec![0.7; fine.elements()];
    let kf = dense(fine, &ke, &e, &fixed);
    let g = galerkin(&t, &kf);
    let r = dense(coarse, &ke_c, &t.coarse_moduli(&e), &t.coarse_fixed);
    let uniform = max_rel_diff(&g, &r);
    println!("uniform density: max |PᵀKP − K_c| / max|K_c| = {uniform:.2e}");
    assert!(uniform < 1e-12);
    assert!(is_positive_definite(&r) && is_positive_definite(&g));
    for (i, row) in r.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            assert!((v - r[j][i]).abs() < 1e-13);
        }
    }
    // High-contrast density: mean moduli are not the Galerkin operator (it
    // keeps the sub-element layout); still SPD, and the two differ.
    let e: Vec<f64> = (0..fine.elements())
        .map(|k| if (k * 7) % 3 == 0 { 1.0 } else { 1e-9 })
        .collect();
    let g = galerkin(&t, &dense(fine, &ke, &e, &fixed));
    let r = dense(coarse, &ke_c, &t.coarse_moduli(&e), &t.coarse_fixed);
    let contrast = max_rel_diff(&g, &r);
    println!("contrast 1e9: max |PᵀKP − K_c| / max|K_c| = {contrast:.2e}");
    assert!(contrast > 1e-3, "{contrast}");
    assert!(is_positive_definite(&r) && is_positive_definite(&g));
}

#[test]
fn mg_and_jacobi_give_the_same_compliance() {
    topopt_mg::mg_and_jacobi_give_the_same_compliance(&CpuBackend::new());
}

#[test]
fn mg_iterations_stay_flat_under_refinement() {
    topopt_mg::mg_iterations_stay_flat_under_refinement(&CpuBackend::new());
}

#[test]
fn v_and_w_cycles_are_symmetric_and_positive() {
    // 4 levels: 32×16×8 → 16×8×4 → 8×4×2 → 4×2×1 (dense).
    let mesh = Mesh::new(32, 16, 8);
    let (e, fixed) = contrast_problem(mesh);
    let r = |seed: f64| -> Vec<f64> {
        (0..mesh.dofs())
            .map(|d| match fixed[d] {
                true => 0.0,
                false => (d as f64 * seed).sin(),
            })
            .collect()
    };
    let (r1, r2) = (r(0.37), r(1.91));
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    for w in [0, 1, 2, 9] {
        let z = apply_mg(
            &CpuBackend::new(),
            mesh,
            &e,
            &fixed,
            w,
            &[r1.clone(), r2.clone()],
        );
        let (a, b) = (dot(&r2, &z[0]), dot(&r1, &z[1]));
        println!("w_levels {w}: r2·Mr1 = {a:.12e}, r1·Mr2 = {b:.12e}");
        assert!(
            (a - b).abs() <= 1e-10 * a.abs().max(b.abs()),
            "w {w}: {a} vs {b}"
        );
        assert!(dot(&r1, &z[0]) > 0.0 && dot(&r2, &z[1]) > 0.0, "w {w}");
    }
}

/// The physical densities of a short optimization at 16×8×4, refined by
/// `k` (each element → k³ children) on the cantilever preset's mesh there.
fn refined_design(k: usize) -> (cuth::topopt::problem::Problem, Vec<f64>) {
    let be = CpuBackend::new();
    let at = |n: usize| {
        let req = MeshRequest {
            nelx: Some(n),
            ..Default::default()
        };
        presets::build("cantilever", &req, LoadKind::Patch).unwrap()
    };
    let p0 = at(16);
    let opts = OptimizeOptions {
        max_iterations: 40,
        operator: OperatorKind::NodeCentred,
        cg: options(1e-5, PrecondKind::Multigrid, RefineMode::Mixed),
        schedule: cuth::topopt::continuation::Schedule::standard(p0.penal, p0.rmin),
    };
    let out = optimize(&be, &p0, &opts, &mut |_| {}).unwrap();
    let m0 = p0.mesh;
    let p = at(16 * k);
    let m = p.mesh;
    assert_eq!(
        [m.nelx, m.nely, m.nelz],
        [k * m0.nelx, k * m0.nely, k * m0.nelz]
    );
    let x = (0..m.elements())
        .map(|el| {
            let [i, j, l] = m.element_coords(el);
            out.best.rho[m0.element(i / k, j / k, l / k)]
        })
        .collect();
    (p, x)
}

#[test]
fn optimized_design_iterations_stay_flat_under_refinement() {
    let be = CpuBackend::new();
    let mut its = vec![Vec::new(); 2];
    for k in [4, 8] {
        let (p, x) = refined_design(k);
        let filter = DensityFilter::new(p.mesh, 0.5);
        for (slot, w) in [0, 2].into_iter().enumerate() {
            let o = SolveOptions {
                mg_w_levels: w,
                ..options(1e-6, PrecondKind::Multigrid, RefineMode::F64)
            };
            let mut ev = Evaluator::new(&be, &p, OperatorKind::NodeCentred, o).unwrap();
            let r = ev.evaluate(&filter, 3.0, 1e-6, &x).unwrap();
            assert!(!r.cg_failed, "{:?}", r.cg);
            println!(
                "optimized design, {} elements, w_levels {w}: {} CG iterations",
                p.mesh.elements(),
                r.cg.iterations
            );
            its[slot].push(r.cg.iterations);
        }
    }
    for v in &its {
        assert!(v[1] as f64 <= 1.5 * v[0] as f64, "{its:?}");
    }
}
