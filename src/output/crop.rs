//! Part of a layer map, for a die view: the cells a rectangle overlaps,
//! with their edges and values, so that a die much smaller than its package
//! (12 mm on a 60 mm sink) fills its own picture and its block names are
//! readable.

use crate::geometry::Rect;
use std::ops::Range;

/// A map cut to a rectangle: `x_edges.len() - 1` by `y_edges.len() - 1`
/// values, index `x + nx*y` as the full map's.
#[derive(Clone, Debug, PartialEq)]
pub struct Cropped {
    pub x_edges_m: Vec<f64>,
    pub y_edges_m: Vec<f64>,
    pub values: Vec<f64>,
}

impl Cropped {
    /// The edges in a frame whose (0, 0) is `origin` (domain coordinates).
    pub fn shift(&mut self, (ox, oy): (f64, f64)) {
        self.x_edges_m.iter_mut().for_each(|e| *e -= ox);
        self.y_edges_m.iter_mut().for_each(|e| *e -= oy);
    }
}

/// The cells of one axis (`edges`, increasing) that `[lo, hi]` overlaps
/// by more than a rounding error of the axis' span.
fn cells(edges: &[f64], lo: f64, hi: f64) -> Range<usize> {
    let n = edges.len().saturating_sub(1);
    let tol = 1e-9 * (edges[n] - edges[0]);
    let first = edges[1..].partition_point(|&e| e <= lo + tol);
    let end = edges[..n].partition_point(|&e| e < hi - tol);
    first..end.max(first)
}

/// The cells of the map (`values`, `nx * ny` with `nx + 1` edges `xe` and
/// `ny + 1` edges `ye`) that `r` overlaps; `None` when it overlaps none.
pub fn crop(values: &[f64], xe: &[f64], ye: &[f64], r: &Rect) -> Option<Cropped> {
    let (xs, ys) = (cells(xe, r.x0, r.x1), cells(ye, r.y0, r.y1));
    if xs.is_empty() || ys.is_empty() {
        return None;
    }
    let nx = xe.len() - 1;
    let values = (ys.clone())
        .flat_map(|y| values[nx * y + xs.start..nx * y + xs.end].iter().copied())
        .collect();
    Some(Cropped {
        x_edges_m: xe[xs.start..=xs.end].to_vec(),
        y_edges_m: ye[ys.start..=ys.end].to_vec(),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 × 3 cells of 1 m, value = 10 y + x.
    fn map() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let v = (0..12).map(|i| f64::from(10 * (i / 4) + i % 4)).collect();
        (v, vec![0.0, 1.0, 2.0, 3.0, 4.0], vec![0.0, 1.0, 2.0, 3.0])
    }

    #[test]
    fn keeps_the_cells_the_rectangle_overlaps() {
        let (v, xe, ye) = map();
        // x 1.5..3 (cells 1, 2; the edge at 3 takes no cell 3), y 1..2 (row 1).
        let r = Rect {
            x0: 1.5,
            y0: 1.0,
            x1: 3.0,
            y1: 2.0,
        };
        let c = crop(&v, &xe, &ye, &r).unwrap();
        assert_eq!(c.x_edges_m, [1.0, 2.0, 3.0]);
        assert_eq!(c.y_edges_m, [1.0, 2.0]);
        assert_eq!(c.values, [11.0, 12.0]);
        let outside = Rect {
            x0: 5.0,
            y0: 0.0,
            x1: 6.0,
            y1: 1.0,
        };
        assert_eq!(crop(&v, &xe, &ye, &outside), None);
    }
}
