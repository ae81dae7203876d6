//! Steady state with temperature-dependent k and leakage: Picard iteration
//!
//!   A(Tₖ) θₖ₊₁ = P + P_leak(Tₖ),   Tₖ = T_amb + θₖ,
//!
//! from T₀ = T_amb. Each linear solve is warm-started from θₖ and, while the
//! outer iteration is far from converged, stops once its residual has
//! fallen by `forcing` (inexact Picard: the outer error, not the inner
//! tolerance, limits the accuracy then); the last solve goes to the full
//! rtol. A(T) is re-assembled on the host and re-uploaded when some k varies;
//! the preconditioner built for A(T₀) is kept until a solve needs more than
//! twice the iterations of the first, then rebuilt. Converged when
//! max |Tₖ₊₁ − Tₖ| ≤ tol and the energy balance of the last solve holds;
//! a temperature above `t_max` (or not finite), or a change growing for
//! [`GROWING`] iterations in a row, is thermal runaway.
//!
//! With Anderson acceleration (depth > 0) the next iterate is not G(θₖ)
//! (the solve's output) but Anderson's combination of the last outputs
//! ([`super::anderson`]); the convergence test stays max |G(θₖ) − θₖ| and
//! the answer G(θₖ). An extrapolated iterate that is not finite, falls below
//! the Picard output's floor, passes `t_max` or leaves a law's range is
//! replaced by G(θₖ) (history dropped), and a runaway sign in the solve
//! from an extrapolated iterate retreats to the Picard iterate behind it:
//! only runaway seen from a plain Picard iterate is reported.

use super::anderson::Anderson;
use super::leakage::LeakageModel;
use super::{NonlinearError, NonlinearReport};
use crate::assemble::{assemble, assemble_cells, cell_materials, System};
use crate::backend::ChebyshevBackend;
use crate::grid::Grid;
use crate::linalg::{
    build_thermal_precond, pcg, true_relative_residual, CgInfo, Offset, PrecisionReport,
    PrecondReport, Preconditioner, QuadDiagOperator, Stop,
};
use crate::power::{layer_power, LayerPower};
use crate::stack::Stack;
use crate::thermal::steady::{summarize, SteadyError, SteadyOptions, SteadyOutcome};
use crate::thermal::summary::{MixedReport, SolverReport};
use std::time::Instant;

/// Iterations in a row with a growing change that count as divergence.
const GROWING: usize = 6;

/// Name of the place of cell `i`: "layer/block" when a block of the layer
/// covers the cell's centre, else the layer.
pub fn place_name(stack: &Stack, grid: &Grid, power: &[LayerPower], i: usize) -> String {
    let (x, y, z) = grid.coords(i);
    let l = grid.layer_of_z[z];
    let (cx, cy) = (grid.x_center(x), grid.y_center(y));
    let layer = &stack.layers[l].name;
    match power[l]
        .blocks
        .iter()
        .find(|b| b.rect.x0 <= cx && cx <= b.rect.x1 && b.rect.y0 <= cy && cy <= b.rect.y1)
    {
        Some(b) => format!("{layer}/{}", b.name),
        None => layer.clone(),
    }
}

/// Index and value of the hottest cell; a non-finite value wins.
fn hottest(t: &[f64]) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, &v) in t.iter().enumerate() {
        if !v.is_finite() {
            return (i, v);
        }
        if v > best.1 {
            best = (i, v);
        }
    }
    best
}

/// Properties at `t`: the assembled system (rhs = dynamic power).
pub fn system_at(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    t: &[f64],
) -> Result<System, SteadyError> {
    if !stack.k_varies() {
        return Ok(assemble(stack, grid, power));
    }
    let cells = cell_materials(stack, grid, power, t).map_err(|i| {
        let l = grid.layer_of_z[i / grid.plane()];
        NonlinearError::BadProperty {
            layer: stack.layers[l].name.clone(),
            t_k: t[i],
        }
    })?;
    Ok(assemble_cells(stack, grid, power, &cells))
}

/// What the outer iteration hands back: the converged field and the last
/// linear solve, for the summary.
pub struct Picard {
    /// θ = T − T_amb of every cell, K.
    pub theta: Vec<f64>,
    /// T of every cell, K.
    pub t: Vec<f64>,
    /// The system of the last solve (properties and leakage at the last
    /// iterate, rhs with the leakage).
    pub sys: System,
    pub report: NonlinearReport,
    info: CgInfo,
    true_rel: f64,
    precond: PrecondReport,
    precision: Option<PrecisionReport>,
    t_assemble: f64,
    t_solve: f64,
}

