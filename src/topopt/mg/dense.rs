//! The coarsest level solved directly (`--mg-coarse dense`): K_c assembled
//! densely on the host from the coarsest moduli (a few dozen elements: the
//! one read-back of the hierarchy per design step), factored by Cholesky and
//! inverted, and the inverse uploaded, so that every cycle's coarse solve
//! is one dense matrix-vector product on the device: no iterations, no
//! read-backs, and M is a fixed linear operator. Affordable below
//! [`DENSE_MAX_DOFS`] (the inverse costs ~n³ flops per design step).

use super::super::element::ElementMatrix;
use super::super::mesh::Mesh;

/// The coarsest level is solved densely only at or below this many DOFs
/// (plans for the dense solve coarsen to [`DENSE_COARSEST_DOFS`]).
pub const DENSE_MAX_DOFS: usize = 1500;
/// Where a plan for the dense coarse solve stops coarsening.
pub const DENSE_COARSEST_DOFS: usize = 300;

/// K(E) of `mesh` with element matrix `ke`, dense row-major; fixed DOFs are
/// identity rows and columns (as the matrix-free operator).
pub fn assemble(mesh: &Mesh, ke: &ElementMatrix, e: &[f64], fixed: &[bool]) -> Vec<f64> {
    let n = mesh.dofs();
    let mut k = vec![0.0; n * n];
    for (el, &ee) in e.iter().enumerate() {
        let dofs = mesh.element_dofs(el);
        for (a, &da) in dofs.iter().enumerate() {
            if fixed[da] {
                continue;
            }
            for (b, &db) in dofs.iter().enumerate() {
                if !fixed[db] {
                    k[da * n + db] += ee * ke.0[a][b];
                }
            }
        }
    }
    for d in (0..n).filter(|&d| fixed[d]) {
        k[d * n + d] = 1.0;
    }
    k
}

/// A⁻¹ of the SPD matrix `a` (n×n, row-major) by Cholesky; None if a pivot
/// is not positive.
pub fn spd_inverse(a: &[f64], n: usize) -> Option<Vec<f64>> {
    // L (lower, row-major) with A = L Lᵀ.
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    // Column c of A⁻¹: L y = e_c, Lᵀ x = y. A⁻¹ is symmetric, so column c
    // is stored as row c.
    let mut inv = vec![0.0; n * n];
    let mut y = vec![0.0; n];
    for c in 0..n {
        for i in 0..n {
            let mut s = if i == c { 1.0 } else { 0.0 };
            for k in c.min(i)..i {
                s -= l[i * n + k] * y[k];
            }
            y[i] = if i < c { 0.0 } else { s / l[i * n + i] };
        }
        let row = &mut inv[c * n..(c + 1) * n];
        for i in (0..n).rev() {
            let mut s = y[i];
            for k in i + 1..n {
                s -= l[k * n + i] * row[k];
            }
            row[i] = s / l[i * n + i];
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::topopt::backend::{ElasticBackend, OpPrecision, OperatorKind};
    use crate::topopt::element::hex8_box_stiffness;

    #[test]
    fn assembled_matrix_equals_the_operator_and_inverts() {
        let mesh = Mesh::new(3, 2, 2);
        let ke = hex8_box_stiffness(0.3, [2.0, 2.0, 1.0]);
        let n = mesh.dofs();
        let fixed: Vec<bool> = (0..n).map(|d| d % 13 == 0 || d < 6).collect();
        let e: Vec<f64> = (0..mesh.elements())
            .map(|i| if i % 3 == 0 { 1e-3 } else { 1.0 })
            .collect();
        let k = assemble(&mesh, &ke, &e, &fixed);
        // Columns of the dense K equal the operator applied to unit vectors.
        let be = CpuBackend::new();
        let mut op = be
            .elastic_new(&mesh, &ke, &fixed, OperatorKind::NodeCentred)
            .unwrap();
        be.elastic_set_moduli(&mut op, &e).unwrap();
        let (mut y, mut s) = (vec![0.0; n], vec![0.0; 1]);
        for c in 0..n {
            let mut x = vec![0.0; n];
            x[c] = 1.0;
            be.elastic_apply_dot(&mut op, OpPrecision::F64, &x, &mut y, &mut s, 0)
                .unwrap();
            for r in 0..n {
                assert!((y[r] - k[r * n + c]).abs() < 1e-13, "({r}, {c})");
            }
        }
        let inv = spd_inverse(&k, n).expect("SPD");
        // K K⁻¹ = I, relative to the scale of the entries.
        let mut worst: f64 = 0.0;
        for i in 0..n {
            for j in 0..n {
                let v: f64 = (0..n).map(|m| k[i * n + m] * inv[m * n + j]).sum();
                worst = worst.max((v - if i == j { 1.0 } else { 0.0 }).abs());
            }
        }
        assert!(worst < 1e-6, "{worst}");
        // Not SPD: refused.
        let mut bad = k.clone();
        bad[7 * n + 7] = -1.0;
        assert!(spd_inverse(&bad, n).is_none());
    }
}
