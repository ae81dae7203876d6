//! The heat map's pixels from a grid of possibly non-uniform cells: the map's
//! pixel size from the footprint's physical aspect ratio, the cells behind
//! each pixel column and row (found on the cell edges, so any spacing works),
//! and the RGB buffer. Where pixels are coarser than cells a pixel shows the
//! **maximum** of the cells it covers, not their mean: a one-cell hot spot
//! must stay visible and the colour bar's max must appear in the map. Absent
//! cells (NaN) are hatched grey and never take a palette colour.

use super::colormap::inferno;
use rayon::prelude::*;
use std::ops::Range;

/// The longer side of the map is at least this many pixels...
pub const MIN_LONG_PX: usize = 512;
/// ...and at most this many (finer grids are downsampled, so a 4096² map
/// costs a 1024² picture).
pub const MAX_LONG_PX: usize = 1024;
/// Hatching of absent cells: background and stripe colours.
pub const HATCH_BG: [u8; 3] = [236, 236, 236];
pub const HATCH_LINE: [u8; 3] = [170, 170, 170];

/// `n + 1` edges of `n` cells of size `d` from 0, m (a uniform grid's edges).
pub fn uniform_edges(n: usize, d: f64) -> Vec<f64> {
    (0..=n).map(|i| i as f64 * d).collect()
}

/// Why edges cannot describe a grid, or `None` when they can: at least two,
/// finite, strictly increasing.
pub fn edges_fault(edges: &[f64]) -> Option<String> {
    if edges.len() < 2 {
        return Some(format!("{} edges (need at least 2)", edges.len()));
    }
    if let Some(i) = edges.iter().position(|e| !e.is_finite()) {
        return Some(format!("edge {i} is {}", edges[i]));
    }
    if let Some(i) = edges.windows(2).position(|w| w[1] <= w[0]) {
        return Some(format!(
            "edges {i} and {} do not increase ({} then {})",
            i + 1,
            edges[i],
            edges[i + 1]
        ));
    }
    None
}

/// Map area in pixels for a footprint `w_m × h_m` of `nx × ny` cells. On a
/// uniform grid of at most 1024 cells along the long side, that side is a
/// whole multiple of its cell count between 512 and 1024 px, so every cell
/// gets the same number of pixels; otherwise it is 1024 px. The short side
/// follows the physical aspect ratio.
pub fn map_size(nx: usize, ny: usize, w_m: f64, h_m: f64) -> (u32, u32) {
    let x_is_long = w_m >= h_m || !h_m.is_finite();
    let n_long = if x_is_long { nx } else { ny }.max(1);
    let long_px = if n_long <= MAX_LONG_PX {
        n_long * MIN_LONG_PX.div_ceil(n_long)
    } else {
        MAX_LONG_PX
    };
    let ratio = if x_is_long { h_m / w_m } else { w_m / h_m };
    let ratio = if ratio.is_finite() { ratio } else { 1.0 };
    let short_px = ((long_px as f64 * ratio).round() as usize).clamp(1, MAX_LONG_PX);
    let (w, h) = if x_is_long {
        (long_px, short_px)
    } else {
        (short_px, long_px)
    };
    (w as u32, h as u32)
}

/// For each of `px` pixels spanning the edges' extent, the cells it shows:
/// those its interior overlaps (a pixel inside one cell shows that cell).
pub fn pixel_cells(edges: &[f64], px: u32) -> Vec<Range<usize>> {
    let n = edges.len() - 1;
    let (a, b) = (edges[0], edges[n]);
    let w = (b - a) / f64::from(px.max(1));
    // Cell holding position `x`, clamped to the grid.
    let cell = |x: f64| edges.partition_point(|&e| e <= x).clamp(1, n) - 1;
    (0..px)
        .map(|p| {
            let (x0, x1) = (a + f64::from(p) * w, a + f64::from(p + 1) * w);
            let eps = 1e-9 * w;
            let lo = cell(x0 + eps);
            let hi = cell(x1 - eps).max(lo) + 1;
            lo..hi
        })
        .collect()
}

