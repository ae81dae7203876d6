//! Finite-volume assembly (DESIGN.md §2): face conductances as two half-cells
//! in series, anisotropic k, convective top and optional bottom, adiabatic
//! sides. Produces the Quad-Diag matrix for the temperature rise
//! θ = T − T_amb, the right-hand side (W per cell), the heat capacity per
//! cell (J/K) for transient use, and the conductances to ambient (W/K) for
//! the energy balance.

use crate::grid::Grid;
use crate::matrix::QuadDiag;
use crate::power::{rasterize::coverage, LayerPower, MaterialPatch, Rect};
use crate::stack::{CoolingMap, Material, Stack};
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

/// A layer's material: uniform, or per plane cell where an outline's fill,
/// floorplan blocks or regions override it (mixed by area fraction: exact in
/// z, the parallel bound in-plane).
pub enum LayerMaterial {
    Uniform,
    /// Per plane cell: the fraction of the layer's own material and the
    /// area-weighted k and c of everything else painted on the cell.
    Mixed(Vec<(f64, [f64; 3], f64)>),
}

impl LayerMaterial {
    /// The cell's material when the layer's own is `base`.
    #[inline]
    pub fn mix(&self, plane_idx: usize, base: Material) -> Material {
        match self {
            LayerMaterial::Uniform => base,
            LayerMaterial::Mixed(v) => {
                let (own, acc_k, acc_c) = v[plane_idx];
                let mut k = [0.0; 3];
                for (d, kd) in k.iter_mut().enumerate() {
                    *kd = acc_k[d] + own * base.k[d];
                }
                Material {
                    k,
                    heat_capacity: acc_c + own * base.heat_capacity,
                }
            }
        }
    }
}

/// Paints a layer: the fill over the domain (or the layer's own material
/// when there is no outline), the own material over the outline, then the
/// patches in order; later paint wins. Per cell the shares are taken from
/// the last paint back (each at most what is left uncovered), so on a grid
/// snapped to the rectangles every cell is exactly one material, and where
/// cells straddle edges the mix is by area (in the uniform-grid case of
/// non-overlapping floorplan units, exactly the area fractions).
pub fn layer_material(grid: &Grid, power: &LayerPower) -> LayerMaterial {
    if power.patches.is_empty() && power.outline.is_none() {
        return LayerMaterial::Uniform;
    }
    // Paints after the first (domain-wide) one; None = the layer's own material.
    let mut paints: Vec<(&Rect, Option<Material>)> = Vec::new();
    if let Some((r, _)) = &power.outline {
        paints.push((r, None));
    }
    paints.extend(power.patches.iter().map(|p| (&p.rect, Some(p.material))));
    let plane = grid.plane();
    // shares[k][j]: area fraction of cell j covered by paint k.
    let mut frac: Vec<Vec<(usize, f64)>> = Vec::with_capacity(paints.len());
    for (k, (r, _)) in paints.iter().enumerate() {
        // The outline covers whole cells exactly (so an outline over the
        // whole domain changes nothing, to the bit).
        let snap = k == 0 && power.outline.is_some();
        frac.push(
            coverage(r, grid)
                .into_iter()
                .map(|(j, a)| {
                    let f = a / grid.cell_area(j);
                    (j, if snap && f > 1.0 - 1e-12 { 1.0 } else { f })
                })
                .collect(),
        );
    }
    // Uncovered share of each cell, from the last paint back.
    let mut left = vec![1.0; plane];
    let mut take: Vec<Vec<f64>> = Vec::with_capacity(paints.len());
    for cov in frac.iter().rev() {
        let t: Vec<f64> = cov
            .iter()
            .map(|&(j, f)| {
                // Rounding (units that tile a cell) never clips; overlaps do.
                let t = if f > left[j] + 1e-12 { left[j] } else { f };
                left[j] = (left[j] - t).max(0.0);
                t
            })
            .collect();
        take.push(t);
    }
    take.reverse();
    let mut acc = vec![(0.0, [0.0; 3], 0.0); plane];
    let mut covered = vec![0.0; plane];
    for (((_, m), cov), t) in paints.iter().zip(&frac).zip(&take) {
        for (&(j, _), &f) in cov.iter().zip(t) {
            covered[j] += f;
            match m {
                None => acc[j].0 += f,
                Some(m) => {
                    for d in 0..3 {
                        acc[j].1[d] += f * m.k[d];
                    }
                    acc[j].2 += f * m.heat_capacity;
                }
            }
        }
    }
    // The rest of each cell: the fill, or the layer's own material.
    for (a, c) in acc.iter_mut().zip(&covered) {
        let rest = (1.0 - c).max(0.0);
        match &power.outline {
            None => a.0 += rest,
            Some((_, fill)) => {
                for d in 0..3 {
                    a.1[d] += rest * fill.k[d];
                }
                a.2 += rest * fill.heat_capacity;
            }
        }
    }
    LayerMaterial::Mixed(acc)
}

