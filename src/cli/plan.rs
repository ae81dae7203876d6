//! The command line's side of the resolve step: `solve`, `transient` and
//! `sweep` turn their flags into a [`cuth::run::PlanRequest`], the library
//! resolves it into a [`cuth::run::RunPlan`], and this prints the stack's
//! plausibility warnings and keeps how the command prints ([`Run`]).

use super::common::RunArgs;
use cuth::linalg::PrecisionMode;
use cuth::run::{check_warnings, PlanRequest, RunPlan, SolverRequest};
use cuth::stack::Stack;
use std::path::{Path, PathBuf};

pub use cuth::run::{check_host_memory, Outputs};

/// A resolved plan with how the command prints.
pub struct Run {
    pub plan: RunPlan,
    pub quiet: bool,
    pub json: bool,
    pub verbose: bool,
}

impl std::ops::Deref for Run {
    type Target = RunPlan;
    fn deref(&self) -> &RunPlan {
        &self.plan
    }
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

impl Run {
    /// The plan of `run` and `typed`; the stack's plausibility warnings go
    /// to stderr, one `cuth: warning:` line each, unless `--quiet`
    /// (`summary.json` lists them either way; `--strict` made them errors).
    pub fn resolve(run: &RunArgs, typed: Typed) -> anyhow::Result<Run> {
        let knobs = super::device::knobs()?;
        let plan = RunPlan::resolve(PlanRequest {
            stack: typed.stack,
            grid: run.grid,
            device: run.device,
            solver: SolverRequest {
                precond: run.precond,
                rtol: typed.rtol,
                max_iter: run.max_iter,
                degree: run.degree,
                nonlinear_tol: run.nonlinear_tol,
                anderson: run.anderson,
                t_max: run.t_max,
                precision: typed.precision,
                mg_precision: run.mg_precision,
            },
            out: typed.out.unwrap_or(typed.default_out),
            save_state: typed.save_state,
            block_map: run.block_map,
            kelvin: run.kelvin,
            vtk: run.vtk,
            strict: run.strict,
            memory_planned: typed.memory_planned,
            knobs,
        })?;
        print_warnings(&plan.stack.warnings, run.quiet);
        Ok(Run {
            plan,
            quiet: run.quiet,
            json: run.json,
            verbose: run.verbose,
        })
    }
}

fn print_warnings(warnings: &[String], quiet: bool) {
    if !quiet {
        for w in warnings {
            eprintln!("cuth: warning: {w}");
        }
    }
}

/// Power densities of file-based sources, known once the files are read
/// (which rasterizes every such layer: after the memory check). Errors
/// with `--strict`, else printed; returned for the summary to list after
/// the stack's own.
pub fn power_density(
    stack: &Stack,
    grid: &cuth::grid::Grid,
    strict: bool,
    quiet: bool,
) -> anyhow::Result<Vec<String>> {
    let dense = cuth::power::density::density_warnings(stack, grid)?;
    check_warnings(&dense, strict)?;
    print_warnings(&dense, quiet);
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
    check_warnings(&dense, strict)?;
    print_warnings(&dense, quiet);
    Ok(dense)
}
