//! Per-block temperatures: for every named block of a layer (floorplan unit
//! or inline rectangle), the min, area-weighted mean and max of the layer's
//! temperature map over the cells the block overlaps. Uses the power stage's
//! own [`coverage`], so a block's cells here are exactly the cells its power
//! went to. `output::blocks` writes them.

use crate::geometry::Rect;
use crate::grid::Grid;
use crate::power::rasterize::coverage;
use crate::power::Block;
use crate::stack::BlockMap;

impl BlockMap {
    /// This statistic of `t`.
    pub fn pick(self, t: &TempStats) -> f64 {
        match self {
            BlockMap::Max => t.max_k,
            BlockMap::Avg => t.avg_k,
            BlockMap::Min => t.min_k,
            BlockMap::Center => t.center_k,
        }
    }
}

/// Temperatures over a block's cells, K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TempStats {
    /// The cell that holds the block's centre (clamped to the footprint).
    pub center_k: f64,
    pub min_k: f64,
    /// Weighted by each cell's overlap area with the block, so a block that
    /// only clips a cell's corner counts that cell in proportion.
    pub avg_k: f64,
    pub max_k: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BlockStats {
    pub layer: String,
    pub block: String,
    pub power_w: f64,
    /// `None` when the block lies outside the footprint (no cell overlaps it).
    pub temp: Option<TempStats>,
}

/// The cells a block's power goes to, with their overlap areas, and the
/// cell holding its centre: rasterized once for a block read many times
/// (a stepping session's block reads).
#[derive(Clone, Debug)]
pub struct BlockFootprint {
    cells: Vec<(usize, f64)>,
    rect: Rect,
}

impl BlockFootprint {
    pub fn new(rect: &Rect, grid: &Grid) -> BlockFootprint {
        BlockFootprint {
            cells: coverage(rect, grid),
            rect: *rect,
        }
    }

    /// The footprint of block `b`: the cells of every rectangle (the union,
    /// as its power was spread), its centre that of its largest rectangle
    /// ([`Block::main_rect`]).
    pub fn of(b: &Block, grid: &Grid) -> BlockFootprint {
        BlockFootprint {
            cells: b.coverage(grid),
            rect: b.main_rect(),
        }
    }

    /// Min, area-weighted mean and max of `map_k` over the footprint, and
    /// its centre cell's value; `None` when no cell overlaps the block.
    pub fn stats(&self, map_k: &[f64], grid: &Grid) -> Option<TempStats> {
        let mut min_k = f64::INFINITY;
        let mut max_k = f64::NEG_INFINITY;
        let (mut sum, mut area) = (0.0, 0.0);
        for &(i, a) in &self.cells {
            let Some(&t) = map_k.get(i) else { continue };
            min_k = min_k.min(t);
            max_k = max_k.max(t);
            sum += a * t;
            area += a;
        }
        (area > 0.0).then(|| TempStats {
            center_k: center(&self.rect, map_k, grid),
            min_k,
            avg_k: sum / area,
            max_k,
        })
    }
}

/// Stats of `blocks` over `map_k`, a layer map in K (index `x + nx*y`, as from
/// [`Grid::layer_map`]). Min and max run over every cell overlapped with
/// positive area, however small: a block's hottest point may sit in a sliver.
pub fn layer_block_stats(
    layer: &str,
    map_k: &[f64],
    blocks: &[Block],
    grid: &Grid,
) -> Vec<BlockStats> {
    blocks
        .iter()
        .map(|b| BlockStats {
            layer: layer.to_string(),
            block: b.name.clone(),
            power_w: b.power_w,
            temp: BlockFootprint::of(b, grid).stats(map_k, grid),
        })
        .collect()
}

/// The value of the cell holding the centre of `r` (clamped to the grid).
fn center(r: &Rect, map_k: &[f64], grid: &Grid) -> f64 {
    let x = grid.column_of(0.5 * (r.x0 + r.x1));
    let y = grid.row_of(0.5 * (r.y0 + r.y1));
    map_k[x + grid.nx * y]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 × 2 grid of 1 mm cells; no stack needed for geometry alone.
    fn grid() -> Grid {
        Grid::uniform(4, 2, 4e-3, 2e-3, vec![1e-4], vec![0])
    }

    #[test]
    fn straddling_block_matches_hand_computation() {
        // T = 300 + x + 10 y.
        let map: Vec<f64> = (0..8)
            .map(|i| 300.0 + f64::from(i % 4 + 10 * (i / 4)))
            .collect();
        // x 0.5..2.0 mm, y 0.5..1.5 mm: overlaps cells x 0,1 and y 0,1.
        // Overlap areas (mm²): x0 0.5 wide, x1 1.0 wide; each y 0.5 tall.
        let rect = Rect {
            x0: 0.5e-3,
            y0: 0.5e-3,
            x1: 2.0e-3,
            y1: 1.5e-3,
        };
        let block = Block::new("alu", rect, 2.0);
        let s = layer_block_stats("logic", &map, &[block], &grid());
        let t = s[0].temp.unwrap();
        assert_eq!(t.min_k, 300.0);
        assert_eq!(t.max_k, 311.0);
        // (0.25*300 + 0.5*301 + 0.25*310 + 0.5*311) / 1.5
        let avg = (0.25 * 300.0 + 0.5 * 301.0 + 0.25 * 310.0 + 0.5 * 311.0) / 1.5;
        assert!((t.avg_k - avg).abs() < 1e-9, "{} vs {avg}", t.avg_k);
        // Centre (1.25 mm, 1.0 mm): cell x 1, y 1 (a face belongs to the cell above).
        assert_eq!(t.center_k, 311.0);
    }

    /// A block of two rectangles is one block: min and max over both,
    /// the mean weighted by each cell's overlap with the union, the centre
    /// that of the larger rectangle.
    #[test]
    fn rectangles_of_one_block_give_statistics_over_their_union() {
        // T = 300 + x + 10 y on 1 mm cells.
        let map: Vec<f64> = (0..8)
            .map(|i| 300.0 + f64::from(i % 4 + 10 * (i / 4)))
            .collect();
        let mm = |x0: f64, y0: f64, x1: f64, y1: f64| Rect {
            x0: x0 * 1e-3,
            y0: y0 * 1e-3,
            x1: x1 * 1e-3,
            y1: y1 * 1e-3,
        };
        // An L: cells (0,0), (1,0) whole, then (0,1) half.
        let block = Block {
            name: "l".into(),
            rects: vec![mm(0.0, 0.0, 2.0, 1.0), mm(0.0, 1.0, 0.5, 2.0)],
            power_w: 1.0,
        };
        let s = layer_block_stats("logic", &map, &[block], &grid());
        assert_eq!(s.len(), 1);
        let t = s[0].temp.unwrap();
        assert_eq!((t.min_k, t.max_k), (300.0, 310.0));
        let avg = (1.0 * 300.0 + 1.0 * 301.0 + 0.5 * 310.0) / 2.5;
        assert!((t.avg_k - avg).abs() < 1e-9, "{} vs {avg}", t.avg_k);
        // The larger rectangle's centre (1 mm, 0.5 mm): cell x 1, y 0.
        assert_eq!(t.center_k, 301.0);
    }
}
