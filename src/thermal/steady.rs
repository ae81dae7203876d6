//! Steady state: stack → power → assembly → PCG on a backend → temperatures
//! and a [`Summary`]. Generic over the backend, so the CPU and CUDA paths run
//! the same code; only the vectors and kernels differ.

use super::summary::{
    CellRef, EnergyBalance, GridSummary, LayerSummary, MixedReport, SolverReport, Summary,
};
use crate::assemble::{assemble, System};
use crate::backend::{Backend, BackendError, ChebyshevBackend, DeviceAssembly};
use crate::grid::Grid;
use crate::linalg::{
    build_thermal_precond, pcg, true_relative_residual, CgParams, Offset, PrecondKind,
    PrecondOptions, Preconditioner, QuadDiagOperator, SolveError, Stop,
};
use crate::power::{layer_power, LayerPower, PowerError};
use crate::stack::Stack;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::nonlinear::{NonlinearError, NonlinearOptions};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct SteadyOptions {
    pub precond: PrecondKind,
    pub rtol: f64,
    pub max_iter: usize,
    pub precond_opts: PrecondOptions,
    /// Read the residual back every this many iterations (see `CgParams`);
    /// 0 leaves it to the backend (`Backend::check_interval`).
    pub check_every: usize,
    /// The outer iteration of temperature-dependent stacks (unused by
    /// linear ones).
    pub nonlinear: NonlinearOptions,
}

impl SteadyOptions {
    /// Solver settings from the stack's `[solver]` table over built-in defaults.
    pub fn from_stack(stack: &Stack, default_precond: PrecondKind) -> SteadyOptions {
        let mut precond_opts = PrecondOptions::default();
        if let Some(d) = stack.solver.chebyshev_degree {
            precond_opts.chebyshev_degree = d;
        }
        SteadyOptions {
            precond: stack.solver.precond.unwrap_or(default_precond),
            rtol: stack.solver.rtol.unwrap_or(1e-8),
            max_iter: stack.solver.max_iter.unwrap_or(20_000),
            precond_opts,
            check_every: 0,
            nonlinear: NonlinearOptions::default(),
        }
    }

    /// PCG's parameters for these options on `be`, stopping at `stop`.
    /// PCG's parameters; the residual is read back every `check_every`
    /// iterations, by default as often as `m` (then `be`) prefers.
    pub fn cg_params<B: Backend>(&self, be: &B, m: &dyn Preconditioner<B>, stop: Stop) -> CgParams {
        CgParams {
            stop,
            max_iter: self.max_iter,
            check_every: match self.check_every {
                0 => m.check_interval().unwrap_or(be.check_interval()),
                k => k,
            },
            ..CgParams::default()
        }
    }
}

pub struct SteadyOutcome {
    pub grid: Grid,
    /// Temperature of every cell, K.
    pub temperature_k: Vec<f64>,
    pub power: Vec<LayerPower>,
    pub summary: Summary,
}

