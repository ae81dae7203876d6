//! Steady state: stack → power → assembly → PCG on a backend → temperatures
//! and a [`Summary`]. Generic over the backend, so the CPU and CUDA paths run
//! the same code; only the vectors and kernels differ.

use super::block_stats::BlockStats;
use super::steady_device::{field_summary, shift_on_device, Assembled};
pub(crate) use super::summarize::summarize;
pub use super::summarize::PowerSums;
pub use super::summarize::{energy_balance, energy_balance_of, Coupling};
use super::summarize::{summary_of, ThermalProblem};
use super::summary::{MixedReport, SolverReport, Summary};
use crate::assemble::assemble;
use crate::backend::{Backend, BackendError};
use crate::grid::Grid;
use crate::linalg::{
    CgParams, Offset, PrecondKind, PrecondOptions, Preconditioner, QuadDiagOperator, SolveError,
    Solver, Stop,
};
use crate::power::{layer_power, LayerPower, PowerError};
use crate::stack::Stack;
use crate::thermal::assembly_input::{AssemblyInput, InputParts};
use crate::thermal::device::ThermalBackend;
use crate::thermal::nonlinear::{NonlinearError, NonlinearOptions};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct SteadyOptions {
    pub precond: PrecondKind,
    pub rtol: f64,
    pub max_iter: usize,
    pub precond_opts: PrecondOptions,
    /// Read the residual back every this many iterations (see `CgParams`);
    /// 0 leaves it to the backend (`Backend::check_interval`).
    pub check_every: usize,
    /// The outer iteration of temperature-dependent stacks (unused by
    /// linear ones).
    pub nonlinear: NonlinearOptions,
}

impl SteadyOptions {
    /// Solver settings from the stack's `[solver]` table over built-in defaults.
    pub fn from_stack(stack: &Stack, default_precond: PrecondKind) -> SteadyOptions {
        let mut precond_opts = PrecondOptions::default();
        if let Some(d) = stack.solver.chebyshev_degree {
            precond_opts.chebyshev_degree = d;
        }
        SteadyOptions {
            precond: stack.solver.precond.unwrap_or(default_precond),
            rtol: stack.solver.rtol.unwrap_or(1e-8),
            max_iter: stack.solver.max_iter.unwrap_or(20_000),
            precond_opts,
            check_every: 0,
            nonlinear: NonlinearOptions::default(),
        }
    }

    /// PCG's parameters for these options on `be`, stopping at `stop`.
    /// PCG's parameters; the residual is read back every `check_every`
    /// iterations, by default as often as `m` (then `be`) prefers.
    pub fn cg_params<B: Backend>(&self, be: &B, m: &dyn Preconditioner<B>, stop: Stop) -> CgParams {
        CgParams {
            stop,
            max_iter: self.max_iter,
            check_every: match self.check_every {
                0 => m.check_interval().unwrap_or(be.check_interval()),
                k => k,
            },
            ..CgParams::default()
        }
    }
}

pub struct SteadyOutcome {
    pub grid: Grid,
    /// Temperature of every cell, K.
    pub temperature_k: Vec<f64>,
    pub power: Vec<LayerPower>,
    pub summary: Summary,
}

/// What of the solved field the caller keeps on the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeepField {
    /// T of every cell ([`SteadyOutcome::temperature_k`]).
    #[default]
    Whole,
    /// Only the maps of these layers and, unless a device reduced their
    /// blocks' statistics ([`LayerMaps::blocks`]), of every layer with
    /// named blocks (whose statistics read its map); `temperature_k` is
    /// left empty and the field is reduced on the device or piece by piece
    /// as it comes off it.
    Maps(Vec<usize>),
}

/// What a solve keeping [`KeepField::Maps`] hands the outputs besides the
/// summary (empty with [`KeepField::Whole`]).
#[derive(Debug, Default)]
pub struct LayerMaps {
    /// Per layer its map (K, mean over its z cells, index `x + nx*y`),
    /// where kept.
    pub maps: Vec<Option<Vec<f64>>>,
    /// Per layer its blocks' statistics where a device reduced them (then
    /// the layer's map is kept only if asked for).
    pub blocks: Vec<Option<Vec<BlockStats>>>,
}