/// RGB bytes (row 0 = max-y edge) of a `w × h` map of `values` (`x + nx*y`,
/// y = 0 at the min-y edge) on `x_edges`/`y_edges`; `norm` maps a finite
/// value to [0, 1].
pub fn pixels(
    values: &[f64],
    x_edges: &[f64],
    y_edges: &[f64],
    (w, h): (u32, u32),
    norm: impl Fn(f64) -> f64 + Sync,
) -> Vec<u8> {
    let nx = x_edges.len() - 1;
    let xs = pixel_cells(x_edges, w);
    let ys = pixel_cells(y_edges, h);
    let mut buf = vec![0u8; 3 * w as usize * h as usize];
    buf.par_chunks_mut(3 * w as usize)
        .enumerate()
        .for_each(|(row, line)| {
            let yr = &ys[h as usize - 1 - row];
            for (col, xr) in xs.iter().enumerate() {
                let mut v = f64::NAN;
                for y in yr.clone() {
                    for &c in &values[xr.start + nx * y..xr.end + nx * y] {
                        if c.is_finite() && (v.is_nan() || c > v) {
                            v = c;
                        }
                    }
                }
                let rgb = if v.is_finite() {
                    inferno(norm(v))
                } else if (col + row) % 8 == 0 {
                    HATCH_LINE
                } else {
                    HATCH_BG
                };
                line[3 * col..3 * col + 3].copy_from_slice(&rgb);
            }
        });
    buf
}

/// Min and max over the finite values, or `None` when there are none.
pub fn finite_range(values: &[f64]) -> Option<(f64, f64)> {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_keeps_aspect_and_whole_pixels_per_cell() {
        // 10 × 5 square cells: 52 px per cell → 520 × 260.
        assert_eq!(map_size(10, 5, 10.0, 5.0), (520, 260));
        // 4 × 4 cells twice as tall as wide: the chip is 1:2.
        assert_eq!(map_size(4, 4, 4.0, 8.0), (256, 512));
        // Finer than 1024: downsampled.
        assert_eq!(map_size(2048, 1024, 2.0, 1.0), (1024, 512));
        assert_eq!(map_size(700, 700, 1.0, 1.0), (700, 700));
    }

    #[test]
    fn pixels_find_non_uniform_cells() {
        // Cells 0..1, 1..3, 3..4 over 8 pixels of 0.5: 2, 4 and 2 pixels.
        let r = pixel_cells(&[0.0, 1.0, 3.0, 4.0], 8);
        let cells: Vec<usize> = r.iter().map(|c| c.start).collect();
        assert_eq!(cells, [0, 0, 1, 1, 1, 1, 2, 2]);
        assert!(r.iter().all(|c| c.len() == 1));
        // Downsampling: two pixels over ten cells, each covers five.
        let e = uniform_edges(10, 0.1);
        assert_eq!(pixel_cells(&e, 2), [0..5, 5..10]);
        // A pixel straddling a cell edge shows both cells.
        assert_eq!(pixel_cells(&[0.0, 1.0, 2.0], 3)[1], 0..2);
    }

    #[test]
    fn edge_faults_are_named() {
        assert!(edges_fault(&[0.0, 1.0]).is_none());
        assert!(edges_fault(&[0.0]).unwrap().contains("1 edges"));
        assert!(edges_fault(&[0.0, 1.0, 1.0])
            .unwrap()
            .contains("do not increase"));
        assert!(edges_fault(&[0.0, f64::NAN]).unwrap().contains("edge 1"));
    }

    #[test]
    fn a_one_cell_hot_spot_survives_downsampling_and_nan_is_hatched() {
        let (nx, ny) = (2000, 10);
        let mut v = vec![0.0; nx * ny];
        v[1234 + nx * 7] = 1.0;
        v[0] = f64::NAN; // a lone absent cell is hidden by its neighbours' max
        let buf = pixels(
            &v,
            &uniform_edges(nx, 1.0),
            &uniform_edges(ny, 1.0),
            (1000, 10),
            |t| t,
        );
        let hot = inferno(1.0);
        assert!(buf.chunks(3).any(|p| p == hot));
        let all_nan = vec![f64::NAN; 4];
        let buf = pixels(
            &all_nan,
            &[0.0, 1.0, 2.0],
            &[0.0, 1.0, 2.0],
            (16, 16),
            |t| t,
        );
        assert!(buf.chunks(3).all(|p| p == HATCH_BG || p == HATCH_LINE));
        assert!(buf.chunks(3).any(|p| p == HATCH_LINE));
    }
}