#[derive(Debug, thiserror::Error)]
pub enum SteadyError {
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Nonlinear(#[from] NonlinearError),
}

/// Solves the steady temperature field of `stack` on backend `be`; a stack
/// with temperature-dependent properties or leakage goes to the Picard
/// iteration (`thermal::nonlinear::steady`), any other takes the linear path.
pub fn solve_steady<B: ChebyshevBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
) -> Result<SteadyOutcome, SteadyError> {
    if stack.is_nonlinear() {
        return crate::thermal::nonlinear::steady::solve(be, stack, opts);
    }
    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &str, timings: &mut Vec<(String, f64)>| {
        timings.push((name.to_string(), clock.elapsed().as_secs_f64()));
        clock = Instant::now();
    };

    let sync = crate::profile::sync_parts();
    let mut parts = crate::profile::Laps::new();
    let grid = Grid::from_stack(stack);
    be.check_capacity(grid.len())?;
    be.prepare_quad_diag()?;
    parts.lap("power/prepare");
    let power = (0..stack.layers.len())
        .map(|l| layer_power(stack, &grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    parts.lap("power/rasterize");
    lap("power", &mut timings);

    let n = grid.len();
    // On a GPU the system is built where it is used, from compact inputs
    // (device assembly); the CPU assembles on the host in parallel.
    let input = AssemblyInput::new(stack, &grid, &power);
    parts.lap("assemble/input");
    let (a, b, offset, sys) = match be.assemble_on_device(&input)? {
        Some(dev) => {
            drop(input);
            be.synchronize()?;
            parts.lap("assemble/device");
            lap("assemble", &mut timings);
            let (a, b, offset, coupling) = shift_on_device(be, &grid, &power, dev)?;
            if sync {
                be.synchronize()?;
            }
            parts.lap("upload/shift");
            (a, b, offset, Assembled::Device(coupling))
        }
        None => {
            drop(input);
            let sys = assemble(stack, &grid, &power);
            lap("assemble", &mut timings);
            let offset = Offset::new(&sys.a, &sys.rhs);
            let a = be.upload_matrix(&sys.a)?;
            let b = be.upload(&offset.rhs)?;
            (a, b, offset, Assembled::Host(Box::new(sys)))
        }
    };
    parts.split();
    let mut x = be.zeros(n)?;
    be.synchronize()?;
    parts.lap("upload/alloc_x");
    lap("upload", &mut timings);

    let mut op = QuadDiagOperator::new(be, &a, n);
    let mut m = {
        // Chebyshev's set-up reads the matrix on the host (the Gershgorin
        // bound, the scaled low-precision copy); multigrid builds its levels
        // where the matrix lives, so a device-assembled A stays there.
        let host = match (&sys, opts.precond) {
            (Assembled::Host(sys), _) => Some(std::borrow::Cow::Borrowed(&sys.a)),
            (Assembled::Device(_), PrecondKind::Chebyshev) => Some(be.host_matrix(&a)?),
            (Assembled::Device(_), _) => None,
        };
        let host = host.as_deref();
        build_thermal_precond(opts.precond, be, &mut op, host, &opts.precond_opts)?
    };
    lap("precond_setup", &mut timings);

    // The shifted system has the same residual as the user's; the stop, and
    // a failure's report, are relative to the user's ‖b‖.
    let params = opts.cg_params(be, m.as_ref(), Stop::against(opts.rtol, offset.b_norm));
    let info = pcg(be, &mut op, m.as_mut(), &b, &mut x, &params)?;
    lap("solve", &mut timings);
    parts.split();

    // ‖b‖ = rtol_scale·‖b − c·amb‖.
    let true_rel = true_relative_residual(be, &mut op, &b, &x, offset.rtol_scale)?;
    parts.lap("download/true_residual");
    let mut theta = be.download(&x)?;
    parts.lap("download/copy");
    offset.restore(&mut theta);
    parts.lap("download/restore");
    lap("download", &mut timings);

    let precision = m.precision().filter(|p| p.mode != "f64");
    let solver = SolverReport {
        method: "pcg".into(),
        precision: match &precision {
            // Outer CG in f64, preconditioner at its final level.
            Some(p) => format!("{}: f64 PCG, preconditioner {}", p.mode, p.current),
            None => "f64".into(),
        },
        precond: m.report(),
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations: info.iterations,
        residual_replacements: info.replacements,
        converged: true,
        stop_reason: "rtol reached".into(),
        final_true_residual: true_rel,
        mixed: precision.map(|precond| MixedReport {
            precond,
            switches: info.precision_switches.clone(),
        }),
    };
    // The device's vectors, matrix and preconditioner are not needed past
    // this point.
    drop(m);
    drop(op);
    drop((x, b, a));
    be.synchronize()?;
    parts.lap("free/solver");
    lap("free_solver", &mut timings);
    let t_summary = Instant::now();

    let temperature_k: Vec<f64> = theta.iter().map(|t| t + stack.ambient_k).collect();
    parts.lap("summary/kelvin");
    let coupling = match &sys {
        Assembled::Host(sys) => Coupling::from(&**sys),
        Assembled::Device(c) => c.borrowed(),
    };
    let summary = summarize(
        stack,
        &grid,
        coupling,
        &theta,
        &temperature_k,
        &power,
        be,
        solver,
        timings,
    );
    parts.lap("summary/stats");
    drop(theta);
    drop(sys);
    parts.lap("summary/free");
    let mut summary = summary;
    (summary.timings_s).push(("summary".into(), t_summary.elapsed().as_secs_f64()));
    Ok(SteadyOutcome {
        grid,
        temperature_k,
        power,
        summary,
    })
}

/// The system as a solve holds it after assembly: whole on the host (CPU,
/// or `CUTH_HOST_ASSEMBLY`), or on the device with only its coupling to
/// ambient on the host.
enum Assembled {
    Host(Box<System>),
    Device(OwnedCoupling),
}

/// What the energy balance reads of a system.
pub struct Coupling<'a> {
    /// Σ rhs, W.
    pub power_in_w: f64,
    pub g_top: &'a [f64],
    pub g_bottom: &'a [f64],
}

impl<'a> From<&'a System> for Coupling<'a> {
    fn from(sys: &'a System) -> Coupling<'a> {
        Coupling {
            power_in_w: sys.rhs.iter().sum(),
            g_top: &sys.g_top,
            g_bottom: &sys.g_bottom,
        }
    }
}

/// [`Coupling`] that owns its planes (device assembly).
struct OwnedCoupling {
    power_in_w: f64,
    g_top: Vec<f64>,
    g_bottom: Vec<f64>,
}

impl OwnedCoupling {
    fn borrowed(&self) -> Coupling<'_> {
        Coupling {
            power_in_w: self.power_in_w,
            g_top: &self.g_top,
            g_bottom: &self.g_bottom,
        }
    }
}

