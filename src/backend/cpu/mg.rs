//! [`MultigridOps`] on the CPU: the trait's methods call the slice
//! operations of `mg_cycle.rs` on the f64 levels (and the f32 ones of
//! `mg_low.rs`); the f64 operator's restriction is here, and `batch.rs`
//! runs it per vector too.

use super::mg_cycle::{dense_apply, prolong_add, restrict_with, smooth, Level};
use super::mg_low::{self, LowLevel};
use super::{same_len, CpuBackend};
use crate::backend::mg::{check_axes, LevelShape, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::{coarsen_with, line_pivots, AxisMap, Coarsening};
use crate::matrix::QuadDiag;

impl<'a> From<&'a QuadDiag> for Level<'a, f64> {
    fn from(a: &'a QuadDiag) -> Self {
        Level {
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            gx: &a.gx,
            gy: &a.gy,
            gz: &a.gz,
        }
    }
}

impl MultigridOps for CpuBackend {
    type Transfer = Coarsening;
    type LowMatrix = LowLevel;
    type LowVector = Vec<f32>;
    /// Nothing is enqueued on the CPU, so there is nothing to record.
    type Recording = std::convert::Infallible;

    fn mg_replay(&self, r: &Self::Recording) -> Result<(), BackendError> {
        match *r {}
    }

    fn mg_address(&self, v: &Vec<f64>) -> usize {
        v.as_ptr() as usize
    }

    fn mg_matrix_address(&self, a: &QuadDiag) -> usize {
        a.d.as_ptr() as usize
    }

    fn mg_transfer(&self, c: &Coarsening) -> Result<Coarsening, BackendError> {
        Ok(c.clone())
    }

    fn mg_shape<'m>(&self, a: &'m QuadDiag) -> LevelShape<'m> {
        LevelShape {
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            wx: &a.wx,
            wy: &a.wy,
        }
    }

    fn mg_coarsen(
        &self,
        a: &QuadDiag,
        mx: &AxisMap,
        my: &AxisMap,
    ) -> Result<QuadDiag, BackendError> {
        check_axes(a, mx, my)?;
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len(), a.amb.len()] {
            same_len(a.len(), len)?;
        }
        Ok(coarsen_with(a, mx, my))
    }

    fn mg_release_ambient(&self, a: &mut QuadDiag) -> Result<(), BackendError> {
        a.amb = Vec::new();
        Ok(())
    }

    fn mg_line_pivots(&self, a: &QuadDiag) -> Result<Vec<f64>, BackendError> {
        Ok(line_pivots(a))
    }

    fn mg_smooth(
        &self,
        a: &QuadDiag,
        relax: Relax<'_, Self>,
        b: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        smooth(a, relax, b, x)
    }

    fn mg_restrict_residual(
        &self,
        a: &QuadDiag,
        c: &Coarsening,
        b: &Vec<f64>,
        x: &Vec<f64>,
        bc: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        restrict_residual(a, c, b, x, bc)
    }

    fn mg_prolong_add(
        &self,
        c: &Coarsening,
        xc: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        prolong_add(c, xc, x)
    }

    fn mg_dense_apply(
        &self,
        m: &Vec<f64>,
        n: usize,
        b: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        dense_apply(m, n, b, x)
    }

    fn mg_low_matrix(&self, a: &QuadDiag) -> Result<LowLevel, BackendError> {
        LowLevel::of(a)
    }
    fn mg_low_vector(&self, v: &Vec<f64>) -> Result<Vec<f32>, BackendError> {
        Ok(v.iter().map(|&v| v as f32).collect())
    }
    fn mg_low_zeros(&self, n: usize) -> Result<Vec<f32>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn mg_to_low(&self, v: &Vec<f64>, out: &mut Vec<f32>) -> Result<(), BackendError> {
        mg_low::narrow(v, out)
    }
    fn mg_from_low(&self, v: &Vec<f32>, out: &mut Vec<f64>) -> Result<(), BackendError> {
        mg_low::widen(v, out)
    }
    fn mg_low_smooth(
        &self,
        a: &LowLevel,
        relax: Relax<'_, Self, Vec<f32>>,
        b: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        smooth(a, relax, b, x)
    }
    fn mg_low_restrict_residual(
        &self,
        a: &LowLevel,
        c: &Coarsening,
        b: &Vec<f32>,
        x: &Vec<f32>,
        bc: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        mg_low::restrict_residual(a, c, b, x, bc)
    }
    fn mg_low_prolong_add(
        &self,
        c: &Coarsening,
        xc: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        prolong_add(c, xc, x)
    }
    fn mg_low_dense_apply(
        &self,
        m: &Vec<f32>,
        n: usize,
        b: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        dense_apply(m, n, b, x)
    }
}

/// bc = Pᵀ (b − A x) on an f64 level, A x row-wise as
/// `QuadDiag::row_apply`.
pub(super) fn restrict_residual(
    a: &QuadDiag,
    c: &Coarsening,
    b: &[f64],
    x: &[f64],
    bc: &mut [f64],
) -> Result<(), BackendError> {
    same_len(a.len(), b.len())?;
    same_len(a.len(), x.len())?;
    let (nx, ny, nz, plane) = (a.nx, a.ny, a.nz, a.nx * a.ny);
    let ax = |i: usize, xx: usize, y: usize, z: usize| {
        let mut ax = a.d[i] * x[i];
        if xx + 1 < nx {
            ax -= a.gx[i] * x[i + 1];
        }
        if xx > 0 {
            ax -= a.gx[i - 1] * x[i - 1];
        }
        if y + 1 < ny {
            ax -= a.gy[i] * x[i + nx];
        }
        if y > 0 {
            ax -= a.gy[i - nx] * x[i - nx];
        }
        if z + 1 < nz {
            ax -= a.gz[i] * x[i + plane];
        }
        if z > 0 {
            ax -= a.gz[i - plane] * x[i - plane];
        }
        ax
    };
    restrict_with(c, b, bc, ax)
}
