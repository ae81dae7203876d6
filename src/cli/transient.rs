//! `cuth transient STACK --dt S (--steps N | --t-end S)`: backward-Euler
//! or TR-BDF2 (fixed or adaptive steps) simulation under constant power or a power trace, to a time series, a
//! plot, final maps (as `solve`), optional snapshots and a summary.

use super::common::RunArgs;
use super::plan::{check_host_memory, Run, Typed};
use anyhow::Context;
use cuth::error::InputError;
use cuth::formats::trace::read_time_trace;
use cuth::grid::Grid;
use cuth::output::{self, hotspot, OutputOptions, SteadyView, TempUnit, TransientWriter};
use cuth::power::schedule::PowerSchedule;
use cuth::power::{layer_power, LayerPower};
use cuth::run::{Backends, DeviceProbe, OpenRequest};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::transient::state::{encode_state, read_state};
use cuth::thermal::transient::{
    run_transient, InitState, Scheme, StepField, StepView, Stepping, TransientOptions,
    TransientOutcome,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("duration").required(true).args(["steps", "t_end"])))]
pub struct TransientArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// Time step, seconds [required].
    #[arg(long, value_name = "SECONDS")]
    pub dt: f64,
    /// Number of steps [required: this or --t-end].
    #[arg(long)]
    pub steps: Option<usize>,
    /// Simulated time, seconds, rounded up to whole steps [required: this or
    /// --steps].
    #[arg(long, value_name = "SECONDS")]
    pub t_end: Option<f64>,
    /// Power trace: HotSpot .ptrace (rows --sample-interval apart) or CSV with
    /// a `time` column; columns name blocks of the stack's layers, W
    /// [default: none: the stack's own power, constant].
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Seconds between .ptrace rows [default: --dt, one row per step].
    #[arg(long, value_name = "SECONDS")]
    pub sample_interval: Option<f64>,
    /// Initial state: `ambient`, `steady` (for the first step's power),
    /// `steady-mean` (for the trace's mean power, as HotSpot's flow starts)
    /// or a file written by --save-state [default: ambient; with a trace,
    /// stderr says so and names steady-mean, HotSpot's start].
    #[arg(long, value_name = "ambient|steady|steady-mean|FILE")]
    pub init: Option<String>,
    /// Write the final 3D field to FILE, K (the book's transient chapter:
    /// state files) [default: not written].
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<PathBuf>,
    /// Also write maps every K steps under snapshots/step_NNNNN/ [default:
    /// no snapshots].
    #[arg(long, value_name = "K")]
    pub snapshot_every: Option<usize>,
    /// Skip the final maps and snapshots (time series, plot and summary only;
    /// for benchmarks and batch runs on large grids).
    #[arg(long, conflicts_with = "snapshot_every")]
    pub no_maps: bool,
    /// Output directory [default: out/<stack name>-transient].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Temperature-dependent stacks: solve each step up to N times, with k,
    /// c and the leakage at the last iterate, until max |ΔT| ≤
    /// --nonlinear-tol (fully implicit; not converged in N is an error,
    /// exit 1). 0 = semi-implicit: once, at the previous step's temperature.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub nonlinear_iterations: usize,
    /// Time stepping: `be` (backward Euler, first order, one solve a step)
    /// or `trbdf2` (TR-BDF2: second order, L-stable, two solves a step
    /// with one matrix, and an error estimate for --time-tol).
    #[arg(long, value_enum, default_value_t = Scheme::BackwardEuler)]
    pub scheme: Scheme,
    /// Adaptive steps (needs --scheme trbdf2): the largest local error
    /// estimate a step may have, K. Steps halve and grow between --dt (the
    /// first and largest) and --dt/2^30, landing on every trace row and
    /// every multiple of --dt, where the records are written [default:
    /// none: every step is --dt].
    #[arg(long, value_name = "K")]
    pub time_tol: Option<f64>,
    /// Per step, stop at ‖b − Ax‖ ≤ rtol·‖P‖ (power per cell) [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Grid, device, solver and printing, shared with `solve`/`transient`.
    #[command(flatten)]
    pub run: RunArgs,
}

fn usage(msg: String) -> anyhow::Error {
    InputError(msg).into()
}

/// Accepted `--dt`, `--t-end` and `--sample-interval`, seconds: outside,
/// C/Δt over- or underflows against the conductances (docs/src/reliability.md: input limits).
const TIME_RANGE: (f64, f64) = (1e-12, 1e9);
/// Most solves of one step (`--nonlinear-iterations`).
const MAX_NONLINEAR_ITERATIONS: usize = 1000;
/// Most steps of one run (`--steps`, or `--t-end / --dt`).
pub const MAX_STEPS: usize = 100_000_000;

