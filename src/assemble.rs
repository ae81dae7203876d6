//! Finite-volume assembly: face conductances as two half-cells
//! in series, anisotropic k, convective top and optional bottom, adiabatic
//! sides. Produces the Quad-Diag matrix for the temperature rise
//! θ = T − T_amb, the right-hand side (W per cell), the heat capacity per
//! cell (J/K) for transient use, and the conductances to ambient (W/K) for
//! the energy balance.

pub mod cavity;
mod check;
mod materials;

pub use check::{check_system, unreachable_power};

pub use materials::{
    absent_plane, cell_conductivity, cell_materials, layer_plane_materials, powered_absent,
};
// Re-exported for the device assembly, which paints layers as the host does.
pub use crate::power::{layer_material, LayerMaterial};

use crate::grid::Grid;
use crate::matrix::QuadDiag;
use crate::power::{rasterize::coverage, LayerPower, Rect};
use crate::stack::{CoolingMap, Material, Stack};
use materials::constant_materials;
use rayon::prelude::*;

/// The assembled steady system `A θ = rhs`.
#[derive(Clone, Debug)]
pub struct System {
    pub a: QuadDiag,
    /// Power per cell, W.
    pub rhs: Vec<f64>,
    /// c·V per cell, J/K.
    pub capacity: Vec<f64>,
    /// Conductance to ambient through the top face, per top-plane cell, W/K.
    pub g_top: Vec<f64>,
    /// Same for the bottom face (zeros when adiabatic).
    pub g_bottom: Vec<f64>,
    /// The coolant of a liquid-cooled stack's cavities (`cavity`), added
    /// to the assembled solid system; `None` without cavities.
    pub coolant: Option<cavity::Coolant>,
}

/// A coolant entry's row, upstream row and downstream row.
type Entry = (usize, Option<usize>, Option<usize>);

/// Two half-cells in series: 1 / (d1/(2 k1) + d2/(2 k2)), per unit face area.
#[inline]
fn series(d1: f64, k1: f64, d2: f64, k2: f64) -> f64 {
    1.0 / (d1 / (2.0 * k1) + d2 / (2.0 * k2))
}

/// The system with constant properties (each layer's `material`).
pub fn assemble(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> System {
    let mut sys = System::empty();
    assemble_into(stack, grid, power, &mut sys);
    sys
}

/// [`assemble`] into the arrays of `sys` (reallocated only when their sizes
/// are not the grid's), bit for bit the system `assemble` returns.
pub fn assemble_into(stack: &Stack, grid: &Grid, power: &[LayerPower], sys: &mut System) {
    let mats = constant_materials(stack, grid, power);
    assemble_with(stack, grid, power, |z, j| mats[grid.layer_of_z[z]][j], sys)
}

/// The system with the properties of every cell given (`cell_materials`),
/// for the temperature-dependent solvers.
pub fn assemble_cells(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    cells: &[Material],
) -> System {
    let mut sys = System::empty();
    assemble_cells_into(stack, grid, power, cells, &mut sys);
    sys
}

/// [`assemble_cells`] into the arrays of `sys`, as [`assemble_into`]: a
/// k(T) re-assembly on the CPU allocates no n-sized array (the CUDA path's
/// `assemble_into` likewise).
pub fn assemble_cells_into(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    cells: &[Material],
    sys: &mut System,
) {
    let plane = grid.plane();
    assemble_with(stack, grid, power, |z, j| cells[z * plane + j], sys)
}

impl System {
    /// No arrays yet: the first assembly into it allocates them.
    pub fn empty() -> System {
        System {
            a: QuadDiag::zeros(0, 0, 0),
            rhs: Vec::new(),
            capacity: Vec::new(),
            g_top: Vec::new(),
            g_bottom: Vec::new(),
            coolant: None,
        }
    }

    /// The right-hand side's share that is not power: each coolant line's
    /// ṁ·c θ_in on its first cell (zeros without cavities).
    pub fn inlet_source(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.rhs.len()];
        for l in self.coolant.iter().flat_map(|c| &c.lines) {
            v[l.cells[0]] += l.w * l.inlet_theta;
        }
        v
    }

    /// A·1: the films to ambient plus each coolant inlet cell's ṁ·c (a
    /// coolant cell's outflow cancels its inflow elsewhere); `a.amb`
    /// without cavities.
    pub fn row_sums(&self) -> Vec<f64> {
        self.sums(|v, (c, _, _), [w_up, w_down, w_self]| v[c] += w_down - w_up - w_self)
    }

    /// Aᵀ1: the films plus each coolant outlet cell's ṁ·c, so that Σ (Aθ)
    /// = Aᵀ1·θ is the heat out through the films and the outlets.
    pub fn column_sums(&self) -> Vec<f64> {
        self.sums(|v, (c, u, d), [w_up, w_down, w_self]| {
            v[c] -= w_self;
            if let Some(u) = u {
                v[u] -= w_up;
            }
            if let Some(d) = d {
                v[d] += w_down;
            }
        })
    }

    /// `amb` with `f` applied to each coolant entry: (its row, upstream
    /// and downstream rows) and its couplings (upstream, downstream, the
    /// diagonal taken back; 0 where absent).
    fn sums(&self, f: impl Fn(&mut [f64], Entry, [f64; 3])) -> Vec<f64> {
        use crate::matrix::advection::{INLET, OUTLET};
        let mut v = self.a.amb.clone();
        for adv in self.coolant.iter().map(|c| &c.advection) {
            for k in 0..adv.len() {
                let up = Some(adv.up[k]).filter(|&u| u != INLET);
                let down = adv.down.get(k).copied().filter(|&d| d != OUTLET);
                let w_up = if up.is_some() { adv.w[k] } else { 0.0 };
                let w_down = if down.is_some() { adv.w_down[k] } else { 0.0 };
                let rows = (
                    adv.cell[k] as usize,
                    up.map(|u| u as usize),
                    down.map(|d| d as usize),
                );
                f(&mut v, rows, [w_up, w_down, adv.self_of(k)]);
            }
        }
        v
    }
}