/// The offset of `linalg::offset` for a system assembled on the device:
/// c = Σb / Σamb from the power maps and the ambient planes (host, one plane
/// each), b −= c·amb where b lives, and the two norms by device reductions.
#[allow(clippy::type_complexity)]
fn shift_on_device<B: ChebyshevBackend>(
    be: &B,
    grid: &Grid,
    power: &[LayerPower],
    dev: DeviceAssembly<B::Matrix, B::Vector>,
) -> Result<(B::Matrix, B::Vector, Offset, OwnedCoupling), SteadyError> {
    let DeviceAssembly {
        a,
        rhs: mut b,
        g_top,
        g_bottom,
    } = dev;
    // Σ rhs: each layer's map once per z cell, split evenly over them.
    let power_in_w: f64 = grid
        .layer_z
        .iter()
        .zip(power)
        .map(|(zr, p)| {
            let share = 1.0 / zr.len() as f64;
            zr.len() as f64 * p.map_w.iter().map(|w| w * share).sum::<f64>()
        })
        .sum();
    let amb: f64 = g_top.iter().sum::<f64>() + g_bottom.iter().sum::<f64>();
    let c = if amb > 0.0 { power_in_w / amb } else { 0.0 };
    let mut s = be.scalars(2)?;
    be.dot(&b, &b, &mut s, 0)?;
    be.shift_rhs(&a, c, &mut b)?;
    be.dot(&b, &b, &mut s, 1)?;
    let v = be.read_scalars(&s)?;
    let (nb, ns) = (v[0].sqrt(), v[1].sqrt());
    let offset = Offset {
        c,
        rhs: Vec::new(),
        rtol_scale: if ns > 0.0 { nb / ns } else { 1.0 },
        b_norm: nb,
    };
    let coupling = OwnedCoupling {
        power_in_w,
        g_top,
        g_bottom,
    };
    Ok((a, b, offset, coupling))
}

/// Heat out through the convective faces against power in.
pub fn energy_balance(grid: &Grid, sys: &System, theta: &[f64]) -> EnergyBalance {
    energy_balance_of(grid, Coupling::from(sys), theta)
}

/// [`energy_balance`] from a system's [`Coupling`].
pub fn energy_balance_of(grid: &Grid, c: Coupling, theta: &[f64]) -> EnergyBalance {
    let plane = grid.plane();
    let top = (grid.nz - 1) * plane;
    let power_in_w = c.power_in_w;
    let heat_out_top_w: f64 = (0..plane).map(|j| c.g_top[j] * theta[top + j]).sum();
    let heat_out_bottom_w: f64 = (0..plane).map(|j| c.g_bottom[j] * theta[j]).sum();
    let out = heat_out_top_w + heat_out_bottom_w;
    EnergyBalance {
        power_in_w,
        heat_out_top_w,
        heat_out_bottom_w,
        relative_error: if power_in_w > 0.0 {
            (out - power_in_w).abs() / power_in_w
        } else {
            0.0
        },
    }
}