fn check_time(flag: &str, v: f64) -> anyhow::Result<()> {
    if !(v.is_finite() && v >= TIME_RANGE.0 && v <= TIME_RANGE.1) {
        return Err(usage(format!(
            "{flag} must be between {:e} and {:e} s, got {v:e}",
            TIME_RANGE.0, TIME_RANGE.1
        )));
    }
    Ok(())
}

/// Number of steps from --steps or --t-end, in checked arithmetic.
fn step_count(args: &TransientArgs) -> anyhow::Result<usize> {
    check_time("--dt", args.dt)?;
    let steps = match (args.steps, args.t_end) {
        (Some(n), None) => n,
        (None, Some(t)) => {
            check_time("--t-end", t)?;
            let n = (t / args.dt * (1.0 - 1e-12)).ceil();
            if n > MAX_STEPS as f64 {
                return Err(usage(format!(
                    "--t-end {t:e} s / --dt {:e} s is {n:e} steps, more than {MAX_STEPS}",
                    args.dt
                )));
            }
            n as usize
        }
        _ => return Err(usage("give exactly one of --steps and --t-end".into())),
    };
    if steps == 0 || steps > MAX_STEPS {
        return Err(usage(format!(
            "--steps must be between 1 and {MAX_STEPS}, got {steps}"
        )));
    }
    if let Some(s) = args.sample_interval {
        check_time("--sample-interval", s)?;
    }
    if args.nonlinear_iterations > MAX_NONLINEAR_ITERATIONS {
        return Err(usage(format!(
            "--nonlinear-iterations must be 0..={MAX_NONLINEAR_ITERATIONS}, got {}",
            args.nonlinear_iterations
        )));
    }
    if args.snapshot_every == Some(0) {
        return Err(usage("--snapshot-every must be at least 1".into()));
    }
    if let Some(tol) = args.time_tol {
        if !(tol.is_finite() && tol > 0.0) {
            return Err(usage(format!(
                "--time-tol must be a positive number of kelvin, got {tol:e}"
            )));
        }
        if args.scheme != Scheme::TrBdf2 {
            return Err(usage(
                "--time-tol needs --scheme trbdf2 (backward Euler has no error estimate)".into(),
            ));
        }
    }
    if args.sample_interval.is_some() && args.trace.is_none() {
        return Err(usage("--sample-interval needs --trace".into()));
    }
    Ok(steps)
}

/// The stack's power, driven by `--trace` where given (the trace's format
/// said on stderr unless `quiet`).
fn power_schedule(
    args: &TransientArgs,
    stack: &Stack,
    grid: &Grid,
    quiet: bool,
) -> anyhow::Result<PowerSchedule> {
    let base = (0..stack.layers.len())
        .map(|l| layer_power(stack, grid, l))
        .collect::<Result<Vec<LayerPower>, _>>()?;
    Ok(match &args.trace {
        None => PowerSchedule::constant(base),
        Some(path) => {
            let trace = read_time_trace(path, args.sample_interval, args.dt)?;
            if !quiet {
                // The format comes from the content: say which it was.
                eprintln!(
                    "cuth: --trace {}: read as {}, {} blocks, {} rows",
                    path.display(),
                    trace.format().describe(),
                    trace.names.len(),
                    trace.rows.len()
                );
            }
            PowerSchedule::with_trace(stack, grid, base, trace)?
        }
    })
}

