//! Preconditioned conjugate gradients, written once for every backend and
//! every operator ([`LinearOperator`]: the thermal Quad-Diag matrix, the
//! matrix-free elasticity operator).
//!
//! Memory traffic of one iteration, f64, per row (n rows), with the fused
//! backend kernels:
//!   spmv_dot   q = A p, p·q          4 matrix + p + q          = 48 B
//!   cg_update  x += αp, r −= αq, r·r p, q, x(rw), r(rw)        = 48 B
//!   precond    z = M⁻¹ r             Jacobi: d, r, z           = 24 B
//!   dot        r·z                   r, z                      = 16 B
//!   xpay       p = z + βp            z, p(rw)                  = 24 B
//! Jacobi-PCG therefore moves 160 B/row per iteration; Chebyshev of degree k
//! replaces the 24 B of Jacobi with 40 B + (k−1)·80 B (see `precond::chebyshev`),
//! or, in low precision (f16 storage, f32 vectors), 24 B + (k−1)·30 B: 310
//! instead of 576 B/row at degree 6.
//!
//! Mixed precision (`linalg::precision`): x, r, p, q, the reductions and the
//! stopping test stay f64 here whatever the preconditioner's precision, so
//! the answer meets the same rtol on the same f64 true residual. When PCG
//! stagnates (no halving of ‖r‖ for a long window), breaks down, or keeps
//! needing residual replacements, it asks the preconditioner to raise its
//! precision and restarts from the true residual; stagnation is never
//! reported as convergence.

use super::operator::LinearOperator;
use super::params::MAX_REPLACEMENTS;
pub use super::params::{CgInfo, CgParams, SolveError, Stop};
use super::precond::preconditioner::Preconditioner;
use crate::backend::{Backend, BackendError, CgStep, Ratio};

/// Scalar slots used by PCG (`refine` shares them).
pub(super) const RR: usize = 0;
pub(super) const BB: usize = 1;
const PQ: usize = 2;
/// r·z of the current and next iteration alternate between these two, so a
/// kernel can read the old value while another writes the new one.
const RZ: [usize; 2] = [3, 4];
const SLOTS: usize = 5;
/// Stagnation: ‖r‖ has not halved for max(STALL_ITERS, half the iterations
/// since the last restart) iterations. CG's ‖r‖₂ is not monotone: on mol_f2f at 2048²
/// it sat above its best for over 250 iterations at the start and for ~900
/// after a restart (measured on the H200, where a 250-iteration window
/// switched up twice for nothing and doubled the solve time), and such plateaus grow with
/// √κ, like the iteration count; hence a window that grows with the run.
const STALL_ITERS: usize = 1000;
/// Restarts from the true residual after which a preconditioner that can
/// still raise its precision is asked to (the gap between recurrence and true
/// residual then comes from M, not from f64 rounding).
const REPLACEMENTS_BEFORE_RAISE: usize = 2;

/// ‖b − A x‖₂ / ‖b‖₂ recomputed in f64 (difference form, see `QuadDiag`),
/// divided by `scale` (`Offset::rtol_scale` for a shifted system, else 1).
pub fn true_relative_residual<B: Backend, A: LinearOperator<B> + ?Sized>(
    be: &B,
    a: &mut A,
    b: &B::Vector,
    x: &B::Vector,
    scale: f64,
) -> Result<f64, BackendError> {
    let mut r = be.zeros(a.len())?;
    let mut s = be.scalars(2)?;
    a.residual(be, b, x, &mut r, &mut s, 0)?; // r = b − A x; s[0] = r·r
    be.dot(b, b, &mut s, 1)?; // s[1] = b·b
    let v = be.read_scalars(&s)?;
    Ok(if v[1] > 0.0 {
        (v[0] / v[1]).sqrt() / scale
    } else {
        0.0
    })
}

/// Solves A x = b from the initial guess in `x`.
pub fn pcg<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    be: &B,
    a: &mut A,
    m: &mut M,
    b: &B::Vector,
    x: &mut B::Vector,
    params: &CgParams,
) -> Result<CgInfo, SolveError> {
    let mut info = CgInfo::default();
    pcg_into(be, a, m, b, x, params, &mut info)?;
    Ok(info)
}

/// [`pcg`] that leaves its progress in `info` even when it fails (the
/// eigenvalue estimate wants the coefficients of a capped run).
pub fn pcg_into<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    be: &B,
    a: &mut A,
    m: &mut M,
    b: &B::Vector,
    x: &mut B::Vector,
    params: &CgParams,
    info: &mut CgInfo,
) -> Result<(), SolveError> {
    let mut work = PcgWork::new(be, a.len())?;
    pcg_with(be, a, m, b, x, &mut work, params, info)
}

