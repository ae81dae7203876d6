//! `cuth transient STACK --dt S (--steps N | --t-end S)`: backward-Euler
//! simulation under constant power or a power trace, to a time series, a
//! plot, final maps (as `solve`), optional snapshots and a summary.

use super::common::RunArgs;
use super::device::{self, Resolved};
use super::solve::UsageError;
use anyhow::Context;
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, ChebyshevBackend};
use cuth::grid::Grid;
use cuth::output::{OutputOptions, SteadyView, TempUnit, TransientWriter};
use cuth::power::schedule::PowerSchedule;
use cuth::power::trace::read_time_trace;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::transient::state::{encode_state, read_state};
use cuth::thermal::transient::{
    run_transient, InitState, StepView, TransientOptions, TransientOutcome,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct TransientArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// Time step, seconds.
    #[arg(long, value_name = "SECONDS")]
    pub dt: f64,
    /// Number of steps.
    #[arg(long, conflicts_with = "t_end", required_unless_present = "t_end")]
    pub steps: Option<usize>,
    /// Simulated time, seconds (rounded up to whole steps).
    #[arg(long, value_name = "SECONDS")]
    pub t_end: Option<f64>,
    /// Power trace: HotSpot .ptrace (rows --sample-interval apart) or CSV with
    /// a `time` column; columns name blocks of the stack's layers.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Seconds between .ptrace rows [default: --dt, one row per step].
    #[arg(long, value_name = "SECONDS")]
    pub sample_interval: Option<f64>,
    /// Initial state: `ambient`, `steady` (for the first step's power) or a
    /// file written by --save-state.
    #[arg(long, default_value = "ambient", value_name = "ambient|steady|FILE")]
    pub init: String,
    /// Write the final 3D field to FILE (see README: state files).
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<PathBuf>,
    /// Also write maps every K steps under snapshots/step_NNNNN/.
    #[arg(long, value_name = "K")]
    pub snapshot_every: Option<usize>,
    /// Skip the final maps and snapshots (time series, plot and summary only;
    /// for benchmarks and batch runs on large grids).
    #[arg(long, conflicts_with = "snapshot_every")]
    pub no_maps: bool,
    /// Output directory [default: out/<stack name>-transient].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Per step, stop at ‖b − Ax‖ ≤ rtol·‖P‖ (power per cell) [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Grid, device, solver and printing, shared with `solve`/`transient`.
    #[command(flatten)]
    pub run: RunArgs,
}

fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// Number of steps from --steps or --t-end.
fn step_count(args: &TransientArgs) -> anyhow::Result<usize> {
    if !(args.dt.is_finite() && args.dt > 0.0) {
        return Err(usage(format!(
            "--dt must be a positive number of seconds, got {}",
            args.dt
        )));
    }
    let steps = match (args.steps, args.t_end) {
        (Some(n), None) => n,
        (None, Some(t)) if t.is_finite() && t > 0.0 => {
            (t / args.dt * (1.0 - 1e-12)).ceil() as usize
        }
        (None, Some(t)) => return Err(usage(format!("--t-end must be > 0 s, got {t}"))),
        _ => return Err(usage("give exactly one of --steps and --t-end".into())),
    };
    if steps == 0 {
        return Err(usage("--steps must be at least 1".into()));
    }
    if let Some(r) = args.rtol {
        if !(r > 0.0 && r < 1.0) {
            return Err(usage(format!("--rtol must be in (0, 1), got {r}")));
        }
    }
    if args.run.max_iter == Some(0) {
        return Err(usage("--max-iter must be at least 1".into()));
    }
    if let Some(d) = args.run.degree {
        if d == 0 || d > 64 {
            return Err(usage(format!("--degree must be 1..=64, got {d}")));
        }
    }
    if args.snapshot_every == Some(0) {
        return Err(usage("--snapshot-every must be at least 1".into()));
    }
    if args.sample_interval.is_some() && args.trace.is_none() {
        return Err(usage("--sample-interval needs --trace".into()));
    }
    Ok(steps)
}

