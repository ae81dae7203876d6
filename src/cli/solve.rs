//! `cuth solve STACK`: steady state from a stack file to maps and a summary.

use super::common::RunArgs;
use super::plan::{Device, RunPlan, Typed};
use super::progress::SolveProgress;
use anyhow::Context;
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, BackendError, ChebyshevBackend};
use cuth::error::InputError;
use cuth::linalg::{PrecisionMode, PrecondKind};
use cuth::output::npy::NpyDtype;
use cuth::output::{self, MapLayers, OutputOptions, Owned, Staged, SteadyView, Transaction};
use cuth::stack::Stack;
use cuth::thermal::assembly_input::InputParts;
use cuth::thermal::memory_plan::{self, Executor, OutputShape, RunShape};
use cuth::thermal::steady::SteadyOutcome;
use cuth::thermal::steady::{
    rasterize_layers, solve_steady_for, KeepField, LayerMaps, PowerSums, Prepared,
};
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
    /// Maps (PNG and CSV) only for these layers (names, comma-separated)
    /// [default: every layer].
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        conflicts_with = "no_maps"
    )]
    pub layers: Option<Vec<String>>,
    /// Write no per-layer maps (blocks, probes, summary and --vtk/--npy still).
    #[arg(long)]
    pub no_maps: bool,
    /// Also write the 3D temperature field as field.npy (NumPy, shape
    /// (nz, ny, nx), display unit), f32 or f64 [default: f32].
    #[arg(long, value_enum, value_name = "DTYPE", num_args = 0..=1, default_missing_value = "f32")]
    pub npy: Option<NpyDtype>,
    /// Grid, device, solver and printing, shared with `solve`/`transient`.
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let mut plan = RunPlan::resolve(
        &args.run,
        Typed {
            stack: &args.stack,
            rtol: args.rtol,
            precision: args.precision,
            out: args.out.clone(),
            default_out: default_out(&args.stack),
            save_state: args.save_state.clone(),
            memory_planned: true,
            open_device_later: true,
        },
    )?;
    let maps = map_layers(&plan.stack, args)?;
    let read_s = t0.elapsed().as_secs_f64();
    let out_opts = OutputOptions {
        unit: plan.unit,
        block_map: plan.block_map,
        vtk: plan.vtk,
        maps,
        npy: args.npy,
    };
    // On a terminal, a solve longer than a second shows PCG's progress.
    let progress = SolveProgress::start(!plan.quiet && !plan.json);
    // The whole field stays on the host only for the outputs that write
    // it; otherwise the solve keeps the statistics and the maps (issue 15).
    let keep = if args.npy.is_some() || plan.vtk || plan.out.save_state.is_some() {
        KeepField::Whole
    } else {
        KeepField::Maps(
            (0..plan.stack.layers.len())
                .filter(|&l| out_opts.maps.includes(l))
                .collect(),
        )
    };
    let (mut outcome, layer_maps) = match plan.device {
        Device::Cpu => run_on(
            || anyhow::Ok(CpuBackend::new()),
            &mut plan,
            &out_opts,
            &keep,
        )?,
        Device::Cuda(n) => {
            let precond = plan.solver.precond;
            let staged = staged_download(&plan, &keep);
            run_on(
                || open_cuda(n, precond, staged),
                &mut plan,
                &out_opts,
                &keep,
            )?
        }
    };
    drop(progress);
    if plan.verbose {
        for n in cuth::backend::cuda::kernel_cache::take_notes() {
            eprintln!("cuth: note: {n}");
        }
    }
    let stack = &plan.stack;
    outcome.summary.timings_s.insert(0, ("read".into(), read_s));
    outcome.summary.started = Some(t0);

    let out_dir = &plan.out.dir;
    let unit = plan.unit;
    let view = SteadyView {
        stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        layer_maps: &layer_maps,
        power: &outcome.power,
        summary: &outcome.summary,
    };
    // One transaction: the maps and the state file land together or not at
    // all; files are streamed into its staging layer by layer.
    let mut txn = Transaction::begin(out_dir, Owned::Thermal)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if let Some(path) = &plan.out.save_state {
        let bytes =
            cuth::thermal::transient::state::encode_state(&outcome.grid, &outcome.temperature_k);
        txn.stage_external(path, &bytes)
            .with_context(|| format!("writing the state file {}", path.display()))?;
    }
    let summary = output::stream_steady(&mut Staged::new(&txn, Path::new("")), &view, &out_opts)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    txn.commit()
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    let outcome = SteadyOutcome { summary, ..outcome };
    if plan.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !plan.quiet {
        output::print_table(&outcome.summary, unit, plan.verbose);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

/// Opens the backend on a thread (`device_init`: the context, the stream
/// and, on a GPU, the kernels this solve launches, read from the kernel
/// cache or compiled by NVRTC) and, while it opens, does every piece of
/// host work that does not need it on this thread: the host's share of
/// the memory plan and the power-density check (`plan`), the power raster
/// (`power`) and the host's part of the assembly input with the power
/// maps' sums (`assemble_host`); then
/// the device's share of the plan and the solve.
///
/// The backend is not dropped, nor the solver's device buffers freed
/// (`Prepared::leave_buffers_to_exit`): this is the CLI's one-shot path,
/// and the process exits once the outputs are written, so freeing the
/// pinned staging buffers and destroying the context (0.11 s at 2048² on
/// an H200) would only delay the exit; the driver reclaims both when the
/// process ends. Library code (sweeps, tests, benchmarks) drops its
/// backends.
fn run_on<B, E>(
    open: impl FnOnce() -> Result<B, E> + Send,
    plan: &mut RunPlan,
    out: &OutputOptions,
    keep: &KeepField,
) -> anyhow::Result<(SteadyOutcome, LayerMaps)>
where
    B: ChebyshevBackend + Send + 'static,
    E: Send,
    anyhow::Error: From<E>,
{
    let mut laps = cuth::profile::Laps::new();
    let grid = cuth::grid::Grid::from_stack(&plan.stack);
    let host_free = cuth::backend::cpu::available_memory();
    let linear = !plan.stack.is_nonlinear();
    let mut t = Times::default();
    let (opened, host) = std::thread::scope(|sc| {
        let device = sc.spawn(open);
        let host = host_side(plan, out, &grid, host_free, linear, &mut laps, &mut t);
        let opened = device
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (opened, host)
    });
    let prepared = host?;
    let be = opened?;
    t.init = laps.split();
    let shape = run_shape(plan, out, &grid);
    let memory = memory_plan::check(&shape, host_free, be.device_free_memory()?)?;
    t.plan += laps.split();
    let (mut outcome, maps) = solve_steady_for(&be, &plan.stack, &plan.solver, keep, prepared)?;
    std::mem::forget(be);
    let tm = &mut outcome.summary.timings_s;
    let mut phases = vec![("plan", t.plan)];
    if linear {
        phases.push(("power", t.power));
        phases.push(("assemble_host", t.prepare));
    }
    phases.push(("device_init", t.init));
    for (k, (name, secs)) in phases.into_iter().enumerate() {
        tm.insert(k, (name.into(), secs));
    }
    outcome.summary.memory = Some(memory);
    Ok((outcome, maps))
}

/// Seconds of `run_on`'s phases on the main thread.
#[derive(Default)]
struct Times {
    plan: f64,
    power: f64,
    prepare: f64,
    init: f64,
}

/// The host work `run_on` does while the device opens: the host's share of
/// the memory plan, the power raster with its density check, and the host
/// part of the assembly input.
fn host_side(
    plan: &mut RunPlan,
    out: &OutputOptions,
    grid: &cuth::grid::Grid,
    host_free: Option<u64>,
    linear: bool,
    laps: &mut cuth::profile::Laps,
    t: &mut Times,
) -> anyhow::Result<Prepared> {
    memory_plan::check(&run_shape(plan, out, grid), host_free, None)?;
    t.plan = laps.split();
    let mut prepared = Prepared {
        leave_buffers_to_exit: true,
        ..Prepared::default()
    };
    // The power is rasterized once, for the density check and the solve
    // (a nonlinear stack's solve rasterizes its own).
    if !linear {
        super::plan::power_density(&mut plan.stack, plan.strict, plan.quiet)?;
        t.plan += laps.split();
        return Ok(prepared);
    }
    let power = rasterize_layers(&plan.stack, grid)?;
    t.power = laps.split();
    super::plan::power_density_of(&mut plan.stack, grid, &power, plan.strict, plan.quiet)?;
    t.plan += laps.split();
    // The device assembly's input (the CPU assembles on the host).
    if matches!(plan.device, Device::Cuda(_)) {
        prepared.parts = Some(InputParts::new(&plan.stack, grid, &power));
    }
    prepared.sums = Some(PowerSums::new(grid, &power));
    prepared.power = Some(power);
    t.prepare = laps.split();
    Ok(prepared)
}

/// Values of the largest download of a CUDA solve that keeps `keep`, for
/// the staging buffers: none when the statistics are reduced on the device
/// and no map comes down (pinning them beside the module loads slowed
/// those), a plane per layer map, the whole field for `--npy`, `--vtk`,
/// `--save-state` and for Chebyshev's set-up (which reads the matrix).
fn staged_download(plan: &RunPlan, keep: &KeepField) -> usize {
    let stack = &plan.stack;
    let plane = stack.nx * stack.ny;
    let nz: usize = stack.layers.iter().map(|l| l.cells).sum();
    let blocks = stack.layers.iter().any(|l| {
        l.floorplan.is_some() || matches!(l.power, Some(cuth::stack::PowerSpec::Blocks { .. }))
    });
    match keep {
        KeepField::Whole => plane * nz,
        _ if plan.solver.precond == PrecondKind::Chebyshev => plane * nz,
        KeepField::Maps(m) if !m.is_empty() || blocks => plane,
        KeepField::Maps(_) => 0,
    }
}

/// The GPU backend with the kernel families of a steady solve with
/// `precond` compiled (or read from the kernel cache) and loaded, each on
/// its own thread, and the staging buffers of a download of `staged`
/// values pinned (none for 0). `--device cuda:N` is checked here, on the
/// init thread (see `plan::Typed::open_device_later`).
fn open_cuda(ordinal: usize, precond: PrecondKind, staged: usize) -> anyhow::Result<CudaBackend> {
    use cuth::backend::cuda::{
        ASSEMBLE, BLAS1, CHEBYSHEV, MG_SETUP, MIXED, MULTIGRID, QUAD_DIAG, STATS,
    };
    use cuth::profile::part;
    part("device_init/probe", || super::plan::check_ordinal(ordinal))?;
    let mut families = vec![&BLAS1, &QUAD_DIAG, &ASSEMBLE, &STATS];
    match precond {
        PrecondKind::Multigrid => families.extend([&MULTIGRID, &MG_SETUP]),
        PrecondKind::Chebyshev => families.extend([&CHEBYSHEV, &MIXED]),
        _ => {}
    }
    // The images are read from the kernel cache (or compiled) while the
    // context opens; only the modules' loading waits for it.
    let (be, ()) = std::thread::scope(|sc| {
        let images = sc.spawn(|| {
            part("device_init/images", || {
                cuth::backend::cuda::kernels::prefetch(ordinal, &families)
            })
        });
        let be = part("device_init/context", || CudaBackend::open(ordinal));
        (
            be,
            images
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    });
    let be = be?;
    std::thread::scope(|sc| {
        let be = &be;
        let mut loads: Vec<_> = (families.into_iter())
            .map(|f| sc.spawn(move || part("device_init/modules", || be.load(f))))
            .collect();
        if staged > 0 {
            loads
                .push(sc.spawn(move || part("device_init/staging", || be.reserve_staging(staged))));
        }
        loads
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
    .map_err(|e: BackendError| anyhow::Error::from(e))?;
    Ok(be)
}

/// The memory plan's view of the run.
fn run_shape<'g>(plan: &RunPlan, out: &OutputOptions, grid: &'g cuth::grid::Grid) -> RunShape<'g> {
    let stack = &plan.stack;
    let nz: usize = stack.layers.iter().map(|l| l.cells).sum();
    let (wx, wy): (&[f64], &[f64]) = match grid.is_uniform() {
        true => (&[], &[]),
        false => (&grid.dx, &grid.dy),
    };
    let count = |f: &dyn Fn(usize, &cuth::stack::Layer) -> bool| {
        (stack.layers.iter().enumerate())
            .filter(|(l, layer)| f(*l, layer))
            .count()
    };
    RunShape {
        nx: stack.nx,
        ny: stack.ny,
        nz,
        layers: stack.layers.len(),
        powered_layers: count(&|_, l| l.power.is_some()),
        patched_layers: count(&|_, l| {
            l.outline.is_some()
                || l.floorplan.is_some()
                || !l.regions.is_empty()
                || !l.unit_materials.is_empty()
        }),
        wx,
        wy,
        executor: match plan.device {
            Device::Cpu => Executor::Cpu,
            Device::Cuda(_) => Executor::Cuda,
        },
        precond: plan.solver.precond,
        precision: plan.solver.precond_opts.precision,
        outputs: OutputShape {
            map_layers: out.maps.count(stack.layers.len()),
            block_layers: count(&|i, l| {
                !out.maps.includes(i)
                    && (l.floorplan.is_some()
                        || matches!(l.power, Some(cuth::stack::PowerSpec::Blocks { .. })))
            }),
            vtk: out.vtk,
            npy_bytes: out.npy.map(NpyDtype::bytes),
            save_state: plan.out.save_state.is_some(),
        },
    }
}

/// `--layers` / `--no-maps` as layer indices; an unknown name is bad input.
fn map_layers(stack: &Stack, args: &SolveArgs) -> Result<MapLayers, InputError> {
    if args.no_maps {
        return Ok(MapLayers::None);
    }
    let Some(names) = &args.layers else {
        return Ok(MapLayers::All);
    };
    let mut idx = Vec::new();
    for name in names {
        let name = name.trim();
        match stack.layers.iter().position(|l| l.name == name) {
            Some(i) => idx.push(i),
            None => {
                let known: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
                return Err(InputError(format!(
                    "--layers: the stack has no layer `{name}` (layers: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(MapLayers::Only(idx))
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(stem.unwrap_or_else(|| "cuth".into()))
}
