//! Conservative rasterization: a rectangle's power goes to the in-plane cells
//! it overlaps, in proportion to overlap area. Shares are normalized by the
//! sum of the computed overlaps, so the cells receive the rectangle's power
//! to rounding, however it straddles cell edges. Raster maps use the same
//! rule, factored into x and y weights ([`add_pixels`]).

use super::Rect;
use crate::grid::Grid;

/// Overlaps below this fraction of a cell's width are rounding (an edge
/// meant to coincide with the rectangle's), not coverage: counted, they
/// would make a cell present with k ≈ 1e-13·k and a floating temperature.
pub(crate) const SLIVER: f64 = 1e-12;

/// (plane index `x + nx*y`, overlap area m²) of every cell a rectangle touches
/// with positive area (more than `SLIVER` of the cell in each direction).
/// The rectangle is clipped to the footprint.
pub fn coverage(rect: &Rect, grid: &Grid) -> Vec<(usize, f64)> {
    let nx = grid.nx;
    let (sx, sy) = (step_of(&grid.dx), step_of(&grid.dy));
    let mut out = Vec::new();
    for iy in span(&grid.ye, sy, rect.y0, rect.y1) {
        let oy = (rect.y1.min(grid.ye[iy + 1]) - rect.y0.max(grid.ye[iy])).max(0.0);
        if oy <= SLIVER * grid.dy[iy] {
            continue;
        }
        for ix in span(&grid.xe, sx, rect.x0, rect.x1) {
            let ox = (rect.x1.min(grid.xe[ix + 1]) - rect.x0.max(grid.xe[ix])).max(0.0);
            if ox > SLIVER * grid.dx[ix] {
                out.push((ix + nx * iy, ox * oy));
            }
        }
    }
    out
}

/// Cells of an axis that may overlap [lo, hi] (zero overlaps are filtered
/// by the caller). A uniform axis (`step`) finds them by division, exactly
/// as the uniform grid always did (so its results stay bit-identical: a
/// rounding sliver at a coinciding edge falls the same way), any other by
/// binary search on the edges.
pub(crate) fn span(edges: &[f64], step: Option<f64>, lo: f64, hi: f64) -> std::ops::Range<usize> {
    let n = edges.len() - 1;
    match step {
        Some(d) => {
            let a = ((lo / d).floor().max(0.0) as usize).min(n);
            let b = ((hi / d).ceil().max(0.0) as usize).min(n);
            a..b
        }
        None => {
            let a = edges.partition_point(|&e| e <= lo).saturating_sub(1).min(n);
            let b = edges.partition_point(|&e| e < hi).min(n);
            a..b.max(a)
        }
    }
}

/// The common width of an axis's cells, if they are all alike.
pub(crate) fn step_of(widths: &[f64]) -> Option<f64> {
    widths.iter().all(|&w| w == widths[0]).then(|| widths[0])
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

/// For each of `n_src` equal intervals tiling [lo, hi], the (cell, weight)
/// pairs of the cells with these `edges` it overlaps. Weights are overlap
/// lengths normalized by their sum, so each interval's weights add to 1 to
/// rounding: the 1D half of the overlap-area rule.
fn interval_weights(
    n_src: usize,
    lo: f64,
    hi: f64,
    edges: &[f64],
    widths: &[f64],
) -> Vec<Vec<(usize, f64)>> {
    let step = (hi - lo) / n_src as f64;
    let n_cells = edges.len() - 1;
    let cell = step_of(widths);
    (0..n_src)
        .map(|s| {
            let (a, b) = (lo + s as f64 * step, lo + (s + 1) as f64 * step);
            let r = span(edges, cell, a, b);
            let first = r.start.min(n_cells - 1);
            let r = r.start.min(n_cells - 1)..r.end.clamp(first + 1, n_cells);
            let mut w: Vec<(usize, f64)> = r
                .map(|i| (i, b.min(edges[i + 1]) - a.max(edges[i])))
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

/// Adds a raster of `rows`×`cols` pixel values (row-major, row 0 along the
/// top edge y = `at.y1`) covering the rectangle `at` to `map`, each pixel's
/// value spread over the cells by overlap area. Same rule as [`add_rect`]
/// per pixel, but the overlap weights of an axis-aligned pixel grid factor
/// into x and y weights, so this costs O(rows·(cols + nx)) instead of
/// O(rows·cols·cells per pixel).
pub fn add_pixels(
    map: &mut [f64],
    values: &[f64],
    rows: usize,
    cols: usize,
    at: &Rect,
    grid: &Grid,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let wx = interval_weights(cols, at.x0, at.x1, &grid.xe, &grid.dx);
    // Indexed bottom-up (pixel row r is y interval rows-1-r).
    let wy = interval_weights(rows, at.y0, at.y1, &grid.ye, &grid.dy);
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
        Grid::uniform(nx, ny, w, l, vec![1e-4], vec![0])
    }

    #[test]
    fn pixels_match_per_rectangle_rule() {
        // A 3×5 raster on a 4×7 grid: no pixel edge lines up with a cell edge.
        let (w, l) = (2e-3, 3e-3);
        let g = grid(4, 7, w, l);
        let (rows, cols) = (3, 5);
        let values: Vec<f64> = (0..rows * cols).map(|i| (i * i % 7) as f64 + 0.5).collect();
        let mut fast = vec![0.0; g.plane()];
        let at = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: w,
            y1: l,
        };
        add_pixels(&mut fast, &values, rows, cols, &at, &g);
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

    /// A 10 mm die outline on a 30 mm domain, its edges on every kind of
    /// snapped line (the domain's edge, a line between graded cells, one
    /// between uniform cells),
    /// for cells from 400 um to 25 um: each line is an edge exactly, and
    /// the die covers no cell by a rounding sliver.
    #[test]
    fn snapped_lines_are_exact_edges_and_leave_no_sliver() {
        use crate::geometry::axis_edges;
        let extent = 30e-3;
        let dies = [
            (10e-3, 20e-3),
            (0.0, 10e-3),
            (20e-3, 30e-3),
            (10.1e-3, 20.1e-3),
        ];
        for cell in [4e-4, 2e-4, 1e-4, 5e-5, 2.5e-5] {
            for &(lo, hi) in &dies {
                let lines = [lo, hi, 10.1e-3, 0.7e-3, 17.3e-3];
                let e = axis_edges(extent, &lines, &[(lo, hi)], cell, 1.2, 2e-3).unwrap();
                assert_eq!((e[0], e[e.len() - 1]), (0.0, extent));
                for l in [lo, hi] {
                    assert!(e.contains(&l), "cell {cell}: line {l} is no edge");
                }
                let w: Vec<f64> = e.windows(2).map(|p| p[1] - p[0]).collect();
                let grid = Grid::new(w.clone(), e.clone(), w, e, vec![1e-4], vec![0]);
                let die = Rect {
                    x0: lo,
                    y0: lo,
                    x1: hi,
                    y1: hi,
                };
                for (j, a) in coverage(&die, &grid) {
                    let f = a / grid.cell_area(j);
                    assert!(
                        f >= 1e-9,
                        "cell {cell}, die {lo}..{hi}: cell {j} covered {f:e}"
                    );
                }
            }
        }
    }
}
