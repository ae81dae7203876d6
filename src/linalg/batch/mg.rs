//! The multigrid preconditioner over a batch: one cycle from z = 0 on each
//! of k vectors, the same cycle as `linalg::mg::cycle` (zebra z-line
//! smoothing, fused residual-restriction, prolongation, dense coarsest
//! solve) with every operation a batched kernel ([`BatchOps`]), so each
//! level's operator is read once per launch for the k vectors and a
//! converged vector (status ≤ 0) costs nothing; a size-graded hierarchy's
//! coarse levels relax only their changed cells, as there. The hierarchy (operators,
//! pivots, coarsest inverse) is the single-vector [`Multigrid`]'s, borrowed;
//! only the per-level work vectors are k times larger.

use super::BatchPreconditioner;
use crate::backend::batch::{Active, BatchOps};
use crate::backend::mg::{Guess, Relax};
use crate::backend::BackendError;
use crate::linalg::mg::{MgCycle, MgParts, Multigrid};

pub struct BatchMultigrid<'a, B: BatchOps> {
    parts: MgParts<'a, B>,
    /// (b, x) of every level below the finest, k vectors each.
    work: Vec<(B::Vector, B::Vector)>,
}

impl<'a, B: BatchOps> BatchMultigrid<'a, B> {
    /// Work vectors for batches of `k` on the hierarchy of `mg`.
    pub fn new(be: &B, mg: &'a Multigrid<B>, k: usize) -> Result<Self, BackendError> {
        let parts = mg.parts();
        let work = parts
            .steps
            .iter()
            .map(|c| {
                let nc = c.as_ref().coarse_len();
                Ok((be.zeros(k * nc)?, be.zeros(k * nc)?))
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        Ok(BatchMultigrid { parts, work })
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
        let p = &self.parts;
        let Some(pivots) = p.fine_pivots else {
            return be.batch_mg_dense_apply(p.inverse, p.inverse_n, r, z, on);
        };
        let at = Level { be, p, on };
        let level = LevelOp { l: 0, a, pivots };
        at.cycle(level, &mut self.work, r, z, true)
    }
}

/// What every level of one cycle shares.
struct Level<'c, 'a, B: BatchOps> {
    be: &'c B,
    p: &'c MgParts<'a, B>,
    on: Active<'c, B>,
}

/// A level of the hierarchy as the cycle smooths it: its index, operator
/// and line pivots.
struct LevelOp<'c, B: BatchOps> {
    l: usize,
    a: &'c B::Matrix,
    pivots: &'c B::Vector,
}

impl<B: BatchOps> Level<'_, '_, B> {
    /// One cycle on `level` for A x = b, x taken as 0 when `zero`; `work`
    /// holds the levels below.
    fn cycle(
        &self,
        level: LevelOp<'_, B>,
        work: &mut [(B::Vector, B::Vector)],
        b: &B::Vector,
        x: &mut B::Vector,
        zero: bool,
    ) -> Result<(), BackendError> {
        let (be, p, on) = (self.be, self.p, self.on);
        let LevelOp { l, a, pivots } = level;
        // The step that made this level, when it relaxes its changed cells only.
        let made_by = (l > 0 && p.skip_unchanged).then(|| &p.steps[l - 1]);
        let relax = |colour, guess| Relax {
            inv_pivots: pivots,
            colour,
            guess,
            made_by,
        };
        for sweep in 0..p.opts.sweeps {
            let (g0, g1) = match zero && sweep == 0 {
                true => (Guess::Zero, Guess::ColourZero),
                false => (Guess::Full, Guess::Full),
            };
            be.batch_mg_smooth(a, relax(0, g0), b, x, on)?;
            be.batch_mg_smooth(a, relax(1, g1), b, x, on)?;
        }
        let step = &p.steps[l];
        let ((cb, cx), deeper) = work.split_first_mut().expect("a coarser level");
        be.batch_mg_restrict_residual(a, step, b, x, cb, on)?; // b_c = Pᵀ(b − A x)
        match p.coarse[l] {
            (Some(ac), Some(pc)) => {
                let repeats = match p.opts.cycle {
                    MgCycle::V => 1,
                    MgCycle::W => 2,
                };
                for g in 0..repeats {
                    let coarser = LevelOp {
                        l: l + 1,
                        a: ac,
                        pivots: pc,
                    };
                    self.cycle(coarser, deeper, cb, cx, g == 0)?;
                }
            }
            _ => be.batch_mg_dense_apply(p.inverse, p.inverse_n, cb, cx, on)?,
        }
        be.batch_mg_prolong_add(step, cx, x, on)?; // x += P x_c
        for _ in 0..p.opts.sweeps {
            be.batch_mg_smooth(a, relax(1, Guess::Full), b, x, on)?;
            be.batch_mg_smooth(a, relax(0, Guess::Full), b, x, on)?;
        }
        Ok(())
    }
}
