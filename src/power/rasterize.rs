//! Conservative rasterization: a rectangle's power goes to the in-plane cells
//! it overlaps, in proportion to overlap area. Shares are normalized by the
//! sum of the computed overlaps, so the cells receive the rectangle's power
//! to rounding, however it straddles cell edges. Raster maps use the same
//! rule, factored into x and y weights ([`add_pixels`]).

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

/// For each of `n_src` equal intervals tiling [0, extent], the (cell, weight)
/// pairs of the cells of size `d` (`n_cells` of them) it overlaps. Weights are
/// overlap lengths normalized by their sum, so each interval's weights add to
/// 1 to rounding: the 1D half of the overlap-area rule.
fn interval_weights(n_src: usize, extent: f64, n_cells: usize, d: f64) -> Vec<Vec<(usize, f64)>> {
    let step = extent / n_src as f64;
    (0..n_src)
        .map(|s| {
            let (lo, hi) = (s as f64 * step, (s + 1) as f64 * step);
            let first = ((lo / d).floor().max(0.0) as usize).min(n_cells - 1);
            let end = ((hi / d).ceil().max(0.0) as usize).clamp(first + 1, n_cells);
            let mut w: Vec<(usize, f64)> = (first..end)
                .map(|i| (i, hi.min((i + 1) as f64 * d) - lo.max(i as f64 * d)))
                .filter(|&(_, o)| o > 0.0)
                .collect();
            let sum: f64 = w.iter().map(|&(_, o)| o).sum();
            if sum > 0.0 {
                w.iter_mut().for_each(|(_, o)| *o /= sum);
            } else {
                // Only reachable through rounding at the far edge: keep the
                // power in the nearest cell rather than lose it.
                w = vec![(first, 1.0)];
            }
            w
        })
        .collect()
}

/// Adds a raster of `rows`×`cols` pixel powers (W, row-major, row 0 along the
/// top edge y = `length`) covering the footprint `width`×`length` to `map`.
/// Same rule as [`add_rect`] per pixel, but the overlap weights of an
/// axis-aligned pixel grid factor into x and y weights, so this costs
/// O(rows·(cols + nx)) instead of O(rows·cols·cells per pixel).
pub fn add_pixels(
    map: &mut [f64],
    values: &[f64],
    rows: usize,
    cols: usize,
    width: f64,
    length: f64,
    grid: &Grid,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let wx = interval_weights(cols, width, grid.nx, grid.dx);
    // Indexed bottom-up (pixel row r is y interval rows-1-r).
    let wy = interval_weights(rows, length, grid.ny, grid.dy);
    let mut strip = vec![0.0; grid.nx];
    for (r, row) in values.chunks_exact(cols).take(rows).enumerate() {
        // strip[ix] = Σ_c p[r][c]·wx[c][ix]: the pixel row spread over x cells.
        strip.fill(0.0);
        for (p, w) in row.iter().zip(&wx) {
            if *p != 0.0 {
                for &(ix, f) in w {
                    strip[ix] += p * f;
                }
            }
        }
        // map[iy][·] += wy[row][iy]·strip: then over y cells.
        for &(iy, f) in &wy[rows - 1 - r] {
            let cells = &mut map[iy * grid.nx..(iy + 1) * grid.nx];
            for (m, s) in cells.iter_mut().zip(&strip) {
                *m += f * s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(nx: usize, ny: usize, w: f64, l: f64) -> Grid {
        Grid {
            nx,
            ny,
            nz: 1,
            dx: w / nx as f64,
            dy: l / ny as f64,
            dz: vec![1e-4],
            layer_of_z: vec![0],
            layer_z: std::iter::once(0..1).collect(),
        }
    }

    #[test]
    fn pixels_match_per_rectangle_rule() {
        // A 3×5 raster on a 4×7 grid: no pixel edge lines up with a cell edge.
        let (w, l) = (2e-3, 3e-3);
        let g = grid(4, 7, w, l);
        let (rows, cols) = (3, 5);
        let values: Vec<f64> = (0..rows * cols).map(|i| (i * i % 7) as f64 + 0.5).collect();
        let mut fast = vec![0.0; g.plane()];
        add_pixels(&mut fast, &values, rows, cols, w, l, &g);
        let mut slow = vec![0.0; g.plane()];
        for r in 0..rows {
            for c in 0..cols {
                let rect = Rect {
                    x0: c as f64 * w / cols as f64,
                    x1: (c + 1) as f64 * w / cols as f64,
                    y0: (rows - 1 - r) as f64 * l / rows as f64,
                    y1: (rows - r) as f64 * l / rows as f64,
                };
                assert!(add_rect(&mut slow, &rect, values[r * cols + c], &g));
            }
        }
        let total: f64 = values.iter().sum();
        for (a, b) in fast.iter().zip(&slow) {
            assert!((a - b).abs() <= 1e-13 * total, "{a} vs {b}");
        }
        assert!((fast.iter().sum::<f64>() - total).abs() <= 1e-13 * total);
    }
}
