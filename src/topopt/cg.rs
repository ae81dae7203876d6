//! Jacobi-PCG for K(E) u = f, written once against [`ElasticBackend`].
//!
//! Two modes, one Krylov loop ([`pcg_core`]):
//! - `F64`: plain PCG with the f64 operator from the warm start u; when the
//!   recurrence says ‖r‖ ≤ rtol‖f‖ the true residual f − K u is recomputed
//!   explicitly and, if it is not there yet, PCG restarts from it.
//! - `Mixed` (default): f64 residual correction around f32 work. Outer loop:
//!   r = f − K u in f64 (true residual); stop when ‖r‖/‖f‖ ≤ rtol; else solve
//!   K e ≈ r from e = 0 with PCG on the f32 operator (aiming at the outer
//!   target, but no tighter than [`INNER_RTOL_FLOOR`]), u += e, repeat. Pure f32 CG stalls near a true
//!   residual of 1e-3 on these systems; the outer f64 residual removes that
//!   floor. If an outer step stops reducing the residual (f32 rounding
//!   dominates), the inner solve switches to the f64 operator.
//!
//! The iteration cap counts Krylov iterations of all inner solves; hitting
//! it is [`CgError::NoConvergence`], carrying the [`CgInfo`] so the
//! optimizer can record it and go on.
//!
//! Memory traffic per Krylov iteration (n DOFs, f64 vectors): operator
//! (reads x, Eₑ, writes y) + cg_update (p, q, x, r: 4 reads, 2 writes) +
//! divide (r, d, z) + dot (r, z) + xpay (z, p, p): ≈ 14 n·8 bytes beyond the
//! operator's own.

use super::backend::{ElasticBackend, OpPrecision};
use crate::backend::{BackendError, Ratio};

/// Tightest relative reduction asked of one inner f32 solve. An inner solve
/// aims straight for the outer target (0.5 · rtol‖f‖/‖r‖, so one correction
/// usually suffices, as many Krylov iterations as plain f64 PCG from the
/// same warm start) but never below this: f32 rounding limits how much one
/// correction can gain (pure f32 CG stalls near 1e-3), so beyond it the
/// iterations are wasted and another outer step is cheaper.
pub const INNER_RTOL_FLOOR: f64 = 1e-4;
/// Outer steps that reduce the residual by less than this factor count as
/// stagnating.
const STALL_FACTOR: f64 = 0.5;
/// Stagnating outer steps tolerated with the f64 inner operator.
const MAX_STALLS: usize = 3;
/// True-residual restarts of F64 mode.
const MAX_RESTARTS: usize = 8;

// Scalar slots.
const BB: usize = 0;
const RR: usize = 1;
const RZ: [usize; 2] = [2, 3];
const PQ: usize = 4;
const SLOTS: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CgMode {
    /// f64 operator throughout.
    F64,
    /// f32 operator inside f64 residual correction.
    #[value(alias = "f32")]
    Mixed,
}

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct CgParams {
    pub rtol: f64,
    /// Cap on Krylov iterations per solve.
    pub max_iter: usize,
    pub mode: CgMode,
    /// Read the recursive residual every this many iterations (1 on the
    /// CPU; more on a GPU, where each read is a round trip).
    pub check_every: usize,
}

