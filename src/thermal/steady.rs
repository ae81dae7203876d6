//! Steady state: stack → power → assembly → PCG on a backend → temperatures
//! and a [`Summary`](super::summary::Summary). Generic over the backend, so the CPU and CUDA paths run
//! the same code; only the vectors and kernels differ.

use super::steady_device::{field_summary, shift_on_device, Assembled};
pub use super::steady_options::{
    KeepField, LayerMaps, Prepared, SteadyError, SteadyOptions, SteadyOutcome,
};
pub(crate) use super::summarize::summarize;
pub use super::summarize::PowerSums;
pub use super::summarize::{energy_balance, energy_balance_of, Coupling};
use super::summarize::{summary_of, ThermalProblem};
use super::summary::{MixedReport, SolverReport};
use crate::assemble::assemble;
use crate::grid::Grid;
use crate::linalg::{CgInfo, Offset, QuadDiagOperator, Solver, Stop};
use crate::power::{layer_power, LayerPower, PowerError};
use crate::stack::Stack;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::device::ThermalBackend;
use std::time::Instant;

/// Solves the steady temperature field of `stack` on backend `be`; a stack
/// with temperature-dependent properties or leakage goes to the Picard
/// iteration (`thermal::nonlinear::steady`), any other takes the linear path.
pub fn solve_steady<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    let grid = Grid::from_stack(stack);
    solve_steady_for(
        be,
        stack,
        &grid,
        opts,
        &KeepField::Whole,
        Prepared::default(),
    )
    .map(|r| r.0)
}

/// [`solve_steady`] keeping `keep` of the field (with [`KeepField::Maps`]
/// the outcome's `temperature_k` is empty and the maps come beside it),
/// on the stack's `grid` (built once by the caller), from what the caller
/// has `prepared`.
pub fn solve_steady_for<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    opts: &SteadyOptions,
    keep: &KeepField,
    prepared: Prepared,
) -> Result<(SteadyOutcome, LayerMaps), SteadyError> {
    if stack.is_nonlinear() && !stack.has_cavities() {
        let o = crate::thermal::nonlinear::steady::solve(be, stack, grid, opts)?;
        return Ok((o, LayerMaps::default()));
    }
    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &str, timings: &mut Vec<(String, f64)>| {
        timings.push((name.to_string(), clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };

    let sync = crate::profile::sync_parts();
    let mut parts = crate::profile::Laps::new();
    be.check_capacity(grid.len())?;
    be.prepare_quad_diag()?;
    parts.lap("power/prepare");
    let Prepared {
        power,
        parts: input_parts,
        sums,
        leave_buffers_to_exit: leave,
    } = prepared;
    let (power, input_parts, sums, phase) = match power {
        Some(p) if p.len() == stack.layers.len() => (p, input_parts, sums, "prepare"),
        _ => (rasterize_layers(stack, grid)?, None, None, "power"),
    };
    let sums = sums_of(sums, grid, &power);
    parts.lap("power/rasterize");
    if stack.has_cavities() {
        lap(phase, &mut timings);
        return super::liquid_steady::solve_steady_liquid(
            be, stack, grid, opts, keep, power, timings,
        );
    }
    heat_reaches_ambient(stack, grid, &power)?;
    lap(phase, &mut timings);

    let n = grid.len();
    // On a GPU the system is built where it is used, from compact inputs
    // (device assembly); the CPU assembles on the host in parallel.
    let input = match input_parts {
        Some(parts) => AssemblyInput::from_parts(stack, grid, &power, parts),
        None => AssemblyInput::new(stack, grid, &power),
    };
    parts.lap("assemble/input");
    let (a, b, offset, sys) = match be.assemble_on_device(&input)? {
        Some(dev) => {
            drop(input);
            be.synchronize()?;
            parts.lap("assemble/device");
            lap("assemble", &mut timings);
            let (a, b, offset, films) = shift_on_device(be, &sums, dev)?;
            if sync {
                be.synchronize()?;
            }
            parts.lap("upload/shift");
            (a, b, offset, Assembled::Device(films))
        }
        None => {
            drop(input);
            let sys = assemble(stack, grid, &power);
            crate::assemble::check_system(&sys, grid).map_err(SteadyError::Internal)?;
            lap("assemble", &mut timings);
            let offset = Offset::new(&sys.a, &sys.rhs);
            let a = be.upload_matrix(&sys.a)?;
            let b = be.upload(&offset.rhs)?;
            (a, b, offset, Assembled::Host(Box::new(sys)))
        }
    };
    parts.split();
    let mut x = be.zeros(n)?;
    be.synchronize()?;
    parts.lap("upload/alloc_x");
    lap("upload", &mut timings);

    // Chebyshev's set-up reads the matrix on the host (the solver reads a
    // device-assembled A back for it); multigrid builds its levels where
    // the matrix lives, so a device-assembled A stays there.
    let host = match &sys {
        Assembled::Host(sys) => Some(&sys.a),
        Assembled::Device(_) => None,
    };
    let op = QuadDiagOperator::new(be, &a, n);
    let mut ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, host)?;
    lap("precond_setup", &mut timings);

    // The shifted system has the same residual as the user's; the stop, and
    // a failure's report, are relative to the user's ‖b‖.
    ksp.set_params(opts.cg_params(be, ksp.precond(), Stop::against(opts.rtol, offset.b_norm)));
    let info = ksp.solve(&b, &mut x)?;
    lap("solve", &mut timings);
    parts.split();

    // ‖b‖ = rtol_scale·‖b − c·amb‖.
    let true_rel = ksp.true_relative_residual(&b, &x, offset.rtol_scale)?;
    parts.lap("download/true_residual");
    let solver = solver_report(&ksp, opts, &info, true_rel);
    // A one-shot run leaves its device buffers to the process exit.
    let free = |bufs| match leave {
        true => std::mem::forget(bufs),
        false => drop(bufs),
    };
    free(Box::new(ksp.release()) as Box<dyn std::any::Any>);

    // The statistics: reduced on the device, or folded from x as it comes
    // off the device piece by piece (θ = x + c, T = θ + ambient); the whole
    // field is kept only where the caller asked for it.
    let problem = ThermalProblem::new(stack, grid, &power);
    let mut stats = field_summary(be, problem, &sys, &x, offset.c, keep)?;
    parts.lap("download/stats");
    lap("download", &mut timings);

    // The device's vectors and matrix are not needed past this point.
    free(Box::new((x, b, a)));
    if !leave {
        be.synchronize()?;
    }
    parts.lap("free/solver");
    lap("free_solver", &mut timings);
    let t_summary = Instant::now();
    let temperature_k = stats.whole.take().unwrap_or_default();
    let layer_maps = LayerMaps {
        maps: std::mem::take(&mut stats.maps),
        blocks: std::mem::take(&mut stats.blocks),
    };
    let mut summary = summary_of(stack, grid, &sums, &stats, be, solver, timings);
    drop(sys);
    (summary.timings_s).push(("summary".into(), t_summary.elapsed().as_secs_f64()));
    parts.lap("summary/stats");
    Ok((
        SteadyOutcome {
            grid: grid.clone(),
            temperature_k,
            power,
            summary,
            coolant: None,
        },
        layer_maps,
    ))
}

/// The power maps' sums prepared by the caller where they match `power`,
/// else computed.
fn sums_of(sums: Option<PowerSums>, grid: &Grid, power: &[LayerPower]) -> PowerSums {
    match sums {
        Some(s) if s.map_w.len() == power.len() && s.rhs_w.len() == power.len() => s,
        _ => PowerSums::new(grid, power),
    }
}

/// What `summary.json` reports of a converged linear solve.
fn solver_report<B: ThermalBackend + 'static>(
    ksp: &Solver<B>,
    opts: &SteadyOptions,
    info: &CgInfo,
    true_rel: f64,
) -> SolverReport {
    let m = ksp.precond();
    let precision = m.precision().filter(|p| p.mode != "f64");
    SolverReport {
        method: ksp.method().name().into(),
        precision: match &precision {
            // Outer CG in f64, preconditioner at its final level.
            Some(p) => format!("{}: f64 PCG, preconditioner {}", p.mode, p.current),
            None => "f64".into(),
        },
        precond: m.report(),
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
    }
}

