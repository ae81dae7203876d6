//! The resolve step (ripgrep's low args → high args): what a caller asks
//! for ([`PlanRequest`]: the command line's flags, or a script's options)
//! is turned once, before any work, into a [`RunPlan`]: the stack with its
//! grid, the solver options, the device asked for, the temperature unit, the
//! output paths and the environment's knobs, each validated here. After
//! that the plan does not change: the device that opens
//! ([`super::open`]) and what it implies ([`RunPlan::solver_on`]) are
//! separate values. Input faults are [`InputError`]s (exit code 2).

use super::device::{Device, DeviceChoice, OpenRequest};
use crate::error::{Classify, ErrorKind, InputError};
use crate::grid::Grid;
use crate::knobs::Knobs;
use crate::linalg::{PrecisionMode, PrecondKind};
use crate::output::blocks::BlockMap;
use crate::output::{transaction, TempUnit};
use crate::power::density::density_warnings;
use crate::power::PowerError;
use crate::stack::{Stack, StackError};
use crate::thermal::steady::SteadyOptions;
use std::path::{Path, PathBuf};

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error(transparent)]
    Power(#[from] PowerError),
    /// The run cannot fit in this machine's free host memory (exit 1).
    #[error("{0}")]
    Memory(String),
}

impl Classify for PlanError {
    fn kind(&self) -> ErrorKind {
        match self {
            PlanError::Input(e) => e.kind(),
            PlanError::Stack(e) => e.kind(),
            PlanError::Power(e) => e.kind(),
            PlanError::Memory(_) => ErrorKind::Failure,
        }
    }
}

/// Where a run writes: the output folder and an optional state file.
#[derive(Clone, Debug)]
pub struct Outputs {
    pub dir: PathBuf,
    pub save_state: Option<PathBuf>,
}

impl Outputs {
    /// Checks the paths: `dir` absent or a directory, `save_state` absent or
    /// a regular file in an existing directory.
    pub fn resolve(dir: PathBuf, save_state: Option<PathBuf>) -> Result<Outputs, InputError> {
        // The reason too: an I/O error's own message names only the path.
        let bad = |flag: &str, e: crate::output::OutputError| match std::error::Error::source(&e) {
            Some(why) => InputError(format!("{flag}: {e}: {why}")),
            None => InputError(format!("{flag}: {e}")),
        };
        transaction::check_dir_target(&dir).map_err(|e| bad("--out", e))?;
        if let Some(p) = &save_state {
            transaction::check_file_target(p).map_err(|e| bad("--save-state", e))?;
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            if parent.is_some_and(|d| !d.is_dir()) {
                return Err(InputError(format!(
                    "--save-state: {}: its directory does not exist",
                    p.display()
                )));
            }
        }
        Ok(Outputs { dir, save_state })
    }
}

/// The same file, by device and inode (a different spelling, a link).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

impl Outputs {
    /// Refuses a `--save-state` that is one of the run's inputs (`what`
    /// names each: `the stack`, a file the stack reads, `--trace`,
    /// `--init`): writing it would
    /// destroy the input, and the next run would fail on it.
    pub fn refuse_inputs(&self, inputs: &[(&str, &Path)]) -> Result<(), InputError> {
        let Some(state) = &self.save_state else {
            return Ok(());
        };
        match inputs.iter().find(|(_, p)| same_file(state, p)) {
            Some((what, p)) => Err(InputError(format!(
                "--save-state {}: is {what} ({}), an input of this run; choose another file",
                state.display(),
                p.display()
            ))),
            None => Ok(()),
        }
    }
}

/// The solver settings asked for, over the stack's `[solver]` table over
/// the defaults (multigrid).
#[derive(Clone, Debug, Default)]
pub struct SolverRequest {
    pub precond: Option<PrecondKind>,
    pub rtol: Option<f64>,
    pub max_iter: Option<usize>,
    pub degree: Option<usize>,
    pub nonlinear_tol: Option<f64>,
    pub anderson: Option<usize>,
    pub t_max: Option<f64>,
    /// `None`: each device's default.
    pub precision: Option<PrecisionMode>,
    /// Precision of the multigrid hierarchy; `None`: f64.
    pub mg_precision: Option<crate::linalg::mg::MgPrecision>,
}

/// What a `solve`, `transient` or `sweep` run asks for, before anything is
/// checked.
#[derive(Clone, Debug)]
pub struct PlanRequest<'a> {
    pub stack: &'a Path,
    /// In-plane cells overriding the file's `[grid]`.
    pub grid: Option<(usize, usize)>,
    pub device: DeviceChoice,
    pub solver: SolverRequest,
    pub out: PathBuf,
    pub save_state: Option<PathBuf>,
    pub block_map: Option<BlockMap>,
    pub kelvin: bool,
    pub vtk: bool,
    /// Plausibility warnings are errors.
    pub strict: bool,
    /// The caller plans its memory itself, in full (`thermal::memory_plan`),
    /// so the coarse host check and the power-density check (which
    /// rasterizes every file source) are left to it.
    pub memory_planned: bool,
    pub knobs: Knobs,
}

