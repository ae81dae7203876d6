//! Conservative rasterization: a rectangle's power goes to the in-plane cells
//! it overlaps, in proportion to overlap area. Shares are normalized by the
//! sum of the computed overlaps, so the cells receive the rectangle's power
//! to rounding, however it straddles cell edges.

use super::Rect;
use crate::grid::Grid;

/// (plane index `x + nx*y`, overlap area m²) of every cell a rectangle touches
/// with positive area. The rectangle is clipped to the footprint.
pub fn coverage(rect: &Rect, grid: &Grid) -> Vec<(usize, f64)> {
    let (nx, ny, dx, dy) = (grid.nx, grid.ny, grid.dx, grid.dy);
    let span = |lo: f64, hi: f64, d: f64, n: usize| {
        let a = ((lo / d).floor().max(0.0) as usize).min(n);
        let b = ((hi / d).ceil().max(0.0) as usize).min(n);
        a..b
    };
    let mut out = Vec::new();
    for iy in span(rect.y0, rect.y1, dy, ny) {
        let oy = (rect.y1.min((iy + 1) as f64 * dy) - rect.y0.max(iy as f64 * dy)).max(0.0);
        if oy <= 0.0 {
            continue;
        }
        for ix in span(rect.x0, rect.x1, dx, nx) {
            let ox = (rect.x1.min((ix + 1) as f64 * dx) - rect.x0.max(ix as f64 * dx)).max(0.0);
            if ox > 0.0 {
                out.push((ix + nx * iy, ox * oy));
            }
        }
    }
    out
}

/// Adds `power_w` of a rectangle to `map` (W per plane cell) by overlap area.
/// Returns false (and adds nothing) when the rectangle misses the grid.
pub fn add_rect(map: &mut [f64], rect: &Rect, power_w: f64, grid: &Grid) -> bool {
    let cov = coverage(rect, grid);
    let total: f64 = cov.iter().map(|(_, a)| a).sum();
    if total <= 0.0 {
        return false;
    }
    for (i, a) in cov {
        map[i] += power_w * (a / total);
    }
    true
}
