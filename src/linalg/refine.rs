//! Iterative refinement (residual correction) around PCG, for an operator
//! with a cheaper low-precision apply (topopt's f32 elasticity operator):
//!
//! - [`RefineMode::Mixed`]: outer loop r = b − A x in f64 (the true
//!   residual); stop when ‖r‖/‖b‖ ≤ rtol; else solve A e ≈ r from e = 0
//!   with PCG on the low-precision operator, aiming at the outer target but
//!   no tighter than [`INNER_RTOL_FLOOR`], then x += e. Pure f32 CG stalls
//!   near a true residual of 1e-3 on the elasticity systems; the f64 outer
//!   residual removes that floor. If an outer step stops reducing the
//!   residual (low-precision rounding dominates), the inner solves switch to
//!   the f64 operator.
//! - [`RefineMode::F64`]: PCG with the f64 operator on x itself; each time
//!   the recurrence meets 0.9·rtol the true residual is recomputed and, if it
//!   is not there yet, PCG restarts from it.
//!
//! The iteration cap counts Krylov iterations of all inner solves; hitting
//! it is [`SolveError::NoConvergence`]. The progress is left in the
//! [`CgInfo`] whatever the outcome, so a caller can record a failed solve
//! and go on.

use super::operator::LinearOperator;
use super::pcg::{pcg_from_residual, CgInfo, CgParams, CgRun, PcgWork, SolveError, Stop, BB, RR};
use super::precond::Preconditioner;
use crate::backend::{Backend, BackendError, Ratio};

/// Tightest relative reduction asked of one inner low-precision solve. An
/// inner solve aims straight for the outer target (0.5 · rtol‖b‖/‖r‖, so
/// one correction usually suffices, as many Krylov iterations as plain f64
/// PCG from the same warm start) but never below this: f32 rounding limits
/// how much one correction can gain, so beyond it the iterations are wasted
/// and another outer step is cheaper.
pub const INNER_RTOL_FLOOR: f64 = 1e-4;
/// Outer steps that reduce the residual by less than this factor count as
/// stagnating.
const STALL_FACTOR: f64 = 0.5;
/// Stagnating outer steps tolerated with the f64 inner operator.
const MAX_STALLS: usize = 3;
/// True-residual restarts of F64 mode.
const MAX_RESTARTS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RefineMode {
    /// f64 operator throughout.
    F64,
    /// Low-precision operator inside f64 residual correction.
    #[value(alias = "f32")]
    Mixed,
}

/// The vectors of a refined solve, allocated once for many solves.
pub struct RefineWork<B: Backend> {
    pcg: PcgWork<B>,
    /// Correction of the mixed loop.
    e: B::Vector,
    /// Outer (true) residual.
    ro: B::Vector,
    zero: B::Vector,
}

impl<B: Backend> RefineWork<B> {
    pub fn new(be: &B, n: usize) -> Result<Self, BackendError> {
        Ok(RefineWork {
            pcg: PcgWork::new(be, n)?,
            e: be.zeros(n)?,
            ro: be.zeros(n)?,
            zero: be.zeros(n)?,
        })
    }
}