/// Everything a run needs, resolved and validated.
pub struct RunPlan {
    /// The stack, with its plausibility warnings (and the power-density
    /// ones, unless the caller plans its memory itself).
    pub stack: Stack,
    /// The stack's grid, built once here for every stage of the run.
    pub grid: Grid,
    /// The solver options on the device `device` intends; the device that
    /// opens may differ ([`RunPlan::solver_on`]).
    pub solver: SteadyOptions,
    /// The device asked for; [`super::open`] opens it.
    pub device: DeviceChoice,
    pub unit: TempUnit,
    pub block_map: BlockMap,
    pub vtk: bool,
    pub out: Outputs,
    pub strict: bool,
    /// The precision asked for (else each device's default).
    pub precision: Option<PrecisionMode>,
    /// The multigrid hierarchy's precision asked for (else the driver's
    /// default: f64, or `auto` for `cuth solve` on a GPU).
    pub mg_precision: Option<crate::linalg::mg::MgPrecision>,
    /// The environment's `CUTH_*` knobs, read by the caller.
    pub knobs: Knobs,
}

/// Chosen by measurement on the H200 (BENCHMARKS.md).
const DEFAULT_GPU_PRECISION: PrecisionMode = PrecisionMode::Mixed;

/// The precision asked for on `device`, or that device's default (the
/// CLI's, for bindings that open a device as it does).
pub fn precision_on(given: Option<PrecisionMode>, device: Device) -> PrecisionMode {
    given.unwrap_or(match device {
        Device::Cuda(_) => DEFAULT_GPU_PRECISION,
        Device::Cpu => PrecisionMode::F64,
    })
}

/// Host f64 values per cell a run keeps besides the solver's own vectors
/// (assembly, power maps, temperatures, outputs), checked before any of
/// them is allocated, whatever the device.
const HOST_VALUES_PER_CELL: u64 = 12;

/// Host f64 values per cell the outer iteration of a temperature-dependent
/// stack adds (iterates, leakage, the re-assembled system), and Anderson's
/// history of depth `m` (two differences per level, the last residual and
/// map value, the fallback iterate).
fn nonlinear_values_per_cell(m: u64) -> u64 {
    8 + if m > 0 { 2 * m + 4 } else { 0 }
}

impl RunPlan {
    pub fn resolve(req: PlanRequest) -> Result<RunPlan, PlanError> {
        check_solver(&req.solver)?;
        let out = Outputs::resolve(req.out, req.save_state)?;
        out.refuse_inputs(&[("the stack", req.stack)])?;
        if let Some(msg) = crate::import::suggest_import(req.stack) {
            return Err(InputError(msg).into());
        }
        let stack = Stack::load(req.stack)?;
        let mut stack = match req.grid {
            Some((nx, ny)) => stack.with_grid(nx, ny)?,
            None => stack,
        };
        refuse_read_files(&out, &stack)?;
        check_warnings(&stack.warnings, req.strict)?;
        let cells = stack.cells()?;
        let grid = Grid::from_stack(&stack);
        if !req.memory_planned {
            check_host_memory(cells, HOST_VALUES_PER_CELL, "use a coarser --grid")?;
            let dense = density_warnings(&stack, &grid)?;
            check_warnings(&dense, req.strict)?;
            stack.warnings.extend(dense);
        }
        let mut solver = solver_options(&stack, &req.solver);
        if stack.is_nonlinear() {
            let extra = nonlinear_values_per_cell(solver.nonlinear.anderson as u64);
            check_host_memory(cells, HOST_VALUES_PER_CELL + extra, "use a coarser --grid")?;
        }
        solver.precond_opts.precision = precision_on(req.solver.precision, req.device.intended());
        Ok(RunPlan {
            block_map: req.block_map.or(stack.block_map).unwrap_or_default(),
            stack,
            grid,
            solver,
            device: req.device,
            vtk: req.vtk,
            unit: if req.kelvin {
                TempUnit::Kelvin
            } else {
                TempUnit::Celsius
            },
            out,
            strict: req.strict,
            precision: req.solver.precision,
            mg_precision: req.solver.mg_precision,
            knobs: req.knobs,
        })
    }

