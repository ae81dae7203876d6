//! The resolve step (ripgrep's low args → high args): what the user typed is
//! turned once, before any work, into a [`RunPlan`]: the stack with its grid,
//! the solver options with the precision, the device asked for, the
//! temperature unit and the output paths, each validated here. A command then
//! only executes its plan. Input faults found here are [`InputError`]s
//! (exit code 2).

use super::common::{DeviceChoice, RunArgs};
use cuth::error::InputError;
use cuth::linalg::PrecisionMode;
use cuth::output::{transaction, TempUnit};
use cuth::power::density::density_warnings;
use cuth::run::Device;
use cuth::stack::Stack;
use cuth::thermal::steady::SteadyOptions;
use std::path::{Path, PathBuf};

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
        let bad = |flag: &str, e: cuth::output::OutputError| match std::error::Error::source(&e) {
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

/// Everything a `solve` or `transient` run needs, resolved and validated.
pub struct RunPlan {
    pub stack: Stack,
    /// The solver options on the device `device` intends; the device that
    /// opens may differ ([`RunPlan::solver_on`]).
    pub solver: SteadyOptions,
    /// The device asked for; [`cuth::run::open`] opens it.
    pub device: DeviceChoice,
    pub unit: TempUnit,
    /// What `blocks.steady` reports (`--block-map`).
    pub block_map: cuth::output::blocks::BlockMap,
    /// Write the 3D field as VTK (`--vtk`).
    pub vtk: bool,
    pub out: Outputs,
    pub quiet: bool,
    /// Plausibility warnings are errors (`--strict`).
    pub strict: bool,
    pub json: bool,
    pub verbose: bool,
    /// `--precision` as given (else each device's default).
    pub precision: Option<PrecisionMode>,
    /// The environment's `CUTH_*` knobs, read when the plan was made.
    pub knobs: cuth::knobs::Knobs,
}

/// The options of `solve` and `transient` beside [`RunArgs`].
pub struct Typed<'a> {
    pub stack: &'a Path,
    pub rtol: Option<f64>,
    pub precision: Option<PrecisionMode>,
    pub out: Option<PathBuf>,
    pub default_out: PathBuf,
    pub save_state: Option<PathBuf>,
    /// The command plans its memory itself, in full (`thermal::memory_plan`,
    /// `solve`), so the coarse host check here is skipped.
    pub memory_planned: bool,
}

/// Plausibility warnings: errors with `--strict` (exit 2), else one
/// `cuth: warning:` line each on stderr (not with `--quiet`; `summary.json`
/// lists them either way).
/// Power densities of file-based sources, known once the files are read
/// (which rasterizes every such layer: after the memory check).
/// Returns the warnings, for the summary to list after the stack's own.
pub fn power_density(stack: &Stack, strict: bool, quiet: bool) -> anyhow::Result<Vec<String>> {
    let dense = density_warnings(stack, &cuth::grid::Grid::from_stack(stack))?;
    report_warnings(&dense, strict, quiet)?;
    Ok(dense)
}

/// [`power_density`] from the layers' power already rasterized on `grid`.
pub fn power_density_of(
    stack: &Stack,
    grid: &cuth::grid::Grid,
    power: &[cuth::power::LayerPower],
    strict: bool,
    quiet: bool,
) -> anyhow::Result<Vec<String>> {
    let dense = cuth::power::density::density_warnings_of(stack, grid, power);
    report_warnings(&dense, strict, quiet)?;
    Ok(dense)
}

fn report_warnings(warnings: &[String], strict: bool, quiet: bool) -> Result<(), InputError> {
    if warnings.is_empty() {
        return Ok(());
    }
    if strict {
        return Err(InputError(format!(
            "{} (--strict makes plausibility warnings errors)",
            warnings.join("\n")
        )));
    }
    if !quiet {
        for w in warnings {
            eprintln!("cuth: warning: {w}");
        }
    }
    Ok(())
}

