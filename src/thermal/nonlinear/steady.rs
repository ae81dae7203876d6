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

use super::leakage::LeakageModel;
use super::{NonlinearError, NonlinearReport};
use crate::assemble::{assemble, assemble_cells, cell_materials, System};
use crate::backend::ChebyshevBackend;
use crate::grid::Grid;
use crate::linalg::{
    build_thermal_precond, pcg, true_relative_residual, Offset, Preconditioner, QuadDiagOperator,
    Stop,
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

/// Solves the steady temperature of a nonlinear `stack` on `be`.
pub fn solve<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    let nl = &opts.nonlinear;
    let t_start = Instant::now();
    let mut timings = Vec::new();
    let grid = Grid::from_stack(stack);
    let n = grid.len();
    be.check_capacity(n)?;
    be.prepare_quad_diag()?;
    let power = (0..stack.layers.len())
        .map(|l| layer_power(stack, &grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    let leak = LeakageModel::new(stack, &grid, &power);
    timings.push(("power".to_string(), t_start.elapsed().as_secs_f64()));

    let (mut t_assemble, mut t_solve) = (0.0, 0.0);
    let mut t = vec![stack.ambient_k; n];
    let mut theta = vec![0.0; n];
    let clock = Instant::now();
    let mut sys = system_at(stack, &grid, &power, &t)?;
    let dynamic = sys.rhs.clone();
    let mut a_dev = be.upload_matrix(&sys.a)?;
    t_assemble += clock.elapsed().as_secs_f64();

    let mut m: Option<Box<dyn Preconditioner<B>>> = None;
    let mut report = NonlinearReport {
        method: "picard".into(),
        tol_k: nl.tol_k,
        ..Default::default()
    };
    let (mut first_iters, mut growing, mut last_change) = (None, 0, f64::INFINITY);
    let mut last = None;
    for it in 1..=nl.max_outer {
        let clock = Instant::now();
        if it > 1 && stack.k_varies() {
            sys = system_at(stack, &grid, &power, &t)?;
            a_dev = be.upload_matrix(&sys.a)?;
        }
        let lk = leak.eval(&grid, &t);
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
                &sys.a,
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
            return Err(NonlinearError::Runaway {
                iteration: it,
                reason,
                hottest: place_name(stack, &grid, &power, imax),
                t_k: tmax,
                leakage_w: leak.eval(&grid, &t_new).total_w(),
            }
            .into());
        }
        theta = th;
        t = t_new;
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
        let energy = crate::thermal::steady::energy_balance(&grid, &sys, &theta);
        last = Some((info, true_rel, precond_report, precision));
        if change <= nl.tol_k && rtol == opts.rtol && energy.relative_error <= nl.energy_tol {
            break;
        }
        if it == nl.max_outer {
            let (imax, tmax) = hottest(&t);
            return Err(NonlinearError::NoConvergence {
                iterations: it,
                change_k: change,
                tol_k: nl.tol_k,
                hottest: place_name(stack, &grid, &power, imax),
                t_k: tmax,
            }
            .into());
        }
    }
    timings.push(("assemble".into(), t_assemble));
    timings.push(("solve".into(), t_solve));
    let (info, true_rel, precond, precision) = last.expect("max_outer >= 1");
    let precision = precision.filter(|p| p.mode != "f64");
    let solver = SolverReport {
        method: "pcg".into(),
        precision: match &precision {
            Some(p) => format!("{}: f64 PCG, preconditioner {}", p.mode, p.current),
            None => "f64".into(),
        },
        precond,
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations: info.iterations,
        residual_replacements: info.replacements,
        converged: true,
        stop_reason: "rtol reached".into(),
        final_true_residual: true_rel,
        mixed: precision.map(|precond| MixedReport {
            precond,
            switches: info.precision_switches.clone(),
        }),
    };
    let mut summary = summarize(stack, &grid, &sys, &theta, &t, &power, be, solver, timings);
    summary.nonlinear = Some(report);
    Ok(SteadyOutcome {
        grid,
        temperature_k: t,
        power,
        summary,
    })
}
