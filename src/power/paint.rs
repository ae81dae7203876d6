//! A layer's in-plane paint: its fill, outline and material patches mixed
//! per plane cell by area fraction. Read by assembly for conductances and by
//! the power stage itself, which rejects power on a cell with no material.

use super::rasterize::coverage;
use super::LayerPower;
use crate::geometry::Rect;
use crate::grid::Grid;
use crate::material::Material;

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
