//! Each cell's material, the input of assembly: a layer's own material
//! with its floorplan patches, outline fill and regions painted in by area
//! fraction ([`crate::power::layer_material`]), constant or with every temperature law
//! evaluated at the cell's temperature ([`cell_materials`]). Split from
//! `assemble.rs`, which turns these materials into conductances; the CUDA
//! assembly (`thermal::assembly_input`) takes the same per-layer materials.

use crate::grid::Grid;
use crate::power::{layer_material, rasterize::coverage, LayerMaterial, LayerPower, MaterialPatch};
use crate::stack::{Material, Stack};
use rayon::prelude::*;

/// The first plane cell that `map_w` (W per plane cell) powers but that
/// has no material ([`absent_plane`]): a map given whole may power only
/// cells that conduct, or its power would leave the energy balance.
pub fn powered_absent(
    grid: &Grid,
    power: &LayerPower,
    base: Material,
    map_w: &[f64],
) -> Option<usize> {
    let absent = absent_plane(grid, power, base);
    (absent.iter().zip(map_w)).position(|(a, w)| *a && *w != 0.0)
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
