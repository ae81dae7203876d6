//! The f32 hierarchy ([`MgPrecision::F32`](crate::linalg::mg::MgPrecision)):
//! the f64 one as built, every level rounded to f32 (operators, pivots,
//! coarsest inverse; the pivots and the inverse are computed in f64 first,
//! then rounded), and the fine level's own f32 copy of the system matrix,
//! so the whole cycle reads f32. It runs the f64 cycle's walk
//! ([`super::cycle`]) with the f32 kernels ([`LowKernels`]); only the
//! residual entering it (rounded) and the correction leaving it (widened)
//! are f64. The cycle is still a fixed symmetric operator (same operations
//! as in f64, rounded), so plain PCG stays valid; where its rounding (≈ 1e-7
//! relative) stalls PCG, `Auto` falls back to f64.

use super::levels::{cycle, LevelKernels, LevelOp};
use super::{Coarse, Hierarchy, MgLevels, Multigrid};
use crate::backend::mg::{MultigridOps, Relax};
use crate::backend::BackendError;

/// The f32 levels, their work vectors, and the fine level's f32 operator.
pub(super) struct LowCycle<B: MultigridOps> {
    pub(super) levels: MgLevels<B, B::LowMatrix, B::LowVector>,
    work: Vec<(B::LowVector, B::LowVector)>,
    /// The system matrix in f32; None when the fine level is the coarsest.
    fine: Option<B::LowMatrix>,
    /// The fine level's (b, x).
    b: B::LowVector,
    x: B::LowVector,
}

/// [`MultigridOps`]' f32 kernels as a level's kernels.
struct LowKernels<'b, B>(&'b B);

impl<B: MultigridOps> LevelKernels<B> for LowKernels<'_, B> {
    type M = B::LowMatrix;
    type V = B::LowVector;
    fn smooth(
        &self,
        a: &Self::M,
        relax: Relax<'_, B, Self::V>,
        b: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError> {
        self.0.mg_low_smooth(a, relax, b, x)
    }
    fn restrict_residual(
        &self,
        a: &Self::M,
        c: &B::Transfer,
        b: &Self::V,
        x: &Self::V,
        bc: &mut Self::V,
    ) -> Result<(), BackendError> {
        self.0.mg_low_restrict_residual(a, c, b, x, bc)
    }
    fn prolong_add(
        &self,
        c: &B::Transfer,
        xc: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError> {
        self.0.mg_low_prolong_add(c, xc, x)
    }
    fn dense_apply(
        &self,
        m: &Self::V,
        n: usize,
        b: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError> {
        self.0.mg_low_dense_apply(m, n, b, x)
    }
}

impl<B: MultigridOps> Multigrid<B> {
    /// This f64 hierarchy in f32 for the system matrix `a`; each f64 level
    /// is freed once rounded.
    pub(super) fn lowered(self, be: &B, a: &B::Matrix) -> Result<Self, BackendError> {
        let Multigrid {
            hier, mut report, ..
        } = self;
        let Hierarchy::F64 { levels, work } = hier else {
            return Ok(Multigrid {
                hier,
                report,
                replay: super::Replay::Fresh,
            });
        };
        drop(work);
        let shape = be.mg_shape(a);
        let n = shape.nx * shape.ny * shape.nz;
        let mut coarse = Vec::with_capacity(levels.coarse.len());
        for c in levels.coarse {
            let a = c.a.as_ref().map(|m| be.mg_low_matrix(m)).transpose()?;
            let pivots = c.pivots.as_ref().map(|p| be.mg_low_vector(p)).transpose()?;
            coarse.push(Coarse { a, pivots });
        }
        let low = MgLevels {
            opts: levels.opts,
            fine_pivots: levels
                .fine_pivots
                .as_ref()
                .map(|p| be.mg_low_vector(p))
                .transpose()?,
            steps: levels.steps,
            coarse,
            inverse: be.mg_low_vector(&levels.inverse)?,
            inverse_n: levels.inverse_n,
            skip_unchanged: levels.skip_unchanged,
        };
        let work = low
            .steps
            .iter()
            .map(|c: &B::Transfer| {
                let nc = c.as_ref().coarse_len();
                Ok((be.mg_low_zeros(nc)?, be.mg_low_zeros(nc)?))
            })
            .collect::<Result<_, BackendError>>()?;
        let fine = match low.fine_pivots {
            Some(_) => Some(be.mg_low_matrix(a)?),
            None => None,
        };
        // f32 levels: half the bytes; the finest adds its matrix copy
        // (d, gx, gy, gz), b and x to its pivots: 7 f32 arrays.
        for (l, level) in report.levels.iter_mut().enumerate() {
            level.memory_bytes /= 2;
            if l == 0 && fine.is_some() {
                level.memory_bytes = 7 * 4 * n as u64;
            }
        }
        report.hierarchy_bytes = report.levels.iter().map(|l| l.memory_bytes).sum();
        report.precision = low.opts.precision.name().into();
        if report.precision == "auto" {
            report.precision = "f32 (auto)".into();
        }
        Ok(Multigrid {
            hier: Hierarchy::F32(LowCycle {
                work,
                fine,
                b: be.mg_low_zeros(n)?,
                x: be.mg_low_zeros(n)?,
                levels: low,
            }),
            report,
            replay: super::Replay::Fresh,
        })
    }
}

impl<B: MultigridOps> LowCycle<B> {
    /// z = M r: r rounded to f32, one f32 cycle from 0, widened into z.
    pub(super) fn apply(
        &mut self,
        be: &B,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.mg_to_low(r, &mut self.b)?;
        let h = &self.levels;
        match (self.fine.as_ref(), h.fine_pivots.as_ref()) {
            (Some(a), Some(pivots)) => {
                let fine = LevelOp { l: 0, a, pivots };
                cycle(
                    &LowKernels(be),
                    h,
                    fine,
                    &mut self.work,
                    &self.b,
                    &mut self.x,
                    true,
                )?;
            }
            _ => be.mg_low_dense_apply(&h.inverse, h.inverse_n, &self.b, &mut self.x)?,
        }
        be.mg_from_low(&self.x, z)
    }

    /// The system matrix changed: its f32 copy and pivots follow.
    pub(super) fn operator_changed(&mut self, be: &B, a: &B::Matrix) -> Result<(), BackendError> {
        if let Some(p) = self.levels.fine_pivots.as_mut() {
            *p = be.mg_low_vector(&be.mg_line_pivots(a)?)?;
            self.fine = Some(be.mg_low_matrix(a)?);
        }
        Ok(())
    }
}
