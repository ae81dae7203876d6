//! Sweeps: many power maps on one stack. The matrix depends only
//! on the stack's geometry and materials, so a worker assembles and uploads it
//! once, builds the preconditioner once, and then per case only rasterizes
//! the case's power, forms the right-hand side, uploads it and runs PCG from
//! zero (the same arithmetic as `cuth solve`, so each case equals its own
//! solve to rounding). A case whose power cannot be read, or whose solve does
//! not converge, is reported with its reason; the others go on.

use super::block_stats::layer_block_stats;
use super::steady::SteadyOptions;
use crate::assemble::{assemble, power_rhs, System};
use crate::grid::Grid;
use crate::linalg::{Offset, QuadDiagOperator, Solver, Stop};
use crate::power::raster_cache::RasterCache;
use crate::power::{layer_power, layer_power_with, LayerPower};
use crate::stack::{PowerSpec, Stack};
use crate::thermal::device::ThermalBackend;

/// One case: the power of some layers (by index) replaced, from a source as
/// a stack file gives it or from a map in memory; every other layer keeps
/// the stack's own power.
#[derive(Clone, Debug, Default)]
pub struct SweepCase {
    pub name: String,
    pub power: Vec<(usize, PowerSpec)>,
    /// Layers whose whole map is given (W per plane cell, index
    /// `x + nx*y`), applied after `power`; the layer's blocks stay for the
    /// per-block statistics.
    pub maps: Vec<(usize, Vec<f64>)>,
}

/// What a solved case reports.
#[derive(Clone, Debug)]
pub struct CaseStats {
    pub iterations: usize,
    /// ‖b − A x‖/‖b‖ recomputed after the solve.
    pub true_residual: f64,
    /// Total power in, W.
    pub power_w: f64,
    /// Per layer of the stack: (max, mean) temperature, K.
    pub layers: Vec<(f64, f64)>,
    /// Per block (`layer.block`): max temperature, K (None: outside the grid).
    pub blocks: Vec<(String, Option<f64>)>,
    /// The field and the power maps, only when asked (`keep_fields`).
    pub field: Option<(Vec<f64>, Vec<LayerPower>)>,
}

/// A case's index in the sweep, its name and its result or failure reason.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub index: usize,
    pub name: String,
    pub outcome: Result<CaseStats, String>,
}

/// What every worker shares: the grid, the assembled system (its right-hand
/// side that of the stack's own power), the stack's own power per layer and
/// the cases' decoded raster files.
pub struct SweepBase {
    pub grid: Grid,
    pub sys: System,
    pub power: Vec<LayerPower>,
    /// Raster files decoded once for all cases (up to [`RASTER_CACHE_BYTES`]).
    pub rasters: RasterCache,
}

/// One sweep as each of its workers sees it: the stack and what is built
/// from it once, the solver options, every case, and whether the cases'
/// fields are kept. Only the worker's device and its share of the cases
/// differ between workers.
#[derive(Clone, Copy)]
pub struct SweepJob<'a> {
    pub stack: &'a Stack,
    pub base: &'a SweepBase,
    pub opts: &'a SteadyOptions,
    pub cases: &'a [SweepCase],
    /// Keep each case's field and power maps in its [`CaseStats`].
    pub keep_fields: bool,
}

/// Decoded rasters a sweep keeps: 256 MiB, about 800 maps of 200 × 200.
pub const RASTER_CACHE_BYTES: usize = 256 << 20;

impl SweepBase {
    /// Rasterizes the stack's own power and assembles the matrix, once.
    pub fn new(stack: &Stack) -> Result<SweepBase, crate::power::PowerError> {
        SweepBase::on_grid(stack, Grid::from_stack(stack))
    }

    /// [`SweepBase::new`] on the stack's `grid`, built by the caller.
    pub fn on_grid(stack: &Stack, grid: Grid) -> Result<SweepBase, crate::power::PowerError> {
        if let Some((i, l)) = (stack.layers.iter().enumerate()).find(|(_, l)| l.cavity.is_some()) {
            return Err(crate::power::PowerError::Invalid {
                file: stack.source.clone(),
                field: format!("layers[{i}] ({}).cavity", l.name),
                message: "a sweep does not solve liquid-cooled cavities yet; use `cuth solve` per \
                          case"
                    .into(),
            });
        }
        let power = (0..stack.layers.len())
            .map(|l| layer_power(stack, &grid, l))
            .collect::<Result<Vec<_>, _>>()?;
        let sys = assemble(stack, &grid, &power);
        Ok(SweepBase {
            grid,
            sys,
            power,
            rasters: RasterCache::new(RASTER_CACHE_BYTES),
        })
    }
}

/// One worker: uploads the matrix and builds the preconditioner on `be`,
/// then solves the cases `next()` hands out until it returns `None`, handing
/// each result to `done`. Fails only when the set-up fails (the device);
/// a case's own failure goes into its result.
pub fn run_worker<B: ThermalBackend + 'static>(
    be: &B,
    job: SweepJob<'_>,
    next: &(dyn Fn() -> Option<usize> + Sync),
    done: &(dyn Fn(CaseResult) + Sync),
) -> Result<(), super::steady::SteadyError> {
    let SweepJob {
        stack,
        base,
        opts,
        cases,
        ..
    } = job;
    let n = base.grid.len();
    be.check_capacity(n)?;
    be.prepare_quad_diag()?;
    let a = be.upload_matrix(&base.sys.a)?;
    let op = QuadDiagOperator::new(be, &a, n);
    let mut ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, Some(&base.sys.a))?;
    let mut x = be.zeros(n)?;
    let zero = be.zeros(n)?;
    let mut own = stack.clone();
    while let Some(i) = next() {
        let case = &cases[i];
        let power = match case_power(&mut own, stack, base, case) {
            Ok(p) => p,
            Err(e) => {
                done(failed(i, case, e));
                continue;
            }
        };
        let solved = solve_one(be, job, &mut ksp, &mut x, &zero, power);
        done(CaseResult {
            index: i,
            name: case.name.clone(),
            outcome: solved,
        });
    }
    Ok(())
}

