//! Each cell's material, the input of assembly: a layer's own material
//! with its floorplan patches, outline fill and regions painted in by area
//! fraction ([`layer_material`]), constant or with every temperature law
//! evaluated at the cell's temperature ([`cell_materials`]). Split from
//! `assemble.rs`, which turns these materials into conductances; the CUDA
//! assembly (`thermal::assembly_input`) takes the same per-layer materials.

use crate::grid::Grid;
use crate::power::{rasterize::coverage, LayerPower, MaterialPatch, Rect};
use crate::stack::{Material, Stack};
use rayon::prelude::*;

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
pub(super) fn constant_materials(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
) -> Vec<Vec<Material>> {
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
/// inputs assemble bit-identically to [`assemble`](super::assemble()). Fails with the cell
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
