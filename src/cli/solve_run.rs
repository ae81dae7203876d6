//! How `cuth solve` runs its solve: the backend opens on a
//! thread while this one does the host work that does not need it, and
//! the one-shot CLI leaves the device's teardown to the process exit.
//! `--device auto` probes CUDA on that thread too and falls back to the
//! CPU there when it is unusable.

use super::plan::Run;
use cuth::linalg::mg::MgPrecision;
use cuth::linalg::PrecondKind;
use cuth::output::npy::NpyDtype;
use cuth::output::OutputOptions;
use cuth::run::{Backends, Device, DeviceProbe, OpenRequest};
use cuth::thermal::assembly_input::InputParts;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::memory_plan::{self, Executor, OutputShape, RunShape};
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::steady::{
    rasterize_layers, solve_steady_for, KeepField, LayerMaps, PowerSums, Prepared, SteadyOutcome,
};

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
pub(super) fn run_on(
    req: &OpenRequest,
    probe: DeviceProbe,
    plan: &Run,
    out: &OutputOptions,
    keep: &KeepField,
) -> anyhow::Result<(SteadyOutcome, LayerMaps)> {
    let mut laps = cuth::profile::Laps::new();
    let grid = &plan.grid;
    let host_free = cuth::backend::cpu::available_memory();
    let linear = !plan.stack.is_nonlinear();
    let mut t = Times::default();
    let (opened, host) = cuth::run::open_while(req, probe, || {
        host_side(plan, out, grid, host_free, linear, &mut laps, &mut t)
    });
    let (prepared, dense) = host?;
    let opened = opened?;
    t.init = laps.split();
    if let (Some(why), false) = (&opened.fallback, plan.quiet) {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let on = On {
        device: opened.device,
        opts: plan.solver_on(opened.device),
        grid,
        host_free,
    };
    let (mut outcome, maps) = match opened.backend {
        Backends::Cpu(be) => finish(be, plan, out, keep, prepared, &on, t),
        Backends::Cuda(be) => finish(*be, plan, out, keep, prepared, &on, t),
    }?;
    // Found once the power was rasterized, after the stack's own.
    outcome.summary.warnings.extend(dense);
    Ok((outcome, maps))
}

/// The device that opened, with what the solve on it uses.
struct On<'g> {
    device: Device,
    opts: SteadyOptions,
    grid: &'g cuth::grid::Grid,
    host_free: Option<u64>,
}

/// [`run_on`] once `be` is open: the device's share of the memory plan,
/// the solve, the phases' times.
fn finish<B: ThermalBackend + 'static>(
    be: B,
    plan: &Run,
    out: &OutputOptions,
    keep: &KeepField,
    prepared: Prepared,
    on: &On,
    mut t: Times,
) -> anyhow::Result<(SteadyOutcome, LayerMaps)> {
    let mut laps = cuth::profile::Laps::new();
    let linear = !plan.stack.is_nonlinear();
    let mut opts = on.opts.clone();
    let device_free = be.device_free_memory()?;
    let check = |opts: &SteadyOptions| {
        let shape = run_shape(plan, opts, on.device, out, on.grid);
        memory_plan::check(&shape, on.host_free, device_free)
    };
    let memory = match mixed_multigrid_by_default(plan, on.device) {
        true => {
            opts.precond_opts.mg.precision = MgPrecision::Auto;
            check(&opts).or_else(|_| {
                opts.precond_opts.mg.precision = MgPrecision::F64;
                check(&opts)
            })?
        }
        false => check(&opts)?,
    };
    t.plan += laps.split();
    let (mut outcome, maps) = solve_steady_for(&be, &plan.stack, on.grid, &opts, keep, prepared)?;
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

/// Whether this solve's multigrid hierarchy is `auto` (f32 levels inside
/// the f64 PCG, rebuilt in f64 if PCG stagnates on them) when no
/// `--mg-precision` was asked: on a GPU, for linear stacks without
/// cavities, where the f32 cycle's halved bytes make PCG 1.5× faster
/// at 2048² and 4096² (BENCHMARKS.md, mixed precision). It also needs
/// the f32 copy of the fine matrix, so a grid whose memory plan fits only
/// in f64 is solved in f64. The CPU stays f64: its cycle is not bound by
/// bandwidth alone, and k(T) and liquid solves keep the hierarchy they
/// were measured with.
fn mixed_multigrid_by_default(plan: &Run, device: Device) -> bool {
    plan.mg_precision.is_none()
        && matches!(device, Device::Cuda(_))
        && plan.solver.precond == PrecondKind::Multigrid
        && !plan.stack.is_nonlinear()
        && !plan.stack.has_cavities()
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
    plan: &Run,
    out: &OutputOptions,
    grid: &cuth::grid::Grid,
    host_free: Option<u64>,
    linear: bool,
    laps: &mut cuth::profile::Laps,
    t: &mut Times,
) -> anyhow::Result<(Prepared, Vec<String>)> {
    let intended = plan.device.intended();
    let shape = run_shape(plan, &plan.solver, intended, out, grid);
    memory_plan::check(&shape, host_free, None)?;
    t.plan = laps.split();
    let mut prepared = Prepared {
        leave_buffers_to_exit: true,
        ..Prepared::default()
    };
    // The power is rasterized once, for the density check and the solve
    // (a nonlinear stack's solve rasterizes its own).
    if !linear {
        let dense = super::plan::power_density(&plan.stack, grid, plan.strict, plan.quiet)?;
        t.plan += laps.split();
        return Ok((prepared, dense));
    }
    let power = rasterize_layers(&plan.stack, grid)?;
    t.power = laps.split();
    let dense = super::plan::power_density_of(&plan.stack, grid, &power, plan.strict, plan.quiet)?;
    t.plan += laps.split();
    // The device assembly's input (the CPU assembles on the host).
    if matches!(intended, Device::Cuda(_)) {
        prepared.parts = Some(InputParts::new(&plan.stack, grid, &power));
    }
    prepared.sums = Some(PowerSums::new(grid, &power));
    prepared.power = Some(power);
    t.prepare = laps.split();
    Ok((prepared, dense))
}

/// Values of the largest download of a CUDA solve that keeps `keep`, for
/// the staging buffers: none when the statistics (the blocks' included)
/// are reduced on the device and no map comes down (pinning them beside
/// the module loads slowed those), a plane per layer map, the whole field
/// for `--npy`, `--vtk`, `--save-state` and for a preconditioner whose
/// set-up reads the matrix on the host.
pub(super) fn staged_download(plan: &Run, keep: &KeepField) -> usize {
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

/// The memory plan's view of the run.
fn run_shape<'g>(
    plan: &Run,
    opts: &SteadyOptions,
    device: Device,
    out: &OutputOptions,
    grid: &'g cuth::grid::Grid,
) -> RunShape<'g> {
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
        executor: match device {
            Device::Cpu => Executor::Cpu,
            Device::Cuda(_) => Executor::Cuda,
        },
        host_assembly: plan.knobs.cuda.host_assembly,
        precond: opts.precond,
        precision: opts.precond_opts.precision,
        mg_precision: opts.precond_opts.mg.precision,
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
