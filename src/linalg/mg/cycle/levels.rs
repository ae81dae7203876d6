//! The cycle's walk over the levels, written once for the single-vector
//! preconditioner ([`super::Multigrid`]) and the batched one
//! (`linalg::batch::mg`). Each supplies the four kernels of a level
//! ([`LevelKernels`]) and its own (b, x) work vectors; the order of the
//! operations, and so every bit of the result, is the same for both. The
//! f32 hierarchy (`super::LowKernels`) walks the same cycle with its own
//! level types ([`LevelKernels::M`], [`LevelKernels::V`]).

use super::MgLevels;
use crate::backend::mg::{Guess, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::linalg::mg::MgCycle;

/// What one level of a cycle runs: [`MultigridOps`]' single-vector kernels
/// (implemented by every such backend), or their batched forms over the
/// active vectors of a batch.
pub trait LevelKernels<B: MultigridOps> {
    /// A level's operator (f64 or f32).
    type M;
    /// A level's vector (f64 or f32).
    type V;
    /// One colour's half-sweep of the zebra z-line relaxation.
    fn smooth(
        &self,
        a: &Self::M,
        relax: Relax<'_, B, Self::V>,
        b: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError>;
    /// bc = Pᵀ (b − A x).
    fn restrict_residual(
        &self,
        a: &Self::M,
        c: &B::Transfer,
        b: &Self::V,
        x: &Self::V,
        bc: &mut Self::V,
    ) -> Result<(), BackendError>;
    /// x += P xc.
    fn prolong_add(
        &self,
        c: &B::Transfer,
        xc: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError>;
    /// x = M b with the coarsest level's dense inverse M (n × n).
    fn dense_apply(
        &self,
        m: &Self::V,
        n: usize,
        b: &Self::V,
        x: &mut Self::V,
    ) -> Result<(), BackendError>;
}

impl<B: MultigridOps> LevelKernels<B> for B {
    type M = B::Matrix;
    type V = B::Vector;
    fn smooth(
        &self,
        a: &B::Matrix,
        relax: Relax<'_, B>,
        b: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.mg_smooth(a, relax, b, x)
    }
    fn restrict_residual(
        &self,
        a: &B::Matrix,
        c: &B::Transfer,
        b: &B::Vector,
        x: &B::Vector,
        bc: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.mg_restrict_residual(a, c, b, x, bc)
    }
    fn prolong_add(
        &self,
        c: &B::Transfer,
        xc: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.mg_prolong_add(c, xc, x)
    }
    fn dense_apply(
        &self,
        m: &B::Vector,
        n: usize,
        b: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<(), BackendError> {
        self.mg_dense_apply(m, n, b, x)
    }
}

/// The level a cycle runs on: its index (0 = the finest), operator and
/// line pivots.
pub struct LevelOp<'c, M, V> {
    pub l: usize,
    pub a: &'c M,
    pub pivots: &'c V,
}

/// One cycle on `level` for A x = b, improving x in place (x is taken as 0
/// when `zero`); `work` holds the (b, x) of the levels below it.
pub fn cycle<B: MultigridOps, K: LevelKernels<B> + ?Sized>(
    k: &K,
    h: &MgLevels<B, K::M, K::V>,
    level: LevelOp<'_, K::M, K::V>,
    work: &mut [(K::V, K::V)],
    b: &K::V,
    x: &mut K::V,
    zero: bool,
) -> Result<(), BackendError> {
    let LevelOp { l, a, pivots } = level;
    // The step that made this level, when it relaxes its changed cells only.
    let made_by = (l > 0 && h.skip_unchanged).then(|| &h.steps[l - 1]);
    let relax = |colour, guess| Relax {
        inv_pivots: pivots,
        colour,
        guess,
        made_by,
    };
    for sweep in 0..h.opts.sweeps {
        let (g0, g1) = match zero && sweep == 0 {
            true => (Guess::Zero, Guess::ColourZero),
            false => (Guess::Full, Guess::Full),
        };
        k.smooth(a, relax(0, g0), b, x)?;
        k.smooth(a, relax(1, g1), b, x)?;
    }
    let step = &h.steps[l];
    let ((cb, cx), deeper) = work.split_first_mut().expect("a coarser level");
    k.restrict_residual(a, step, b, x, cb)?; // b_c = Pᵀ(b − A x)
    match &h.coarse[l] {
        super::Coarse {
            a: Some(ac),
            pivots: Some(pc),
        } => {
            let repeats = match h.opts.cycle {
                MgCycle::V => 1,
                MgCycle::W => 2,
            };
            for g in 0..repeats {
                let coarser = LevelOp {
                    l: l + 1,
                    a: ac,
                    pivots: pc,
                };
                cycle(k, h, coarser, deeper, cb, cx, g == 0)?;
            }
        }
        // x_c = A_c⁻¹ b_c
        _ => k.dense_apply(&h.inverse, h.inverse_n, cb, cx)?,
    }
    k.prolong_add(step, cx, x)?; // x += P x_c
    for _ in 0..h.opts.sweeps {
        for colour in [1, 0] {
            k.smooth(a, relax(colour, Guess::Full), b, x)?;
        }
    }
    Ok(())
}
