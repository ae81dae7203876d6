//! Finite-volume assembly (DESIGN.md §2): face conductances as two half-cells
//! in series, anisotropic k, convective top and optional bottom, adiabatic
//! sides. Produces the Quad-Diag matrix for the temperature rise
//! θ = T − T_amb, the right-hand side (W per cell), the heat capacity per
//! cell (J/K) for transient use, and the conductances to ambient (W/K) for
//! the energy balance.

use crate::grid::Grid;
use crate::matrix::QuadDiag;
use crate::power::{rasterize::coverage, LayerPower, MaterialPatch};
use crate::stack::{Material, Stack};
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

/// A layer's material: uniform, or per plane cell where floorplan blocks
/// override it (mixed by area fraction: exact in z, the parallel bound in-plane).
enum LayerMaterial {
    Uniform,
    /// Per plane cell: the fraction covered by patches and the patches'
    /// area-weighted k and c; the layer's own material fills the rest.
    Mixed(Vec<(f64, [f64; 3], f64)>),
}

impl LayerMaterial {
    /// The cell's material when the layer's own is `base`.
    #[inline]
    fn mix(&self, plane_idx: usize, base: Material) -> Material {
        match self {
            LayerMaterial::Uniform => base,
            LayerMaterial::Mixed(v) => {
                let (frac, acc_k, acc_c) = v[plane_idx];
                let rest = (1.0 - frac).max(0.0);
                let mut k = [0.0; 3];
                for (d, kd) in k.iter_mut().enumerate() {
                    *kd = acc_k[d] + rest * base.k[d];
                }
                Material {
                    k,
                    heat_capacity: acc_c + rest * base.heat_capacity,
                }
            }
        }
    }
}

fn layer_material(grid: &Grid, power: &LayerPower) -> LayerMaterial {
    if power.patches.is_empty() {
        return LayerMaterial::Uniform;
    }
    let area = grid.cell_area();
    let mut acc = vec![(0.0, [0.0; 3], 0.0); grid.plane()];
    for patch in &power.patches {
        for (i, a) in coverage(&patch.rect, grid) {
            let f = a / area;
            acc[i].0 += f;
            for d in 0..3 {
                acc[i].1[d] += f * patch.material.k[d];
            }
            acc[i].2 += f * patch.material.heat_capacity;
        }
    }
    LayerMaterial::Mixed(acc)
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
    let area = grid.cell_area();
    let law_cover: Vec<Vec<(usize, f64, &MaterialPatch)>> = power
        .iter()
        .map(|p| {
            p.patches
                .iter()
                .filter(|q| q.law.is_some())
                .flat_map(|q| {
                    coverage(&q.rect, grid)
                        .into_iter()
                        .map(move |(j, a)| (j, a / area, q))
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
    let (dx, dy) = (grid.dx, grid.dy);
    let area_z = dx * dy;

    let mut a = QuadDiag::zeros(nx, ny, nz);
    // Off-diagonals, one z plane per task.
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
                        gx[j] = dy * dz * series(dx, m.k[0], dx, n.k[0]);
                    }
                    if y + 1 < ny {
                        let n = mat(z, j + nx);
                        gy[j] = dx * dz * series(dy, m.k[1], dy, n.k[1]);
                    }
                    if z + 1 < nz {
                        let n = mat(z + 1, j);
                        gz[j] = area_z * series(dz, m.k[2], grid.dz[z + 1], n.k[2]);
                    }
                }
            }
        });

    // Conductance to ambient: half-cell in series with the film 1/(h A).
    let to_ambient = |z: usize, h: f64| -> Vec<f64> {
        (0..plane)
            .map(|j| area_z / (grid.dz[z] / (2.0 * mat(z, j).k[2]) + 1.0 / h))
            .collect()
    };
    let g_top = to_ambient(nz - 1, stack.h_top);
    let g_bottom = match stack.h_bottom {
        Some(h) => to_ambient(0, h),
        None => vec![0.0; plane],
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

    let rhs = power_rhs(grid, power);
    let mut capacity = vec![0.0; n];
    for z in 0..nz {
        let vol = area_z * grid.dz[z];
        for j in 0..plane {
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
