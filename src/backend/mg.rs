//! The multigrid capability: the four operations the geometric multigrid
//! cycle (`linalg::mg`) needs beyond [`QuadDiagOps`]. Every level's operator
//! is an ordinary [`QuadDiagOps::Matrix`] (7-point Quad-Diag), so nothing
//! else is new. CPU: `backend/cpu/mg.rs`; CUDA: `backend/cuda/mg.rs` launching
//! `kernels/mg.cu`.

use super::{BackendError, QuadDiagOps};
use crate::linalg::mg::Coarsening;

/// How the smoother updates the cells of one z column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnUpdate {
    /// Exact solve of the column's tridiagonal block (Thomas, with the
    /// pivots of `linalg::mg::line_pivots`): z-line relaxation.
    Line,
    /// One point Gauss–Seidel pass up the column (k = 0, 1, …).
    PointUp,
    /// One point Gauss–Seidel pass down the column (the adjoint of `PointUp`).
    PointDown,
}

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

pub trait MultigridOps: QuadDiagOps {
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

    /// One colour of a zebra (red-black in x-y) column relaxation: for every
    /// (x, y) column with (x + y) mod 2 = `colour`, the column of `x` is
    /// replaced by the solution of its own rows of A x = b with the in-plane
    /// neighbours held (`update`); `guess` says which cells of x are taken
    /// as 0 instead of read.
    #[allow(clippy::too_many_arguments)]
    fn mg_smooth(
        &self,
        a: &Self::Matrix,
        inv_pivots: &Self::Vector,
        colour: u32,
        update: ColumnUpdate,
        guess: Guess,
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
}
