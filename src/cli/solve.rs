//! `cuth solve STACK`: steady state from a stack file to maps and a summary.

use super::common::RunArgs;
use super::device::{self, Resolved};
use anyhow::Context;
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, ChebyshevBackend};
use cuth::linalg::PrecisionMode;
use cuth::output::{self, OutputOptions, SteadyView, TempUnit};
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions, SteadyOutcome};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct SolveArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// Output directory [default: out/<stack name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Relative residual ‖b − Ax‖/‖b‖ to stop at [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Precision of the Chebyshev preconditioner; the outer PCG, its residual
    /// and the stopping test stay f64 [default: mixed on a GPU, f64 on the CPU].
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionMode>,
    /// Also write the 3D temperature field to FILE, for `cuth transient --init FILE`.
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<std::path::PathBuf>,
    /// Grid, device, solver and printing, shared with `solve`/`transient`.
    #[command(flatten)]
    pub run: RunArgs,
}

/// A command-line value that is wrong (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Chosen by measurement on the H200 (BENCHMARKS.md, issue #6).
const DEFAULT_GPU_PRECISION: PrecisionMode = PrecisionMode::Mixed;

pub(super) fn parse_grid(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not NXxNY (e.g. 256x256)"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{s}` is not NXxNY (e.g. 256x256)"))
    };
    Ok((p(a)?, p(b)?))
}

fn check_args(args: &SolveArgs) -> Result<(), UsageError> {
    if let Some(r) = args.rtol {
        if !(r > 0.0 && r < 1.0) {
            return Err(UsageError(format!("--rtol must be in (0, 1), got {r}")));
        }
    }
    if args.run.max_iter == Some(0) {
        return Err(UsageError("--max-iter must be at least 1".into()));
    }
    if let Some(d) = args.run.degree {
        if d == 0 || d > 64 {
            return Err(UsageError(format!("--degree must be 1..=64, got {d}")));
        }
    }
    Ok(())
}

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    check_args(args)?;
    let stack = args.run.load_stack(&args.stack)?;
    let mut opts = args.run.solver_options(&stack, args.rtol);
    let quiet = args.run.quiet;
    let device = device::resolve(args.run.device, &mut |line| {
        if !quiet {
            eprintln!("{line}");
        }
    })?;
    opts.precond_opts.precision = args.precision.unwrap_or(match device {
        Resolved::Cuda => DEFAULT_GPU_PRECISION,
        Resolved::Cpu => PrecisionMode::F64,
    });
    let read_s = t0.elapsed().as_secs_f64();
    let mut outcome = match device {
        Resolved::Cpu => solve_on(&CpuBackend::new(), &stack, &opts)?,
        Resolved::Cuda => solve_on(&CudaBackend::new(0)?, &stack, &opts)?,
    };
    outcome.summary.timings_s.insert(0, ("read".into(), read_s));

    let out_dir = args.out.clone().unwrap_or_else(|| default_out(&args.stack));
    let unit = if args.run.kelvin {
        TempUnit::Kelvin
    } else {
        TempUnit::Celsius
    };
    let view = SteadyView {
        stack: &stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        power: &outcome.power,
        summary: &outcome.summary,
    };
    output::write_steady(&out_dir, &view, &OutputOptions { unit })
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if let Some(path) = &args.save_state {
        let bytes =
            cuth::thermal::transient::state::encode_state(&outcome.grid, &outcome.temperature_k);
        super::transient::write_atomic(path, &bytes)
            .with_context(|| format!("writing the state file {}", path.display()))?;
    }
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !quiet {
        output::print_table(&outcome.summary, unit);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

fn solve_on<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> anyhow::Result<SteadyOutcome> {
    Ok(solve_steady(be, stack, opts)?)
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(stem.unwrap_or_else(|| "cuth".into()))
}
