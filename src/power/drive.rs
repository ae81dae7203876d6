//! Block powers set at run time: the layers whose map is by definition the
//! sum of their blocks' rectangles (power source `blocks` or `ptrace`, or
//! power only in such regions, as a package's dies), re-rasterized from new
//! block powers. A transient trace's columns drive blocks this way row by
//! row, and a stepping session sets them between steps; both go through
//! [`BlockDrive`], so the same powers give the same maps to the last bit.
//! Block footprints are rasterized once; a map is then a weighted sum of
//! them.

use super::LayerPower;
use crate::grid::Grid;
use crate::stack::{PowerSpec, Stack};

/// One block of a driven layer: its column among the set names (if any),
/// its stack-file power, and the share of its power each plane cell
/// receives.
struct DrivenBlock {
    column: Option<usize>,
    base_w: f64,
    shares: Vec<(usize, f64)>,
}

struct DrivenLayer {
    layer: usize,
    blocks: Vec<DrivenBlock>,
}

impl DrivenLayer {
    /// The layer's map: each block's power spread over its cells' shares.
    fn apply(&self, map: &mut [f64], values: &[f64]) {
        map.iter_mut().for_each(|v| *v = 0.0);
        for b in &self.blocks {
            let p = b.column.map_or(b.base_w, |c| values[c]);
            for &(i, s) in &b.shares {
                map[i] += p * s;
            }
        }
    }
}

/// The driven layers of a stack for a list of block names (the columns).
/// A layer is driven when one of its blocks is named; its other blocks keep
/// their stack-file power.
pub struct BlockDrive {
    driven: Vec<DrivenLayer>,
}

/// Whether layer `l`'s map is the sum of its blocks' rectangles, so that
/// setting a block's power re-rasterizes the layer exactly.
pub fn drivable(stack: &Stack, l: usize) -> bool {
    let layer = &stack.layers[l];
    let rects = |p: &Option<PowerSpec>| {
        matches!(
            p,
            None | Some(PowerSpec::Blocks { .. })
                | Some(PowerSpec::Ptrace { .. })
                | Some(PowerSpec::Uniform { .. })
        )
    };
    match layer.power {
        Some(PowerSpec::Blocks { .. }) | Some(PowerSpec::Ptrace { .. }) => true,
        None => {
            layer.regions.iter().any(|r| r.power.is_some())
                && layer.regions.iter().all(|r| rects(&r.power))
        }
        _ => false,
    }
}

impl BlockDrive {
    /// The layers `names` drive; `base` are the stack's maps
    /// (`layer_power`). Empty when no drivable layer has a named block.
    pub fn new(stack: &Stack, grid: &Grid, base: &[LayerPower], names: &[String]) -> BlockDrive {
        let col = |name: &str| names.iter().position(|n| n == name);
        let driven = (0..stack.layers.len())
            .filter(|&l| drivable(stack, l))
            .filter(|&l| base[l].blocks.iter().any(|b| col(&b.name).is_some()))
            .map(|l| DrivenLayer {
                layer: l,
                blocks: (base[l].blocks.iter())
                    .map(|b| {
                        let cov = b.coverage(grid);
                        let total: f64 = cov.iter().map(|(_, a)| a).sum();
                        DrivenBlock {
                            column: col(&b.name),
                            base_w: b.power_w,
                            shares: cov.into_iter().map(|(i, a)| (i, a / total)).collect(),
                        }
                    })
                    .collect(),
            })
            .collect();
        BlockDrive { driven }
    }

    /// Drives no layer (constant power).
    pub fn none() -> BlockDrive {
        BlockDrive { driven: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.driven.is_empty()
    }

    /// Re-rasterizes the driven layers of `maps` (W per plane cell, one per
    /// layer) from `values`, the power of each named block (W, by column).
    pub fn apply(&self, maps: &mut [Vec<f64>], values: &[f64]) {
        for d in &self.driven {
            d.apply(&mut maps[d.layer], values);
        }
    }

    /// As [`BlockDrive::apply`] for layer `l` alone; `false` (and `map`
    /// untouched) when the drive does not drive it.
    pub fn apply_layer(&self, l: usize, map: &mut [f64], values: &[f64]) -> bool {
        let d = self.driven.iter().find(|d| d.layer == l);
        d.inspect(|d| d.apply(map, values)).is_some()
    }

    /// The driven layers' block powers in `out` (the per-block report's)
    /// set from `values`.
    pub fn apply_blocks(&self, out: &mut [LayerPower], values: &[f64]) {
        for d in &self.driven {
            for (b, db) in out[d.layer].blocks.iter_mut().zip(&d.blocks) {
                if let Some(c) = db.column {
                    b.power_w = values[c];
                }
            }
        }
    }
}
