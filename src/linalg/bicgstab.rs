//! Right-preconditioned BiCGStab (van der Vorst 1992), written once for
//! every backend and every non-symmetric [`LinearOperator`]: the
//! liquid-cooled stack, whose upwind advection makes A non-symmetric.
//!
//! Memory traffic of one iteration, f64, per row, beside the two operator
//! products (48 B/row each plus the couplings) and the two
//! preconditioner applications:
//!   p = r + β(p − ω v)      two axpby                       = 48 B
//!   α = ρ/(r̂·v)            dot                             = 16 B
//!   s = r − α v; ‖s‖        axpby + dot                     = 40 B
//!   ω = (t·s)/(t·t)         two dots                        = 32 B
//!   x += α p̂ + ω ŝ          two axpby                       = 48 B
//!   r = s − ω t; ρ = r̂·r    axpby + dot                     = 40 B
//! The scalars are read back every iteration (a handful of iterations, each
//! costing far more than one read).
//!
//! The recurrence residual is confirmed on the true residual b − A x before
//! the solve is reported converged; if it is not there, BiCGStab restarts
//! from the true residual, at most `MAX_REPLACEMENTS` (20) times.

use super::operator::LinearOperator;
use super::params::MAX_REPLACEMENTS;
use super::params::{CgInfo, CgParams, SolveError};
use super::precond::preconditioner::Preconditioner;
use crate::backend::Backend;

/// Work vectors and scalar slots of one solve.
struct Work<V, S> {
    s: S,
    r: V,
    r0: V,
    p: V,
    v: V,
    ph: V,
    sh: V,
    t: V,
}

fn dot<B: Backend>(
    be: &B,
    x: &B::Vector,
    y: &B::Vector,
    s: &mut B::Scalars,
) -> Result<f64, SolveError> {
    be.dot(x, y, s, 0)?;
    Ok(be.read_scalars(s)?[0])
}

/// Solves A x = b from the guess in `x`, preconditioned on the right by `m`.
pub fn bicgstab<B, A, M>(
    be: &B,
    a: &mut A,
    m: &mut M,
    b: &B::Vector,
    x: &mut B::Vector,
    params: &CgParams,
) -> Result<CgInfo, SolveError>
where
    B: Backend,
    A: LinearOperator<B> + ?Sized,
    M: Preconditioner<B, A> + ?Sized,
{
    let n = a.len();
    let mut s = be.scalars(2)?;
    let bnorm = params
        .stop
        .reference_norm
        .unwrap_or(dot(be, b, b, &mut s)?.sqrt());
    let target = (params.stop.rtol * bnorm).max(params.stop.floor);
    let bnorm = if bnorm > 0.0 { bnorm } else { 1.0 };
    let rel = |r: f64| r / bnorm;
    let mut w = Work {
        s,
        r: be.zeros(n)?,
        r0: be.zeros(n)?,
        p: be.zeros(n)?,
        v: be.zeros(n)?,
        ph: be.zeros(n)?,
        sh: be.zeros(n)?,
        t: be.zeros(n)?,
    };
    let mut info = CgInfo::default();
    let mut run = Run {
        be,
        a,
        m,
        params,
        target,
        bnorm,
    };
    loop {
        run.a.residual(be, b, x, &mut w.r, &mut w.s, 0)?;
        let rnorm = be.read_scalars(&w.s)?[0].sqrt();
        info.rel_residual = rel(rnorm);
        if rnorm <= target {
            return Ok(info);
        }
        if info.replacements > MAX_REPLACEMENTS {
            return Err(SolveError::Stagnated {
                iters: info.iterations,
                rel: info.rel_residual,
                rtol: params.stop.rtol,
            });
        }
        if info.iterations > 0 {
            info.replacements += 1;
        }
        cycle(&mut run, x, &mut w, &mut info)?;
    }
}

