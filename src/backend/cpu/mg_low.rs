//! The f32 multigrid levels of the CPU backend (`MultigridOps::mg_low_*`):
//! the f32 operator that the slice operations of `mg_cycle.rs` read at f32,
//! its restriction, and the conversions between the precisions. It is also
//! the reference of the CUDA f32 kernels (`kernels/mg.cu`).

use super::mg_cycle::{restrict_with, Level};
use super::same_len;
use crate::backend::BackendError;
use crate::matrix::coarsen::Coarsening;
use crate::matrix::QuadDiag;
use rayon::prelude::*;

/// A level's operator in f32. The diagonal is stored as its excess over the
/// couplings, s = d − Σ g (ambient, capacitance: ≥ 0), computed in f64, and
/// a row of A x is formed as s xᵢ + Σ g (xᵢ − xⱼ): a stack couples a thin
/// layer 10⁴–10⁶ times more strongly in z than to ambient, so d rounded to
/// f32 (relative 6e-8) would swamp the small s, and A x of a smooth x
/// would be mostly rounding; s and each g rounded separately keep every
/// term's relative error at f32's, and the operator SPD.
#[derive(Clone, Debug)]
pub struct LowLevel {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub s: Vec<f32>,
    pub gx: Vec<f32>,
    pub gy: Vec<f32>,
    pub gz: Vec<f32>,
}

impl LowLevel {
    pub fn of(a: &QuadDiag) -> Result<Self, BackendError> {
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len()] {
            same_len(a.len(), len)?;
        }
        let (nx, ny, nz, plane) = (a.nx, a.ny, a.nz, a.nx * a.ny);
        let s = (0..a.len())
            .into_par_iter()
            .map(|i| {
                let (xx, y, z) = (i % nx, (i / nx) % ny, i / plane);
                let mut g = 0.0;
                if xx + 1 < nx {
                    g += a.gx[i];
                }
                if xx > 0 {
                    g += a.gx[i - 1];
                }
                if y + 1 < ny {
                    g += a.gy[i];
                }
                if y > 0 {
                    g += a.gy[i - nx];
                }
                if z + 1 < nz {
                    g += a.gz[i];
                }
                if z > 0 {
                    g += a.gz[i - plane];
                }
                (a.d[i] - g) as f32
            })
            .collect();
        let low = |v: &[f64]| v.iter().map(|&g| g as f32).collect();
        Ok(LowLevel {
            nx,
            ny,
            nz,
            s,
            gx: low(&a.gx),
            gy: low(&a.gy),
            gz: low(&a.gz),
        })
    }

    fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }
}

impl<'a> From<&'a LowLevel> for Level<'a, f32> {
    fn from(a: &'a LowLevel) -> Self {
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

/// bc = Pᵀ (b − A x) on an f32 level, a row of A x formed as
/// [`LowLevel`] says.
pub(super) fn restrict_residual(
    a: &LowLevel,
    c: &Coarsening,
    b: &[f32],
    x: &[f32],
    bc: &mut [f32],
) -> Result<(), BackendError> {
    for len in [
        b.len(),
        x.len(),
        a.s.len(),
        a.gx.len(),
        a.gy.len(),
        a.gz.len(),
    ] {
        same_len(a.len(), len)?;
    }
    let (nx, ny, nz, plane) = (a.nx, a.ny, a.nz, a.nx * a.ny);
    let ax = |i: usize, xx: usize, y: usize, z: usize| {
        let xi = x[i];
        let mut ax = a.s[i] * xi;
        if xx + 1 < nx {
            ax += a.gx[i] * (xi - x[i + 1]);
        }
        if xx > 0 {
            ax += a.gx[i - 1] * (xi - x[i - 1]);
        }
        if y + 1 < ny {
            ax += a.gy[i] * (xi - x[i + nx]);
        }
        if y > 0 {
            ax += a.gy[i - nx] * (xi - x[i - nx]);
        }
        if z + 1 < nz {
            ax += a.gz[i] * (xi - x[i + plane]);
        }
        if z > 0 {
            ax += a.gz[i - plane] * (xi - x[i - plane]);
        }
        ax
    };
    restrict_with(c, b, bc, ax)
}

/// out = v as f32.
pub(super) fn narrow(v: &[f64], out: &mut [f32]) -> Result<(), BackendError> {
    same_len(v.len(), out.len())?;
    out.par_iter_mut().zip(v).for_each(|(o, &v)| *o = v as f32);
    Ok(())
}

/// out = v as f64.
pub(super) fn widen(v: &[f32], out: &mut [f64]) -> Result<(), BackendError> {
    same_len(v.len(), out.len())?;
    out.par_iter_mut().zip(v).for_each(|(o, &v)| *o = v as f64);
    Ok(())
}