/// One case alone: its right-hand side uploaded, PCG from zero on the
/// worker's solver, the true residual, the statistics.
pub(super) fn solve_one<B: ThermalBackend + 'static>(
    be: &B,
    job: SweepJob<'_>,
    ksp: &mut Solver<'_, B>,
    x: &mut B::Vector,
    zero: &B::Vector,
    power: Vec<LayerPower>,
) -> Result<CaseStats, String> {
    let SweepJob {
        stack, base, opts, ..
    } = job;
    let rhs = power_rhs(&base.grid, &power);
    let offset = Offset::new(&base.sys.a, &rhs);
    let b = be.upload(&offset.rhs).map_err(|e| e.to_string())?;
    be.copy(zero, x).map_err(|e| e.to_string())?;
    ksp.set_params(opts.cg_params(be, ksp.precond(), Stop::against(opts.rtol, offset.b_norm)));
    let info = ksp.solve(&b, x).map_err(|e| e.to_string())?;
    let true_res =
        (ksp.true_relative_residual(&b, x, offset.rtol_scale)).map_err(|e| e.to_string())?;
    let mut theta = be.download(x).map_err(|e| e.to_string())?;
    offset.restore(&mut theta);
    let t: Vec<f64> = theta.iter().map(|v| v + stack.ambient_k).collect();
    Ok(stats(
        stack,
        &base.grid,
        t,
        power,
        info.iterations,
        true_res,
        job.keep_fields,
    ))
}

pub(super) fn failed(i: usize, case: &SweepCase, reason: String) -> CaseResult {
    CaseResult {
        index: i,
        name: case.name.clone(),
        outcome: Err(reason),
    }
}

/// The case's power per layer: the stack's own where the case names none.
/// `own` is a scratch copy of `stack` whose overridden layers are restored.
pub(super) fn case_power(
    own: &mut Stack,
    stack: &Stack,
    base: &SweepBase,
    case: &SweepCase,
) -> Result<Vec<LayerPower>, String> {
    let mut power = base.power.clone();
    for (l, spec) in &case.power {
        own.layers[*l].power = Some(spec.clone());
        let p = layer_power_with(own, &base.grid, *l, &base.rasters);
        own.layers[*l].power = stack.layers[*l].power.clone();
        power[*l] = p.map_err(|e| e.to_string())?;
        check_map(stack, *l, &power[*l].map_w)?;
    }
    for (l, map_w) in &case.maps {
        if map_w.len() != base.grid.plane() {
            return Err(format!(
                "layer {}: the power map has {} values, the grid's plane {}",
                stack.layers[*l].name,
                map_w.len(),
                base.grid.plane()
            ));
        }
        check_map(stack, *l, map_w)?;
        let material = stack.layers[*l].material;
        let absent = crate::assemble::powered_absent(&base.grid, &base.power[*l], material, map_w);
        if let Some(i) = absent {
            return Err(format!(
                "layer {}: the power map gives {} W to cell {i}, which has no material",
                stack.layers[*l].name, map_w[i]
            ));
        }
        power[*l].map_w.clone_from(map_w);
        power[*l].total_w = map_w.iter().sum();
    }
    Ok(power)
}

/// A case's map must hold finite powers, at least 0 W.
fn check_map(stack: &Stack, l: usize, map_w: &[f64]) -> Result<(), String> {
    match map_w.iter().any(|v| !v.is_finite() || *v < 0.0) {
        true => Err(format!(
            "layer {}: the power map has negative or non-finite values",
            stack.layers[l].name
        )),
        false => Ok(()),
    }
}

pub(super) fn stats(
    stack: &Stack,
    grid: &Grid,
    t: Vec<f64>,
    power: Vec<LayerPower>,
    iterations: usize,
    true_residual: f64,
    keep_fields: bool,
) -> CaseStats {
    let plane = grid.plane();
    let mut layers = Vec::with_capacity(stack.layers.len());
    let mut blocks = Vec::new();
    for (l, layer) in stack.layers.iter().enumerate() {
        let zr = &grid.layer_z[l];
        let cells = &t[zr.start * plane..zr.end * plane];
        let max = cells.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let avg = cells.iter().sum::<f64>() / cells.len() as f64;
        layers.push((max, avg));
        if !power[l].blocks.is_empty() {
            let map_k = grid.layer_map(&t, l);
            for s in layer_block_stats(&layer.name, &map_k, &power[l].blocks, grid) {
                blocks.push((format!("{}.{}", s.layer, s.block), s.temp.map(|t| t.max_k)));
            }
        }
    }
    CaseStats {
        iterations,
        true_residual,
        power_w: power.iter().map(|p| p.map_w.iter().sum::<f64>()).sum(),
        layers,
        blocks,
        field: keep_fields.then_some((t, power)),
    }
}
