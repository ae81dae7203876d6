//! Stiffness matrix of the 8-node trilinear hexahedron (Q1, 24 DOF) for
//! isotropic linear elasticity, integrated by Gauss quadrature here rather
//! than pasted from a table, so ν can change and the numbers can be checked.
//!
//! Convention: the element is the unit cube \[0,1\]³ (edge h = 1) with Young's
//! modulus E = 1. For an element of edge h the matrix scales as h·Kₑ (3D
//! elasticity), so compliance values for a physical size differ from ours by
//! that factor; every compliance `cuth topopt` reports uses h = 1. Beware:
//! top3d's tabulated `KE` (Liu & Tovar 2014, and codes derived from it) is
//! exactly twice this matrix, i.e. that of an edge-2 element (the reference
//! cube [−1,1]³ with unit Jacobian), so its compliances are half of ours for
//! the same mesh and load. Rows and columns follow the local DOF order of
//! [`crate::topopt::mesh`]: 3a + c for local node a, direction c.

use super::mesh::LOCAL_NODES;

/// Row-major 24 × 24 element matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementMatrix(pub [[f64; 24]; 24]);

impl ElementMatrix {
    /// Row-major flat copy, the layout the kernels read.
    pub fn flat(&self) -> Vec<f64> {
        self.0.iter().flatten().copied().collect()
    }

    /// Diagonal entries (the matrix-free Jacobi preconditioner sums them).
    pub fn diagonal(&self) -> [f64; 24] {
        std::array::from_fn(|i| self.0[i][i])
    }
}

/// Isotropic elasticity matrix in Voigt order (xx, yy, zz, xy, yz, zx) with
/// engineering shear strains.
pub fn elasticity_matrix(e: f64, nu: f64) -> [[f64; 6]; 6] {
    let f = e / ((1.0 + nu) * (1.0 - 2.0 * nu));
    std::array::from_fn(|i| {
        std::array::from_fn(|j| match (i < 3, j < 3) {
            (true, true) if i == j => f * (1.0 - nu),
            (true, true) => f * nu,
            (false, false) if i == j => f * (1.0 - 2.0 * nu) / 2.0,
            _ => 0.0,
        })
    })
}

/// Gauss–Legendre points and weights on [−1, 1].
fn gauss_rule(order: usize) -> Vec<(f64, f64)> {
    match order {
        1 => vec![(0.0, 2.0)],
        2 => {
            let g = 1.0 / 3f64.sqrt();
            vec![(-g, 1.0), (g, 1.0)]
        }
        3 => {
            let g = (3.0f64 / 5.0).sqrt();
            vec![(-g, 5.0 / 9.0), (0.0, 8.0 / 9.0), (g, 5.0 / 9.0)]
        }
        _ => panic!("gauss_rule: order {order} not tabulated (1..=3)"),
    }
}

/// Strain-displacement matrix B (6 × 24) of the unit cube at reference point
/// (ξ, η, ζ) ∈ [−1, 1]³. The map x = (ξ + 1)/2 has Jacobian ½·I, so
/// ∂N/∂x = 2 ∂N/∂ξ.
pub fn strain_displacement(xi: f64, eta: f64, zeta: f64) -> [[f64; 24]; 6] {
    let mut b = [[0.0; 24]; 6];
    for (a, corner) in LOCAL_NODES.iter().enumerate() {
        let s = corner.map(|c| if c == 0 { -1.0 } else { 1.0 });
        let (fx, fy, fz) = (1.0 + xi * s[0], 1.0 + eta * s[1], 1.0 + zeta * s[2]);
        // dN/dx = 2 · dN/dξ, N = fx·fy·fz / 8.
        let dx = 2.0 * s[0] * fy * fz / 8.0;
        let dy = 2.0 * fx * s[1] * fz / 8.0;
        let dz = 2.0 * fx * fy * s[2] / 8.0;
        let c = 3 * a;
        b[0][c] = dx;
        b[1][c + 1] = dy;
        b[2][c + 2] = dz;
        b[3][c] = dy;
        b[3][c + 1] = dx;
        b[4][c + 1] = dz;
        b[4][c + 2] = dy;
        b[5][c] = dz;
        b[5][c + 2] = dx;
    }
    b
}

/// Kₑ = ∫ Bᵀ D B dV over the unit cube with an `order`-point Gauss rule per
/// direction. Order 2 is exact for the trilinear element (the integrand is
/// at most quadratic in each coordinate); higher orders are for checks.
pub fn hex8_stiffness_with(order: usize, e: f64, nu: f64) -> ElementMatrix {
    let d = elasticity_matrix(e, nu);
    let rule = gauss_rule(order);
    let det_j = 1.0 / 8.0;
    let mut k = [[0.0; 24]; 24];
    for &(xi, wx) in &rule {
        for &(eta, wy) in &rule {
            for &(zeta, wz) in &rule {
                let b = strain_displacement(xi, eta, zeta);
                let w = wx * wy * wz * det_j;
                // DB (6 × 24)
                let mut db = [[0.0; 24]; 6];
                for i in 0..6 {
                    for j in 0..24 {
                        db[i][j] = (0..6).map(|m| d[i][m] * b[m][j]).sum();
                    }
                }
                for r in 0..24 {
                    for c in 0..24 {
                        k[r][c] += w * (0..6).map(|m| b[m][r] * db[m][c]).sum::<f64>();
                    }
                }
            }
        }
    }
    ElementMatrix(k)
}