/// Chosen by measurement on the H200 (BENCHMARKS.md).
const DEFAULT_GPU_PRECISION: PrecisionMode = PrecisionMode::Mixed;

/// The precision of `--precision` on `device`, or that device's default.
fn precision_on(given: Option<PrecisionMode>, device: Device) -> PrecisionMode {
    given.unwrap_or(match device {
        Device::Cuda(_) => DEFAULT_GPU_PRECISION,
        Device::Cpu => PrecisionMode::F64,
    })
}

impl RunPlan {
    /// The solver options on `device`, the one that opened: they differ
    /// from [`RunPlan::solver`] only in the precision, when `auto` fell
    /// back to the CPU and `--precision` was not given.
    pub fn solver_on(&self, device: Device) -> SteadyOptions {
        let mut opts = self.solver.clone();
        opts.precond_opts.precision = precision_on(self.precision, device);
        opts
    }

    /// What a steady solve's backend opens with, `staged` values of
    /// staging pinned.
    pub fn open_request(&self, staged: usize) -> cuth::run::OpenRequest<'_> {
        let precond = self.solver.precond;
        cuth::run::OpenRequest::steady(self.device, precond, staged, &self.knobs.cuda)
    }
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
    pub fn resolve(run: &RunArgs, typed: Typed) -> anyhow::Result<RunPlan> {
        let knobs = super::device::knobs()?;
        check_solver_flags(run, typed.rtol)?;
        let out = Outputs::resolve(typed.out.unwrap_or(typed.default_out), typed.save_state)?;
        out.refuse_inputs(&[("the stack", typed.stack)])?;
        let stack = run.load_stack(typed.stack)?;
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
        )?;
        report_warnings(&stack.warnings, run.strict, run.quiet)?;
        let cells = stack.cells()?;
        let mut stack = stack;
        if !typed.memory_planned {
            check_host_memory(cells, HOST_VALUES_PER_CELL, "use a coarser --grid")?;
            let dense = power_density(&stack, run.strict, run.quiet)?;
            stack.warnings.extend(dense);
        }
        let mut solver = run.solver_options(&stack, typed.rtol);
        if stack.is_nonlinear() {
            let extra = nonlinear_values_per_cell(solver.nonlinear.anderson as u64);
            check_host_memory(cells, HOST_VALUES_PER_CELL + extra, "use a coarser --grid")?;
        }
        solver.precond_opts.precision = precision_on(typed.precision, run.device.intended());
        Ok(RunPlan {
            block_map: run.block_map.or(stack.block_map).unwrap_or_default(),
            stack,
            solver,
            device: run.device,
            vtk: run.vtk,
            unit: if run.kelvin {
                TempUnit::Kelvin
            } else {
                TempUnit::Celsius
            },
            out,
            quiet: run.quiet,
            strict: run.strict,
            json: run.json,
            verbose: run.verbose,
            precision: typed.precision,
            knobs,
        })
    }
}

/// `--rtol`, `--max-iter`, `--degree`.
fn check_solver_flags(run: &RunArgs, rtol: Option<f64>) -> Result<(), InputError> {
    if let Some(r) = rtol {
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
        let most = cuth::thermal::nonlinear::anderson::MAX_DEPTH;
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
pub fn check_host_memory(items: usize, values_per_item: u64, advice: &str) -> anyhow::Result<()> {
    let needed = (items as u64)
        .checked_mul(values_per_item)
        .and_then(|v| v.checked_mul(8));
    let free = cuth::backend::cpu::available_memory();
    match (needed, free) {
        (None, _) => anyhow::bail!(
            "the run needs more than 2^64 bytes of host memory ({items} items); {advice}"
        ),
        (Some(n), Some(f)) if n > f => anyhow::bail!(
            "the run needs {n} bytes of host memory but only {f} are free ({items} items); {advice}"
        ),
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
