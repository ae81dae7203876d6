//! Finite-volume assembly (DESIGN.md §2): face conductances as two half-cells
//! in series, anisotropic k, convective top and optional bottom, adiabatic
//! sides. Produces the Quad-Diag matrix for the temperature rise
//! θ = T − T_amb, the right-hand side (W per cell), the heat capacity per
//! cell (J/K) for transient use, and the conductances to ambient (W/K) for
//! the energy balance.

mod materials;

pub use materials::{
    absent_plane, cell_conductivity, cell_materials, layer_material, layer_plane_materials,
    LayerMaterial,
};

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
}

/// Two half-cells in series: 1 / (d1/(2 k1) + d2/(2 k2)), per unit face area.
#[inline]
fn series(d1: f64, k1: f64, d2: f64, k2: f64) -> f64 {
    1.0 / (d1 / (2.0 * k1) + d2 / (2.0 * k2))
}

/// The system with constant properties (each layer's `material`).
pub fn assemble(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> System {
    let mats = constant_materials(stack, grid, power);
    assemble_with(stack, grid, power, |z, j| mats[grid.layer_of_z[z]][j])
}

/// The system with the properties of every cell given (`cell_materials`),
/// for the temperature-dependent solvers.
pub fn assemble_cells(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    cells: &[Material],
) -> System {
    let plane = grid.plane();
    assemble_with(stack, grid, power, |z, j| cells[z * plane + j])
}

fn assemble_with<F>(stack: &Stack, grid: &Grid, power: &[LayerPower], mat: F) -> System
where
    F: Fn(usize, usize) -> Material + Sync,
{
    let (nx, ny, nz) = (grid.nx, grid.ny, grid.nz);
    let plane = grid.plane();
    let (dx, dy) = (&grid.dx, &grid.dy);

    let mut a = QuadDiag::zeros(nx, ny, nz);
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
    let g_top = to_ambient(nz - 1, &film(grid, stack.h_top, stack.h_top_map.as_ref()));
    let g_bottom = match (stack.h_bottom, &stack.h_bottom_map) {
        (_, Some(map)) => to_ambient(0, &film(grid, 0.0, Some(map))),
        (Some(h), None) => to_ambient(0, &film(grid, h, None)),
        (None, None) => vec![0.0; plane],
    };

    // Diagonal: sum of the row's conductances plus those to ambient.
    let n = grid.len();
    let (gx, gy, gz) = (&a.gx, &a.gy, &a.gz);
    a.d.par_chunks_mut(plane).enumerate().for_each(|(z, d)| {
        for (j, dj) in d.iter_mut().enumerate() {
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
            if z == nz - 1 {
                s += g_top[j];
            }
            if z == 0 {
                s += g_bottom[j];
            }
            *dj = s;
        }
    });
    // The same coupling to ambient, exactly, for the difference-form residual.
    let top = (nz - 1) * plane;
    for j in 0..plane {
        a.amb[j] += g_bottom[j];
        a.amb[top + j] += g_top[j];
    }
    // Absent cells (no conductance at all): identity rows, decoupled.
    for (d, amb) in a.d.iter_mut().zip(a.amb.iter_mut()) {
        if *d == 0.0 {
            (*d, *amb) = (1.0, 1.0);
        }
    }
    if !grid.is_uniform() {
        // Multigrid rediscretises with the physical widths.
        (a.wx, a.wy) = (grid.dx.clone(), grid.dy.clone());
    }

    let rhs = power_rhs(grid, power);
    let mut capacity = vec![0.0; n];
    for z in 0..nz {
        for j in 0..plane {
            let vol = grid.cell_area(j) * grid.dz[z];
            capacity[z * plane + j] = mat(z, j).heat_capacity * vol;
        }
    }
    System {
        a,
        rhs,
        capacity,
        g_top,
        g_bottom,
    }
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
    let plane = grid.plane();
    let mut rhs = vec![0.0; grid.len()];
    for (l, zr) in grid.layer_z.iter().enumerate() {
        let share = 1.0 / zr.len() as f64;
        for z in zr.clone() {
            for j in 0..plane {
                if let Some(p) = power[l].map_w.get(j) {
                    rhs[z * plane + j] = p * share;
                }
            }
        }
    }
    rhs
}