/// Kₑ of a box element of edges `size` (mesh units), E = 1, exact 2-point
/// rule: the multigrid's rediscretised coarse element. With the map
/// x_d = (ξ_d + 1)·size_d/2, ∂N/∂x_d = (2/size_d) ∂N/∂ξ_d and det J =
/// Π size_d / 8; `size = [1, 1, 1]` is [`hex8_stiffness`], and a cube of
/// edge h gives h times it (3D elasticity scales linearly with h).
pub fn hex8_box_stiffness(nu: f64, size: [f64; 3]) -> ElementMatrix {
    let d = elasticity_matrix(1.0, nu);
    let rule = gauss_rule(2);
    let det_j = size[0] * size[1] * size[2] / 8.0;
    let mut k = [[0.0; 24]; 24];
    for &(xi, wx) in &rule {
        for &(eta, wy) in &rule {
            for &(zeta, wz) in &rule {
                let b = box_strain_displacement(xi, eta, zeta, size);
                let w = wx * wy * wz * det_j;
                for r in 0..24 {
                    for c in 0..24 {
                        let mut v = 0.0;
                        for m in 0..6 {
                            let db: f64 = (0..6).map(|q| d[m][q] * b[q][c]).sum();
                            v += b[m][r] * db;
                        }
                        k[r][c] += w * v;
                    }
                }
            }
        }
    }
    ElementMatrix(k)
}

/// B of a box element of edges `size`: [`strain_displacement`] of the unit
/// cube with each ∂/∂x_d column scaled by 1/size_d.
fn box_strain_displacement(xi: f64, eta: f64, zeta: f64, size: [f64; 3]) -> [[f64; 24]; 6] {
    let unit = strain_displacement(xi, eta, zeta);
    let mut b = [[0.0; 24]; 6];
    // Row m's entry for DOF column c is ∂N/∂x_d with d the derivative
    // direction; derive d from (row, component).
    for (m, row) in unit.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let comp = c % 3;
            let dir = match (m, comp) {
                (0, _) => 0,
                (1, _) => 1,
                (2, _) => 2,
                (3, 0) => 1,
                (3, _) => 0,
                (4, 1) => 2,
                (4, _) => 1,
                (5, 0) => 2,
                (_, _) => 0,
            };
            b[m][c] = v / size[dir];
        }
    }
    b
}

/// The element matrix every operator uses: E = 1, unit cube, exact 2-point
/// Gauss rule.
pub fn hex8_stiffness(nu: f64) -> ElementMatrix {
    hex8_stiffness_with(2, 1.0, nu)
}

#[cfg(test)]
mod smoke {
    #[test]
    fn box_element_scales_with_size() {
        let unit = super::hex8_stiffness(0.3).0;
        let same = super::hex8_box_stiffness(0.3, [1.0; 3]).0;
        let two = super::hex8_box_stiffness(0.3, [2.0; 3]).0;
        for r in 0..24 {
            for c in 0..24 {
                assert!((same[r][c] - unit[r][c]).abs() < 1e-14);
                assert!((two[r][c] - 2.0 * unit[r][c]).abs() < 1e-13);
            }
        }
        // An anisotropic box: still symmetric, rigid translations in its kernel.
        let k = super::hex8_box_stiffness(0.3, [2.0, 1.0, 4.0]).0;
        for (r, row) in k.iter().enumerate() {
            for c in 0..3 {
                let s: f64 = (0..8).map(|a| row[3 * a + c]).sum();
                assert!(s.abs() < 1e-12);
            }
            for (c, v) in row.iter().enumerate() {
                assert!((v - k[c][r]).abs() < 1e-13);
            }
        }
    }

    #[test]
    fn rows_sum_to_zero_and_diagonal_matches_top3d() {
        let k = super::hex8_stiffness(0.3).0;
        for row in &k {
            for c in 0..3 {
                let s: f64 = (0..8).map(|a| row[3 * a + c]).sum();
                assert!(s.abs() < 1e-12);
            }
        }
        // Unit cube by hand: ∫(∂N₀/∂x)² = 1/9 and likewise in y, z, so
        // K₀₀ = (D₁₁ + 2G)/9.
        let d = super::elasticity_matrix(1.0, 0.3);
        let by_hand = (d[0][0] + 2.0 * d[3][3]) / 9.0;
        assert!(
            (k[0][0] - by_hand).abs() < 1e-12,
            "{} vs {}",
            k[0][0],
            by_hand
        );
        // top3d (Liu & Tovar 2014) tabulates KE(1,1) = −(6ν−4)/9 / ((1+ν)(1−2ν)),
        // twice ours: its matrix is that of an edge-2 element (see module doc).
        let top3d = -(6.0 * 0.3 - 4.0) / 9.0 / (1.3 * 0.4);
        assert!((2.0 * k[0][0] - top3d).abs() < 1e-12);
    }
}
