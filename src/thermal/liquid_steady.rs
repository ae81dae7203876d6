//! The steady solve of a liquid-cooled stack inside the run's pipeline
//! (`thermal::steady::solve_steady_for` hands it over): assembled on the
//! host with its coolant (`thermal::liquid`), solved on the run's backend
//! by the cavity solver (BiCGStab over upwind multigrid), and summarized
//! as any other field, with the coolant's share of the energy balance, its
//! outlet temperatures and a coolant map per cavity beside the summary.

use super::liquid::{assemble_liquid, power_in_w, solve_system, LiquidError};
use super::liquid_nonlinear::picard_liquid;
use super::steady_device::{field_summary, Assembled};
pub use super::steady_options::CoolantField;
use super::steady_options::{KeepField, LayerMaps, SteadyError, SteadyOptions, SteadyOutcome};
use super::summarize::{summary_of, PowerSums, ThermalProblem};
use super::summary::{CoolantReport, SolverReport, Summary};
use crate::assemble::cavity::Coolant;
use crate::grid::Grid;
use crate::linalg::Stop;
use crate::power::LayerPower;
use crate::stack::{CavityModel, Stack};
use crate::thermal::device::ThermalBackend;
use std::time::Instant;

impl From<LiquidError> for SteadyError {
    fn from(e: LiquidError) -> Self {
        match e {
            LiquidError::Power(e) => SteadyError::Power(e),
            LiquidError::Solve(e) => SteadyError::Solve(e),
            LiquidError::Backend(e) => SteadyError::Backend(e),
            e @ (LiquidError::Cavity { .. } | LiquidError::NoCavity(_)) => {
                SteadyError::Cavity(e.to_string())
            }
        }
    }
}