impl Default for CgParams {
    fn default() -> CgParams {
        CgParams {
            rtol: 1e-5,
            max_iter: 1000,
            mode: CgMode::Mixed,
            check_every: 1,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct CgInfo {
    /// Krylov iterations, all inner solves together.
    pub iterations: usize,
    /// Outer residual corrections (Mixed) or true-residual restarts (F64).
    pub outer: usize,
    /// Final ‖f − K u‖ / ‖f‖, computed explicitly.
    pub rel_residual: f64,
    /// The mixed loop fell back to the f64 inner operator.
    pub switched_to_f64: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CgError {
    #[error(
        "PCG reached its cap of {cap} iterations at true residual {:.3e} > rtol {rtol:.1e}",
        info.rel_residual
    )]
    NoConvergence { info: CgInfo, cap: usize, rtol: f64 },
    #[error("PCG stagnated at true residual {:.3e} > rtol {rtol:.1e} after {} iterations", info.rel_residual, info.iterations)]
    Stagnated { info: CgInfo, rtol: f64 },
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl CgError {
    /// The progress of a solve that did not converge.
    pub fn info(&self) -> Option<CgInfo> {
        match self {
            CgError::NoConvergence { info, .. } | CgError::Stagnated { info, .. } => Some(*info),
            CgError::Backend(_) => None,
        }
    }
}

/// Work vectors, allocated once per optimization (the diagonal is refreshed
/// by [`Workspace::refresh_diagonal`] after each change of moduli).
pub struct Workspace<B: ElasticBackend> {
    k: Krylov<B>,
    /// Correction of the mixed loop.
    e: B::Vector,
    /// Outer (true) residual.
    ro: B::Vector,
    zero: B::Vector,
}

/// The vectors of one PCG run.
struct Krylov<B: ElasticBackend> {
    d: B::Vector,
    r: B::Vector,
    z: B::Vector,
    p: B::Vector,
    q: B::Vector,
    s: B::Scalars,
}

impl<B: ElasticBackend> Workspace<B> {
    pub fn new(be: &B, n: usize) -> Result<Workspace<B>, BackendError> {
        Ok(Workspace {
            k: Krylov {
                d: be.zeros(n)?,
                r: be.zeros(n)?,
                z: be.zeros(n)?,
                p: be.zeros(n)?,
                q: be.zeros(n)?,
                s: be.scalars(SLOTS)?,
            },
            e: be.zeros(n)?,
            ro: be.zeros(n)?,
            zero: be.zeros(n)?,
        })
    }

    /// d = diag(K) for the Jacobi preconditioner.
    pub fn refresh_diagonal(&mut self, be: &B, op: &mut B::Elastic) -> Result<(), BackendError> {
        be.elastic_diagonal(op, &mut self.k.d)
    }
}

/// Solves K u = f from the initial guess in `u` (warm start). The diagonal in
/// `w` must be current.
pub fn solve<B: ElasticBackend>(
    be: &B,
    op: &mut B::Elastic,
    f: &B::Vector,
    u: &mut B::Vector,
    w: &mut Workspace<B>,
    params: &CgParams,
) -> Result<CgInfo, CgError> {
    let mut info = CgInfo::default();
    be.dot(f, f, &mut w.k.s, BB)?; // s[BB] = f·f
    be.elastic_residual(op, f, u, &mut w.ro, &mut w.k.s, RR)?; // ro = f − K u; s[RR] = ro·ro
    let v = be.read_scalars(&w.k.s)?;
    let ff = v[BB];
    if ff == 0.0 {
        be.copy(&w.zero, u)?;
        return Ok(info);
    }
    let mut rel = (v[RR] / ff).sqrt();
    info.rel_residual = rel;
    let mut precision = match params.mode {
        CgMode::F64 => OpPrecision::F64,
        CgMode::Mixed => OpPrecision::F32,
    };
    let mut stalls = 0;
    while rel > params.rtol {
        let left = params.max_iter - info.iterations.min(params.max_iter);
        if left == 0 {
            return Err(CgError::NoConvergence {
                info,
                cap: params.max_iter,
                rtol: params.rtol,
            });
        }
        let rr = rel * rel * ff;
        match params.mode {
            CgMode::F64 => {
                // Continue on u itself from the true residual in ro.
                let stop = 0.81 * params.rtol * params.rtol * ff;
                be.copy(&w.ro, &mut w.k.r)?;
                info.iterations +=
                    pcg_core(be, op, precision, u, &mut w.k, rr, stop, left, params)?;
            }
            CgMode::Mixed => {
                // K e ≈ ro from e = 0; then u = e + u (β = s[BB]/s[BB] = 1).
                let inner = (0.5 * params.rtol / rel).max(INNER_RTOL_FLOOR);
                let stop = inner * inner * rr;
                be.copy(&w.ro, &mut w.k.r)?;
                be.copy(&w.zero, &mut w.e)?;
                info.iterations += pcg_core(
                    be, op, precision, &mut w.e, &mut w.k, rr, stop, left, params,
                )?;
                let one = Ratio { num: BB, den: BB };
                be.xpay(one, &w.e, u, &w.k.s)?; // u = e + u
            }
        }
        info.outer += 1;
        be.elastic_residual(op, f, u, &mut w.ro, &mut w.k.s, RR)?; // ro = f − K u; s[RR] = ro·ro
        let new_rel = (be.read_scalars(&w.k.s)?[RR] / ff).sqrt();
        if !new_rel.is_finite() {
            return Err(CgError::Stagnated {
                info,
                rtol: params.rtol,
            });
        }
        if new_rel > STALL_FACTOR * rel && new_rel > params.rtol {
            if precision == OpPrecision::F32 {
                precision = OpPrecision::F64;
                info.switched_to_f64 = true;
            } else {
                stalls += 1;
            }
        }
        rel = new_rel;
        info.rel_residual = rel;
        let restarts = if params.mode == CgMode::F64 {
            info.outer
        } else {
            0
        };
        if stalls > MAX_STALLS || restarts > MAX_RESTARTS {
            return Err(CgError::Stagnated {
                info,
                rtol: params.rtol,
            });
        }
    }
    Ok(info)
}

/// Jacobi-PCG on K x = b where `w.r` already holds b − K x and `rr` its
/// squared norm; runs until the recursive r·r ≤ `stop` or `max_iter`
/// iterations, and returns the iterations done.
#[allow(clippy::too_many_arguments)]
fn pcg_core<B: ElasticBackend>(
    be: &B,
    op: &mut B::Elastic,
    precision: OpPrecision,
    x: &mut B::Vector,
    w: &mut Krylov<B>,
    rr: f64,
    stop: f64,
    max_iter: usize,
    params: &CgParams,
) -> Result<usize, BackendError> {
    if rr <= stop {
        return Ok(0);
    }
    be.divide(&w.r, &w.d, &mut w.z)?; // z = r ⊘ d
    be.dot(&w.r, &w.z, &mut w.s, RZ[0])?; // s[RZ0] = r·z
    be.copy(&w.z, &mut w.p)?; // p = z
    let every = params.check_every.max(1);
    for k in 0..max_iter {
        let (cur, next) = (RZ[k % 2], RZ[(k + 1) % 2]);
        be.elastic_apply_dot(op, precision, &w.p, &mut w.q, &mut w.s, PQ)?; // q = K p; s[PQ] = p·q
        let alpha = Ratio { num: cur, den: PQ };
        be.cg_update(alpha, &w.p, &w.q, x, &mut w.r, &mut w.s, RR)?; // x += αp; r −= αq; s[RR] = r·r
        if (k + 1) % every == 0 || k + 1 == max_iter {
            let v = be.read_scalars(&w.s)?;
            if v[RR] <= stop || !v[RR].is_finite() || v[PQ] <= 0.0 {
                return Ok(k + 1);
            }
        }
        be.divide(&w.r, &w.d, &mut w.z)?; // z = r ⊘ d
        be.dot(&w.r, &w.z, &mut w.s, next)?; // s[next] = r·z
        be.xpay(
            Ratio {
                num: next,
                den: cur,
            },
            &w.z,
            &mut w.p,
            &w.s,
        )?; // p = z + β p
    }
    Ok(max_iter)
}
