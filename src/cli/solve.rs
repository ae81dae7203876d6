//! `cuth solve STACK`: steady state from a stack file to maps and a summary.

use super::common::RunArgs;
use super::plan::{Device, RunPlan, Typed};
use super::progress::SolveProgress;
use anyhow::Context;
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, ChebyshevBackend};
use cuth::linalg::PrecisionMode;
use cuth::output::{self, OutputOptions, Owned, SteadyView, Transaction};
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

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let plan = RunPlan::resolve(
        &args.run,
        Typed {
            stack: &args.stack,
            rtol: args.rtol,
            precision: args.precision,
            out: args.out.clone(),
            default_out: default_out(&args.stack),
            save_state: args.save_state.clone(),
        },
    )?;
    let (stack, opts) = (&plan.stack, &plan.solver);
    let read_s = t0.elapsed().as_secs_f64();
    // On a terminal, a solve longer than a second shows PCG's progress.
    let progress = SolveProgress::start(!plan.quiet && !plan.json);
    let mut outcome = match plan.device {
        Device::Cpu => solve_on(&CpuBackend::new(), stack, opts)?,
        Device::Cuda(n) => solve_on(&CudaBackend::new(n)?, stack, opts)?,
    };
    drop(progress);
    outcome.summary.timings_s.insert(0, ("read".into(), read_s));

    let out_dir = &plan.out.dir;
    let unit = plan.unit;
    let view = SteadyView {
        stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        power: &outcome.power,
        summary: &outcome.summary,
    };
    // One transaction: the maps and the state file land together or not at all.
    let opts = OutputOptions {
        unit,
        block_map: plan.block_map,
        vtk: plan.vtk,
    };
    let files = output::render_steady(out_dir, &view, &opts)?;
    let mut txn = Transaction::begin(out_dir, Owned::Thermal)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    for f in &files {
        txn.write(Path::new(&f.name), &f.bytes)?;
    }
    if let Some(path) = &plan.out.save_state {
        let bytes =
            cuth::thermal::transient::state::encode_state(&outcome.grid, &outcome.temperature_k);
        txn.stage_external(path, &bytes)
            .with_context(|| format!("writing the state file {}", path.display()))?;
    }
    txn.commit()
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if plan.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !plan.quiet {
        output::print_table(&outcome.summary, unit, plan.verbose);
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
