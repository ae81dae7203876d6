//! Density filter with a cone kernel: ρ̃ᵢ = Σⱼ wᵢⱼ ρⱼ / Σⱼ wᵢⱼ with
//! wᵢⱼ = max(0, rmin − ‖cᵢ − cⱼ‖) (element centres, in elements). On a
//! structured mesh the weights are one stencil of offsets, so nothing sparse
//! is stored: only the stencil and the per-element normalization Hᵢ = Σⱼ wᵢⱼ,
//! which is smaller near the boundary (the stencil is truncated there).
//!
//! Sensitivities go through the transpose: ∂f/∂ρⱼ = Σᵢ wᵢⱼ (∂f/∂ρ̃ᵢ) / Hᵢ.
//! w is symmetric, so the transpose is the same gather applied to g / H.
//! Both are gathers over elements (no scatter), hence deterministic.

use super::mesh::Mesh;
use rayon::prelude::*;

pub struct DensityFilter {
    mesh: Mesh,
    /// (dx, dy, dz, w) with w > 0.
    stencil: Vec<([isize; 3], f64)>,
    /// Hᵢ = Σⱼ wᵢⱼ over the neighbours inside the mesh.
    h_sum: Vec<f64>,
}

impl DensityFilter {
    pub fn new(mesh: Mesh, rmin: f64) -> DensityFilter {
        let r = rmin.ceil() as isize;
        let mut stencil = Vec::new();
        for dz in -r..=r {
            for dy in -r..=r {
                for dx in -r..=r {
                    let d = ((dx * dx + dy * dy + dz * dz) as f64).sqrt();
                    let w = rmin - d;
                    if w > 0.0 {
                        stencil.push(([dx, dy, dz], w));
                    }
                }
            }
        }
        let mut f = DensityFilter {
            mesh,
            stencil,
            h_sum: Vec::new(),
        };
        let ones = vec![1.0; mesh.elements()];
        let mut h = vec![0.0; mesh.elements()];
        f.gather(&ones, &mut h);
        f.h_sum = h;
        f
    }

    /// Hᵢ = Σⱼ wᵢⱼ, the normalization (uploaded by a GPU filter).
    pub fn row_sums_h(&self) -> &[f64] {
        &self.h_sum
    }

    /// out = ρ̃ = W ρ / H.
    pub fn apply(&self, rho: &[f64], out: &mut [f64]) {
        self.gather(rho, out);
        out.par_iter_mut()
            .zip(self.h_sum.par_iter())
            .for_each(|(o, h)| *o /= h);
    }

    /// out = Wᵀ (g / H): the gradient with respect to ρ of a function whose
    /// gradient with respect to ρ̃ is `g`.
    pub fn apply_transpose(&self, g: &[f64], out: &mut [f64]) {
        let scaled: Vec<f64> = g
            .par_iter()
            .zip(self.h_sum.par_iter())
            .map(|(g, h)| g / h)
            .collect();
        self.gather(&scaled, out);
    }

    /// Σ over x-rows of `f(first element of the row, ρ̃ of the row)`, with
    /// ρ̃ = F x computed row by row into a scratch row and never stored: the
    /// OC volume search needs only a sum of the projected field. Rows are
    /// combined in order (deterministic).
    pub fn row_sums(&self, x: &[f64], f: impl Fn(usize, &[f64]) -> f64 + Sync) -> f64 {
        let m = self.mesh;
        let parts: Vec<f64> = (0..m.nely * m.nelz)
            .into_par_iter()
            .map_init(
                || vec![0.0; m.nelx],
                |row, r| {
                    self.gather_row(x, r, row);
                    let start = r * m.nelx;
                    for (v, h) in row.iter_mut().zip(&self.h_sum[start..start + m.nelx]) {
                        *v /= h;
                    }
                    f(start, row)
                },
            )
            .collect();
        parts.iter().sum()
    }

    /// out = W x (unnormalized). One task per x-row of elements.
    fn gather(&self, x: &[f64], out: &mut [f64]) {
        out.par_chunks_mut(self.mesh.nelx)
            .enumerate()
            .for_each(|(row, o)| self.gather_row(x, row, o));
    }

