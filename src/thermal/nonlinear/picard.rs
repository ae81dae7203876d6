//! Steady state with temperature-dependent k and leakage: Picard iteration
//!
//!   A(Tₖ) θₖ₊₁ = P + P_leak(Tₖ),   Tₖ = T_amb + θₖ,
//!
//! from T₀ = T_amb. Each linear solve is warm-started from θₖ and, while the
//! outer iteration is far from converged, stops once its residual has
//! fallen by `forcing` (inexact Picard: the outer error, not the inner
//! tolerance, limits the accuracy then); the last solve goes to the full
//! rtol. A(T) is re-assembled where the solve runs when some k varies (the
//! host on the CPU, the GPU's assembly kernels on CUDA: the loop is written
//! once over `thermal::device::nonlinear::NonlinearOps` and reads only scalars);
//! the preconditioner built for A(T₀) is kept (multigrid's fine line pivots
//! refreshed where A lives) until a solve needs more than twice the
//! iterations of the first, then rebuilt. Converged when
//! max |Tₖ₊₁ − Tₖ| ≤ tol and the energy balance of the last solve holds;
//! a temperature above `t_max` (or not finite), or a change growing for
//! `GROWING` iterations in a row, is thermal runaway.
//!
//! With Anderson acceleration (depth > 0) the next iterate is not G(θₖ)
//! (the solve's output) but Anderson's combination of the last outputs
//! ([`super::anderson`]); the convergence test stays max |G(θₖ) − θₖ| and
//! the answer G(θₖ). An extrapolated iterate that is not finite, falls below
//! the Picard output's floor, passes `t_max` or leaves a law's range is
//! replaced by G(θₖ) (history dropped), and a runaway sign in the solve
//! from an extrapolated iterate retreats to the Picard iterate behind it:
//! only runaway seen from a plain Picard iterate is reported.
//!
//! The loop keeps its arrays across iterations: the system is re-assembled
//! into the last one's (`NonlinearOps::nl_reassemble`), the solve's
//! iterate, the shifted right-hand side and the iterates are recycled
//! (only Anderson's history is new each iteration).

use super::anderson::Anderson;
use super::leakage::LeakageModel;
use super::{bad_property, place_name, NonlinearError, NonlinearOptions, NonlinearReport};
use crate::grid::Grid;
use crate::linalg::{
    CgInfo, Offset, PrecisionReport, PrecondReport, QuadDiagOperator, Solver, SolverState, Stop,
};
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::nonlinear::NlContext;
use crate::thermal::device::ThermalBackend;
use crate::thermal::steady_options::{SteadyError, SteadyOptions};
use std::time::Instant;

/// Iterations in a row with a growing change that count as divergence.
const GROWING: usize = 6;

/// What the outer iteration hands back: the converged field and the last
/// linear solve, for the summary.
pub struct Picard {
    /// θ = T − T_amb of every cell, K.
    pub theta: Vec<f64>,
    /// T of every cell, K.
    pub t: Vec<f64>,
    /// Σ rhs of the last solve (dynamic power and leakage), W.
    pub power_in_w: f64,
    /// The last system's conductances to ambient, W/K per plane cell.
    pub g_top: Vec<f64>,
    pub g_bottom: Vec<f64>,
    pub report: NonlinearReport,
    pub(super) info: CgInfo,
    pub(super) true_rel: f64,
    pub(super) precond: PrecondReport,
    pub(super) precision: Option<PrecisionReport>,
    pub(super) t_assemble: f64,
    pub(super) t_solve: f64,
}

/// "picard", or "anderson(depth)" with acceleration.
fn method_name(anderson: usize) -> String {
    match anderson {
        0 => "picard".into(),
        d => format!("anderson({d})"),
    }
}

/// What an extrapolated iterate can retreat to: the Picard iterate behind
/// it (None after a plain Picard step), and the history to forget then.
struct Retreat<'r, V> {
    extrapolated: &'r mut Option<V>,
    acc: Option<&'r mut Anderson<V>>,
}

/// A(T) at θ into `sys`; from an extrapolated iterate outside a law's
/// range, θ retreats to the Picard iterate behind it (history dropped) and
/// A is assembled there. A law left by a Picard iterate is
/// [`NonlinearError::BadProperty`].
fn reassemble_or_retreat<B: ThermalBackend>(
    be: &B,
    cx: &NlContext,
    ph: &mut B::Physics,
    theta: &mut B::Vector,
    sys: &mut B::NlSystem,
    back: Retreat<'_, B::Vector>,
) -> Result<(), SteadyError> {
    match be.nl_reassemble(cx, ph, theta, sys)? {
        Ok(()) => Ok(()),
        Err(_) if back.extrapolated.is_some() => {
            *theta = back.extrapolated.take().expect("checked");
            if let Some(a) = back.acc {
                a.reset();
            }
            reassemble_at(be, cx, ph, theta, sys)
        }
        Err(i) => Err(bad_property(be, cx, theta, i)?.into()),
    }
}

