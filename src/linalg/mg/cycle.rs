//! The multigrid preconditioner: z = M⁻¹ r is one cycle from z = 0, written
//! once over [`MultigridOps`]. Per level, finest first:
//!
//! ```text
//!   pre:   ν × (colour 0, colour 1)   zebra z-line relaxation on A_l x = b_l
//!   b_l+1 = Pᵀ (b_l − A_l x)          restrict_residual (one fused pass)
//!   x_l+1 = 0; γ × cycle(l + 1)       V: γ = 1, W: γ = 2; coarsest: dense A⁻¹
//!   x    += P x_l+1                   prolong_add
//!   post:  ν × (colour 1, colour 0)   the adjoint of the pre-smoother
//! ```
//!
//! Post-smoothing is the adjoint of pre-smoothing (reversed colour order; the
//! line solve is its own adjoint, the point pass runs the other way), P is
//! the aggregation and Pᵀ its transpose, and the coarsest solve is a
//! symmetrised exact inverse; so the error propagator is A-self-adjoint and
//! M is symmetric, and positive definite because the smoother converges in
//! the A-norm. M is fixed (no inner Krylov), so plain PCG stays valid.
//!
//! On a size-graded hierarchy (a non-uniform grid) each coarse level
//! relaxes only the cells near a change ([`super::relaxed`]): a cell its
//! step left single in x and in y is the level above's cell, already
//! relaxed at that scale, and is smoothed again only once a later step
//! merges it (the overhang corners of a package: level 0, then the first
//! level that pairs them, an ordinary factor-2 coarsening). Pre and post
//! skip the same cells, so the cycle stays symmetric; such a level's
//! smoother is the same block Gauss–Seidel over fewer columns (no
//! expansion in the A-norm), and the fine level relaxes every column.
//!
//! Work per V(1,1) cycle on the fine level: four half-sweeps (each column
//! solve reads b, its four in-plane neighbours, gx, gy, gz, the pivots and
//! writes x twice), one residual-restriction, one prolongation: about 7
//! fine SpMVs; all coarse levels together add a third of that on a uniform
//! grid (each halves both axes), more on a graded one, whose first levels
//! merge only the narrow columns: cells over all levels 1.89 of the fine
//! level on ev6's package, 2.04 on the 24 mm die_on_spreader package at
//! 10 µm (1.33 halving); relaxed columns (`LevelReport::relaxed_columns`,
//! [`MgReport::relaxed_work`]) 1.63 and 1.62 (1.33 halving), the same PCG
//! iterations as relaxing every cell (BENCHMARKS.md's git history, "Skipping
//! unchanged cells"). The restriction and prolongation still visit every cell.

use super::{MgOptions, MgPrecision, MgReport};
use crate::backend::mg::MultigridOps;
use crate::backend::{Backend, BackendError, QuadDiagOps};
use crate::linalg::precond::{PrecondInfo, PrecondReport, Preconditioner};
use crate::linalg::QuadDiagOperator;
use std::collections::BTreeMap;

mod build;
mod levels;
mod low;
mod replay;

pub use levels::{cycle, LevelKernels, LevelOp};
use low::LowCycle;
use replay::Replay;

/// A level below the finest: its operator and line pivots, None at the
/// coarsest (solved with the dense inverse).
pub struct Coarse<M, V> {
    pub a: Option<M>,
    pub pivots: Option<V>,
}

/// The hierarchy a cycle walks, without work vectors: the single
/// preconditioner owns one, and the batched cycle (`linalg::batch::mg`)
/// borrows it and keeps only its own k-vector work vectors. `M`, `V` are
/// the levels' matrix and vector: f64 by default, f32 on a low-precision
/// hierarchy ([`MultigridOps::LowMatrix`], [`MultigridOps::LowVector`]).
pub struct MgLevels<B: MultigridOps, M = <B as QuadDiagOps>::Matrix, V = <B as Backend>::Vector> {
    pub opts: MgOptions,
    /// None when the fine level is itself the coarsest.
    pub fine_pivots: Option<V>,
    /// Fine to coarse; `steps[l]` makes level l + 1.
    pub steps: Vec<B::Transfer>,
    /// Per level below the finest.
    pub coarse: Vec<Coarse<M, V>>,
    /// Dense inverse of the coarsest level, n × n.
    pub inverse: V,
    pub inverse_n: usize,
    /// Whether the levels below the finest relax only their changed cells
    /// (`steps[l - 1]` made level l; size-graded hierarchies:
    /// [`super::relaxed`]).
    pub skip_unchanged: bool,
}

/// The (b, x) work vectors of every level below the finest.
pub type LevelWork<B> = Vec<(
    <B as crate::backend::Backend>::Vector,
    <B as crate::backend::Backend>::Vector,
)>;

impl<B: MultigridOps> MgLevels<B> {
    /// One (b, x) pair of `k` vectors for every level below the finest.
    pub fn work(&self, be: &B, k: usize) -> Result<LevelWork<B>, BackendError> {
        self.steps
            .iter()
            .map(|c| {
                let nc = c.as_ref().coarse_len();
                Ok((be.zeros(k * nc)?, be.zeros(k * nc)?))
            })
            .collect()
    }
}

pub struct Multigrid<B: MultigridOps> {
    hier: Hierarchy<B>,
    report: MgReport,
    replay: Replay<B::Recording>,
}

