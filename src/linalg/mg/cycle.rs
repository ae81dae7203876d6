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
//! iterations as relaxing every cell (BENCHMARKS.md, "Skipping unchanged
//! cells"). The restriction and prolongation still visit every cell.

use super::{MgCycle, MgOptions, MgReport};
use crate::backend::mg::{Guess, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::linalg::precond::{PrecondInfo, PrecondReport, Preconditioner};
use crate::linalg::QuadDiagOperator;
use std::collections::BTreeMap;

mod build;

/// A level below the finest: its operator, pivots and vectors.
struct Coarse<B: MultigridOps> {
    /// None at the coarsest level (solved with the dense inverse).
    a: Option<B::Matrix>,
    pivots: Option<B::Vector>,
    b: B::Vector,
    x: B::Vector,
}

pub struct Multigrid<B: MultigridOps> {
    opts: MgOptions,
    /// Line pivots of the fine level (None when it is the coarsest).
    fine_pivots: Option<B::Vector>,
    steps: Vec<B::Transfer>,
    coarse: Vec<Coarse<B>>,
    /// Dense inverse of the coarsest level, n × n.
    inverse: B::Vector,
    inverse_n: usize,
    report: MgReport,
    /// Whether coarse levels relax only their changed cells (size-graded
    /// hierarchies: [`super::relaxed`]).
    skip: bool,
}

impl<B: MultigridOps> Multigrid<B> {
    pub fn mg_report(&self) -> &MgReport {
        &self.report
    }

    /// The hierarchy, for the batched cycle (`linalg::batch::mg`), which
    /// shares it and keeps only its own k-vector work vectors.
    pub fn parts(&self) -> MgParts<'_, B> {
        MgParts {
            opts: self.opts,
            fine_pivots: self.fine_pivots.as_ref(),
            steps: &self.steps,
            coarse: self
                .coarse
                .iter()
                .map(|c| (c.a.as_ref(), c.pivots.as_ref()))
                .collect(),
            inverse: &self.inverse,
            inverse_n: self.inverse_n,
            skip_unchanged: self.skip,
        }
    }
}

/// A level below the finest: its operator and pivots, None at the coarsest.
pub type CoarseParts<'a, B> = (
    Option<&'a <B as crate::backend::QuadDiagOps>::Matrix>,
    Option<&'a <B as crate::backend::Backend>::Vector>,
);

/// A borrowed view of a [`Multigrid`]'s hierarchy (see [`Multigrid::parts`]).
pub struct MgParts<'a, B: MultigridOps> {
    pub opts: MgOptions,
    /// None when the fine level is itself the coarsest.
    pub fine_pivots: Option<&'a B::Vector>,
    /// Fine to coarse; `steps[l]` makes level l + 1.
    pub steps: &'a [B::Transfer],
    /// Per level below the finest: its operator and pivots (None at the
    /// coarsest, solved with `inverse`).
    pub coarse: Vec<CoarseParts<'a, B>>,
    pub inverse: &'a B::Vector,
    pub inverse_n: usize,
    /// Whether the levels below the finest relax only their changed cells
    /// (`steps[l - 1]` made level l; [`super::relaxed`]).
    pub skip_unchanged: bool,
}

/// The operator, pivots and coarsening of the level a cycle runs on.
struct Here<'a, B: MultigridOps> {
    a: &'a B::Matrix,
    pivots: &'a B::Vector,
    step: &'a B::Transfer,
    /// The step that made this level, when its smoother relaxes only the
    /// cells that step changed and their neighbours (None: every cell).
    made_by: Option<&'a B::Transfer>,
}

/// Below the current level: the remaining coarsenings and levels, and the
/// coarsest inverse.
struct Below<'a, B: MultigridOps> {
    steps: &'a [B::Transfer],
    levels: &'a mut [Coarse<B>],
    inverse: &'a B::Vector,
    inverse_n: usize,
    /// Whether the levels below relax only their changed cells.
    skip: bool,
}

/// One cycle on the current level for A x = b, improving x in place (x is
/// taken as 0 when `zero`).
fn cycle<B: MultigridOps>(
    be: &B,
    o: &MgOptions,
    here: Here<'_, B>,
    below: Below<'_, B>,
    b: &B::Vector,
    x: &mut B::Vector,
    zero: bool,
) -> Result<(), BackendError> {
    let relax = |colour, guess| Relax {
        inv_pivots: here.pivots,
        colour,
        guess,
        made_by: here.made_by,
    };
    for s in 0..o.sweeps {
        let first = zero && s == 0;
        let (g0, g1) = match first {
            true => (Guess::Zero, Guess::ColourZero),
            false => (Guess::Full, Guess::Full),
        };
        be.mg_smooth(here.a, relax(0, g0), b, x)?;
        be.mg_smooth(here.a, relax(1, g1), b, x)?;
    }
    let (next, deeper) = below.levels.split_first_mut().expect("a coarser level");
    // b_c = Pᵀ (b − A x)
    be.mg_restrict_residual(here.a, here.step, b, x, &mut next.b)?;
    let Coarse {
        a: next_a,
        pivots: next_pivots,
        b: next_b,
        x: next_x,
    } = next;
    match (next_a.as_ref(), next_pivots.as_ref()) {
        (Some(a), Some(pivots)) => {
            let repeats = match o.cycle {
                MgCycle::V => 1,
                MgCycle::W => 2,
            };
            for g in 0..repeats {
                let here = Here {
                    a,
                    pivots,
                    step: &below.steps[1],
                    made_by: below.skip.then_some(&below.steps[0]),
                };
                let below = Below {
                    steps: &below.steps[1..],
                    levels: &mut *deeper,
                    inverse: below.inverse,
                    inverse_n: below.inverse_n,
                    skip: below.skip,
                };
                cycle(be, o, here, below, next_b, next_x, g == 0)?;
            }
        }
        // x_c = A_c⁻¹ b_c
        _ => be.mg_dense_apply(below.inverse, below.inverse_n, next_b, next_x)?,
    }
    // x += P x_c
    be.mg_prolong_add(here.step, next_x, x)?;
    for _ in 0..o.sweeps {
        for colour in [1, 0] {
            be.mg_smooth(here.a, relax(colour, Guess::Full), b, x)?;
        }
    }
    Ok(())
}

/// The fine level smooths with the system's own Quad-Diag matrix, so M
/// exists for that operator only.
impl<B: MultigridOps> Preconditioner<B, QuadDiagOperator<'_, B>> for Multigrid<B> {
    fn operator_changed(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'_, B>,
    ) -> Result<(), BackendError> {
        if let Some(p) = self.fine_pivots.as_mut() {
            *p = be.mg_line_pivots(a.matrix())?;
        }
        Ok(())
    }

    fn apply(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'_, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let Some(pivots) = self.fine_pivots.as_ref() else {
            // z = A⁻¹ r: the fine level is small enough to be the coarsest.
            return be.mg_dense_apply(&self.inverse, self.inverse_n, r, z);
        };
        let here = Here {
            a: a.matrix(),
            pivots,
            step: &self.steps[0],
            made_by: None,
        };
        let below = Below {
            steps: &self.steps,
            levels: &mut self.coarse,
            inverse: &self.inverse,
            inverse_n: self.inverse_n,
            skip: self.skip,
        };
        cycle(be, &self.opts, here, below, r, z, true)
    }
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
            ("sweeps".to_string(), self.opts.sweeps as f64),
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
