//! `cuth solve STACK`: steady state from a stack file to maps and a summary.

use super::device::{self, DeviceChoice, Resolved};
use anyhow::Context;
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, Backend};
use cuth::linalg::PrecondKind;
use cuth::output::{self, OutputOptions, SteadyView, TempUnit};
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions, SteadyOutcome};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct SolveArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// In-plane grid NXxNY, overriding the file's [grid] (e.g. 256x256).
    #[arg(long, value_parser = parse_grid, value_name = "NXxNY")]
    pub grid: Option<(usize, usize)>,
    /// Output directory [default: out/<stack name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where to solve.
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// Preconditioner [default: the stack's [solver] precond, else chebyshev].
    #[arg(long, value_enum)]
    pub precond: Option<PrecondKind>,
    /// Relative residual ‖b − Ax‖/‖b‖ to stop at [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Iteration cap; reaching it is an error [default: 20000].
    #[arg(long)]
    pub max_iter: Option<usize>,
    /// Chebyshev polynomial degree.
    #[arg(long)]
    pub degree: Option<usize>,
    /// Temperatures in kelvin in maps, CSV and table (default °C).
    #[arg(long)]
    pub kelvin: bool,
    /// Print nothing on success.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the 3D temperature field to FILE, for `cuth transient --init FILE`.
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<std::path::PathBuf>,
}

/// A command-line value that is wrong (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

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
    if args.max_iter == Some(0) {
        return Err(UsageError("--max-iter must be at least 1".into()));
    }
    if let Some(d) = args.degree {
        if d == 0 || d > 64 {
            return Err(UsageError(format!("--degree must be 1..=64, got {d}")));
        }
    }
    Ok(())
}

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    check_args(args)?;
    let mut stack = Stack::load(&args.stack)?;
    if let Some((nx, ny)) = args.grid {
        stack = stack.with_grid(nx, ny)?;
    }
    let mut opts = SteadyOptions::from_stack(&stack, PrecondKind::Chebyshev);
    if let Some(p) = args.precond {
        opts.precond = p;
    }
    if let Some(r) = args.rtol {
        opts.rtol = r;
    }
    if let Some(m) = args.max_iter {
        opts.max_iter = m;
    }
    if let Some(d) = args.degree {
        opts.precond_opts.chebyshev_degree = d;
    }
    let quiet = args.quiet;
    let device = device::resolve(args.device, &mut |line| {
        if !quiet {
            eprintln!("{line}");
        }
    })?;
    let read_s = t0.elapsed().as_secs_f64();
    let mut outcome = match device {
        Resolved::Cpu => solve_on(&CpuBackend::new(), &stack, &opts)?,
        Resolved::Cuda => solve_on(&CudaBackend::new(0)?, &stack, &opts)?,
    };
    outcome.summary.timings_s.insert(0, ("read".into(), read_s));

    let out_dir = args.out.clone().unwrap_or_else(|| default_out(&args.stack));
    let unit = if args.kelvin {
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
    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !quiet {
        output::print_table(&outcome.summary, unit);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

fn solve_on<B: Backend + 'static>(
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
