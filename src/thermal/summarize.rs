//! A steady result's [`Summary`] from its field: the per-layer statistics,
//! hottest cells, energy balance and probes of [`super::field_stats`], with
//! the stack's names and the solver's report. Also the energy balance of a
//! whole field (the nonlinear iteration's convergence check).

pub use super::field_stats::Coupling;
use super::field_stats::{chunked_sum, FieldStats, FieldSummary, Piece};
use super::summary::{
    CellRef, DiePoint, EnergyBalance, GridSummary, LayerSummary, SolverReport, Summary,
};
use crate::assemble::System;
use crate::backend::Backend;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;

/// The stack, its grid and the layers' rasterized power: the problem a
/// field solves, as its statistics read it (names, cells, blocks and the
/// power's absent cells).
#[derive(Clone, Copy)]
pub(crate) struct ThermalProblem<'a> {
    pub stack: &'a Stack,
    pub grid: &'a Grid,
    pub power: &'a [LayerPower],
}

impl<'a> ThermalProblem<'a> {
    pub fn new(stack: &'a Stack, grid: &'a Grid, power: &'a [LayerPower]) -> Self {
        ThermalProblem { stack, grid, power }
    }
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
        heat_out_coolant_w: None,
        relative_error: if power_in_w > 0.0 {
            (out - power_in_w).abs() / power_in_w
        } else {
            0.0
        },
    }
}

pub(crate) fn cell_ref(stack: &Stack, grid: &Grid, i: usize, t: f64) -> CellRef {
    let (x, y, z) = grid.coords(i);
    let l = grid.layer_of_z[z];
    let (x_m, y_m) = (grid.x_center(x), grid.y_center(y));
    CellRef {
        layer: stack.layers[l].name.clone(),
        x,
        y,
        z,
        x_m,
        y_m,
        z_m: grid.z_bottom(z) + 0.5 * grid.dz[z],
        t_k: t,
        die: DiePoint::of(stack, l, x_m, y_m),
    }
}

/// The summary of a whole field (θ and T of every cell): a
/// [`FieldStats`] fold over it in one piece.
pub(crate) fn summarize<'s, B: Backend>(
    problem: ThermalProblem<'_>,
    sys: impl Into<Coupling<'s>>,
    theta: &[f64],
    t: &[f64],
    be: &B,
    solver: SolverReport,
    timings_s: Vec<(String, f64)>,
) -> Summary {
    let ThermalProblem { stack, grid, power } = problem;
    let mut f = FieldStats::new(stack, grid, power, sys.into(), 0.0, &[], false);
    let stats = (f.fold(0, Piece::Given { theta, t }))
        .and_then(|()| f.finish())
        .expect("summarize: θ and T hold one value per cell of the grid");
    let sums = PowerSums::new(grid, power);
    summary_of(stack, grid, &sums, &stats, be, solver, timings_s)
}

/// Per layer the sums of its power map that a summary and a device
/// assembly's offset read (a plane each, 10 ms for mol_f2f at 2048²): a
/// CUDA solve computes them while the device opens.
#[derive(Clone, Debug)]
pub struct PowerSums {
    /// Σ of the map, W.
    pub map_w: Vec<f64>,
    /// What the right-hand side holds: z cells × Σ (w / z cells), W.
    pub rhs_w: Vec<f64>,
}

impl PowerSums {
    pub fn new(grid: &Grid, power: &[LayerPower]) -> PowerSums {
        let (map_w, rhs_w) = (grid.layer_z.iter().zip(power))
            .map(|(zr, p)| {
                let map = chunked_sum(&p.map_w, |w| w);
                // One z cell: share 1, the same sum bit for bit.
                let rhs = match zr.len() {
                    1 => map,
                    k => k as f64 * chunked_sum(&p.map_w, |w| w * (1.0 / k as f64)),
                };
                (map, rhs)
            })
            .unzip();
        PowerSums { map_w, rhs_w }
    }
}

/// The [`Summary`] of a folded field.
pub(crate) fn summary_of<B: Backend>(
    stack: &Stack,
    grid: &Grid,
    power: &PowerSums,
    stats: &FieldSummary,
    be: &B,
    solver: SolverReport,
    timings_s: Vec<(String, f64)>,
) -> Summary {
    let layers: Vec<LayerSummary> = (stack.layers.iter().enumerate())
        .zip(&stats.layers)
        .map(|((l, layer), s)| LayerSummary {
            name: layer.name.clone(),
            material: layer.material_name.clone(),
            z_bottom_m: grid.z_bottom(grid.layer_z[l].start),
            thickness_m: layer.thickness_m,
            cells: layer.cells,
            power_w: power.map_w.get(l).copied().unwrap_or(0.0),
            t_min_k: s.t_min_k,
            t_avg_k: s.t_avg_k,
            t_max_k: s.t_max_k,
            hottest: cell_ref(stack, grid, s.hottest, s.t_max_k),
        })
        .collect();
    // The first hottest cell of the stack: layers are in z order.
    let mut top = (0, f64::NEG_INFINITY);
    for s in &stats.layers {
        if s.t_max_k > top.1 {
            top = (s.hottest, s.t_max_k);
        }
    }
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
            graded: [&grid.dx, &grid.dy]
                .iter()
                .any(|w| w.iter().any(|&d| (d - w[0]).abs() > 1e-9 * w[0])),
        },
        ambient_k: stack.ambient_k,
        device: be.report(),
        solver,
        energy: stats.energy.clone(),
        layers,
        hottest: cell_ref(stack, grid, top.0, top.1),
        warnings: stack.warnings.clone(),
        probes: super::probes::readings_of(stack, grid, &stats.probes),
        timings_s,
        timings_detail_s: Vec::new(),
        wall_s: None,
        started: None,
        coolant: Vec::new(),
        nonlinear: None,
        memory: None,
        host_peak_rss_bytes: None,
    }
}
