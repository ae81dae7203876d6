//! How `cuth solve` runs its solve: the backend opens on a
//! thread while this one does the host work that does not need it, and
//! the one-shot CLI leaves the device's teardown to the process exit.
//! `--device auto` probes CUDA on that thread too and falls back to the
//! CPU there when it is unusable.

use super::plan::{Device, RunPlan};
use cuth::backend::{cpu::CpuBackend, cuda::CudaBackend, BackendError};
use cuth::knobs::CudaKnobs;
use cuth::linalg::{PrecisionMode, PrecondKind};
use cuth::output::npy::NpyDtype;
use cuth::output::OutputOptions;
use cuth::thermal::assembly_input::InputParts;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::memory_plan::{self, Executor, OutputShape, RunShape};
use cuth::thermal::steady::{
    rasterize_layers, solve_steady_for, KeepField, LayerMaps, PowerSums, Prepared, SteadyOutcome,
};
use std::thread::JoinHandle;

/// What the init thread opened: the backend, or why `--device auto`
/// solves on the CPU instead.
pub(super) enum Opened<B> {
    Backend(B),
    Cpu(String),
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
pub(super) fn run_on<B, E>(
    open: impl FnOnce() -> Result<Opened<B>, E> + Send,
    plan: &mut RunPlan,
    out: &OutputOptions,
    keep: &KeepField,
) -> anyhow::Result<(SteadyOutcome, LayerMaps)>
where
    B: ThermalBackend + Send + 'static,
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
    let opened = opened?;
    t.init = laps.split();
    match opened {
        Opened::Backend(be) => finish(be, plan, out, keep, prepared, (&grid, host_free), t),
        Opened::Cpu(why) => {
            if !plan.quiet {
                eprintln!("cuth: note: {why}; solving on the CPU");
            }
            plan.device = Device::Cpu;
            if !plan.precision_given {
                plan.solver.precond_opts.precision = PrecisionMode::F64;
            }
            let cpu = CpuBackend::new();
            finish(cpu, plan, out, keep, prepared, (&grid, host_free), t)
        }
    }
}

/// [`run_on`] once `be` is open: the device's share of the memory plan,
/// the solve, the phases' times.
fn finish<B: ThermalBackend + 'static>(
    be: B,
    plan: &mut RunPlan,
    out: &OutputOptions,
    keep: &KeepField,
    prepared: Prepared,
    (grid, host_free): (&cuth::grid::Grid, Option<u64>),
    mut t: Times,
) -> anyhow::Result<(SteadyOutcome, LayerMaps)> {
    let mut laps = cuth::profile::Laps::new();
    let linear = !plan.stack.is_nonlinear();
    let shape = run_shape(plan, out, grid);
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
/// the staging buffers: none when the statistics (the blocks' included)
/// are reduced on the device and no map comes down (pinning them beside
/// the module loads slowed those), a plane per layer map, the whole field
/// for `--npy`, `--vtk`, `--save-state` and for a preconditioner whose
/// set-up reads the matrix on the host.
pub(super) fn staged_download(plan: &RunPlan, keep: &KeepField) -> usize {
    let stack = &plan.stack;
    let plane = stack.nx * stack.ny;
    let nz: usize = stack.layers.iter().map(|l| l.cells).sum();
    let precond = plan.solver.precond.needs().staged_values(plane * nz);
    match keep {
        KeepField::Whole => plane * nz,
        _ if precond > 0 => precond,
        KeepField::Maps(m) if !m.is_empty() => plane,
        KeepField::Maps(_) => 0,
    }
}

/// The GPU backend with the kernel families of a steady solve with
/// `precond` compiled (or read from the kernel cache) and loaded, each on
/// its own thread, and the staging buffers of a download of `staged`
/// values pinned (none for 0). `--device cuda:N` is checked here, on the
/// init thread (see `plan::Typed::open_device_later`).
pub(super) fn open_cuda(
    ordinal: usize,
    precond: PrecondKind,
    staged: usize,
    auto_probe: Option<JoinHandle<Result<(), BackendError>>>,
    knobs: &CudaKnobs,
) -> anyhow::Result<Opened<CudaBackend>> {
    use cuth::backend::cuda::{BLAS1, QUAD_DIAG};
    use cuth::profile::part;
    use cuth::thermal::device::cuda::{ASSEMBLE, STATS};
    // `--device auto`: the probe started with the run; a CUDA that is not
    // usable means the CPU.
    if let Some(probe) = auto_probe {
        let r = part("device_init/probe", || probe.join());
        match r.unwrap_or_else(|p| std::panic::resume_unwind(p)) {
            Ok(()) => {}
            Err(e) => return Ok(Opened::Cpu(e.to_string())),
        }
    }
    part("device_init/probe", || super::plan::check_ordinal(ordinal))?;
    let mut families = vec![&BLAS1, &QUAD_DIAG, &ASSEMBLE, &STATS];
    families.extend(precond.needs().kernel_families);
    // The images are read from the kernel cache (or compiled) while the
    // context opens; only the modules' loading waits for it.
    let (be, ()) = std::thread::scope(|sc| {
        let images = sc.spawn(|| {
            part("device_init/images", || {
                let dir = knobs.kernel_cache.as_deref();
                cuth::backend::cuda::device::prefetch(ordinal, &families, dir)
            })
        });
        let be = part("device_init/context", || {
            CudaBackend::open_with(ordinal, knobs)
        });
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
    Ok(Opened::Backend(be))
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
        host_assembly: plan.knobs.cuda.host_assembly,
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
