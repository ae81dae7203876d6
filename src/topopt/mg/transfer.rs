//! The level plan and the trilinear transfers of topopt's multigrid.
//!
//! Coarsening halves a direction's element count (n → ⌈n/2⌉) when the
//! coarse element stays no more than 4 times longer than it is in the
//! shortest direction; the hierarchy stops when no direction can be halved
//! or the level has at most [`COARSEST_DOFS`] DOFs. An odd count is halved
//! as if the fine mesh were padded with one void element layer: the last
//! coarse element covers one fine element and one outside the domain, the
//! coarse node beyond the fine mesh is reached only by the last fine node
//! (weight ½), and the coarse moduli count the missing children as 0. So
//! 200×100×50 coarsens to 13×7×4 (1.7 k DOFs; 4×2×1 for the dense coarse
//! solve) rather than stopping at 25×25×25 (52.7 k), and no mesh falls back
//! to fewer levels for parity.
//!
//! P (coarse → fine) is trilinear along halved directions and the identity
//! along the others: a fine node at an even index takes its coincident
//! coarse node, one at an odd index the mean of its two neighbours. Fixed
//! DOFs: P's rows of fixed fine DOFs and its columns of fixed coarse DOFs
//! are zero; a coarse DOF is fixed when any fine DOF of the same component
//! in its support is (over-fixing keeps the coarse operator SPD).
//! Restriction is Pᵀ. Host versions here (the CPU backend and the tests);
//! `kernels/topopt_mg.cu` does the same per DOF on a GPU.

use super::super::mesh::Mesh;

/// Levels stop coarsening at or below this many DOFs.
pub const COARSEST_DOFS: usize = 3000;
/// Largest element aspect ratio coarsening may create.
const MAX_ASPECT: f64 = 4.0;

/// One fine → coarse step.
#[derive(Clone, Debug)]
pub struct Transfer {
    pub fine: Mesh,
    pub coarse: Mesh,
    /// 2 where the direction is halved, else 1.
    pub factor: [usize; 3],
    pub fine_fixed: Vec<bool>,
    pub coarse_fixed: Vec<bool>,
}

/// Element edge lengths of each level (mesh units of the finest) and the
/// fine → coarse factors of each step.
pub fn plan(mesh: Mesh, max_levels: usize) -> Vec<(Mesh, [f64; 3])> {
    plan_to(mesh, max_levels, COARSEST_DOFS)
}

/// [`plan`] stopping at or below `coarsest_dofs` (tests use tiny meshes).
pub fn plan_to(mesh: Mesh, max_levels: usize, coarsest_dofs: usize) -> Vec<(Mesh, [f64; 3])> {
    let mut out = vec![(mesh, [1.0; 3])];
    while out.len() < max_levels.max(1) {
        let (m, size) = out[out.len() - 1];
        if m.dofs() <= coarsest_dofs {
            break;
        }
        let n = [m.nelx, m.nely, m.nelz];
        let min = size.iter().cloned().fold(f64::INFINITY, f64::min);
        let halve: [bool; 3] =
            std::array::from_fn(|d| n[d] >= 2 && 2.0 * size[d] <= MAX_ASPECT * min);
        // Keep the aspect bound for the result too (min may grow).
        if !halve.iter().any(|&h| h) {
            break;
        }
        let nc: [usize; 3] =
            std::array::from_fn(|d| if halve[d] { n[d].div_ceil(2) } else { n[d] });
        let sc: [f64; 3] = std::array::from_fn(|d| if halve[d] { 2.0 * size[d] } else { size[d] });
        out.push((Mesh::new(nc[0], nc[1], nc[2]), sc));
    }
    out
}

/// (coarse index, weight) pairs of fine node index `i` along a direction.
fn up(i: usize, f: usize) -> ([(usize, f64); 2], usize) {
    if f == 1 || i.is_multiple_of(2) {
        ([(i / f, 1.0), (0, 0.0)], 1)
    } else {
        ([((i - 1) / 2, 0.5), (i.div_ceil(2), 0.5)], 2)
    }
}