/// `v` with `n` entries: kept when it has them (every entry is then
/// overwritten by the caller), else a fresh zeroed array.
fn sized(v: &mut Vec<f64>, n: usize) {
    if v.len() != n {
        *v = vec![0.0; n];
    }
}

/// Writes every entry of `sys` (nothing is left from a previous system).
fn assemble_with<F>(stack: &Stack, grid: &Grid, power: &[LayerPower], mat: F, sys: &mut System)
where
    F: Fn(usize, usize) -> Material + Sync,
{
    let (nx, ny, nz) = (grid.nx, grid.ny, grid.nz);
    let (plane, len) = (grid.plane(), grid.len());
    let (dx, dy) = (&grid.dx, &grid.dy);

    let a = &mut sys.a;
    (a.nx, a.ny, a.nz) = (nx, ny, nz);
    for v in [&mut a.d, &mut a.gx, &mut a.gy, &mut a.gz, &mut a.amb] {
        sized(v, len);
    }
    // Off-diagonals, one z plane per task. Each half-cell uses its own width.
    a.gx.par_chunks_mut(plane)
        .zip(a.gy.par_chunks_mut(plane))
        .zip(a.gz.par_chunks_mut(plane))
        .enumerate()
        .for_each(|(z, ((gx, gy), gz))| {
            let dz = grid.dz[z];
            for y in 0..ny {
                for x in 0..nx {
                    let j = x + nx * y;
                    let m = mat(z, j);
                    // No face past the last cell of a direction: 0.
                    (gx[j], gy[j], gz[j]) = (0.0, 0.0, 0.0);
                    if x + 1 < nx {
                        let n = mat(z, j + 1);
                        gx[j] = dy[y] * dz * series(dx[x], m.k[0], dx[x + 1], n.k[0]);
                    }
                    if y + 1 < ny {
                        let n = mat(z, j + nx);
                        gy[j] = dx[x] * dz * series(dy[y], m.k[1], dy[y + 1], n.k[1]);
                    }
                    if z + 1 < nz {
                        let n = mat(z + 1, j);
                        gz[j] = dx[x] * dy[y] * series(dz, m.k[2], grid.dz[z + 1], n.k[2]);
                    }
                }
            }
        });

    // Conductance to ambient: half-cell in series with the film 1/(h A)
    // (0 where h = 0 or the cell is absent).
    let to_ambient = |z: usize, h: &[f64]| -> Vec<f64> {
        (0..plane)
            .map(|j| grid.cell_area(j) / (grid.dz[z] / (2.0 * mat(z, j).k[2]) + 1.0 / h[j]))
            .collect()
    };
    sys.g_top = to_ambient(nz - 1, &film(grid, stack.h_top, stack.h_top_map.as_ref()));
    sys.g_bottom = match (stack.h_bottom, &stack.h_bottom_map) {
        (_, Some(map)) => to_ambient(0, &film(grid, 0.0, Some(map))),
        (Some(h), None) => to_ambient(0, &film(grid, h, None)),
        (None, None) => vec![0.0; plane],
    };

    // Diagonal: sum of the row's conductances plus those to ambient; the
    // same coupling to ambient, exactly, for the difference-form residual.
    // Absent cells (no conductance at all): identity rows, decoupled.
    let (gx, gy, gz) = (&a.gx, &a.gy, &a.gz);
    let (g_top, g_bottom) = (&sys.g_top, &sys.g_bottom);
    a.d.par_chunks_mut(plane)
        .zip(a.amb.par_chunks_mut(plane))
        .enumerate()
        .for_each(|(z, (d, amb))| {
            for (j, (dj, ambj)) in d.iter_mut().zip(amb).enumerate() {
                let i = j + z * plane;
                let mut s = gx[i] + gy[i] + gz[i];
                if j % nx > 0 {
                    s += gx[i - 1];
                }
                if j >= nx {
                    s += gy[i - nx];
                }
                if z > 0 {
                    s += gz[i - plane];
                }
                // Adding 0 changes no bit: s ≥ 0, never −0.
                let top = if z == nz - 1 { g_top[j] } else { 0.0 };
                let bottom = if z == 0 { g_bottom[j] } else { 0.0 };
                s = s + top + bottom;
                (*dj, *ambj) = if s == 0.0 {
                    (1.0, 1.0)
                } else {
                    (s, bottom + top)
                };
            }
        });
    if grid.is_uniform() {
        a.wx.clear();
        a.wy.clear();
    } else {
        // Multigrid rediscretises with the physical widths.
        a.wx.clone_from(&grid.dx);
        a.wy.clone_from(&grid.dy);
    }

    power_rhs_into(grid, power, &mut sys.rhs);
    sized(&mut sys.capacity, len);
    sys.capacity
        .par_chunks_mut(plane)
        .enumerate()
        .for_each(|(z, c)| {
            for (j, cj) in c.iter_mut().enumerate() {
                *cj = mat(z, j).heat_capacity * (grid.cell_area(j) * grid.dz[z]);
            }
        });
}

