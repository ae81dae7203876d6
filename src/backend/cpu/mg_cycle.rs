//! The multigrid cycle's slice operations on the CPU, written once for a
//! level of either precision. They stand apart from the f64 levels (`mg.rs`)
//! and the f32 ones (`mg_low.rs`) because both read them: `mg.rs` runs them
//! on either hierarchy, `mg_low.rs` restricts through [`restrict_with`] and
//! `batch.rs` runs them on each vector of a batch. Rayon runs over rows of
//! columns for the zebra smoother (one task per y row, its columns of one
//! colour, or of them the relaxed ones, every z plane in turn, so each pass
//! reads contiguous row segments), over coarse cells for the restriction and
//! over fine cells for the prolongation.

use super::{same_len, CpuBackend};
use crate::backend::mg::{Guess, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::{relaxed, Coarsening};
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