/// PCG's work vectors and scalar slots, for callers that solve many systems
/// of one size (a transient run, a step at a time) and should not allocate
/// them per solve.
pub struct PcgWork<B: Backend> {
    pub(super) s: B::Scalars,
    /// The residual: [`pcg_from_residual`] starts from the one left here.
    pub r: B::Vector,
    z: B::Vector,
    p: B::Vector,
    q: B::Vector,
    n: usize,
}

impl<B: Backend> PcgWork<B> {
    /// Rows of the vectors (recorded at allocation).
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn new(be: &B, n: usize) -> Result<Self, BackendError> {
        Ok(PcgWork {
            s: be.scalars(SLOTS)?,
            r: be.zeros(n)?,
            z: be.zeros(n)?,
            p: be.zeros(n)?,
            q: be.zeros(n)?,
            n,
        })
    }
}

/// [`pcg_into`] on caller-owned work vectors (`work` sized for `b`).
#[allow(clippy::too_many_arguments)]
pub fn pcg_with<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    be: &B,
    a: &mut A,
    m: &mut M,
    b: &B::Vector,
    x: &mut B::Vector,
    work: &mut PcgWork<B>,
    params: &CgParams,
    info: &mut CgInfo,
) -> Result<(), SolveError> {
    let PcgWork { s, r, .. } = work;
    be.dot(b, b, s, BB)?; // s[BB] = b·b
    a.residual(be, b, x, r, s, RR)?; // r = b − A x; s[RR] = r·r
    let v = be.read_scalars(s)?;
    let bb = v[BB];
    if bb == 0.0 {
        // b = 0 (its squares sum to 0): the solution is x = b = 0.
        be.copy(b, x)?;
        return Ok(());
    }
    let run = CgRun {
        be,
        a,
        m,
        work,
        params,
        info,
    };
    iterate(run, Some(b), x, v[RR], bb)
}

/// One PCG solve's system A with its preconditioner M, work space,
/// parameters and running record: what stays fixed while the Krylov loop
/// runs, named once instead of passed to every phase.
pub struct CgRun<'r, B: Backend, A: ?Sized, M: ?Sized> {
    pub be: &'r B,
    pub a: &'r mut A,
    pub m: &'r mut M,
    pub work: &'r mut PcgWork<B>,
    pub params: &'r CgParams,
    pub info: &'r mut CgInfo,
}

/// PCG on A x = b from `run.work.r` = b − A x already formed, with r·r =
/// `rr`, and b·b = `bb` (the stop's reference when it names none), b itself
/// not needed: the inner solves of [`super::refine()`]. No residual
/// replacement (there is no b to recompute it from).
pub fn pcg_from_residual<
    B: Backend,
    A: LinearOperator<B> + ?Sized,
    M: Preconditioner<B, A> + ?Sized,
>(
    run: CgRun<'_, B, A, M>,
    x: &mut B::Vector,
    rr: f64,
    bb: f64,
) -> Result<(), SolveError> {
    iterate(run, None, x, rr, bb)
}