pub fn run(args: &TransientArgs) -> anyhow::Result<()> {
    let steps = step_count(args)?;
    let stack = args.run.load_stack(&args.stack)?;
    let solver = args.run.solver_options(&stack, args.rtol);
    // Inputs first (all exit 2 on error), before any device work.
    let grid = Grid::from_stack(&stack);
    let base = (0..stack.layers.len())
        .map(|l| layer_power(&stack, &grid, l))
        .collect::<Result<Vec<LayerPower>, _>>()?;
    let schedule = match &args.trace {
        None => PowerSchedule::constant(base),
        Some(path) => {
            let trace = read_time_trace(path, args.sample_interval, args.dt)?;
            PowerSchedule::with_trace(&stack, &grid, base, trace)?
        }
    };
    let init = match args.init.as_str() {
        "ambient" => InitState::Ambient,
        "steady" => InitState::Steady,
        file => InitState::Field(read_state(Path::new(file), &grid)?),
    };
    let opts = TransientOptions {
        solver,
        dt: args.dt,
        steps,
        init,
        snapshot_every: args.snapshot_every,
    };

    let quiet = args.run.quiet;
    let device = device::resolve(args.run.device, &mut |line| {
        if !quiet {
            eprintln!("{line}");
        }
    })?;
    let out_dir = args.out.clone().unwrap_or_else(|| default_out(&args.stack));
    let unit = if args.run.kelvin {
        TempUnit::Kelvin
    } else {
        TempUnit::Celsius
    };
    let out_opts = OutputOptions { unit };
    let writer = TransientWriter::new(&out_dir)
        .with_context(|| format!("preparing {}", out_dir.display()))?;
    let bar = progress(steps, quiet);
    let mut observer = |v: &StepView| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        bar.inc(1);
        if let Some((summary, power)) = &v.snapshot {
            let view = SteadyView {
                stack: &stack,
                grid: &grid,
                temperature_k: v.temperature_k,
                power,
                summary,
            };
            writer.snapshot(v.record.step, &view, &out_opts)?;
        }
        Ok(())
    };
    let outcome = match device {
        Resolved::Cpu => run_on(&CpuBackend::new(), &stack, &schedule, &opts, &mut observer),
        Resolved::Cuda => run_on(
            &CudaBackend::new(0)?,
            &stack,
            &schedule,
            &opts,
            &mut observer,
        ),
    };
    bar.finish_and_clear();
    let outcome = outcome?;

    let view = SteadyView {
        stack: &stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        power: &outcome.power,
        summary: &outcome.final_summary,
    };
    if let Some(path) = &args.save_state {
        write_atomic(path, &encode_state(&outcome.grid, &outcome.temperature_k))
            .with_context(|| format!("writing the state file {}", path.display()))?;
    }
    writer
        .commit(
            &view,
            &outcome.records,
            &outcome.block_names,
            &outcome.summary,
            &out_opts,
            !args.no_maps,
        )
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !quiet {
        print_summary(&outcome, unit);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

fn run_on<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
    observer: &mut cuth::thermal::transient::Observer,
) -> anyhow::Result<TransientOutcome> {
    Ok(run_transient(be, stack, schedule, opts, observer)?)
}

/// A step counter on stderr; hidden with --quiet or when stderr is not a terminal.
fn progress(steps: usize, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} step {pos}/{len}  {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    bar
}

/// Writes `path` through a temporary next to it, so it is never half-written.
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    std::fs::rename(&tmp, path)
}

fn print_summary(o: &TransientOutcome, unit: TempUnit) {
    let s = &o.summary;
    let t = |k: f64| format!("{:.2} {}", unit.convert_k(k), unit.symbol());
    println!(
        "{} steps of {:e} s to t = {:e} s on {} ({}), init {}",
        s.steps, s.dt_s, s.t_end_s, s.device.backend, s.device.name, s.init
    );
    println!(
        "PCG ({}): {:.1} iterations/step (max {}), {:.3e} s/step solve, {:.3e} s/step wall",
        s.precond.name,
        s.iterations_per_step_mean,
        s.iterations_per_step_max,
        s.solve_s_per_step,
        s.wall_s_per_step
    );
    println!(
        "energy: in {:.4e} J, out {:.4e} J, stored {:.4e} J, worst step imbalance {:.1e}",
        s.energy.energy_in_j,
        s.energy.heat_out_j,
        s.energy.stored_j,
        s.energy.max_step_relative_imbalance
    );
    println!("peak {} at t = {:e} s", t(s.peak_t_k), s.peak_time_s);
    println!("{:<24} {:>12} {:>12}", "layer (final)", "max", "avg");
    for l in &s.layers {
        println!("{:<24} {:>12} {:>12}", l.name, t(l.t_max_k), t(l.t_avg_k));
    }
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(format!(
        "{}-transient",
        stem.unwrap_or_else(|| "cuth".into())
    ))
}
