//! The multigrid capability: the four operations the geometric multigrid
//! cycle (`linalg::mg`) needs beyond [`QuadDiagOps`], and the three of its
//! set-up (coarse operator, line pivots, shape), which build every level
//! where the fine matrix lives (on a GPU the fine matrix never goes to the
//! host). Every level's operator is an ordinary
//! [`QuadDiagOps::Matrix`] (7-point Quad-Diag), so nothing else is new. CPU: `backend/cpu/mg.rs`; CUDA: `backend/cuda/mg.rs` launching
//! `kernels/mg.cu`.

use super::{BackendError, QuadDiagOps};
use crate::matrix::coarsen::{AxisMap, Coarsening};

/// What the smoother may assume about x before a half-sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guess {
    /// x holds the current iterate everywhere.
    Full,
    /// The cells of this colour are 0 (whatever x holds there); the other
    /// colour holds the iterate (the second half of the first sweep).
    ColourZero,
    /// x is 0 everywhere (the first half-sweep), so it need not be zeroed:
    /// the two colours together write every cell.
    Zero,
}

/// One colour's half-sweep of the zebra relaxation
/// ([`MultigridOps::mg_smooth`]), as the single and the batched smoother
/// both take it. `V` is the level's vector type: the backend's f64 vector,
/// or its f32 one on a low-precision hierarchy ([`MultigridOps::LowVector`]).
pub struct Relax<'a, B: MultigridOps + ?Sized, V = <B as super::Backend>::Vector> {
    /// The inverse pivots of the level's z columns.
    pub inv_pivots: &'a V,
    /// Which colour of the x-y checkerboard: (x + y) mod 2.
    pub colour: u32,
    pub guess: Guess,
    /// The step that made this level, when only its changed columns relax.
    pub made_by: Option<&'a B::Transfer>,
}

impl<B: MultigridOps + ?Sized, V> Clone for Relax<'_, B, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: MultigridOps + ?Sized, V> Copy for Relax<'_, B, V> {}

/// A level's grid and widths, as the set-up reads them (host values).
#[derive(Clone, Copy, Debug)]
pub struct LevelShape<'m> {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Empty on a uniform grid.
    pub wx: &'m [f64],
    pub wy: &'m [f64],
}

pub trait MultigridOps: QuadDiagOps {
    /// A level's operator in f32 (d, gx, gy, gz; no amb): a low-precision
    /// hierarchy ([`crate::linalg::mg::MgPrecision`]) reads half the bytes
    /// per cell of the f64 one.
    type LowMatrix: 'static;
    /// An f32 vector of a low-precision hierarchy.
    type LowVector: 'static;
    /// A coarsening step as the transfer operations read it: the host
    /// [`Coarsening`] (sizes, per-axis maps) and, on a GPU, its maps in
    /// device memory (uploaded once per hierarchy by [`Self::mg_transfer`]).
    type Transfer: AsRef<Coarsening>;

    /// The transfer of coarsening step `c`.
    fn mg_transfer(&self, c: &Coarsening) -> Result<Self::Transfer, BackendError>;

    /// Readies the kernels (compiles them, on a GPU), so that the first
    /// cycle is not timed with the compiler; the hierarchy's set-up calls it.
    fn prepare_multigrid(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// The grid of `a` and its cell widths (`QuadDiag::wx`, `wy`).
    fn mg_shape<'m>(&self, a: &'m Self::Matrix) -> LevelShape<'m>;

    /// A cycle recorded once and replayed (a CUDA graph): every later cycle
    /// on the same buffers is one launch from the host instead of some
    /// forty (4–10 % of a transient step on an H100, BENCHMARKS.md).
    type Recording: Send;