/// Solves the steady temperature of a nonlinear `stack` on `be`.
pub fn solve<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    let t_start = Instant::now();
    let mut timings = Vec::new();
    let grid = Grid::from_stack(stack);
    be.check_capacity(grid.len())?;
    let power = (0..stack.layers.len())
        .map(|l| layer_power(stack, &grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    timings.push(("power".to_string(), t_start.elapsed().as_secs_f64()));
    let p = picard(be, stack, &grid, &power, None, opts)?;
    timings.push(("assemble".into(), p.t_assemble));
    timings.push(("solve".into(), p.t_solve));
    let precision = p.precision.filter(|p| p.mode != "f64");
    let solver = SolverReport {
        method: "pcg".into(),
        precision: match &precision {
            Some(p) => format!("{}: f64 PCG, preconditioner {}", p.mode, p.current),
            None => "f64".into(),
        },
        precond: p.precond,
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations: p.info.iterations,
        residual_replacements: p.info.replacements,
        converged: true,
        stop_reason: "rtol reached".into(),
        final_true_residual: p.true_rel,
        mixed: precision.map(|precond| MixedReport {
            precond,
            switches: p.info.precision_switches.clone(),
        }),
    };
    let mut summary = summarize(
        stack, &grid, &p.sys, &p.theta, &p.t, &power, be, solver, timings,
    );
    summary.nonlinear = Some(p.report);
    Ok(SteadyOutcome {
        grid,
        temperature_k: p.t,
        power,
        summary,
    })
}

/// The outer iteration for the dynamic power `dynamic` (W per cell; `None`:
/// the layers' own power maps) on the layers' `power` (blocks, material
/// patches, leakage weights): Picard, or Anderson-accelerated Picard when
/// `opts.nonlinear.anderson` > 0.
pub fn picard<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    dynamic: Option<&[f64]>,
    opts: &SteadyOptions,
) -> Result<Picard, SteadyError> {
    let nl = &opts.nonlinear;
    let n = grid.len();
    be.check_capacity(n)?;
    be.prepare_quad_diag()?;
    let leak = LeakageModel::new(stack, grid, power);

    let (mut t_assemble, mut t_solve) = (0.0, 0.0);
    let mut t = vec![stack.ambient_k; n];
    let mut theta = vec![0.0; n];
    let clock = Instant::now();
    let mut sys = system_at(stack, grid, power, &t)?;
    let dynamic = dynamic.map_or_else(|| sys.rhs.clone(), <[f64]>::to_vec);
    let mut a_dev = be.upload_matrix(&sys.a)?;
    t_assemble += clock.elapsed().as_secs_f64();

    let mut m: Option<Box<dyn Preconditioner<B>>> = None;
    let mut acc = (nl.anderson > 0).then(|| Anderson::new(nl.anderson));
    let mut report = NonlinearReport {
        method: match nl.anderson {
            0 => "picard".into(),
            d => format!("anderson({d})"),
        },
        tol_k: nl.tol_k,
        ..Default::default()
    };
    let (mut first_iters, mut growing, mut last_change) = (None, 0, f64::INFINITY);
    // The plain Picard iterate behind an Anderson step, to fall back on.
    let mut fallback: Option<Vec<f64>> = None;
    let mut last = None;
    for it in 1..=nl.max_outer {
        let clock = Instant::now();
        let mut extrapolated = fallback.take();
        if it > 1 && stack.k_varies() {
            sys = match system_at(stack, grid, power, &t) {
                Ok(s) => s,
                // An extrapolated iterate outside a law's range: Picard's.
                Err(_) if extrapolated.is_some() => {
                    theta = extrapolated.take().expect("checked");
                    t = theta.iter().map(|v| v + stack.ambient_k).collect();
                    if let Some(a) = &mut acc {
                        a.reset();
                    }
                    system_at(stack, grid, power, &t)?
                }
                Err(e) => return Err(e),
            };
            a_dev = be.upload_matrix(&sys.a)?;
        }
        let lk = leak.eval(grid, &t);
        sys.rhs = dynamic.iter().zip(&lk.cell_w).map(|(p, q)| p + q).collect();
        let offset = Offset::new(&sys.a, &sys.rhs);
        let b = be.upload(&offset.rhs)?;
        let x0: Vec<f64> = theta.iter().map(|v| v - offset.c).collect();
        let mut x = be.upload(&x0)?;
        t_assemble += clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        let mut op = QuadDiagOperator::new(be, &a_dev, n);
        let mm = match &mut m {
            Some(m) => {
                if stack.k_varies() {
                    m.matrix_changed(be, &sys.a)?;
                }
                m
            }
            None => m.insert(build_thermal_precond(
                opts.precond,
                be,
                &mut op,
                Some(&sys.a),
                &opts.precond_opts,
            )?),
        };
        // Inexact while far (change above 10·tol), exact near convergence.
        let near = last_change <= 10.0 * nl.tol_k;
        let rtol = if near || nl.forcing <= 0.0 {
            opts.rtol
        } else {
            let rel0 = true_relative_residual(be, &mut op, &b, &x, offset.rtol_scale)?;
            (nl.forcing * rel0).max(opts.rtol)
        };
        let params = opts.cg_params(be, mm.as_ref(), Stop::against(rtol, offset.b_norm));
        let info = pcg(be, &mut op, mm.as_mut(), &b, &mut x, &params)?;
        let true_rel = true_relative_residual(be, &mut op, &b, &x, offset.rtol_scale)?;
        let (precond_report, precision) = (mm.report(), mm.precision());
        let mut th = be.download(&x)?;
        offset.restore(&mut th);
        t_solve += clock.elapsed().as_secs_f64();
        report.inner_iterations.push(info.iterations);
        if rtol == opts.rtol {
            let first = *first_iters.get_or_insert(info.iterations.max(3));
            if info.iterations > 2 * first {
                m = None;
                report.precond_rebuilds += 1;
            }
        }

        let t_new: Vec<f64> = th.iter().map(|v| v + stack.ambient_k).collect();
        let change = t_new
            .iter()
            .zip(&t)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let (imax, tmax) = hottest(&t_new);
        growing = if change > last_change { growing + 1 } else { 0 };
        let runaway = if !tmax.is_finite() || !change.is_finite() {
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
        };
        if let Some(reason) = runaway {
            // From an extrapolated iterate (which may have overshot past an
            // unstable fixed point): retreat to the Picard iterate behind it.
            if let (Some(back), Some(a)) = (extrapolated.take(), &mut acc) {
                a.reset();
                theta = back;
                t = theta.iter().map(|v| v + stack.ambient_k).collect();
                growing = 0;
                continue;
            }
            return Err(NonlinearError::Runaway {
                iteration: it,
                reason,
                hottest: place_name(stack, grid, power, imax),
                t_k: tmax,
                leakage_w: leak.eval(grid, &t_new).total_w(),
            }
            .into());
        }
        last_change = change;
        report.outer_iterations = it;
        report.final_change_k = change;
        report.leakage_total_w = lk.total_w();
        report.leakage_w = leak
            .sources
            .iter()
            .zip(&lk.per_source_w)
            .map(|(s, w)| (s.name.clone(), *w))
            .collect();
        let energy = crate::thermal::steady::energy_balance(grid, &sys, &th);
        last = Some((info, true_rel, precond_report, precision));
        if change <= nl.tol_k && rtol == opts.rtol && energy.relative_error <= nl.energy_tol {
            theta = th;
            t = t_new;
            break;
        }
        if it == nl.max_outer {
            let (imax, tmax) = hottest(&t_new);
            return Err(NonlinearError::NoConvergence {
                iterations: it,
                change_k: change,
                tol_k: nl.tol_k,
                hottest: place_name(stack, grid, power, imax),
                t_k: tmax,
            }
            .into());
        }
        // The next iterate: G(θₖ), or Anderson's combination when it stays
        // finite, above ambient's floor and below --t-max (else G(θₖ)).
        theta = match &mut acc {
            None => th,
            Some(a) => {
                if growing > 0 {
                    a.reset();
                }
                let next = a.next(&theta, &th);
                let floor = th.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
                let ok = next
                    .iter()
                    .all(|v| v.is_finite() && *v >= floor && v + stack.ambient_k <= nl.t_max_k);
                if ok {
                    fallback = Some(th);
                    next
                } else {
                    a.reset();
                    th
                }
            }
        };
        t = theta.iter().map(|v| v + stack.ambient_k).collect();
    }
    if let Some(a) = &acc {
        report.anderson_restarts = a.restarts;
    }
    let (info, true_rel, precond, precision) = last.expect("max_outer >= 1");
    Ok(Picard {
        theta,
        t,
        sys,
        report,
        info,
        true_rel,
        precond,
        precision,
        t_assemble,
        t_solve,
    })
}