pub fn run(args: &TransientArgs) -> anyhow::Result<()> {
    let steps = step_count(args)?;
    let probe = DeviceProbe::start(args.run.device);
    let plan = Run::resolve(
        &args.run,
        Typed {
            stack: &args.stack,
            rtol: args.rtol,
            precision: None,
            out: args.out.clone(),
            default_out: default_out(&args.stack),
            save_state: args.save_state.clone(),
            memory_planned: false,
        },
    )?;
    let init_arg = args.init.as_deref().unwrap_or("ambient");
    refuse_inputs(args, init_arg, &plan)?;
    let stack = &plan.stack;
    // One record per step: per-layer max and mean, per-block max, ~200 bytes.
    let per_step = 2 * stack.layers.len() as u64 + 32;
    check_host_memory(steps, per_step, "use fewer --steps or a larger --dt")?;
    // Inputs first (all exit 2 on error), before any device work.
    let grid = &plan.grid;
    let schedule = power_schedule(args, stack, grid, plan.quiet)?;
    let init = init_state(args, init_arg, grid, plan.quiet)?;
    // Inputs read, the device opens (kernel families load on first use).
    let opened = cuth::run::open(&OpenRequest::core(plan.device, &plan.knobs.cuda), probe)?;
    if let (Some(why), false) = (&opened.fallback, plan.quiet) {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let mut solver = plan.solver_on(opened.device);
    solver.nonlinear.transient_iterations = args.nonlinear_iterations;
    let mut opts = TransientOptions {
        solver,
        dt: args.dt,
        steps,
        init,
        snapshot_every: args.snapshot_every,
        stepping: Stepping {
            scheme: args.scheme,
            time_tol_k: args.time_tol,
        },
        step_field: StepField::Needed,
    };

    let quiet = plan.quiet;
    let out_dir = &plan.out.dir;
    let unit = plan.unit;
    let out_opts = output_options(&plan, args.run.hotspot_outputs);
    let mut writer = TransientWriter::new(out_dir)
        .with_context(|| format!("preparing {}", out_dir.display()))?;
    let mut hs_trace = hotspot_trace(&writer, &out_opts, stack, grid, &schedule)?;
    // A HotSpot trace writes every step's field; else only the snapshots
    // and the final maps read it.
    if hs_trace.is_some() {
        opts.step_field = StepField::Every;
    }
    let bar = progress(steps, quiet);
    let mut observer = |v: &StepView| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        bar.inc(1);
        if let Some(h) = hs_trace.as_mut() {
            let t = v
                .temperature_k
                .ok_or("the HotSpot trace needs every field")?;
            h.step(grid, v.record.time_s, t, v.record.step == steps)?;
        }
        if let Some((summary, power)) = &v.snapshot {
            let view = SteadyView {
                stack,
                grid,
                temperature_k: v.temperature_k.ok_or("a snapshot without its field")?,
                layer_maps: &[],
                block_stats: &[],
                power,
                summary,
                coolant_cells: &[],
            };
            writer.snapshot(v.record.step, v.record.time_s, &view, &out_opts)?;
        }
        Ok(())
    };
    let outcome = match &opened.backend {
        Backends::Cpu(be) => run_on(be, stack, grid, &schedule, &opts, &mut observer),
        Backends::Cuda(be) => run_on(&**be, stack, grid, &schedule, &opts, &mut observer),
    };
    bar.finish_and_clear();
    let outcome = outcome?;
    let hs_file = out_dir.join(hotspot::TTRACE);
    hs_trace
        .map(|h| h.finish())
        .transpose()
        .with_context(|| format!("writing {}", hs_file.display()))?;
    let view = SteadyView {
        stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        layer_maps: &[],
        block_stats: &[],
        power: &outcome.power,
        summary: &outcome.final_summary,
        coolant_cells: &[],
    };
    if let Some(path) = &plan.out.save_state {
        writer
            .stage_external(path, &encode_state(&outcome.grid, &outcome.temperature_k))
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
    if plan.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !quiet {
        print_summary(&outcome, unit, plan.verbose);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

/// What the run writes: the plan's unit, block map and VTK, HotSpot's files
/// when asked for or set by the stack.
fn output_options(plan: &Run, hotspot: bool) -> OutputOptions {
    OutputOptions {
        unit: plan.unit,
        block_map: plan.block_map,
        vtk: plan.vtk,
        maps: Default::default(),
        npy: None,
        hotspot: super::solve::hotspot_outputs(&plan.stack, hotspot),
    }
}

/// The run's input files (trace, initial state) must not lie where its
/// outputs go.
fn refuse_inputs(args: &TransientArgs, init_arg: &str, plan: &Run) -> anyhow::Result<()> {
    let mut inputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(t) = &args.trace {
        inputs.push(("--trace", t));
    }
    if !matches!(init_arg, "ambient" | "steady" | "steady-mean") {
        inputs.push(("--init", Path::new(init_arg)));
    }
    plan.out.refuse_inputs(&inputs)?;
    Ok(())
}

/// The initial state `init_arg` names; with a trace and no `--init`, says
/// on stderr which start applies and names HotSpot's.
fn init_state(
    args: &TransientArgs,
    init_arg: &str,
    grid: &Grid,
    quiet: bool,
) -> anyhow::Result<InitState> {
    if args.init.is_none() && args.trace.is_some() && !quiet {
        eprintln!(
            "cuth: note: starting from ambient (the default); --init steady-mean starts from the \
             steady state of the trace's mean power, as HotSpot's run.sh does"
        );
    }
    Ok(match init_arg {
        "ambient" => InitState::Ambient,
        "steady" => InitState::Steady,
        "steady-mean" => InitState::SteadyMean,
        file => InitState::Field(read_state(Path::new(file), grid)?),
    })
}

/// HotSpot's transient traces, when HotSpot outputs are on and power follows a trace.
fn hotspot_trace(
    writer: &TransientWriter,
    opts: &OutputOptions,
    stack: &Stack,
    grid: &Grid,
    schedule: &PowerSchedule,
) -> anyhow::Result<Option<hotspot::HotspotTrace<std::fs::File>>> {
    let (Some(spec), Some(trace)) = (opts.hotspot, schedule.trace()) else {
        return Ok(None);
    };
    let layout = hotspot::HotspotLayout::new(stack, grid, &schedule.base, spec);
    let files = (
        writer.create(hotspot::TTRACE)?,
        writer.create(hotspot::GRID_TTRACE)?,
    );
    Ok(Some(hotspot::HotspotTrace::new(
        layout,
        trace,
        opts.block_map,
        files,
    )?))
}

fn run_on<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
    observer: &mut cuth::thermal::transient::Observer,
) -> anyhow::Result<TransientOutcome> {
    Ok(run_transient(be, stack, grid, schedule, opts, observer)?)
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

/// The run's summary on stdout: thermal by default (PCG iterations in one
/// line); `verbose` adds the solver's details (preconditioner and its
/// parameters, rtol, time per step), as `solve`'s table does.
fn print_summary(o: &TransientOutcome, unit: TempUnit, verbose: bool) {
    let s = &o.summary;
    let t = |k: f64| format!("{:.2} {}", unit.convert_k(k), unit.symbol());
    println!(
        "{} steps of {} s to t = {} s on {} ({}), init {}",
        s.steps,
        output::human(s.dt_s, 6),
        output::human(s.t_end_s, 6),
        s.device.backend,
        s.device.name,
        s.init
    );
    if let Some(tol) = s.time_tol_k {
        let st = &s.stepping;
        println!(
            "{} adaptive to {tol:e} K: {} steps taken ({} rejected), {:e} to {:e} s, {} re-setups",
            s.scheme, st.steps_taken, st.steps_rejected, st.min_dt_s, st.max_dt_s, st.step_setups
        );
    }
    if verbose {
        let params: Vec<String> = s
            .precond
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", output::param_num(*v)))
            .collect();
        let params = if params.is_empty() {
            String::new()
        } else {
            format!(" {}", params.join(" "))
        };
        println!(
            "PCG ({}{params}), rtol {:e}: {:.1} iterations/step (max {}), {:.3e} s/step solve, {:.3e} s/step wall",
            s.precond.name,
            s.rtol,
            s.iterations_per_step_mean,
            s.iterations_per_step_max,
            s.solve_s_per_step,
            s.wall_s_per_step
        );
    } else {
        println!(
            "solver: {:.1} iterations/step, {:.3} s in all (--verbose for details)",
            s.iterations_per_step_mean,
            s.wall_s_per_step * s.steps as f64
        );
    }
    println!(
        "energy: in {} J, out {} J, stored {} J, worst step imbalance {:.1e}",
        output::human(s.energy.energy_in_j, 5),
        output::human(s.energy.heat_out_j, 5),
        output::human(s.energy.stored_j, 5),
        s.energy.max_step_relative_imbalance
    );
    if let Some(nl) = &s.nonlinear {
        println!(
            "k(T)/leakage: {}, {:.2} solves/step (max {})",
            nl.mode, nl.outer_iterations_per_step_mean, nl.outer_iterations_per_step_max
        );
    }
    println!(
        "peak {} at t = {} s",
        t(s.peak_t_k),
        output::human(s.peak_time_s, 6)
    );
    let mut rows = vec![vec!["layer (final)".into(), "max".into(), "avg".into()]];
    for l in &s.layers {
        let name = output::cut(&l.name, output::MAX_COL);
        rows.push(vec![name, t(l.t_max_k), t(l.t_avg_k)]);
    }
    // Columns as wide as their widest value, whatever the names and values.
    for line in output::columns(&rows, &[false, true, true], 0) {
        println!("{line}");
    }
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(format!(
        "{}-transient",
        stem.unwrap_or_else(|| "cuth".into())
    ))
}
