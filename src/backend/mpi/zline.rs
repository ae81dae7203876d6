//! The z-line preconditioner: M is A without its x and y couplings, a
//! tridiagonal system along z for every (x, y) column, solved exactly
//! (Thomas algorithm, factored once). A die stack couples far more
//! strongly in z (thin layers) than across, which is what M keeps. A column
//! never crosses a slab face, so M needs no communication and is the same
//! matrix on any number of ranks: the iteration count does not depend on
//! the decomposition. M is SPD where A is (a principal block diagonal).
//!
//! Traffic of one application: the forward sweep reads r and the
//! multiplier and writes z (24 B/row), the back substitution reads z, g and
//! 1/w and writes z (32 B/row): 56 B/row, the neighbouring z layer coming
//! from cache.

use super::slab::SlabMatrix;
use super::RankBackend;
use crate::backend::BackendError;
use crate::linalg::precond::{PrecondInfo, PrecondReport, Preconditioner};
use std::collections::BTreeMap;

pub struct ZLine {
    /// Rows of one z layer of the slab (nx · planes).
    layer: usize,
    /// 1 / w, w the pivots of the column's LU.
    inv_w: Vec<f64>,
    /// gz of the row below, over that row's pivot: the forward sweep's
    /// multiplier (0 on the bottom layer).
    lower: Vec<f64>,
    /// The coupling to the row above (gz).
    upper: Vec<f64>,
}

impl ZLine {
    /// Factors the columns of `m`'s slab: w₀ = d₀, w_k = d_k − g_{k−1}² / w_{k−1}.
    pub fn new(m: &SlabMatrix) -> Result<ZLine, BackendError> {
        let a = &m.a;
        let layer = a.nx * a.ny;
        let n = a.len();
        let mut inv_w = vec![0.0; n];
        let mut lower = vec![0.0; n];
        for i in 0..n {
            let w = if i < layer {
                a.d[i]
            } else {
                let g = a.gz[i - layer];
                lower[i] = g * inv_w[i - layer];
                a.d[i] - g * lower[i]
            };
            if w.is_nan() || w <= 0.0 {
                return Err(BackendError::Numerical(format!(
                    "z-line preconditioner: pivot {w:e} at row {i} (the matrix is not SPD)"
                )));
            }
            inv_w[i] = 1.0 / w;
        }
        Ok(ZLine {
            layer,
            inv_w,
            lower,
            upper: a.gz.clone(),
        })
    }
}

impl<A: ?Sized> Preconditioner<RankBackend, A> for ZLine {
    /// z = M⁻¹ r: forward sweep y_k = r_k + l_k y_{k−1}, then back
    /// substitution z_k = (y_k + g_k z_{k+1}) / w_k, a z layer at a time.
    fn apply(
        &mut self,
        _be: &RankBackend,
        _a: &mut A,
        r: &Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        let (l, n) = (self.layer, r.len());
        if z.len() != n || self.inv_w.len() != n {
            return Err(BackendError::Length(z.len(), n));
        }
        z[..l.min(n)].copy_from_slice(&r[..l.min(n)]);
        for k in (l..n).step_by(l) {
            let (done, rest) = z.split_at_mut(k);
            let below = &done[k - l..];
            let (rk, lk) = (&r[k..k + l], &self.lower[k..k + l]);
            for ((zj, (rj, lj)), bj) in rest[..l].iter_mut().zip(rk.iter().zip(lk)).zip(below) {
                *zj = rj + lj * bj; // y_k = r_k + l_k y_{k−1}
            }
        }
        let top = n - l;
        for (zj, wj) in z[top..].iter_mut().zip(&self.inv_w[top..]) {
            *zj *= wj; // z_top = y_top / w_top
        }
        for k in (0..top).step_by(l).rev() {
            let (head, above) = z.split_at_mut(k + l);
            let coeffs = self.upper[k..k + l].iter().zip(&self.inv_w[k..k + l]);
            for ((zj, (uj, wj)), aj) in head[k..].iter_mut().zip(coeffs).zip(above.iter()) {
                *zj = (*zj + uj * aj) * wj; // z_k = (y_k + g_k z_{k+1}) / w_k
            }
        }
        Ok(())
    }
}

impl PrecondInfo for ZLine {
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "zline".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}
