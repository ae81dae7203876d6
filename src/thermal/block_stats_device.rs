//! Per-block statistics reduced on the device: the host's side.
//! `block_stats::layer_block_stats` reads a layer map over the cells
//! `power::rasterize::coverage` gives a block, weighted by overlap area; a
//! GPU reads the same cells of the map it built, so that a layer whose map
//! no output asks for never comes down for its blocks' sake.
//!
//! [`layer_blocks`] factors each block's coverage into its columns with
//! their overlap widths `ox` and its rows with their heights `oy` (the
//! cells are their product, row by row, and a cell's weight `ox·oy` is the
//! very product `coverage` forms, so bit for bit the same), plus the cell
//! holding the block's centre. The cells of a block are cut into chunks of
//! [`CHUNK`] (row-major) at fixed positions; the device reduces each chunk
//! with a fixed tree (min, max, Σ w·T, Σ w, and T at the centre) and
//! [`block_stats`] merges a block's chunks in order: min, max and centre
//! equal the host's exactly, the mean to rounding.

use super::block_stats::{BlockStats, TempStats};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::rasterize::{span, step_of, SLIVER};
use crate::power::{LayerPower, Rect};
use crate::stack::Stack;
use std::ops::Range;

/// Cells per chunk of a block (fixed: the sums' rounding depends on it).
pub const CHUNK: usize = 1 << 15;

/// The blocks of one layer as a device reduces them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerBlocks {
    pub layer: usize,
    /// Cells per row of the plane.
    pub nx: usize,
    /// The layer's z cells: the map comes as Σ over them, divided here.
    pub z: Range<usize>,
    /// Per rectangle of a block (a box): its first entry in `cols`, its
    /// columns, its first entry in `rows`, its rows, the plane index of
    /// its block's centre cell.
    pub blocks: Vec<[usize; 5]>,
    /// Per box, the block (index in the layer's blocks) it belongs to: a
    /// block of several rectangles has a box each, merged on the host.
    pub owner: Vec<usize>,
    pub cols: Vec<usize>,
    /// Overlap width of each entry of `cols`, m.
    pub ox: Vec<f64>,
    pub rows: Vec<usize>,
    /// Overlap height of each entry of `rows`, m.
    pub oy: Vec<f64>,
    /// Per chunk: its box and the box's first cell (row-major) in it.
    pub chunks: Vec<(usize, usize)>,
}

impl LayerBlocks {
    /// Whether every index the tables hold lies inside a plane of `nx` ×
    /// `ny` and a field of `nz` z cells (a device reads them unchecked).
    pub fn fits(&self, nx: usize, ny: usize, nz: usize) -> bool {
        let (nc, nr) = (self.cols.len(), self.rows.len());
        self.nx == nx
            && self.z.start < self.z.end
            && self.z.end <= nz
            && self.ox.len() == nc
            && self.owner.len() == self.blocks.len()
            && self.oy.len() == nr
            && self.cols.iter().all(|&i| i < nx)
            && self.rows.iter().all(|&i| i < ny)
            && (self.blocks.iter())
                .all(|&[c0, n_c, r0, n_r, ctr]| c0 + n_c <= nc && r0 + n_r <= nr && ctr < nx * ny)
            && (self.chunks.iter()).all(|&(b, first)| {
                (self.blocks.get(b)).is_some_and(|g| first == 0 || first < g[1] * g[3])
            })
    }
}

/// Per chunk of a [`LayerBlocks`]: min, max, Σ w·T, Σ w over the chunk's
/// cells, and T at the block's centre cell.
pub type BlockPartial = [f64; 5];

/// Cells of one axis with their overlap lengths, m.
pub type Overlaps = Vec<(usize, f64)>;

/// The cells of an axis `rect` overlaps by more than a sliver, and the
/// lengths, as `coverage` computes them.
fn axis(edges: &[f64], widths: &[f64], lo: f64, hi: f64) -> Overlaps {
    (span(edges, step_of(widths), lo, hi))
        .map(|i| (i, (hi.min(edges[i + 1]) - lo.max(edges[i])).max(0.0)))
        .filter(|&(i, o)| o > SLIVER * widths[i])
        .collect()
}

/// The columns and rows of `rect` with their overlaps: the cells of
/// `coverage(rect, grid)` are rows × columns, row by row.
pub fn block_axes(rect: &Rect, grid: &Grid) -> (Overlaps, Overlaps) {
    let rows = axis(&grid.ye, &grid.dy, rect.y0, rect.y1);
    let cols = match rows.is_empty() {
        true => Vec::new(),
        false => axis(&grid.xe, &grid.dx, rect.x0, rect.x1),
    };
    (cols, rows)
}

/// The plane index of the cell holding the centre of `r` (clamped), as
/// `layer_block_stats` reads it.
fn centre(r: &Rect, grid: &Grid) -> usize {
    grid.column_of(0.5 * (r.x0 + r.x1)) + grid.nx * grid.row_of(0.5 * (r.y0 + r.y1))
}