/// Which plane cells of a layer have no material at all (`fill` or region
/// `"none"`); empty when the layer has none such. Maps show them as NaN.
pub fn absent_plane(grid: &Grid, power: &LayerPower, base: Material) -> Vec<bool> {
    match layer_material(grid, power) {
        LayerMaterial::Uniform => Vec::new(),
        m => {
            let v: Vec<bool> = (0..grid.plane())
                .map(|j| m.mix(j, base).is_absent())
                .collect();
            if v.iter().any(|&a| a) {
                v
            } else {
                Vec::new()
            }
        }
    }
}

/// Each layer's material per plane cell, floorplan patches mixed in.
fn constant_materials(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> Vec<Vec<Material>> {
    stack
        .layers
        .iter()
        .zip(power)
        .map(|(l, p)| {
            let m = layer_material(grid, p);
            (0..grid.plane()).map(|j| m.mix(j, l.material)).collect()
        })
        .collect()
}

/// Layer `l`'s material per plane cell when floorplan patches make it vary
/// in-plane, `None` when it is the layer's own material everywhere (the
/// per-layer content of device assembly, `thermal::assembly_input`).
pub fn layer_plane_materials(
    stack: &Stack,
    grid: &Grid,
    power: &LayerPower,
    l: usize,
) -> Option<Vec<Material>> {
    match layer_material(grid, power) {
        LayerMaterial::Uniform => None,
        m => Some(
            (0..grid.plane())
                .map(|j| m.mix(j, stack.layers[l].material))
                .collect(),
        ),
    }
}

/// The material of every cell with the laws of the layers and of their
/// floorplan patches (`unit_materials`) evaluated at the cell's temperature
/// `t_k`; patches without a law keep their constant properties. A patch with
/// a law enters the area-fraction mix at its 300 K value and is then
/// corrected by fraction × (value at T − value at 300 K), so constant
/// inputs assemble bit-identically to [`assemble`]. Fails with the cell
/// index when a law is not positive there.
pub fn cell_materials(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    t_k: &[f64],
) -> Result<Vec<Material>, usize> {
    let plane = grid.plane();
    let mixes: Vec<LayerMaterial> = power.iter().map(|p| layer_material(grid, p)).collect();
    // Per layer: (plane cell, area fraction, patch) of every patch with a law.
    let law_cover: Vec<Vec<(usize, f64, &MaterialPatch)>> = power
        .iter()
        .map(|p| {
            p.patches
                .iter()
                .filter(|q| q.law.is_some())
                .flat_map(|q| {
                    coverage(&q.rect, grid)
                        .into_iter()
                        .map(move |(j, a)| (j, a / grid.cell_area(j), q))
                })
                .collect()
        })
        .collect();
    let mut out = vec![
        Material {
            k: [0.0; 3],
            heat_capacity: 0.0
        };
        grid.len()
    ];
    out.par_chunks_mut(plane)
        .enumerate()
        .try_for_each(|(z, cells)| {
            let l = grid.layer_of_z[z];
            let layer = &stack.layers[l];
            for (j, c) in cells.iter_mut().enumerate() {
                let base = match &layer.law {
                    Some(law) => law.at(t_k[z * plane + j]).ok_or(z * plane + j)?,
                    None => layer.material,
                };
                *c = mixes[l].mix(j, base);
            }
            for &(j, f, q) in &law_cover[l] {
                let law = q.law.as_ref().expect("filtered");
                let at = law.at(t_k[z * plane + j]).ok_or(z * plane + j)?;
                let c = &mut cells[j];
                for d in 0..3 {
                    c.k[d] += f * (at.k[d] - q.material.k[d]);
                }
                c.heat_capacity += f * (at.heat_capacity - q.material.heat_capacity);
            }
            Ok::<(), usize>(())
        })?;
    Ok(out)
}

/// Two half-cells in series: 1 / (d1/(2 k1) + d2/(2 k2)), per unit face area.
#[inline]
fn series(d1: f64, k1: f64, d2: f64, k2: f64) -> f64 {
    1.0 / (d1 / (2.0 * k1) + d2 / (2.0 * k2))
}

/// Conductivity of every cell, `[kx, ky, kz]` interleaved (3 values per
/// cell, index order), W/(m·K): the layer's material with floorplan patches
/// mixed in exactly as the constant-property assembly uses them (a
/// temperature law at its reference value).
pub fn cell_conductivity(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> Vec<f64> {
    let plane = grid.plane();
    let mats = constant_materials(stack, grid, power);
    (0..grid.len())
        .flat_map(|i| mats[grid.layer_of_z[i / plane]][i % plane].k)
        .collect()
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