/// What every cycle of one solve shares.
struct Run<'r, B: Backend, A: ?Sized, M: ?Sized> {
    be: &'r B,
    a: &'r mut A,
    m: &'r mut M,
    params: &'r CgParams,
    /// The stop on ‖r‖₂, and ‖b‖₂ for the relative residual.
    target: f64,
    bnorm: f64,
}

/// BiCGStab from the residual in `w.r` until the recurrence meets the stop.
fn cycle<B, A, M>(
    run: &mut Run<'_, B, A, M>,
    x: &mut B::Vector,
    w: &mut Work<B::Vector, B::Scalars>,
    info: &mut CgInfo,
) -> Result<(), SolveError>
where
    B: Backend,
    A: LinearOperator<B> + ?Sized,
    M: Preconditioner<B, A> + ?Sized,
{
    let Run {
        be,
        a,
        m,
        params,
        target,
        bnorm,
    } = run;
    let (be, target, bnorm) = (*be, *target, *bnorm);
    let s = &mut w.s;
    be.copy(&w.r, &mut w.r0)?;
    let (mut rho, mut alpha, mut omega) = (1.0, 1.0, 1.0);
    be.axpby(0.0, &w.r, 0.0, &mut w.p)?;
    be.axpby(0.0, &w.r, 0.0, &mut w.v)?;
    let breakdown = |iters: usize, what: &str| SolveError::Breakdown {
        iters,
        what: what.into(),
    };
    loop {
        if info.iterations >= params.max_iter {
            return Err(SolveError::NoConvergence {
                iters: info.iterations,
                rel: info.rel_residual,
                rtol: params.stop.rtol,
            });
        }
        info.iterations += 1;
        let rho_new = dot(be, &w.r0, &w.r, s)?;
        if rho_new == 0.0 || !rho_new.is_finite() {
            return Err(breakdown(
                info.iterations,
                "r̂·r = 0 (restart from the true residual)",
            ));
        }
        let beta = (rho_new / rho) * (alpha / omega);
        rho = rho_new;
        // p = r + β (p − ω v)
        be.axpby(-omega, &w.v, 1.0, &mut w.p)?;
        be.axpby(1.0, &w.r, beta, &mut w.p)?;
        // p̂ = M⁻¹ p;  v = A p̂
        m.apply(be, &mut **a, &w.p, &mut w.ph)?;
        a.apply_dot(be, &w.ph, &mut w.v, s, 0)?;
        let r0v = dot(be, &w.r0, &w.v, s)?;
        if r0v == 0.0 || !r0v.is_finite() {
            return Err(breakdown(info.iterations, "r̂·A p̂ = 0"));
        }
        alpha = rho / r0v;
        // s = r − α v (in r);  x += α p̂
        be.axpby(-alpha, &w.v, 1.0, &mut w.r)?;
        be.axpby(alpha, &w.ph, 1.0, x)?;
        let snorm = dot(be, &w.r, &w.r, s)?.sqrt();
        info.rel_residual = snorm / bnorm;
        if snorm <= target {
            return Ok(());
        }
        // ŝ = M⁻¹ s;  t = A ŝ;  ω = t·s / t·t
        m.apply(be, &mut **a, &w.r, &mut w.sh)?;
        a.apply_dot(be, &w.sh, &mut w.t, s, 0)?;
        let (ts, tt) = (dot(be, &w.t, &w.r, s)?, dot(be, &w.t, &w.t, s)?);
        if tt == 0.0 || ts == 0.0 {
            return Err(breakdown(info.iterations, "ω = 0"));
        }
        omega = ts / tt;
        // x += ω ŝ;  r = s − ω t
        be.axpby(omega, &w.sh, 1.0, x)?;
        be.axpby(-omega, &w.t, 1.0, &mut w.r)?;
        let rnorm = dot(be, &w.r, &w.r, s)?.sqrt();
        info.rel_residual = rnorm / bnorm;
        if rnorm <= target {
            return Ok(());
        }
    }
}
