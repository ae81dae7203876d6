//! The assembled operator against a dense matrix built here, independently,
//! from the two-half-cells-in-series conductance formula; symmetry; and PCG with every
//! preconditioner against a dense direct solve.

use crate::util::{dense_solve, max_rel_diff, stack, Rng};
use cuth::assemble::assemble;
use cuth::backend::{cpu::CpuBackend, Backend, QuadDiagOps};
use cuth::grid::Grid;
use cuth::linalg::{
    build_precond, pcg, CgParams, PrecondKind, PrecondOptions, QuadDiagOperator, Stop,
};
use cuth::power::LayerPower;
use cuth::stack::Stack;

/// A random anisotropic stack of `layers` layers on an nx × ny grid.
fn random_stack(rng: &mut Rng, nx: usize, ny: usize, layers: usize, h_bottom: bool) -> Stack {
    let mut t = format!(
        "[chip]\nwidth = {}\nlength = {}\n[grid]\nnx = {nx}\nny = {ny}\n\
         [boundary]\nambient = 300.0\nh_top = {}\n",
        rng.uniform(1e-3, 5e-3),
        rng.uniform(1e-3, 5e-3),
        rng.uniform(100.0, 1e4)
    );
    if h_bottom {
        t += &format!("h_bottom = {}\n", rng.uniform(10.0, 500.0));
    }
    for l in 0..layers {
        t += &format!(
            "[materials.m{l}]\nkx = {}\nky = {}\nkz = {}\nheat_capacity = 1.6e6\n",
            rng.uniform(1.0, 400.0),
            rng.uniform(1.0, 400.0),
            rng.uniform(0.5, 200.0)
        );
    }
    for l in 0..layers {
        t += &format!(
            "[[layers]]\nname = \"l{l}\"\nmaterial = \"m{l}\"\nthickness = {}\ncells = {}\n",
            rng.uniform(2e-6, 5e-4),
            1 + rng.next_u64() % 3
        );
    }
    stack(&t)
}

/// Dense A from the formula: half-cell series conductances, convective films.
fn dense_from_formula(s: &Stack) -> Vec<Vec<f64>> {
    // Per z cell: thickness and conductivity.
    let mut dz = Vec::new();
    let mut kz = Vec::new();
    for l in &s.layers {
        for _ in 0..l.cells {
            dz.push(l.thickness_m / l.cells as f64);
            kz.push(l.material.k);
        }
    }
    let (nx, ny, nz) = (s.nx, s.ny, dz.len());
    let (dx, dy) = (s.width_m / nx as f64, s.length_m / ny as f64);
    let n = nx * ny * nz;
    let id = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
    let mut a = vec![vec![0.0; n]; n];
    let mut couple = |i: usize, j: usize, g: f64| {
        a[i][i] += g;
        a[j][j] += g;
        a[i][j] -= g;
        a[j][i] -= g;
    };
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let k = kz[z];
                if x + 1 < nx {
                    let g = dy * dz[z] / (dx / (2.0 * k[0]) + dx / (2.0 * k[0]));
                    couple(id(x, y, z), id(x + 1, y, z), g);
                }
                if y + 1 < ny {
                    let g = dx * dz[z] / (dy / (2.0 * k[1]) + dy / (2.0 * k[1]));
                    couple(id(x, y, z), id(x, y + 1, z), g);
                }
                if z + 1 < nz {
                    let g = dx * dy / (dz[z] / (2.0 * k[2]) + dz[z + 1] / (2.0 * kz[z + 1][2]));
                    couple(id(x, y, z), id(x, y, z + 1), g);
                }
            }
        }
    }
    for y in 0..ny {
        for x in 0..nx {
            let top = id(x, y, nz - 1);
            a[top][top] += dx * dy / (dz[nz - 1] / (2.0 * kz[nz - 1][2]) + 1.0 / s.h_top);
            if let Some(h) = s.h_bottom {
                let bot = id(x, y, 0);
                a[bot][bot] += dx * dy / (dz[0] / (2.0 * kz[0][2]) + 1.0 / h);
            }
        }
    }
    a
}

fn no_power(s: &Stack, g: &Grid) -> Vec<LayerPower> {
    (0..s.layers.len())
        .map(|_| LayerPower {
            map_w: vec![0.0; g.plane()],
            ..Default::default()
        })
        .collect()
}

#[test]
fn quad_diag_spmv_equals_dense_formula_and_is_symmetric() {
    let mut rng = Rng::new(7);
    for case in 0..6 {
        let s = random_stack(
            &mut rng,
            3 + case % 3,
            2 + case % 4,
            2 + case % 3,
            case % 2 == 0,
        );
        let g = Grid::from_stack(&s);
        let sys = assemble(&s, &g, &no_power(&s, &g));
        let dense = dense_from_formula(&s);
        let n = g.len();
        let be = CpuBackend::new();
        let a = be.upload_matrix(&sys.a).unwrap();
        // Column j of A by SpMV on e_j: compare with the dense matrix and its transpose.
        let mut y = vec![0.0; n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            be.spmv(&a, &e, &mut y).unwrap();
            for i in 0..n {
                let scale = dense[i][i].abs().max(dense[j][j].abs());
                assert!(
                    (y[i] - dense[i][j]).abs() <= 1e-13 * scale,
                    "A[{i},{j}] case {case}"
                );
                assert!(
                    (y[i] - dense[j][i]).abs() <= 1e-13 * scale,
                    "symmetry at ({i},{j})"
                );
            }
        }
        // And on a random vector.
        let v: Vec<f64> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
        be.spmv(&a, &v, &mut y).unwrap();
        let want: Vec<f64> = dense
            .iter()
            .map(|row| row.iter().zip(&v).map(|(p, q)| p * q).sum())
            .collect();
        assert!(max_rel_diff(&y, &want) < 1e-13);
    }
}

#[test]
fn pcg_with_every_preconditioner_reaches_the_dense_solution() {
    let mut rng = Rng::new(11);
    for case in 0..4 {
        let s = random_stack(&mut rng, 4 + case, 3 + case, 3, case % 2 == 1);
        let g = Grid::from_stack(&s);
        let sys = assemble(&s, &g, &no_power(&s, &g));
        let n = g.len();
        let b: Vec<f64> = (0..n).map(|_| rng.uniform(0.0, 1.0)).collect();
        let exact = dense_solve(dense_from_formula(&s), b.clone());
        let be = CpuBackend::new();
        let a = be.upload_matrix(&sys.a).unwrap();
        let bd = be.upload(&b).unwrap();
        for kind in [
            PrecondKind::None,
            PrecondKind::Jacobi,
            PrecondKind::Chebyshev,
        ] {
            let mut op = QuadDiagOperator::new(&be, &a, n);
            let mut m = build_precond(kind, &be, &mut op, Some(&sys.a), &PrecondOptions::default())
                .unwrap();
            let mut x = be.zeros(n).unwrap();
            let params = CgParams {
                stop: Stop::relative(1e-11),
                max_iter: 10 * n,
                ..Default::default()
            };
            let info = pcg(&be, &mut op, m.as_mut(), &bd, &mut x, &params).unwrap();
            let err = max_rel_diff(&x, &exact);
            assert!(
                err < 1e-9,
                "{kind:?} case {case}: rel err {err:e} after {} its",
                info.iterations
            );
        }
    }
}