/// Moves to the next iterate, G(θₖ) being in `x`: θ = Anderson's
/// combination when it stays finite, above ambient's floor and below
/// --t-max (`range`: ambient and t_max, K), with G(θₖ) returned to fall
/// back on; else θ = G(θₖ). Either way x keeps a spent vector for the next
/// solve. Anderson's history restarts first when the change `grew`, and
/// the Picard iterate behind the last extrapolation, unused, is recycled.
fn advance<B: ThermalBackend>(
    be: &B,
    back: Retreat<'_, B::Vector>,
    grew: bool,
    theta: &mut B::Vector,
    x: &mut B::Vector,
    (ambient_k, t_max_k): (f64, f64),
) -> Result<Option<B::Vector>, SteadyError> {
    let next = match back.acc {
        None => None,
        Some(a) => {
            if grew {
                a.reset();
            }
            if let Some(v) = back.extrapolated.take() {
                a.recycle(v);
            }
            a.next_in_range(be, theta, x, ambient_k, t_max_k)?
        }
    };
    Ok(match next {
        // θ = Anderson's, G(θₖ) kept behind it, the old θ to x.
        Some(next) => {
            let old = std::mem::replace(theta, next);
            Some(std::mem::replace(x, old))
        }
        // θ = G(θₖ), the old θ to x.
        None => {
            std::mem::swap(theta, x);
            None
        }
    })
}

/// A(T) at θ into `sys`, a law outside its range reported as
/// [`NonlinearError::BadProperty`].
fn reassemble_at<B: ThermalBackend>(
    be: &B,
    cx: &NlContext,
    ph: &mut B::Physics,
    theta: &B::Vector,
    sys: &mut B::NlSystem,
) -> Result<(), SteadyError> {
    match be.nl_reassemble(cx, ph, theta, sys)? {
        Ok(()) => Ok(()),
        Err(i) => Err(bad_property(be, cx, theta, i)?.into()),
    }
}

/// The outer iteration for the dynamic power `dynamic` (W per cell; `None`:
/// the layers' own power maps) on the layers' `power` (blocks, material
/// patches, leakage weights): Picard, or Anderson-accelerated Picard when
/// `opts.nonlinear.anderson` > 0. Written once over [`NonlinearOps`]: the
/// fields stay where the backend keeps them, the loop reads scalars.
///
/// [`NonlinearOps`]: crate::thermal::device::nonlinear::NonlinearOps
pub fn picard<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    dynamic: Option<&[f64]>,
    opts: &SteadyOptions,
) -> Result<Picard, SteadyError> {
    let nl = &opts.nonlinear;
    let n = grid.len();
    // θ, its solve, the shifted rhs, the per-cell materials (4), the
    // leakage, the dynamic power and Anderson's 2·depth + 4 vectors.
    be.check_capacity_with(n, 9 + 2 * nl.anderson.min(super::anderson::MAX_DEPTH))?;
    be.prepare_quad_diag()?;
    let leak = LeakageModel::new(stack, grid, power);
    let cx = NlContext {
        stack,
        grid,
        power,
        leak: &leak,
        capacity_laws: false,
    };
    outer(be, &cx, dynamic, opts)
}