    /// Row `row` (= ey + nely·ez) of W x into `o` (length nelx): for each
    /// stencil offset a contiguous `o += w · x[shifted]` over the range of
    /// ex that stays inside the mesh, which vectorizes.
    fn gather_row(&self, x: &[f64], row: usize, o: &mut [f64]) {
        let m = self.mesh;
        let n = [m.nelx, m.nely, m.nelz].map(|v| v as isize);
        o.fill(0.0);
        let (ey, ez) = ((row % m.nely) as isize, (row / m.nely) as isize);
        for &([dx, dy, dz], w) in &self.stencil {
            let (j, l) = (ey + dy, ez + dz);
            if j < 0 || l < 0 || j >= n[1] || l >= n[2] {
                continue;
            }
            // ex with 0 ≤ ex + dx < nelx
            let lo = (-dx).max(0) as usize;
            let hi = (n[0] - dx).min(n[0]).max(0) as usize;
            if lo >= hi {
                continue;
            }
            let src = (n[0] * (j + n[1] * l)) as usize;
            let xs = &x[(src as isize + lo as isize + dx) as usize..][..hi - lo];
            for (oi, xi) in o[lo..hi].iter_mut().zip(xs) {
                *oi += w * xi;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preserves_constants_and_transpose_is_adjoint() {
        let m = Mesh::new(7, 5, 4);
        let f = DensityFilter::new(m, 2.3);
        let n = m.elements();
        let mut out = vec![0.0; n];
        f.apply(&vec![0.4; n], &mut out);
        assert!(out.iter().all(|v| (v - 0.4).abs() < 1e-14));
        // ⟨F x, y⟩ = ⟨x, Fᵀ y⟩ for arbitrary x, y.
        let x: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64).sin()).collect();
        let y: Vec<f64> = (0..n).map(|i| ((i * 13 % 7) as f64).cos()).collect();
        let (mut fx, mut fty) = (vec![0.0; n], vec![0.0; n]);
        f.apply(&x, &mut fx);
        f.apply_transpose(&y, &mut fty);
        let a: f64 = fx.iter().zip(&y).map(|(a, b)| a * b).sum();
        let b: f64 = x.iter().zip(&fty).map(|(a, b)| a * b).sum();
        assert!((a - b).abs() < 1e-12 * a.abs().max(1.0));
    }

    #[test]
    fn matches_the_definition_by_brute_force() {
        let m = Mesh::new(6, 4, 5);
        let rmin = 2.2;
        let f = DensityFilter::new(m, rmin);
        let n = m.elements();
        let x: Vec<f64> = (0..n).map(|i| ((i * 7919 % 101) as f64) / 101.0).collect();
        let mut got = vec![0.0; n];
        f.apply(&x, &mut got);
        for (i, g) in got.iter().enumerate() {
            let ci = m.element_coords(i).map(|v| v as f64);
            let (mut num, mut den) = (0.0, 0.0);
            for (j, xj) in x.iter().enumerate() {
                let cj = m.element_coords(j).map(|v| v as f64);
                let d =
                    ((ci[0] - cj[0]).powi(2) + (ci[1] - cj[1]).powi(2) + (ci[2] - cj[2]).powi(2))
                        .sqrt();
                let w = (rmin - d).max(0.0);
                num += w * xj;
                den += w;
            }
            assert!((g - num / den).abs() < 1e-14, "element {i}");
        }
    }

    #[test]
    fn row_sums_match_the_stored_field() {
        let m = Mesh::new(9, 4, 3);
        let f = DensityFilter::new(m, 1.7);
        let x: Vec<f64> = (0..m.elements()).map(|i| (i % 5) as f64 / 4.0).collect();
        let mut fx = vec![0.0; x.len()];
        f.apply(&x, &mut fx);
        let want: f64 = fx.iter().enumerate().map(|(i, v)| v * v * i as f64).sum();
        let got = f.row_sums(&x, |start, row| {
            row.iter()
                .enumerate()
                .map(|(k, v)| v * v * (start + k) as f64)
                .sum()
        });
        assert!((got - want).abs() < 1e-12 * want);
    }

    #[test]
    fn rmin_1_5_has_19_neighbours() {
        let f = DensityFilter::new(Mesh::new(3, 3, 3), 1.5);
        assert_eq!(f.stencil.len(), 19);
    }
}
