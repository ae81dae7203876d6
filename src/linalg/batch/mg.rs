//! The multigrid preconditioner over a batch: one cycle from z = 0 on each
//! of k vectors. The cycle is the single-vector one
//! (`linalg::mg::cycle::levels`), run with batched kernels ([`BatchOps`]),
//! so each level's operator is read once per launch for the k vectors and
//! a converged vector (status ≤ 0) costs nothing. The hierarchy
//! (operators, pivots, coarsest inverse) is the single-vector
//! [`Multigrid`]'s, borrowed; only the per-level work vectors are k times
//! larger.

use super::BatchPreconditioner;
use crate::backend::batch::{Active, BatchOps};
use crate::backend::mg::Relax;
use crate::backend::BackendError;
use crate::linalg::mg::cycle::{cycle, LevelKernels, LevelOp, LevelWork};
use crate::linalg::mg::{MgLevels, Multigrid};

pub struct BatchMultigrid<'a, B: BatchOps> {
    levels: &'a MgLevels<B>,
    /// k vectors each.
    work: LevelWork<B>,
}

impl<'a, B: BatchOps> BatchMultigrid<'a, B> {
    /// Work vectors for batches of `k` on the hierarchy of `mg`.
    pub fn new(be: &B, mg: &'a Multigrid<B>, k: usize) -> Result<Self, BackendError> {
        let work = Self::levels(mg)?.work(be, k)?;
        Self::with_work(mg, work)
    }

    /// Over work vectors kept from an earlier batch on the same hierarchy
    /// ([`BatchMultigrid::into_work`]): callers that solve many batches
    /// allocate them once.
    pub fn with_work(mg: &'a Multigrid<B>, work: LevelWork<B>) -> Result<Self, BackendError> {
        Ok(BatchMultigrid {
            levels: Self::levels(mg)?,
            work,
        })
    }

    /// The work vectors, for [`BatchMultigrid::with_work`].
    pub fn into_work(self) -> LevelWork<B> {
        self.work
    }

    fn levels(mg: &Multigrid<B>) -> Result<&MgLevels<B>, BackendError> {
        mg.levels().ok_or(BackendError::Unsupported(
            "the batched multigrid cycle runs on an f64 hierarchy only",
        ))
    }
}

impl<B: BatchOps> BatchPreconditioner<B> for BatchMultigrid<'_, B> {
    fn apply(
        &mut self,
        be: &B,
        a: &B::Matrix,
        r: &B::Vector,
        z: &mut B::Vector,
        on: Active<'_, B>,
    ) -> Result<(), BackendError> {
        let h = self.levels;
        let kernels = Batched { be, on };
        let Some(pivots) = h.fine_pivots.as_ref() else {
            return kernels.dense_apply(&h.inverse, h.inverse_n, r, z);
        };
        let fine = LevelOp { l: 0, a, pivots };
        cycle(&kernels, h, fine, &mut self.work, r, z, true)
    }
}

/// The batched kernels of a level, on the active vectors of the batch.
struct Batched<'c, B: BatchOps> {
    be: &'c B,
    on: Active<'c, B>,
}

impl<B: BatchOps> LevelKernels<B> for Batched<'_, B> {
    type M = B::Matrix;
    type V = B::Vector;
    fn smooth(
        &self,
        a: &B::Matrix,
        relax: Relax<'_, B>,
        b: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.be.batch_mg_smooth(a, relax, b, x, self.on)
    }
    fn restrict_residual(
        &self,
        a: &B::Matrix,
        c: &B::Transfer,
        b: &B::Vector,
        x: &B::Vector,
        bc: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.be.batch_mg_restrict_residual(a, c, b, x, bc, self.on)
    }
    fn prolong_add(
        &self,
        c: &B::Transfer,
        xc: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.be.batch_mg_prolong_add(c, xc, x, self.on)
    }
    fn dense_apply(
        &self,
        m: &B::Vector,
        n: usize,
        b: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.be.batch_mg_dense_apply(m, n, b, x, self.on)
    }
}