/// [`picard`]'s loop, on the context it set up.
fn outer<B: ThermalBackend + 'static>(
    be: &B,
    cx: &NlContext,
    dynamic: Option<&[f64]>,
    opts: &SteadyOptions,
) -> Result<Picard, SteadyError> {
    let (stack, grid, power, leak) = (cx.stack, cx.grid, cx.power, cx.leak);
    let (nl, n, amb) = (&opts.nonlinear, grid.len(), stack.ambient_k);
    let (mut t_assemble, mut t_solve) = (0.0, 0.0);
    let clock = Instant::now();
    let mut ph = be.nl_physics(cx, dynamic)?;
    let mut theta = be.zeros(n)?;
    let mut sys = match be.nl_assemble(cx, &mut ph, &theta)? {
        Ok(s) => s,
        Err(i) => return Err(bad_property(be, cx, &theta, i)?.into()),
    };
    // The solve's iterate (then G(θ)) and its right-hand side.
    let (mut x, mut b) = (be.zeros(n)?, be.zeros(n)?);
    be.synchronize()?;
    t_assemble += clock.elapsed().as_secs_f64();

    let mut solves = InnerSolves::new(opts, n, stack.k_varies());
    let mut acc = (nl.anderson > 0).then(|| Anderson::new(nl.anderson, n));
    let mut report = NonlinearReport {
        method: method_name(nl.anderson),
        tol_k: nl.tol_k,
        ..Default::default()
    };
    let (mut growing, mut last_change) = (0, f64::INFINITY);
    // The plain Picard iterate behind an Anderson step, to fall back on.
    let mut fallback: Option<B::Vector> = None;
    let mut last = None;
    let mut power_in_w = 0.0;
    for it in 1..=nl.max_outer {
        let clock = Instant::now();
        let mut extrapolated = fallback.take();
        if it > 1 && stack.k_varies() {
            let back = Retreat {
                extrapolated: &mut extrapolated,
                acc: acc.as_mut(),
            };
            reassemble_or_retreat(be, cx, &mut ph, &mut theta, &mut sys, back)?;
        }
        let pw = be.nl_power(cx, &mut ph, &theta, be.nl_rhs_mut(&mut sys))?;
        let offset = be.nl_shifted_rhs(&sys, pw.power_in_w, &mut b)?;
        // x₀ = θ − c
        be.nl_axpby(Some(&theta), 1.0, 0.0, &mut x, -offset.c)?;
        be.synchronize()?;
        t_assemble += clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        // Inexact while far (change above 10·tol), exact near convergence.
        let near = last_change <= 10.0 * nl.tol_k;
        let solved = solves.solve(be, be.nl_matrix(&sys), &offset, &b, &mut x, near)?;
        // x + c: G(θ), the solve's output (`th` below).
        be.nl_axpby(None, 0.0, 1.0, &mut x, offset.c)?;
        be.synchronize()?;
        t_solve += clock.elapsed().as_secs_f64();
        report.inner_iterations.push(solved.info.iterations);
        report.precond_rebuilds += usize::from(solved.rebuilt);

        let th = &x;
        let change = be.nl_change(th, &theta, amb)?;
        let (imax, tmax) = be.nl_hottest(th, amb)?;
        growing = if change > last_change { growing + 1 } else { 0 };
        if let Some(reason) = runaway(nl, change, tmax, growing) {
            // From an extrapolated iterate (which may have overshot past an
            // unstable fixed point): retreat to the Picard iterate behind it.
            if let (Some(back), Some(a)) = (extrapolated.take(), &mut acc) {
                a.reset();
                theta = back;
                growing = 0;
                continue;
            }
            return Err(NonlinearError::Runaway {
                iteration: it,
                reason,
                hottest: place_name(stack, grid, power, imax),
                t_k: tmax,
                leakage_w: be.nl_leakage_total(cx, &mut ph, th)?,
            }
            .into());
        }
        last_change = change;
        record_iteration(&mut report, it, change, leak, &pw.leakage_w);
        power_in_w = pw.power_in_w;
        let energy = be.nl_energy(cx, &sys, th, power_in_w)?;
        let exact = solved.exact;
        last = Some(solved);
        if change <= nl.tol_k && exact && energy <= nl.energy_tol {
            std::mem::swap(&mut theta, &mut x);
            break;
        }
        if it == nl.max_outer {
            return Err(NonlinearError::NoConvergence {
                iterations: it,
                change_k: change,
                tol_k: nl.tol_k,
                hottest: place_name(stack, grid, power, imax),
                t_k: tmax,
            }
            .into());
        }
        let back = Retreat {
            extrapolated: &mut extrapolated,
            acc: acc.as_mut(),
        };
        fallback = advance(be, back, growing > 0, &mut theta, &mut x, (amb, nl.t_max_k))?;
    }
    if let Some(a) = &acc {
        report.anderson_restarts = a.restarts;
    }
    let last = last.expect("max_outer >= 1");
    let clock = Instant::now();
    let theta = be.download(&theta)?;
    let t = theta.iter().map(|v| v + amb).collect();
    let (mut g_top, mut g_bottom) = (Vec::new(), Vec::new());
    be.nl_coupling(&sys, &mut g_top, &mut g_bottom)?;
    t_solve += clock.elapsed().as_secs_f64();
    Ok(Picard {
        theta,
        t,
        power_in_w,
        g_top,
        g_bottom,
        report,
        info: last.info,
        true_rel: last.true_rel,
        precond: last.precond,
        precision: last.precision,
        t_assemble,
        t_solve,
    })
}