fn cell_ref(stack: &Stack, grid: &Grid, i: usize, t: f64) -> CellRef {
    let (x, y, z) = grid.coords(i);
    CellRef {
        layer: stack.layers[grid.layer_of_z[z]].name.clone(),
        x,
        y,
        z,
        x_m: grid.x_center(x),
        y_m: grid.y_center(y),
        z_m: grid.z_bottom(z) + 0.5 * grid.dz[z],
        t_k: t,
    }
}

/// Index and value of the largest element of `v[range]`.
fn argmax(v: &[f64], range: std::ops::Range<usize>) -> (usize, f64) {
    let mut best = (range.start, f64::NEG_INFINITY);
    for i in range {
        if v[i] > best.1 {
            best = (i, v[i]);
        }
    }
    best
}

/// Min and mean of a layer's cells (`cells`: its z planes): a plain mean on
/// a uniform grid, else weighted by cell area; absent cells (no material)
/// left out.
fn layer_min_avg(
    grid: &Grid,
    power: &[LayerPower],
    layer: &crate::stack::Layer,
    l: usize,
    cells: &[f64],
) -> (f64, f64) {
    let absent = power
        .get(l)
        .map(|p| crate::assemble::absent_plane(grid, p, layer.material))
        .unwrap_or_default();
    if absent.is_empty() && grid.is_uniform() {
        let min = cells.iter().cloned().fold(f64::INFINITY, f64::min);
        return (min, cells.iter().sum::<f64>() / cells.len() as f64);
    }
    let plane = grid.plane();
    let (mut min, mut sum, mut area) = (f64::INFINITY, 0.0, 0.0);
    for (i, &t) in cells.iter().enumerate() {
        let j = i % plane;
        if absent.get(j) == Some(&true) {
            continue;
        }
        let a = grid.cell_area(j);
        min = min.min(t);
        sum += a * t;
        area += a;
    }
    (min, sum / area)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn summarize<'s, B: ChebyshevBackend>(
    stack: &Stack,
    grid: &Grid,
    sys: impl Into<Coupling<'s>>,
    theta: &[f64],
    t: &[f64],
    power: &[LayerPower],
    be: &B,
    solver: SolverReport,
    timings_s: Vec<(String, f64)>,
) -> Summary {
    let plane = grid.plane();
    let layers = stack
        .layers
        .iter()
        .enumerate()
        .map(|(l, layer)| {
            let zr = &grid.layer_z[l];
            let range = zr.start * plane..zr.end * plane;
            let cells = &t[range.clone()];
            let (imax, tmax) = argmax(t, range);
            let (t_min_k, t_avg_k) = layer_min_avg(grid, power, layer, l, cells);
            LayerSummary {
                name: layer.name.clone(),
                material: layer.material_name.clone(),
                z_bottom_m: grid.z_bottom(zr.start),
                thickness_m: layer.thickness_m,
                cells: layer.cells,
                power_w: power[l].map_w.iter().sum(),
                t_min_k,
                t_avg_k,
                t_max_k: tmax,
                hottest: cell_ref(stack, grid, imax, tmax),
            }
        })
        .collect();
    let (imax, tmax) = argmax(t, 0..t.len());
    Summary {
        cuth_version: env!("CARGO_PKG_VERSION").into(),
        stack: stack.source.display().to_string(),
        title: stack.title.clone(),
        grid: GridSummary {
            nx: grid.nx,
            ny: grid.ny,
            nz: grid.nz,
            cells: grid.len(),
            dx_m: grid.dx.iter().copied().fold(f64::INFINITY, f64::min),
            dy_m: grid.dy.iter().copied().fold(f64::INFINITY, f64::min),
        },
        ambient_k: stack.ambient_k,
        device: be.report(),
        solver,
        energy: energy_balance_of(grid, sys.into(), theta),
        layers,
        hottest: cell_ref(stack, grid, imax, tmax),
        warnings: stack.warnings.clone(),
        probes: super::probes::readings(stack, grid, t),
        timings_s,
        timings_detail_s: Vec::new(),
        wall_s: None,
        started: None,
        nonlinear: None,
        memory: None,
        host_peak_rss_bytes: None,
    }
}