/// (fine index, weight) pairs of coarse node index `c` along a direction
/// with `nf` fine elements (fine nodes 0..=nf; with nf odd the last coarse
/// node lies beyond them and has only the one at weight ½).
fn down(c: usize, f: usize, nf: usize) -> Vec<(usize, f64)> {
    if f == 1 {
        return vec![(c, 1.0)];
    }
    let mut v = Vec::with_capacity(3);
    if 2 * c <= nf {
        v.push((2 * c, 1.0));
    }
    if c >= 1 {
        v.push((2 * c - 1, 0.5));
    }
    if 2 * c < nf {
        v.push((2 * c + 1, 0.5));
    }
    v
}

impl Transfer {
    /// The step from `fine` (with its fixed mask) to `coarse`.
    pub fn new(fine: Mesh, coarse: Mesh, fine_fixed: &[bool]) -> Transfer {
        let halved = |f: usize, c: usize| if f == c { 1 } else { 2 };
        let factor = [
            halved(fine.nelx, coarse.nelx),
            halved(fine.nely, coarse.nely),
            halved(fine.nelz, coarse.nelz),
        ];
        let mut t = Transfer {
            fine,
            coarse,
            factor,
            fine_fixed: fine_fixed.to_vec(),
            coarse_fixed: vec![false; coarse.dofs()],
        };
        let mut cf = vec![false; coarse.dofs()];
        t.for_coarse(|cn, support| {
            for c in 0..3 {
                cf[3 * cn + c] = support.iter().any(|&(f, _)| fine_fixed[3 * f + c]);
            }
        });
        t.coarse_fixed = cf;
        t
    }

    /// Calls `f(coarse node, [(fine node, weight)])` for every coarse node.
    fn for_coarse(&self, mut f: impl FnMut(usize, &[(usize, f64)])) {
        let (fm, cm) = (self.fine, self.coarse);
        let nf = [fm.nelx, fm.nely, fm.nelz];
        let mut support = Vec::with_capacity(27);
        for cn in 0..cm.nodes() {
            let [i, j, k] = cm.node_coords(cn);
            support.clear();
            for (fi, wi) in down(i, self.factor[0], nf[0]) {
                for &(fj, wj) in &down(j, self.factor[1], nf[1]) {
                    for &(fk, wk) in &down(k, self.factor[2], nf[2]) {
                        support.push((fm.node(fi, fj, fk), wi * wj * wk));
                    }
                }
            }
            f(cn, &support);
        }
    }

    /// rc = Pᵀ rf.
    pub fn restrict(&self, rf: &[f64], rc: &mut [f64]) {
        self.for_coarse(|cn, support| {
            for c in 0..3 {
                let d = 3 * cn + c;
                rc[d] = if self.coarse_fixed[d] {
                    0.0
                } else {
                    support
                        .iter()
                        .filter(|&&(f, _)| !self.fine_fixed[3 * f + c])
                        .map(|&(f, w)| w * rf[3 * f + c])
                        .sum()
                };
            }
        });
    }

    /// xf += P xc.
    pub fn prolong_add(&self, xc: &[f64], xf: &mut [f64]) {
        let (fm, cm) = (self.fine, self.coarse);
        for (n, xn) in xf.chunks_mut(3).enumerate() {
            let [i, j, k] = fm.node_coords(n);
            let ((wi, ni), (wj, nj), (wk, nk)) = (
                up(i, self.factor[0]),
                up(j, self.factor[1]),
                up(k, self.factor[2]),
            );
            for (c, x) in xn.iter_mut().enumerate() {
                if self.fine_fixed[3 * n + c] {
                    continue;
                }
                let mut v = 0.0;
                for &(ci, a) in &wi[..ni] {
                    for &(cj, b) in &wj[..nj] {
                        for &(ck, g) in &wk[..nk] {
                            let d = 3 * cm.node(ci, cj, ck) + c;
                            if !self.coarse_fixed[d] {
                                v += a * b * g * xc[d];
                            }
                        }
                    }
                }
                *x += v;
            }
        }
    }

