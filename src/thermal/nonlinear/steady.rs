//! Steady state with temperature-dependent k and leakage: the
//! power maps, the outer iteration of [`super::picard`] and the summary of
//! its last linear solve, with the outer iterations, the final change and
//! the leakage per source (`summary.json`'s `nonlinear`).

use super::picard::picard;
use crate::grid::Grid;
use crate::power::layer_power;
use crate::stack::Stack;
use crate::thermal::device::ThermalBackend;
use crate::thermal::steady_options::{SteadyError, SteadyOptions, SteadyOutcome};
use crate::thermal::summarize::{summarize, Coupling, ThermalProblem};
use crate::thermal::summary::{MixedReport, SolverReport};
use std::time::Instant;

/// Solves the steady temperature of a nonlinear `stack` on `be`.
pub fn solve<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    let t_start = Instant::now();
    let mut timings = Vec::new();
    be.check_capacity(grid.len())?;
    let power = (0..stack.layers.len())
        .map(|l| layer_power(stack, grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    timings.push(("power".to_string(), t_start.elapsed().as_secs_f64()));
    let p = picard(be, stack, grid, &power, None, opts)?;
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
    let coupling = Coupling {
        power_in_w: p.power_in_w,
        g_top: &p.g_top,
        g_bottom: &p.g_bottom,
    };
    let problem = ThermalProblem::new(stack, grid, &power);
    let mut summary = summarize(problem, coupling, &p.theta, &p.t, be, solver, timings);
    summary.nonlinear = Some(p.report);
    Ok(SteadyOutcome {
        grid: grid.clone(),
        temperature_k: p.t,
        power,
        summary,
        coolant: None,
    })
}