/// Refuses a stack with a powered cell from which heat cannot reach
/// ambient through present material (its matrix is singular: PCG would break
/// down or stagnate), naming the layer and the outlines to check.
pub fn heat_reaches_ambient(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
) -> Result<(), PowerError> {
    let Some((l, x, y)) = crate::assemble::unreachable_power(stack, grid, power) else {
        return Ok(());
    };
    let layer = &stack.layers[l];
    // The layers with no material at that point: their outlines cut the path.
    let j = x + grid.nx * y;
    let gaps: Vec<String> = stack
        .layers
        .iter()
        .zip(power)
        .enumerate()
        .filter(|(_, (k, p))| {
            let absent = crate::assemble::absent_plane(grid, p, k.material);
            absent.get(j).copied().unwrap_or(false)
        })
        .map(|(i, (k, _))| format!("layers[{i}] ({}).outline", k.name))
        .collect();
    Err(PowerError::Invalid {
        file: stack.source.clone(),
        field: format!("layers[{l}] ({}).power", layer.name),
        message: format!(
            "heat from the cell at x {:.6} mm, y {:.6} mm has no path to ambient: \
             no material there in {} (outline with fill = \"none\"), so no cooled face \
             is reached",
            grid.x_center(x) * 1e3,
            grid.y_center(y) * 1e3,
            if gaps.is_empty() {
                "the layers around it".to_string()
            } else {
                gaps.join(", ")
            }
        ),
    })
}

/// Every layer's power rasterized on `grid`, the layers in parallel.
pub fn rasterize_layers(stack: &Stack, grid: &Grid) -> Result<Vec<LayerPower>, PowerError> {
    use rayon::prelude::*;
    (0..stack.layers.len())
        .into_par_iter()
        .map(|l| layer_power(stack, grid, l))
        .collect()
}