    /// Coarse moduli: the mean of each coarse element's children, those
    /// beyond an odd fine mesh counted as 0 (the padding is void).
    pub fn coarse_moduli(&self, e: &[f64]) -> Vec<f64> {
        let (fm, cm) = (self.fine, self.coarse);
        let [fx, fy, fz] = self.factor;
        let share = 1.0 / (fx * fy * fz) as f64;
        (0..cm.elements())
            .map(|ce| {
                let [x, y, z] = cm.element_coords(ce);
                let mut s = 0.0;
                for dz in 0..fz {
                    for dy in 0..fy {
                        for dx in 0..fx {
                            let (i, j, k) = (fx * x + dx, fy * y + dy, fz * z + dz);
                            if i < fm.nelx && j < fm.nely && k < fm.nelz {
                                s += e[fm.element(i, j, k)];
                            }
                        }
                    }
                }
                s * share
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_halves_even_directions_and_bounds_the_aspect() {
        let p = plan(Mesh::new(200, 100, 50), 10);
        let dims: Vec<[usize; 3]> = p.iter().map(|(m, _)| [m.nelx, m.nely, m.nelz]).collect();
        assert_eq!(dims[1], [100, 50, 25]);
        assert_eq!(dims[2], [50, 25, 13]);
        assert_eq!(dims.last(), Some(&[13, 7, 4]));
        for (_, s) in &p {
            let (lo, hi) = (
                s.iter().cloned().fold(9e9, f64::min),
                s.iter().cloned().fold(0.0, f64::max),
            );
            assert!(hi / lo <= MAX_ASPECT);
        }
        // Odd everywhere: padded halving, ⌈n/2⌉.
        let p = plan_to(Mesh::new(9, 5, 3), 10, 10);
        let m = p[1].0;
        assert_eq!([m.nelx, m.nely, m.nelz], [5, 3, 2]);
    }

    #[test]
    fn restriction_is_the_transpose_of_prolongation() {
        // Even (halved x, y; z kept) and odd, padded (halved everywhere).
        for (fine, coarse) in [
            (Mesh::new(4, 2, 3), Mesh::new(2, 1, 3)),
            (Mesh::new(5, 3, 3), Mesh::new(3, 2, 2)),
        ] {
            transpose_and_trilinear(fine, coarse);
        }
    }

    fn transpose_and_trilinear(fine: Mesh, coarse: Mesh) {
        let fixed: Vec<bool> = (0..fine.dofs()).map(|d| d % 7 == 0).collect();
        let t = Transfer::new(fine, coarse, &fixed);
        let xc: Vec<f64> = (0..coarse.dofs())
            .map(|i| (i as f64 * 0.37).sin())
            .collect();
        let rf: Vec<f64> = (0..fine.dofs()).map(|i| (i as f64 * 0.91).cos()).collect();
        let mut pxc = vec![0.0; fine.dofs()];
        t.prolong_add(&xc, &mut pxc);
        let mut ptr = vec![0.0; coarse.dofs()];
        t.restrict(&rf, &mut ptr);
        let a: f64 = pxc.iter().zip(&rf).map(|(p, r)| p * r).sum();
        let b: f64 = xc.iter().zip(&ptr).map(|(x, p)| x * p).sum();
        assert!((a - b).abs() < 1e-12 * a.abs().max(1.0), "{a} vs {b}");
        // A trilinear field is reproduced exactly on free DOFs (the padded
        // coarse nodes included: they sit where the field extends to).
        let t = Transfer::new(fine, coarse, &vec![false; fine.dofs()]);
        let g = |i: usize, j: usize, k: usize| 1.0 + i as f64 + 0.5 * j as f64 + 0.25 * k as f64;
        let xc: Vec<f64> = (0..coarse.dofs())
            .map(|d| {
                let [i, j, k] = coarse.node_coords(d / 3);
                let [fx, fy, fz] = t.factor;
                g(fx * i, fy * j, fz * k)
            })
            .collect();
        let mut xf = vec![0.0; fine.dofs()];
        t.prolong_add(&xc, &mut xf);
        for (d, v) in xf.iter().enumerate() {
            let [i, j, k] = fine.node_coords(d / 3);
            assert!((v - g(i, j, k)).abs() < 1e-12, "dof {d}: {v}");
        }
        // Coarse moduli: means, with children beyond the mesh as 0.
        let e: Vec<f64> = (0..fine.elements()).map(|i| 1.0 + i as f64).collect();
        let ec = t.coarse_moduli(&e);
        let total: f64 = e.iter().sum();
        let vol = (t.factor.iter().product::<usize>()) as f64;
        assert!((ec.iter().sum::<f64>() * vol - total).abs() < 1e-9 * total);
    }
}
