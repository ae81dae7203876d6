//! One multigrid cycle of [`super::ElasticMg`] (the recursion over the
//! levels) and the coarsest solve. Level `d` below the finest is solved by
//! one recursive pass, or by two when `d ≤ w_levels` (a W-cycle on the
//! largest coarse levels, `--mg-w-levels`): x' = C b', then
//! x' += C (b' − A' x'), so that I − M'A' = (I − CA')² and M' stays
//! symmetric.

use super::super::backend::ElasticBackend;
use super::super::operator::ElasticOperator;
use super::Level;
use crate::backend::Ratio;
use crate::linalg::precond::chebyshev::Chebyshev;
use crate::linalg::precond::jacobi::Jacobi;
use crate::linalg::precond::Preconditioner;
use crate::linalg::{pcg_with, CgInfo, CgParams, LinearOperator, PcgWork, SolveError, Stop};

/// The scratch of one cycle call, borrowed from the preconditioner.
pub(super) struct Ctx<'a, B: ElasticBackend> {
    pub(super) be: &'a B,
    pub(super) s: &'a mut B::Scalars,
    pub(super) one: &'a B::Scalars,
    pub(super) work: &'a mut PcgWork<B>,
    pub(super) coarse_iterations: &'a mut usize,
    pub(super) coarse_rtol: f64,
    /// K_c⁻¹ when the coarsest level is solved densely.
    pub(super) dense: Option<&'a B::Vector>,
    /// Levels of the hierarchy, the finest included.
    pub(super) levels: usize,
    /// Coarse levels (from the top) solved by two passes (W-cycle there).
    pub(super) w_levels: usize,
    /// The transfer from each level to the next coarser one, finest first.
    pub(super) transfers: &'a [B::ElasticTransfer],
}

/// A level's scratch vectors: the residual r and the smoothed correction t.
pub(super) struct Scratch<'a, V> {
    pub(super) r: &'a mut V,
    pub(super) t: &'a mut V,
}

/// x = cycle(b) on the level of `a`, with `below` the coarser levels (two
/// passes on coarse levels up to `w_levels`, one below: V).
pub(super) fn cycle<B: ElasticBackend>(
    c: &mut Ctx<'_, B>,
    a: &mut ElasticOperator<B>,
    sm: &mut Chebyshev<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    scratch: Scratch<'_, B::Vector>,
    below: &mut [Level<B>],
) -> Result<(), SolveError> {
    let be = c.be;
    let Scratch { r, t } = scratch;
    // The transfer from this level down: one per level below the finest.
    let down = &c.transfers[c.transfers.len() - below.len()];
    sm.apply(be, a, b, x)?; // x = S b
    a.residual(be, b, x, r, c.s, 0)?; // r = b − A x
    let (next, rest) = below.split_first_mut().expect("a coarser level");
    be.elastic_restrict(down, r, &mut next.b)?; // b' = Pᵀ r
    let Level {
        op,
        smoother,
        b: nb,
        x: nx,
        r: nr,
        t: nt,
        w,
    } = next;
    match smoother {
        Some(nsm) => {
            let scratch = Scratch { r: nr, t: nt };
            cycle(c, op, nsm, nb, nx, scratch, rest)?;
            // `next` is coarse level `depth` (1 = the first below the
            // finest); the top `w_levels` ones get a second pass (W).
            let depth = c.levels - rest.len() - 1;
            if depth <= c.w_levels {
                if w.is_none() {
                    *w = Some((be.zeros(op.len())?, be.zeros(op.len())?));
                }
                let (w1, w2) = w.as_mut().expect("allocated above");
                op.residual(be, nb, nx, w1, c.s, 0)?; // w1 = b' − A' x'
                let scratch = Scratch { r: nr, t: nt };
                cycle(c, op, nsm, w1, w2, scratch, rest)?;
                be.xpay(Ratio { num: 0, den: 0 }, w2, nx, c.one)?; // x' += w2
            }
        }
        None => coarse_solve(c, op, nb, nx)?,
    }
    be.elastic_prolong_add(down, nx, x)?; // x += P x'
    a.residual(be, b, x, r, c.s, 0)?; // r = b − A x
    sm.apply(be, a, r, t)?; // t = S r
    be.xpay(Ratio { num: 0, den: 0 }, t, x, c.one)?; // x = t + x
    Ok(())
}

/// x = A⁻¹ b by Jacobi-PCG from D⁻¹b to the coarse rtol.
fn coarse_solve<B: ElasticBackend>(
    c: &mut Ctx<'_, B>,
    a: &mut ElasticOperator<B>,
    b: &B::Vector,
    x: &mut B::Vector,
) -> Result<(), SolveError> {
    let be = c.be;
    if let Some(inv) = c.dense {
        return Ok(be.dense_matvec(inv, b, x)?); // x = K_c⁻¹ b
    }
    be.divide(b, a.diagonal(), x)?; // x = D⁻¹ b: a start that is 0 on fixed DOFs
    let params = CgParams {
        stop: Stop::relative(c.coarse_rtol),
        max_iter: 20 * a.len().max(50),
        check_every: 4,
        record: false,
        replace: false,
    };
    let mut info = CgInfo::default();
    let out = pcg_with(be, a, &mut Jacobi, b, x, c.work, &params, &mut info);
    *c.coarse_iterations += info.iterations;
    match out {
        Ok(()) | Err(SolveError::NoConvergence { .. } | SolveError::Stagnated { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