/// The Krylov loop. `b` is `Some` when the true residual can be recomputed
/// (residual replacement, restarts after a precision switch).
fn iterate<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    run: CgRun<'_, B, A, M>,
    b: Option<&B::Vector>,
    x: &mut B::Vector,
    rr: f64,
    bb: f64,
) -> Result<(), SolveError> {
    let CgRun {
        be,
        a,
        m,
        work: w,
        params,
        info,
    } = run;
    let stop = params.stop;
    let tol2 = stop.threshold_sq(bb);
    info.rel_residual = stop.relative_residual(rr, bb);
    if rr <= tol2 {
        return Ok(());
    }
    // The true residual can be recomputed (replacement, restarts) only from b.
    let b = if params.replace { b } else { None };
    restart_directions(be, a, m, w, RZ[0])?; // z = M⁻¹ r; s[RZ0] = r·z; p = z

    let check_every = params.check_every.max(1);
    // (iteration, r·r) when ‖r‖ last halved: the stagnation detector.
    let mut window = (0usize, rr);
    // Iteration of the last restart (replacement or precision switch).
    let mut restart = 0usize;
    for k in 0..params.max_iter {
        let (cur, next) = (RZ[k % 2], RZ[(k + 1) % 2]);
        a.apply_dot(be, &w.p, &mut w.q, &mut w.s, PQ)?; // q = A p; s[PQ] = p·q
        let alpha = Ratio { num: cur, den: PQ };
        let step = CgStep {
            p: &w.p,
            q: &w.q,
            x,
            r: &mut w.r,
        };
        be.cg_update(alpha, step, &mut w.s, RR)?; // x += αp; r −= αq; s[RR] = r·r
        info.iterations = k + 1;
        let check = params.record
            || info.iterations.is_multiple_of(check_every)
            || k + 1 == params.max_iter;
        if check {
            let v = be.read_scalars(&w.s)?;
            info.rel_residual = stop.relative_residual(v[RR], bb);
            super::progress::report(info.iterations, info.rel_residual); // for a display only
            if v[PQ].is_nan() || v[PQ] <= 0.0 || !v[RR].is_finite() {
                // A breakdown under a low-precision M (z flushed to 0, say)
                // is a reason to switch up; restart from the true residual.
                if let Some(b) = b.filter(|_| v[RR].is_finite() && !params.record) {
                    if raise(be, a, m, info)? {
                        window = (info.iterations, v[RR]);
                        restart = info.iterations;
                        a.residual(be, b, x, &mut w.r, &mut w.s, RR)?; // r = b − A x; s[RR] = r·r
                        restart_directions(be, a, m, w, next)?;
                        continue;
                    }
                }
                return Err(SolveError::Breakdown {
                    iters: info.iterations,
                    what: format!(
                        "p·Ap = {:e}, r·r = {:e}: the matrix or preconditioner is not SPD",
                        v[PQ], v[RR]
                    ),
                });
            }
            if v[RR] <= tol2 {
                if params.record {
                    info.coefficients.push((v[cur] / v[PQ], 0.0));
                    return Ok(());
                }
                let Some(b) = b else {
                    return Ok(());
                };
                // The recurrence says converged; rounding makes it drift from
                // the true residual on long solves. Check b − A x and, if it
                // is not there yet, restart from it (residual replacement).
                a.residual(be, b, x, &mut w.r, &mut w.s, RR)?; // r = b − A x; s[RR] = r·r
                let v = be.read_scalars(&w.s)?;
                info.rel_residual = stop.relative_residual(v[RR], bb);
                if v[RR] <= tol2 {
                    return Ok(());
                }
                if info.replacements >= REPLACEMENTS_BEFORE_RAISE {
                    raise(be, a, m, info)?;
                }
                if info.replacements == MAX_REPLACEMENTS {
                    return Err(SolveError::Stagnated {
                        iters: info.iterations,
                        rel: info.rel_residual,
                        rtol: stop.rtol,
                    });
                }
                info.replacements += 1;
                window = (info.iterations, v[RR]);
                restart = info.iterations;
                restart_directions(be, a, m, w, next)?;
                continue;
            }
            if v[RR] <= 0.25 * window.1 {
                window = (info.iterations, v[RR]); // ‖r‖ halved: progress
            } else if info.iterations - window.0 >= STALL_ITERS.max((info.iterations - restart) / 2)
                && !params.record
            {
                // Stagnating: never a convergence. With a more precise M,
                // restart from the true residual under it; without, go on
                // (max_iter reports the failure).
                window = (info.iterations, v[RR]);
                if let Some(b) = b {
                    if raise(be, a, m, info)? {
                        restart = info.iterations;
                        a.residual(be, b, x, &mut w.r, &mut w.s, RR)?; // r = b − A x; s[RR] = r·r
                        restart_directions(be, a, m, w, next)?;
                        continue;
                    }
                }
            }
        }
        m.apply(be, a, &w.r, &mut w.z)?; // z = M⁻¹ r
        be.dot(&w.r, &w.z, &mut w.s, next)?; // s[next] = r·z
        let beta = Ratio {
            num: next,
            den: cur,
        };
        be.xpay(beta, &w.z, &mut w.p, &w.s)?; // p = z + β p
        if params.record {
            let v = be.read_scalars(&w.s)?;
            info.coefficients.push((v[cur] / v[PQ], v[next] / v[cur]));
        }
    }
    Err(SolveError::NoConvergence {
        iters: info.iterations,
        rel: info.rel_residual,
        rtol: stop.rtol,
    })
}

/// z = M⁻¹ r;  s[next] = r·z;  p = z: CG starts over from the residual in
/// `w.r` (at the start, after a residual replacement or a change of M).
fn restart_directions<
    B: Backend,
    A: LinearOperator<B> + ?Sized,
    M: Preconditioner<B, A> + ?Sized,
>(
    be: &B,
    a: &mut A,
    m: &mut M,
    w: &mut PcgWork<B>,
    next: usize,
) -> Result<(), BackendError> {
    m.apply(be, a, &w.r, &mut w.z)?; // z = M⁻¹ r
    be.dot(&w.r, &w.z, &mut w.s, next)?; // s[next] = r·z
    be.copy(&w.z, &mut w.p) // p = z
}

/// Asks `m` for its next precision level; records and reports whether it had one.
fn raise<B: Backend, A: LinearOperator<B> + ?Sized, M: Preconditioner<B, A> + ?Sized>(
    be: &B,
    a: &mut A,
    m: &mut M,
    info: &mut CgInfo,
) -> Result<bool, SolveError> {
    match m.raise_precision(be, a)? {
        Some(level) => {
            info.precision_switches.push((info.iterations, level));
            Ok(true)
        }
        None => Ok(false),
    }
}