    /// The solver options on `device`, the one that opened: they differ
    /// from [`RunPlan::solver`] only in the precision, when `auto` fell
    /// back to the CPU and no precision was asked for.
    pub fn solver_on(&self, device: Device) -> SteadyOptions {
        let mut opts = self.solver.clone();
        opts.precond_opts.precision = precision_on(self.precision, device);
        opts
    }

    /// What a steady solve's backend opens with, `staged` values of
    /// staging pinned.
    pub fn open_request(&self, staged: usize) -> OpenRequest<'_> {
        let precond = self.solver.precond;
        OpenRequest::steady(self.device, precond, staged, &self.knobs.cuda)
    }
}

/// A `--save-state` that is a file the stack reads is refused.
fn refuse_read_files(out: &Outputs, stack: &Stack) -> Result<(), InputError> {
    let read = stack.input_files();
    let named: Vec<(String, &Path)> = read
        .iter()
        .map(|(field, p)| (format!("the stack's {field}"), p.as_path()))
        .collect();
    out.refuse_inputs(
        &named
            .iter()
            .map(|(what, p)| (what.as_str(), *p))
            .collect::<Vec<_>>(),
    )
}

/// The command line over the stack's `[solver]` table over the defaults.
fn solver_options(stack: &Stack, req: &SolverRequest) -> SteadyOptions {
    let mut opts = SteadyOptions::from_stack(stack, PrecondKind::Multigrid);
    if let Some(p) = req.precond {
        opts.precond = p;
    }
    if let Some(r) = req.rtol {
        opts.rtol = r;
    }
    if let Some(m) = req.max_iter {
        opts.max_iter = m;
    }
    if let Some(d) = req.degree {
        opts.precond_opts.chebyshev_degree = d;
    }
    if let Some(p) = req.mg_precision {
        opts.precond_opts.mg.precision = p;
    }
    if let Some(t) = req.nonlinear_tol {
        opts.nonlinear.tol_k = t;
    }
    if let Some(t) = req.t_max {
        opts.nonlinear.t_max_k = t;
    }
    if let Some(m) = req.anderson {
        opts.nonlinear.anderson = m;
    }
    opts
}

/// Plausibility warnings are errors under `strict` (all of them, in one
/// message); otherwise the caller reports them (`Stack::warnings`).
pub fn check_warnings(warnings: &[String], strict: bool) -> Result<(), InputError> {
    match (warnings.is_empty(), strict) {
        (false, true) => Err(InputError(format!(
            "{} (--strict makes plausibility warnings errors)",
            warnings.join("\n")
        ))),
        _ => Ok(()),
    }
}

/// `--rtol`, `--max-iter`, `--degree`.
fn check_solver(run: &SolverRequest) -> Result<(), InputError> {
    if let Some(r) = run.rtol {
        if !(r > 0.0 && r < 1.0) {
            return Err(InputError(format!("--rtol must be in (0, 1), got {r}")));
        }
    }
    if run.max_iter == Some(0) {
        return Err(InputError("--max-iter must be at least 1".into()));
    }
    if let Some(d) = run.degree {
        if d == 0 || d > 64 {
            return Err(InputError(format!("--degree must be 1..=64, got {d}")));
        }
    }
    if let Some(t) = run.nonlinear_tol {
        if !(t.is_finite() && t > 0.0) {
            return Err(InputError(format!(
                "--nonlinear-tol must be a positive number of K, got {t}"
            )));
        }
    }
    if let Some(m) = run.anderson {
        let most = crate::thermal::nonlinear::anderson::MAX_DEPTH;
        if m > most {
            return Err(InputError(format!(
                "--anderson must be 0..={most}, got {m}"
            )));
        }
    }
    if let Some(t) = run.t_max {
        if !(t.is_finite() && t > 0.0) {
            return Err(InputError(format!(
                "--t-max must be a positive temperature in K, got {t}"
            )));
        }
    }
    Ok(())
}

/// Fails (exit 1) when `values_per_item` f64 for each of `items` do not fit
/// in the free host memory; the product is checked, never wrapped.
pub fn check_host_memory(
    items: usize,
    values_per_item: u64,
    advice: &str,
) -> Result<(), PlanError> {
    let needed = (items as u64)
        .checked_mul(values_per_item)
        .and_then(|v| v.checked_mul(8));
    let free = crate::backend::cpu::available_memory();
    match (needed, free) {
        (None, _) => Err(PlanError::Memory(format!(
            "the run needs more than 2^64 bytes of host memory ({items} items); {advice}"
        ))),
        (Some(n), Some(f)) if n > f => Err(PlanError::Memory(format!(
            "the run needs {n} bytes of host memory but only {f} are free ({items} items); {advice}"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_check_never_wraps() {
        assert!(check_host_memory(usize::MAX, 20, "x").is_err());
        assert!(check_host_memory(1, 1, "x").is_ok());
    }
}