/// The linear solves of the outer iteration: one solver kept across them
/// (it outlives each iteration's borrow of the re-assembled A) until a
/// full-accuracy solve needs more than twice the iterations of the first.
struct InnerSolves<'o, B: ThermalBackend + 'static> {
    opts: &'o SteadyOptions,
    n: usize,
    /// Whether A changes between solves (some k varies with T).
    k_varies: bool,
    kept: Option<SolverState<B>>,
    /// The iterations of the first full-accuracy solve (at least 3).
    first_iters: Option<usize>,
}

/// One inner solve, for the report and the convergence test.
struct InnerSolve {
    info: CgInfo,
    true_rel: f64,
    precond: PrecondReport,
    precision: Option<PrecisionReport>,
    /// Solved to the full rtol, not only by the forcing term.
    exact: bool,
    /// The preconditioner is rebuilt for the next solve.
    rebuilt: bool,
}

impl<'o, B: ThermalBackend + 'static> InnerSolves<'o, B> {
    fn new(opts: &'o SteadyOptions, n: usize, k_varies: bool) -> Self {
        InnerSolves {
            opts,
            n,
            k_varies,
            kept: None,
            first_iters: None,
        }
    }

    /// A x = b from the warm start in x, shifted by `offset`: to the full
    /// rtol when `near` convergence (or without forcing), else until the
    /// residual has fallen by the forcing factor.
    fn solve(
        &mut self,
        be: &B,
        a: &B::Matrix,
        offset: &Offset,
        b: &B::Vector,
        x: &mut B::Vector,
        near: bool,
    ) -> Result<InnerSolve, SteadyError> {
        let (opts, nl) = (self.opts, &self.opts.nonlinear);
        let op = QuadDiagOperator::new(be, a, self.n);
        let mut ksp = match self.kept.take() {
            Some(state) => {
                let mut ksp = Solver::resume(be, op, state);
                if self.k_varies {
                    ksp.operator_changed()?;
                }
                ksp
            }
            None => Solver::new(be, op, opts.precond, &opts.precond_opts, None)?,
        };
        let rtol = if near || nl.forcing <= 0.0 {
            opts.rtol
        } else {
            let rel0 = ksp.true_relative_residual(b, x, offset.rtol_scale)?;
            (nl.forcing * rel0).max(opts.rtol)
        };
        ksp.set_params(opts.cg_params(be, ksp.precond(), Stop::against(rtol, offset.b_norm)));
        let info = ksp.solve(b, x)?;
        let true_rel = ksp.true_relative_residual(b, x, offset.rtol_scale)?;
        let (precond, precision) = (ksp.precond().report(), ksp.precond().precision());
        self.kept = Some(ksp.release());
        let exact = rtol == opts.rtol;
        let mut rebuilt = false;
        if exact {
            let first = *self.first_iters.get_or_insert(info.iterations.max(3));
            if info.iterations > 2 * first {
                self.kept = None;
                rebuilt = true;
            }
        }
        Ok(InnerSolve {
            info,
            true_rel,
            precond,
            precision,
            exact,
            rebuilt,
        })
    }
}

/// Why the outer iteration runs away, if it does: a temperature no longer
/// finite or past `--t-max`, or a change growing `GROWING` iterations in
/// a row.
fn runaway(nl: &NonlinearOptions, change: f64, tmax: f64, growing: usize) -> Option<String> {
    if !tmax.is_finite() || !change.is_finite() {
        Some("the temperature is no longer finite".to_string())
    } else if tmax > nl.t_max_k {
        Some(format!(
            "the temperature passed the limit of {} K (--t-max)",
            nl.t_max_k
        ))
    } else if growing >= GROWING {
        Some(format!(
            "max |ΔT| grew {GROWING} iterations in a row (to {change:.3e} K)"
        ))
    } else {
        None
    }
}

/// The report after accepted outer iteration `it`: its change and each
/// leaking source's power at its iterate.
fn record_iteration(
    report: &mut NonlinearReport,
    it: usize,
    change: f64,
    leak: &LeakageModel,
    leakage_w: &[f64],
) {
    report.outer_iterations = it;
    report.final_change_k = change;
    report.leakage_total_w = leakage_w.iter().fold(0.0, |a, b| a + b);
    report.leakage_w = leak
        .sources
        .iter()
        .zip(leakage_w)
        .map(|(s, w)| (s.name.clone(), *w))
        .collect();
}