/// The steady state of a liquid-cooled `stack` on `be`, its power already
/// rasterized; `keep` as for a solid stack.
pub(crate) fn solve_steady_liquid<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    opts: &SteadyOptions,
    keep: &KeepField,
    power: Vec<LayerPower>,
    mut timings: Vec<(String, f64)>,
) -> Result<(SteadyOutcome, LayerMaps), SteadyError> {
    let mut clock = Instant::now();
    let mut lap = |name: &str, timings: &mut Vec<(String, f64)>| {
        timings.push((name.to_string(), clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };
    let (system, solved, nonlinear) = if stack.is_nonlinear() {
        let p = picard_liquid(be, stack, grid, &power, opts)?;
        lap("assemble_and_solve", &mut timings);
        (p.system, p.solved, Some(p.report))
    } else {
        let system = assemble_liquid(stack, grid, &power)?;
        crate::assemble::check_system(&system, grid).map_err(SteadyError::Internal)?;
        lap("assemble", &mut timings);
        let precond = (opts.precond, &opts.precond_opts);
        let solved = solve_system(be, &system, precond, |be, m, b| {
            opts.cg_params(be, m, Stop::against(opts.rtol, b))
        })?;
        lap("solve", &mut timings);
        (system, solved, None)
    };
    let solver = SolverReport {
        method: solved.method.into(),
        precision: "f64".into(),
        precond: solved.precond.clone(),
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations: solved.info.iterations,
        residual_replacements: solved.info.replacements,
        converged: true,
        stop_reason: "rtol reached".into(),
        final_true_residual: solved.true_relative_residual,
        mixed: None,
    };
    let mut theta = solved.x_host;
    solved.offset.restore(&mut theta);
    let power_w = power_in_w(&system);
    let coolant = system.coolant.clone().unwrap_or_default();
    let sums = PowerSums::new(grid, &power);
    let problem = ThermalProblem::new(stack, grid, &power);
    let c = solved.offset.c;
    let sys = Assembled::Host(Box::new(system));
    let mut stats = field_summary(be, problem, &sys, &solved.x, c, keep)?;
    lap("download", &mut timings);
    let temperature_k = stats.whole.take().unwrap_or_default();
    let layer_maps = LayerMaps {
        maps: std::mem::take(&mut stats.maps),
        blocks: std::mem::take(&mut stats.blocks),
    };
    let mut summary = summary_of(stack, grid, &sums, &stats, be, solver, timings);
    summary.nonlinear = nonlinear;
    summary.energy.power_in_w = power_w;
    add_coolant(&mut summary, stack, &coolant, &theta);
    let field = coolant_field(stack, grid, &coolant, &theta);
    Ok((
        SteadyOutcome {
            grid: grid.clone(),
            temperature_k,
            power,
            summary,
            coolant: Some(field),
        },
        layer_maps,
    ))
}

/// The coolant's reports and its share of the energy balance in `summary`
/// (whose power in excludes the inlets' enthalpy), θ K above ambient.
pub fn add_coolant(summary: &mut Summary, stack: &Stack, coolant: &Coolant, theta: &[f64]) {
    summary.coolant = coolant_reports(stack, coolant, theta);
    let coolant_w = coolant.heat_w(theta);
    let e = &mut summary.energy;
    e.heat_out_coolant_w = Some(coolant_w);
    let out = e.heat_out_top_w + e.heat_out_bottom_w + coolant_w;
    e.relative_error = if e.power_in_w > 0.0 {
        (out - e.power_in_w).abs() / e.power_in_w
    } else {
        0.0
    };
}

/// Per cavity layer what its coolant carries and how warm it leaves.
pub fn coolant_reports(stack: &Stack, coolant: &Coolant, theta: &[f64]) -> Vec<CoolantReport> {
    let ambient = stack.ambient_k;
    let mut out = Vec::new();
    for (l, layer) in stack.layers.iter().enumerate() {
        let Some(cav) = &layer.cavity else { continue };
        let lines: Vec<_> = coolant.lines.iter().filter(|c| c.layer == l).collect();
        let w: f64 = lines.iter().map(|c| c.w).sum();
        let outlet = |c: &&crate::assemble::cavity::CoolantLine| {
            theta[*c.cells.last().expect("a line has cells")]
        };
        let heat_w: f64 = lines
            .iter()
            .map(|c| c.w * (outlet(c) - c.inlet_theta))
            .sum();
        let mixed = lines.iter().map(|c| c.w * outlet(c)).sum::<f64>() / w.max(f64::MIN_POSITIVE);
        let max = lines.iter().map(outlet).fold(f64::NEG_INFINITY, f64::max);
        let (model, channels) = match cav.model {
            CavityModel::FourResistor { .. } => {
                ("4rm", lines.iter().map(|c| outlet(c) + ambient).collect())
            }
            CavityModel::TwoResistor { .. } => ("2rm", Vec::new()),
            CavityModel::PinFin { .. } => ("pinfin", Vec::new()),
        };
        out.push(CoolantReport {
            layer: layer.name.clone(),
            model: model.into(),
            flow_m3_s: cav.flow_m3_s,
            inlet_k: cav.inlet_k,
            outlet_mean_k: mixed + ambient,
            outlet_max_k: max + ambient,
            heat_w,
            channel_outlets_k: channels,
        });
    }
    out
}

/// The coolant's temperature maps (K) and cells.
pub fn coolant_field(stack: &Stack, grid: &Grid, coolant: &Coolant, theta: &[f64]) -> CoolantField {
    let plane = grid.plane();
    let mut maps: Vec<(usize, Vec<f64>)> = Vec::new();
    for line in &coolant.lines {
        let at = match maps.iter().position(|(l, _)| *l == line.layer) {
            Some(k) => k,
            None => {
                maps.push((line.layer, vec![f64::NAN; plane]));
                maps.len() - 1
            }
        };
        for &c in &line.cells {
            maps[at].1[c % plane] = theta[c] + stack.ambient_k;
        }
    }
    CoolantField {
        maps,
        cells: coolant.advection.cell.clone(),
        outlets: coolant.outlets(stack.ambient_k, theta),
    }
}