/// Solves A x = b from the initial guess in `x` (warm start) to
/// ‖b − A x‖₂ ≤ `params.stop`.rtol·‖b‖₂ on the true residual, with M = `m`
/// in every inner solve; `info` holds the progress (also on failure).
#[allow(clippy::too_many_arguments)]
pub fn refine<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    be: &B,
    a: &mut A,
    m: &mut M,
    b: &B::Vector,
    x: &mut B::Vector,
    w: &mut RefineWork<B>,
    params: &CgParams,
    mode: RefineMode,
    info: &mut CgInfo,
) -> Result<(), SolveError> {
    let rtol = params.stop.rtol;
    be.dot(b, b, &mut w.pcg.s, BB)?; // s[BB] = b·b
    a.residual(be, b, x, &mut w.ro, &mut w.pcg.s, RR)?; // ro = b − A x; s[RR] = ro·ro
    let v = be.read_scalars(&w.pcg.s)?;
    let bb = v[BB];
    if bb == 0.0 {
        be.copy(&w.zero, x)?;
        return Ok(());
    }
    let mut rel = (v[RR] / bb).sqrt();
    info.rel_residual = rel;
    let mut low = a.set_low_precision(mode == RefineMode::Mixed);
    let mut stalls = 0;
    let result = loop {
        if rel <= rtol {
            break Ok(());
        }
        let left = params.max_iter - info.iterations.min(params.max_iter);
        if left == 0 {
            break Err(SolveError::NoConvergence {
                iters: info.iterations,
                rel,
                rtol,
            });
        }
        let rr = rel * rel * bb;
        let mut inner = CgInfo::default();
        let solved = match mode {
            RefineMode::F64 => {
                // Continue on x itself from the true residual in ro.
                let p = inner_params(params, Stop::relative(0.9 * rtol), left);
                be.copy(&w.ro, &mut w.pcg.r)?;
                let run = CgRun {
                    be,
                    a: &mut *a,
                    m: &mut *m,
                    work: &mut w.pcg,
                    params: &p,
                    info: &mut inner,
                };
                pcg_from_residual(run, x, rr, bb)
            }
            RefineMode::Mixed => {
                // A e ≈ ro from e = 0 (‖ro‖² = rr), then x = e + x below.
                let target = (0.5 * rtol / rel).max(INNER_RTOL_FLOOR);
                let p = inner_params(params, Stop::relative(target), left);
                be.copy(&w.ro, &mut w.pcg.r)?;
                be.copy(&w.zero, &mut w.e)?;
                let run = CgRun {
                    be,
                    a: &mut *a,
                    m: &mut *m,
                    work: &mut w.pcg,
                    params: &p,
                    info: &mut inner,
                };
                pcg_from_residual(run, &mut w.e, rr, rr)
            }
        };
        match solved {
            // A capped or broken-down inner solve still leaves a usable
            // iterate: the outer residual below judges it.
            Ok(())
            | Err(SolveError::NoConvergence { .. })
            | Err(SolveError::Breakdown { .. })
            | Err(SolveError::Stagnated { .. }) => {}
            Err(e) => return Err(e),
        }
        info.iterations += inner.iterations;
        if mode == RefineMode::Mixed {
            let one = Ratio { num: BB, den: BB };
            be.xpay(one, &w.e, x, &w.pcg.s)?; // x = e + x (β = s[BB]/s[BB] = 1)
        }
        info.outer += 1;
        a.residual(be, b, x, &mut w.ro, &mut w.pcg.s, RR)?; // ro = b − A x; s[RR] = ro·ro
        let new_rel = (be.read_scalars(&w.pcg.s)?[RR] / bb).sqrt();
        if !new_rel.is_finite() {
            break Err(stagnated(info, rtol));
        }
        if new_rel > STALL_FACTOR * rel && new_rel > rtol {
            if low {
                low = false;
                a.set_low_precision(false);
                info.precision_switches
                    .push((info.iterations, "f64".into()));
            } else {
                stalls += 1;
            }
        }
        rel = new_rel;
        info.rel_residual = rel;
        let restarts = if mode == RefineMode::F64 {
            info.outer
        } else {
            0
        };
        if stalls > MAX_STALLS || restarts > MAX_RESTARTS {
            break Err(stagnated(info, rtol));
        }
    };
    a.set_low_precision(false);
    result
}

/// The inner solve's parameters: `stop`, at most `left` iterations, no
/// residual replacement (the outer loop recomputes the true residual).
fn inner_params(params: &CgParams, stop: Stop, left: usize) -> CgParams {
    CgParams {
        stop,
        max_iter: left,
        check_every: params.check_every,
        record: false,
        replace: false,
    }
}

fn stagnated(info: &CgInfo, rtol: f64) -> SolveError {
    SolveError::Stagnated {
        iters: info.iterations,
        rel: info.rel_residual,
        rtol,
    }
}