    /// Records what `f` enqueues, without running it, for
    /// [`Self::mg_replay`]; `Ok(None)` where the backend does not record
    /// (the CPU, where nothing is enqueued) or recording is switched off.
    fn mg_record(
        &self,
        f: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<Option<Self::Recording>, BackendError> {
        let _ = f;
        Ok(None)
    }

    /// Runs a recording: the same kernels on the same buffers, reading
    /// their contents as they are now.
    fn mg_replay(&self, r: &Self::Recording) -> Result<(), BackendError>;

    /// Where the storage of `v` lives: a recording is replayed only with
    /// the buffers it was made with.
    fn mg_address(&self, v: &Self::Vector) -> usize;

    /// [`Self::mg_address`] of a level's operator.
    fn mg_matrix_address(&self, a: &Self::Matrix) -> usize;

    /// The coarse operator of `a` under the aggregation of `mx`, `my`
    /// (`linalg::mg::coarsen_with`, whose sums it rounds identically), on
    /// this device. The default goes through the host.
    fn mg_coarsen(
        &self,
        a: &Self::Matrix,
        mx: &AxisMap,
        my: &AxisMap,
    ) -> Result<Self::Matrix, BackendError> {
        let host = self.host_matrix(a)?;
        check_axes(&*host, mx, my)?;
        self.upload_matrix(&crate::matrix::coarsen::coarsen_with(&host, mx, my))
    }

    /// The inverse pivots of `a`'s z columns (`linalg::mg::line_pivots`,
    /// rounded identically), on this device. The default goes through the
    /// host.
    fn mg_line_pivots(&self, a: &Self::Matrix) -> Result<Self::Vector, BackendError> {
        let host = self.host_matrix(a)?;
        self.upload(&crate::matrix::coarsen::line_pivots(&host))
    }

    /// Frees the coupling to ambient (`amb`) of a level's operator once the
    /// level below it is built: only the set-up ([`Self::mg_coarsen`]) reads
    /// it; the cycle's smoother and residual use the diagonal (8 bytes per
    /// cell of every level between the finest and the coarsest). The
    /// matrix must not be coarsened again afterwards.
    fn mg_release_ambient(&self, a: &mut Self::Matrix) -> Result<(), BackendError>;

    /// One colour of a zebra (red-black in x-y) column relaxation: for every
    /// (x, y) column with (x + y) mod 2 = `colour`, the column of `x` is
    /// replaced by the solution of its own rows of A x = b with the in-plane
    /// neighbours held (Thomas, with the pivots of `linalg::mg::line_pivots`:
    /// z-line relaxation); `guess` says which cells of x are taken
    /// as 0 instead of read. With `made_by` (the step that made this
    /// level), only the changed columns are relaxed: those whose aggregate
    /// in that step is a pair in x or in y; the others keep their value (0
    /// when `guess` is [`Guess::Zero`], which then writes them).
    fn mg_smooth(
        &self,
        a: &Self::Matrix,
        relax: Relax<'_, Self>,
        b: &Self::Vector,
        x: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// bc = Pᵀ (b − A x): the residual summed over each coarse cell's
    /// children (`c` maps fine to coarse).
    fn mg_restrict_residual(
        &self,
        a: &Self::Matrix,
        c: &Self::Transfer,
        b: &Self::Vector,
        x: &Self::Vector,
        bc: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// x += P xc: each fine cell adds its coarse parent's value.
    fn mg_prolong_add(
        &self,
        c: &Self::Transfer,
        xc: &Self::Vector,
        x: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// x = M b with M a dense row-major n × n matrix stored in a vector of
    /// length n² (the coarsest level's inverse).
    fn mg_dense_apply(
        &self,
        m: &Self::Vector,
        n: usize,
        b: &Self::Vector,
        x: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    // The kernels of a low-precision (f32) hierarchy: the same four
    // operations as above (same terms, same order) on f32 levels, and the
    // conversions in and out of the f64 Krylov method. The cycle that calls
    // them is the f64 one (`linalg::mg::cycle::levels`).

    /// `a` rounded to f32 (d, gx, gy, gz; amb is not kept).
    fn mg_low_matrix(&self, a: &Self::Matrix) -> Result<Self::LowMatrix, BackendError>;
    /// `v` rounded to f32 (pivots and the coarsest inverse, computed in f64).
    fn mg_low_vector(&self, v: &Self::Vector) -> Result<Self::LowVector, BackendError>;
    fn mg_low_zeros(&self, n: usize) -> Result<Self::LowVector, BackendError>;
    /// out = v rounded to f32 (the residual entering the cycle).
    fn mg_to_low(&self, v: &Self::Vector, out: &mut Self::LowVector) -> Result<(), BackendError>;
    /// out = v widened to f64 (the correction leaving the cycle).
    fn mg_from_low(&self, v: &Self::LowVector, out: &mut Self::Vector) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_smooth`] in f32.
    fn mg_low_smooth(
        &self,
        a: &Self::LowMatrix,
        relax: Relax<'_, Self, Self::LowVector>,
        b: &Self::LowVector,
        x: &mut Self::LowVector,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_restrict_residual`] in f32.
    fn mg_low_restrict_residual(
        &self,
        a: &Self::LowMatrix,
        c: &Self::Transfer,
        b: &Self::LowVector,
        x: &Self::LowVector,
        bc: &mut Self::LowVector,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_prolong_add`] in f32.
    fn mg_low_prolong_add(
        &self,
        c: &Self::Transfer,
        xc: &Self::LowVector,
        x: &mut Self::LowVector,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_dense_apply`] in f32.
    fn mg_low_dense_apply(
        &self,
        m: &Self::LowVector,
        n: usize,
        b: &Self::LowVector,
        x: &mut Self::LowVector,
    ) -> Result<(), BackendError>;
}

/// Checks that `mx`, `my` describe an aggregation of `a`'s grid (monotone
/// contiguous aggregates covering every column, one factor per coarse face),
/// so that the set-up never indexes out of bounds on bad input.
pub fn check_axes(a: &impl HasShape, mx: &AxisMap, my: &AxisMap) -> Result<(), BackendError> {
    let (nx, ny, _) = a.shape();
    for (m, n) in [(mx, nx), (my, ny)] {
        let nc = m.widths.len();
        let ok = m.start.len() == nc + 1
            && m.start.first() == Some(&0)
            && m.start.last() == Some(&n)
            && m.start.windows(2).all(|w| w[0] < w[1])
            && m.num.len() == nc.saturating_sub(1)
            && m.den.len() == m.num.len();
        if !ok {
            return Err(BackendError::Unsupported(
                "multigrid set-up: an axis map does not aggregate the level's grid",
            ));
        }
    }
    Ok(())
}

/// The grid of a level (host or device matrix).
pub trait HasShape {
    fn shape(&self) -> (usize, usize, usize);
}

impl HasShape for crate::matrix::QuadDiag {
    fn shape(&self) -> (usize, usize, usize) {
        (self.nx, self.ny, self.nz)
    }
}

impl HasShape for LevelShape<'_> {
    fn shape(&self) -> (usize, usize, usize) {
        (self.nx, self.ny, self.nz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::QuadDiag;

    #[test]
    fn axis_maps_of_a_step_pass_and_bad_ones_are_refused() {
        let a = QuadDiag::zeros(5, 4, 2);
        let c = Coarsening::halve(5, 4, 2);
        let (mx, my) = c.axis_maps(&[], &[]);
        assert_eq!(mx.start, vec![0, 2, 4, 5]);
        assert_eq!((mx.num.len(), my.start.len()), (2, 3));
        assert!(check_axes(&a, &mx, &my).is_ok());
        // Not covering the axis, not increasing, a factor missing.
        let mut short = mx.clone();
        short.start[3] = 4;
        let mut flat = mx.clone();
        flat.start[2] = 2;
        let mut few = mx.clone();
        few.den.pop();
        for bad in [short, flat, few] {
            assert!(check_axes(&a, &bad, &my).is_err(), "{bad:?}");
            assert!(crate::backend::cpu::CpuBackend::new()
                .mg_coarsen(&a, &bad, &my)
                .is_err());
        }
    }

    #[test]
    fn a_level_whose_amb_was_released_is_not_coarsened_again() {
        let be = crate::backend::cpu::CpuBackend::new();
        let mut a = QuadDiag::zeros(5, 4, 2);
        let (mx, my) = Coarsening::halve(5, 4, 2).axis_maps(&[], &[]);
        assert!(be.mg_coarsen(&a, &mx, &my).is_ok());
        be.mg_release_ambient(&mut a).unwrap();
        assert!(a.amb.is_empty());
        assert!(be.mg_coarsen(&a, &mx, &my).is_err());
    }
}