/// The levels in the precision they run in.
enum Hierarchy<B: MultigridOps> {
    F64 {
        levels: MgLevels<B>,
        work: LevelWork<B>,
    },
    /// `MgPrecision::F32`, and `Auto` until PCG stagnates.
    F32(LowCycle<B>),
    /// Between the f32 hierarchy, freed, and the f64 one that replaces it
    /// (so the two never hold device memory together); left only when
    /// building the f64 one failed, and that solve has failed with it.
    Released(MgOptions),
}

impl<B: MultigridOps> Multigrid<B> {
    pub fn mg_report(&self) -> &MgReport {
        &self.report
    }

    /// The f64 hierarchy, for the batched cycle (`linalg::batch::mg`);
    /// None while an f32 one is in use.
    pub fn levels(&self) -> Option<&MgLevels<B>> {
        match &self.hier {
            Hierarchy::F64 { levels, .. } => Some(levels),
            Hierarchy::F32(_) | Hierarchy::Released(_) => None,
        }
    }

    fn opts(&self) -> &MgOptions {
        match &self.hier {
            Hierarchy::F64 { levels, .. } => &levels.opts,
            Hierarchy::F32(low) => &low.levels.opts,
            Hierarchy::Released(opts) => opts,
        }
    }
}

/// The fine level smooths with the system's own Quad-Diag matrix, so M
/// exists for that operator only.
impl<B: MultigridOps> Preconditioner<B, QuadDiagOperator<'_, B>> for Multigrid<B> {
    fn operator_changed(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'_, B>,
    ) -> Result<(), BackendError> {
        self.replay.forget();
        match &mut self.hier {
            Hierarchy::F32(low) => low.operator_changed(be, a.matrix()),
            Hierarchy::F64 { levels, .. } => {
                if let Some(p) = levels.fine_pivots.as_mut() {
                    *p = be.mg_line_pivots(a.matrix())?;
                }
                Ok(())
            }
            Hierarchy::Released(_) => Err(RELEASED),
        }
    }

    /// `Auto` on the f32 hierarchy: PCG stagnated, so the hierarchy is
    /// rebuilt in f64 (the f32 one freed first) and PCG restarts.
    fn raise_precision(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'_, B>,
    ) -> Result<Option<String>, BackendError> {
        let opts = *self.opts();
        if opts.precision != MgPrecision::Auto || matches!(self.hier, Hierarchy::F64 { .. }) {
            return Ok(None);
        }
        let f64_opts = MgOptions {
            precision: MgPrecision::F64,
            ..opts
        };
        self.replay.forget();
        self.hier = Hierarchy::Released(opts);
        let mut f64 = Multigrid::new(be, a.matrix(), &f64_opts).map_err(|e| match e {
            crate::linalg::SolveError::Backend(b) => b,
            other => BackendError::Numerical(other.to_string()),
        })?;
        if let Hierarchy::F64 { levels, .. } = &mut f64.hier {
            levels.opts.precision = MgPrecision::Auto;
        }
        f64.report.precision = "f64 (auto, fell back)".into();
        *self = f64;
        Ok(Some("mg f64".into()))
    }

    fn apply(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'_, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let Multigrid { hier, replay, .. } = self;
        let buffers = [
            be.mg_matrix_address(a.matrix()),
            be.mg_address(r),
            be.mg_address(z),
        ];
        replay.run(be, buffers, &mut || apply(be, hier, a, r, z))
    }
}

/// What a released hierarchy answers.
const RELEASED: BackendError =
    BackendError::Unsupported("multigrid: the hierarchy was released and not rebuilt");

/// One cycle of `hier` for z = M⁻¹ r.
fn apply<B: MultigridOps>(
    be: &B,
    hier: &mut Hierarchy<B>,
    a: &QuadDiagOperator<'_, B>,
    r: &B::Vector,
    z: &mut B::Vector,
) -> Result<(), BackendError> {
    let (h, work) = match hier {
        Hierarchy::F32(low) => return low.apply(be, r, z),
        Hierarchy::F64 { levels, work } => (&*levels, work),
        Hierarchy::Released(_) => return Err(RELEASED),
    };
    let Some(pivots) = h.fine_pivots.as_ref() else {
        // z = A⁻¹ r: the fine level is small enough to be the coarsest.
        return be.mg_dense_apply(&h.inverse, h.inverse_n, r, z);
    };
    let fine = LevelOp {
        l: 0,
        a: a.matrix(),
        pivots,
    };
    cycle(be, h, fine, work, r, z, true)
}

impl<B: MultigridOps> PrecondInfo for Multigrid<B> {
    /// A cycle costs about 7 SpMVs: a read-back (~10 µs on a GPU) every
    /// iteration is cheap next to the ~1.5 cycles a 10-step interval wastes
    /// on average at 10–15 iterations.
    fn check_interval(&self) -> Option<usize> {
        Some(1)
    }

    fn report(&self) -> PrecondReport {
        let r = &self.report;
        let params = BTreeMap::from([
            ("levels".to_string(), r.levels.len() as f64),
            ("sweeps".to_string(), self.opts().sweeps as f64),
            ("relaxed_work".to_string(), r.relaxed_work()),
            ("hierarchy_bytes".to_string(), r.hierarchy_bytes as f64),
            (
                "hierarchy_fraction".to_string(),
                r.hierarchy_bytes as f64 / r.fine_matrix_bytes as f64,
            ),
        ]);
        PrecondReport {
            name: "mg".into(),
            params,
            multigrid: Some(r.clone()),
        }
    }
}
