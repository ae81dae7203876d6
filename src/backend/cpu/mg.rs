//! [`MultigridOps`] on the CPU: rayon over rows of columns for the zebra
//! smoother (one task per y row, its columns of one colour, or of them the
//! relaxed ones, every z plane in turn, so each pass reads contiguous row
//! segments), over coarse cells for
//! the restriction and over fine cells for the prolongation. The trait
//! methods call the slice functions below, which `batch.rs` runs per vector.

use super::mg_low::{narrow, widen, LowLevel};
use super::{same_len, CpuBackend};
use crate::backend::mg::{check_axes, Guess, LevelShape, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::{coarsen_with, line_pivots, relaxed, AxisMap, Coarsening};
use crate::matrix::QuadDiag;
use rayon::prelude::*;

/// `x` shared by the tasks of one smoother colour. Each task writes only
/// the cells of its own y row and colour and reads, besides those, only
/// cells of the other colour, which no task writes in this pass; so no cell
/// is written by one task and touched by another. (A first half-sweep,
/// [`Guess::Zero`], also zeroes its row's skipped cells of the other
/// colour, but reads no in-plane neighbour.)
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: see the type's doc; every access goes through raw pointers.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A method, so that closures capture the whole `Shared` (Sync), not
    /// its raw-pointer field.
    fn at(&self, i: usize) -> *mut T {
        // SAFETY (of the callers' accesses): indices are < n, see `Shared`.
        self.0.wrapping_add(i)
    }
}

/// The element type of a level: f64, or f32 on a low-precision hierarchy.
pub(super) trait Real:
    Copy
    + Default
    + Send
    + Sync
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::AddAssign
    + std::iter::Sum
    + 'static
{
}

impl Real for f64 {}
impl Real for f32 {}

/// A level's couplings as the smoother reads them.
#[derive(Clone, Copy)]
pub(super) struct Level<'a, T> {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub gx: &'a [T],
    pub gy: &'a [T],
    pub gz: &'a [T],
}

impl<T> Level<'_, T> {
    fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }
}

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
    type LowMatrix = super::mg_low::LowLevel;
    type LowVector = Vec<f32>;

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
        self.low_matrix(a)
    }
    fn mg_low_vector(&self, v: &Vec<f64>) -> Result<Vec<f32>, BackendError> {
        Ok(v.iter().map(|&v| v as f32).collect())
    }
    fn mg_low_zeros(&self, n: usize) -> Result<Vec<f32>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn mg_to_low(&self, v: &Vec<f64>, out: &mut Vec<f32>) -> Result<(), BackendError> {
        narrow(v, out)
    }
    fn mg_from_low(&self, v: &Vec<f32>, out: &mut Vec<f64>) -> Result<(), BackendError> {
        widen(v, out)
    }
    fn mg_low_smooth(
        &self,
        a: &LowLevel,
        relax: Relax<'_, Self, Vec<f32>>,
        b: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        self.low_smooth(a, relax, b, x)
    }
    fn mg_low_restrict_residual(
        &self,
        a: &LowLevel,
        c: &Coarsening,
        b: &Vec<f32>,
        x: &Vec<f32>,
        bc: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        self.low_restrict_residual(a, c, b, x, bc)
    }
    fn mg_low_prolong_add(
        &self,
        c: &Coarsening,
        xc: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        self.low_prolong_add(c, xc, x)
    }
    fn mg_low_dense_apply(
        &self,
        m: &Vec<f32>,
        n: usize,
        b: &Vec<f32>,
        x: &mut Vec<f32>,
    ) -> Result<(), BackendError> {
        self.low_dense_apply(m, n, b, x)
    }
}