/// The film coefficient of every plane cell, W/(m²·K): `h` everywhere, or
/// the map's area-weighted mean over each cell (rectangles: later wins,
/// uncovered = 0; raster: pixels spread by overlap area).
pub fn film(grid: &Grid, h: f64, map: Option<&CoolingMap>) -> Vec<f64> {
    let plane = grid.plane();
    let Some(map) = map else {
        return vec![h; plane];
    };
    let mut out = vec![0.0; plane];
    match map {
        CoolingMap::Rects(rects) => {
            let mut left = vec![1.0; plane];
            for (r, h) in rects.iter().rev() {
                for (j, a) in coverage(r, grid) {
                    let f = (a / grid.cell_area(j)).min(left[j]);
                    left[j] -= f;
                    out[j] += f * h;
                }
            }
        }
        CoolingMap::Raster { rows, cols, values } => {
            let (w, l) = (grid.width(), grid.length());
            let pixel = w * l / (rows * cols) as f64;
            let ha: Vec<f64> = values.iter().map(|h| h * pixel).collect();
            let at = Rect {
                x0: 0.0,
                y0: 0.0,
                x1: w,
                y1: l,
            };
            crate::power::rasterize::add_pixels(&mut out, &ha, *rows, *cols, &at, grid);
            for (j, o) in out.iter_mut().enumerate() {
                *o /= grid.cell_area(j);
            }
        }
    }
    out
}

/// The right-hand side (W per cell) of the power maps: each layer's map split
/// evenly over its z cells. The matrix does not depend on the power, so a
/// sweep (`thermal::sweep`) reassembles only this per case.
pub fn power_rhs(grid: &Grid, power: &[LayerPower]) -> Vec<f64> {
    let mut rhs = Vec::new();
    power_rhs_into(grid, power, &mut rhs);
    rhs
}

/// [`power_rhs`] into `rhs`, every entry written.
fn power_rhs_into(grid: &Grid, power: &[LayerPower], rhs: &mut Vec<f64>) {
    let plane = grid.plane();
    sized(rhs, grid.len());
    for (z, row) in rhs.chunks_mut(plane).enumerate() {
        let l = grid.layer_of_z[z];
        let share = 1.0 / grid.layer_z[l].len() as f64;
        for (j, r) in row.iter_mut().enumerate() {
            *r = power[l].map_w.get(j).map_or(0.0, |p| p * share);
        }
    }
}
