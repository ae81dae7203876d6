//! Leakage power: P = p_ref·exp(β (T − t_ref)) for each leaking
//! source, added to the dynamic power. A block, or a layer whose source is
//! uniform or made of blocks, leaks as one region at its area-weighted mean
//! temperature (over the layer's z cells), spread over its area; a layer
//! with a raster source leaks per plane cell, p_ref split in proportion to
//! the raster's dynamic power, each cell at its own (z-mean) temperature.
//! Either way the power goes into the layer's z cells evenly, as the
//! dynamic power does (`assemble`). Sources are placed as the dynamic power
//! is (`power::layer`): a layer's blocks at its `origin`, a region's at the
//! region's, a layer's own leakage over its outline (else the domain); cells
//! with no material (fill or region `"none"`) never receive leakage.

use crate::grid::Grid;
use crate::power::{rasterize::coverage, LayerPower, Rect};
use crate::stack::{BlockSpec, LeakageSpec, PowerSpec, Stack};

/// One leaking source: a region, or a raster's cells.
#[derive(Clone, Debug)]
pub struct LeakSource {
    /// "layer" or "layer/block", for reports and the runaway message.
    pub name: String,
    pub layer: usize,
    pub spec: LeakageSpec,
    /// Plane cells and weights: the area fractions of a region (summing to
    /// 1), or the share of p_ref of each raster cell.
    pub cells: Vec<(usize, f64)>,
    /// Per cell (raster) or as one region at the mean temperature.
    pub per_cell: bool,
}

/// Every leaking source of a stack.
#[derive(Clone, Debug, Default)]
pub struct LeakageModel {
    pub sources: Vec<LeakSource>,
}

/// Leakage at one temperature field: per source, W, and per grid cell, W.
#[derive(Clone, Debug)]
pub struct LeakageEval {
    pub per_source_w: Vec<f64>,
    pub cell_w: Vec<f64>,
}

impl LeakageEval {
    pub fn total_w(&self) -> f64 {
        self.per_source_w.iter().fold(0.0, |a, b| a + b)
    }
}

/// A block's rectangles in domain coordinates: moved by its source's
/// `origin` and clamped to the footprint they were checked against (the
/// dynamic power's `layer_power` refuses blocks outside it).
fn placed(b: &BlockSpec, (ox, oy): (f64, f64), within: Rect) -> Vec<Rect> {
    (b.rects().into_iter())
        .map(|r| Rect {
            x0: (r.x0 + ox).max(within.x0),
            y0: (r.y0 + oy).max(within.y0),
            x1: (r.x1 + ox).min(within.x1),
            y1: (r.y1 + oy).min(within.y1),
        })
        .collect()
}

fn normalized(cells: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    let s: f64 = cells.iter().map(|c| c.1).sum();
    if s > 0.0 {
        cells.into_iter().map(|(j, w)| (j, w / s)).collect()
    } else {
        cells
    }
}

impl LeakageModel {
    pub fn new(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> LeakageModel {
        let mut sources = Vec::new();
        let domain = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: stack.width_m,
            y1: stack.length_m,
        };
        for (l, layer) in stack.layers.iter().enumerate() {
            if !layer.has_leakage() {
                continue;
            }
            let mix = crate::assemble::layer_material(grid, &power[l]);
            let present = |cells: Vec<(usize, f64)>| -> Vec<(usize, f64)> {
                let kept = cells
                    .into_iter()
                    .filter(|&(j, _)| !mix.mix(j, layer.material).is_absent())
                    .collect();
                normalized(kept)
            };
            let footprint = layer.outline.unwrap_or(domain);
            let mut blocks =
                |power: &Option<PowerSpec>, origin: (f64, f64), within: Rect, at: &str| {
                    let Some(PowerSpec::Blocks { blocks }) = power else {
                        return;
                    };
                    for b in blocks {
                        let Some(spec) = b.leakage else { continue };
                        let cells = (placed(b, origin, within).iter())
                            .flat_map(|r| coverage(r, grid))
                            .collect();
                        sources.push(LeakSource {
                            name: format!("{at}/{}", b.name),
                            layer: l,
                            spec,
                            cells: present(cells),
                            per_cell: false,
                        });
                    }
                };
            blocks(&layer.power, layer.origin, footprint, &layer.name);
            for r in &layer.regions {
                let at = format!("{}/{}", layer.name, r.name);
                blocks(&r.power, r.origin, r.rect, &at);
            }
            let Some(spec) = layer.leakage else { continue };
            let raster = matches!(layer.power, Some(PowerSpec::Raster { .. }));
            let map = &power[l].map_w;
            let cells = if raster && map.iter().any(|p| *p > 0.0) {
                map.iter()
                    .enumerate()
                    .filter(|(_, p)| **p > 0.0)
                    .map(|(j, p)| (j, *p))
                    .collect()
            } else {
                coverage(&footprint, grid)
            };
            sources.push(LeakSource {
                name: layer.name.clone(),
                layer: l,
                spec,
                cells: present(cells),
                per_cell: raster,
            });
        }
        LeakageModel { sources }
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Leakage at the absolute temperatures `t_k` (one per grid cell).
    pub fn eval(&self, grid: &Grid, t_k: &[f64]) -> LeakageEval {
        let mut cell_w = Vec::new();
        let per_source_w = self.eval_into(grid, t_k, &mut cell_w);
        LeakageEval {
            per_source_w,
            cell_w,
        }
    }

    /// [`Self::eval`] with the power per cell into `cell_w` (resized,
    /// zeroed first: kept across the iterations of a loop); returns the
    /// power per source, W.
    pub fn eval_into(&self, grid: &Grid, t_k: &[f64], cell_w: &mut Vec<f64>) -> Vec<f64> {
        let plane = grid.plane();
        cell_w.clear();
        cell_w.resize(grid.len(), 0.0);
        let mut per_source_w = Vec::with_capacity(self.sources.len());
        for s in &self.sources {
            let zr = grid.layer_z[s.layer].clone();
            let nzl = zr.len() as f64;
            let t_col = |j: usize| zr.clone().map(|z| t_k[z * plane + j]).sum::<f64>() / nzl;
            let leak = |t: f64| s.spec.p_ref * (s.spec.beta * (t - s.spec.t_ref)).exp();
            let mut total = 0.0;
            if s.per_cell {
                for &(j, w) in &s.cells {
                    let p = w * leak(t_col(j));
                    total += p;
                    for z in zr.clone() {
                        cell_w[z * plane + j] += p / nzl;
                    }
                }
            } else {
                let t_mean: f64 = s.cells.iter().map(|&(j, w)| w * t_col(j)).sum();
                total = leak(t_mean);
                for &(j, w) in &s.cells {
                    for z in zr.clone() {
                        cell_w[z * plane + j] += total * w / nzl;
                    }
                }
            }
            per_source_w.push(total);
        }
        per_source_w
    }
}