/// What a caller hands [`solve_steady_for`] besides the stack:
/// the power it has rasterized already and the assembly input's parts it
/// built from it (the CLI does both while the device opens), and whether
/// the device buffers may be left to the process exit.
#[derive(Debug, Default)]
pub struct Prepared {
    pub power: Option<Vec<LayerPower>>,
    /// Built from `power` (with the same stack and grid).
    pub parts: Option<InputParts>,
    /// Likewise.
    pub sums: Option<PowerSums>,
    /// The process exits after this solve: the solver's device buffers are
    /// not freed (the driver reclaims them at exit, as it does the
    /// backend's context, which the CLI never tears down). Library callers
    /// leave this off.
    pub leave_buffers_to_exit: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SteadyError {
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Nonlinear(#[from] NonlinearError),
    /// Assembly produced an invalid matrix: a bug, never a user's input.
    #[error("internal error: the assembled matrix is invalid: {0}")]
    Internal(String),
}

/// Solves the steady temperature field of `stack` on backend `be`; a stack
/// with temperature-dependent properties or leakage goes to the Picard
/// iteration (`thermal::nonlinear::steady`), any other takes the linear path.
pub fn solve_steady<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    solve_steady_for(be, stack, opts, &KeepField::Whole, Prepared::default()).map(|r| r.0)
}

/// [`solve_steady`] keeping `keep` of the field (with [`KeepField::Maps`]
/// the outcome's `temperature_k` is empty and the maps come beside it),
/// from what the caller has `prepared`.
pub fn solve_steady_for<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
    keep: &KeepField,
    prepared: Prepared,
) -> Result<(SteadyOutcome, LayerMaps), SteadyError> {
    if stack.is_nonlinear() {
        let o = crate::thermal::nonlinear::steady::solve(be, stack, opts)?;
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
    let grid = Grid::from_stack(stack);
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
        _ => (rasterize_layers(stack, &grid)?, None, None, "power"),
    };
    let sums = match sums {
        Some(s) if s.map_w.len() == power.len() && s.rhs_w.len() == power.len() => s,
        _ => PowerSums::new(&grid, &power),
    };
    parts.lap("power/rasterize");
    heat_reaches_ambient(stack, &grid, &power)?;
    lap(phase, &mut timings);

    let n = grid.len();
    // On a GPU the system is built where it is used, from compact inputs
    // (device assembly); the CPU assembles on the host in parallel.
    let input = match input_parts {
        Some(parts) => AssemblyInput::from_parts(stack, &grid, &power, parts),
        None => AssemblyInput::new(stack, &grid, &power),
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
            let sys = assemble(stack, &grid, &power);
            crate::assemble::check_system(&sys, &grid).map_err(SteadyError::Internal)?;
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
    let m = ksp.precond();
    let precision = m.precision().filter(|p| p.mode != "f64");
    let solver = SolverReport {
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
    };
    // A one-shot run leaves its device buffers to the process exit.
    let free = |bufs| match leave {
        true => std::mem::forget(bufs),
        false => drop(bufs),
    };
    free(Box::new(ksp.release()) as Box<dyn std::any::Any>);

    // The statistics: reduced on the device, or folded from x as it comes
    // off the device piece by piece (θ = x + c, T = θ + ambient); the whole
    // field is kept only where the caller asked for it.
    let problem = ThermalProblem::new(stack, &grid, &power);
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
    let mut summary = summary_of(stack, &grid, &sums, &stats, be, solver, timings);
    drop(sys);
    (summary.timings_s).push(("summary".into(), t_summary.elapsed().as_secs_f64()));
    parts.lap("summary/stats");
    Ok((
        SteadyOutcome {
            grid,
            temperature_k,
            power,
            summary,
        },
        layer_maps,
    ))
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