/// The geometry of every layer that has blocks, bottom up.
pub fn layer_blocks(grid: &Grid, power: &[LayerPower]) -> Vec<LayerBlocks> {
    let mut out = Vec::new();
    for (l, p) in power.iter().enumerate() {
        if p.blocks.is_empty() {
            continue;
        }
        let mut lb = LayerBlocks {
            layer: l,
            nx: grid.nx,
            z: grid.layer_z[l].clone(),
            ..LayerBlocks::default()
        };
        for (owner, block) in p.blocks.iter().enumerate() {
            let ctr = centre(&block.main_rect(), grid);
            for rect in &block.rects {
                let b = lb.blocks.len();
                let (cols, rows) = block_axes(rect, grid);
                let cells = cols.len() * rows.len();
                lb.blocks
                    .push([lb.cols.len(), cols.len(), lb.rows.len(), rows.len(), ctr]);
                lb.owner.push(owner);
                // A box of no cells still gets a chunk (its centre).
                lb.chunks
                    .extend((0..cells.max(1)).step_by(CHUNK).map(|first| (b, first)));
                for (i, o) in cols {
                    lb.cols.push(i);
                    lb.ox.push(o);
                }
                for (i, o) in rows {
                    lb.rows.push(i);
                    lb.oy.push(o);
                }
            }
        }
        out.push(lb);
    }
    out
}

/// The partials of `lb` from `sum`, the layer's map before the division
/// (Σ over its z cells of T), with NaN at `absent` cells as the outputs
/// mark them: the device's reduction done sequentially on the host, for
/// tests.
pub fn host_block_partials(lb: &LayerBlocks, sum: &[f64], absent: &[bool]) -> Vec<BlockPartial> {
    let cells = lb.z.len() as f64;
    let t = |j: usize| match absent.get(j) {
        Some(true) => f64::NAN,
        _ => sum[j] / cells,
    };
    (lb.chunks.iter())
        .map(|&(b, first)| {
            let [c0, nc, r0, nr, ctr] = lb.blocks[b];
            let mut p = [f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0, t(ctr)];
            for q in first..(first + CHUNK).min(nc * nr) {
                let (r, k) = (r0 + q / nc, c0 + q % nc);
                let v = t(lb.cols[k] + lb.nx * lb.rows[r]);
                let w = lb.ox[k] * lb.oy[r];
                p[0] = p[0].min(v);
                p[1] = p[1].max(v);
                p[2] += w * v;
                p[3] += w;
            }
            p
        })
        .collect()
}

/// Per layer (`None`: no blocks reduced) the statistics of its blocks from
/// the device's partials for `req` (one list per [`LayerBlocks`]).
pub fn block_stats(
    stack: &Stack,
    power: &[LayerPower],
    req: &[LayerBlocks],
    partials: &[Vec<BlockPartial>],
) -> Result<Vec<Option<Vec<BlockStats>>>, BackendError> {
    if partials.len() != req.len() {
        return Err(BackendError::Length(partials.len(), req.len()));
    }
    let mut out = vec![None; stack.layers.len()];
    for (lb, parts) in req.iter().zip(partials) {
        if parts.len() != lb.chunks.len() {
            return Err(BackendError::Length(parts.len(), lb.chunks.len()));
        }
        let (Some(layer), Some(p)) = (stack.layers.get(lb.layer), power.get(lb.layer)) else {
            return Err(BackendError::Length(lb.layer, stack.layers.len()));
        };
        let boxes = p.blocks.iter().map(|b| b.rects.len()).sum::<usize>();
        if boxes != lb.blocks.len() || lb.owner.len() != lb.blocks.len() {
            return Err(BackendError::Length(lb.blocks.len(), boxes));
        }
        let mut acc = vec![[f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0, f64::NAN]; p.blocks.len()];
        for (&(b, _), v) in lb.chunks.iter().zip(parts) {
            // Every box of a block holds the block's centre cell.
            let Some(a) = lb.owner.get(b).and_then(|&o| acc.get_mut(o)) else {
                return Err(BackendError::Length(b, lb.owner.len()));
            };
            a[0] = a[0].min(v[0]);
            a[1] = a[1].max(v[1]);
            a[2] += v[2];
            a[3] += v[3];
            a[4] = v[4];
        }
        let stats = (p.blocks.iter().zip(&acc))
            .map(|(block, a)| BlockStats {
                layer: layer.name.clone(),
                block: block.name.clone(),
                power_w: block.power_w,
                temp: (a[3] > 0.0).then(|| TempStats {
                    center_k: a[4],
                    min_k: a[0],
                    avg_k: a[2] / a[3],
                    max_k: a[1],
                }),
            })
            .collect();
        out[lb.layer] = Some(stats);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "block_stats_device_tests.rs"]
mod tests;