// The operations on slices, for the batched capability too (`batch.rs`).
pub(super) fn smooth<'a, T: Real + 'a>(
    a: impl Into<Level<'a, T>>,
    relax: Relax<'_, CpuBackend, Vec<T>>,
    b: &[T],
    x: &mut [T],
) -> Result<(), BackendError> {
    let a: Level<'a, T> = a.into();
    let Relax {
        inv_pivots,
        colour,
        guess,
        made_by,
    } = relax;
    let inv_pivots: &[T] = inv_pivots;
    for len in [
        inv_pivots.len(),
        b.len(),
        x.len(),
        a.gx.len(),
        a.gy.len(),
        a.gz.len(),
    ] {
        same_len(a.len(), len)?;
    }
    if let Some(c) = made_by {
        same_len(a.nx, c.nxc)?;
        same_len(a.ny, c.nyc)?;
    }
    let (nx, ny, nz) = (a.nx, a.ny, a.nz);
    let plane = nx * ny;
    let xs = Shared(x.as_mut_ptr());
    let zero_inplane = guess == Guess::Zero;
    (0..ny).into_par_iter().for_each(|y| {
        // SAFETY: indices below are < n (checked lengths); see `Shared`.
        let get = |i: usize| unsafe { *xs.at(i) };
        let set = |i: usize, v: T| unsafe { *xs.at(i) = v };
        let x0 = (colour as usize + y) % 2;
        // Which columns of this row are relaxed (`MultigridOps::mg_smooth`).
        let row_all = made_by.is_none_or(|c| relaxed(&c.ystart, y));
        let relax = |xx: usize| row_all || made_by.is_some_and(|c| relaxed(&c.xstart, xx));
        if zero_inplane && !row_all {
            // The skipped cells of both colours start at 0 (this pass reads
            // no in-plane neighbour, so the other colour's may be written).
            for xx in (0..nx).filter(|&xx| !relax(xx)) {
                for z in 0..nz {
                    set(xx + nx * y + plane * z, T::default());
                }
            }
        }
        // b + the in-plane couplings to the (held) neighbours.
        let rhs = |i: usize, xx: usize| {
            let mut r = b[i];
            if !zero_inplane {
                if xx + 1 < nx {
                    r += a.gx[i] * get(i + 1);
                }
                if xx > 0 {
                    r += a.gx[i - 1] * get(i - 1);
                }
                if y + 1 < ny {
                    r += a.gy[i] * get(i + nx);
                }
                if y > 0 {
                    r += a.gy[i - nx] * get(i - nx);
                }
            }
            r
        };
        for z in 0..nz {
            for xx in (x0..nx).step_by(2).filter(|&xx| relax(xx)) {
                let i = xx + nx * y + plane * z;
                let mut r = rhs(i, xx);
                if z > 0 {
                    r += a.gz[i - plane] * get(i - plane);
                }
                set(i, r * inv_pivots[i]);
            }
        }
        for z in (0..nz.saturating_sub(1)).rev() {
            for xx in (x0..nx).step_by(2).filter(|&xx| relax(xx)) {
                let i = xx + nx * y + plane * z;
                let v = get(i) + a.gz[i] * inv_pivots[i] * get(i + plane);
                set(i, v);
            }
        }
    });
    Ok(())
}

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
    // (A x)_i row-wise, as `QuadDiag::row_apply`.
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

/// bc = Pᵀ (b − A x) with `ax(i, x, y, z)` the row i of A x: the fine
/// grid is `c`'s; one task per coarse row (yc, z), the residual of each
/// child row summed into it.
pub(super) fn restrict_with<T: Real>(
    c: &Coarsening,
    b: &[T],
    bc: &mut [T],
    ax: impl Fn(usize, usize, usize, usize) -> T + Sync,
) -> Result<(), BackendError> {
    same_len(c.coarse_len(), bc.len())?;
    same_len(b.len(), c.nx * c.ny * c.nz)?;
    let (nx, plane) = (c.nx, c.nx * c.ny);
    bc.par_chunks_mut(c.nxc).enumerate().for_each(|(row, out)| {
        let (yc, z) = (row % c.nyc, row / c.nyc);
        out.fill(T::default());
        for y in c.ys(yc) {
            let i0 = nx * y + plane * z;
            for xx in 0..nx {
                let i = i0 + xx;
                out[c.xmap[xx]] += b[i] - ax(i, xx, y, z);
            }
        }
    });
    Ok(())
}

pub(super) fn prolong_add<T: Real>(
    c: &Coarsening,
    xc: &[T],
    x: &mut [T],
) -> Result<(), BackendError> {
    same_len(c.coarse_len(), xc.len())?;
    same_len(c.nx * c.ny * c.nz, x.len())?;
    // One task per fine row (y, z), reading its coarse row.
    x.par_chunks_mut(c.nx).enumerate().for_each(|(row, xr)| {
        let (y, z) = (row % c.ny, row / c.ny);
        let crow = (c.ymap[y] + c.nyc * z) * c.nxc;
        let xcr = &xc[crow..crow + c.nxc];
        for (xx, v) in xr.iter_mut().enumerate() {
            *v += xcr[c.xmap[xx]];
        }
    });
    Ok(())
}

pub(super) fn dense_apply<T: Real>(
    m: &[T],
    n: usize,
    b: &[T],
    x: &mut [T],
) -> Result<(), BackendError> {
    same_len(n * n, m.len())?;
    same_len(n, b.len())?;
    same_len(n, x.len())?;
    x.par_iter_mut().enumerate().for_each(|(i, xi)| {
        *xi = m[i * n..(i + 1) * n]
            .iter()
            .zip(b)
            .map(|(&mij, &bj)| mij * bj)
            .sum();
    });
    Ok(())
}
