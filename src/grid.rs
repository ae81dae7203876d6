//! Geometry of the structured finite-volume box: cell sizes, the z layout of
//! the layers, and index maps. Knows nothing of conductances or power.
//!
//! Cell index `i = x + nx*(y + ny*z)`; z = 0 is the bottom of the stack.
//! In-plane the grid is a tensor product of per-column widths `dx[x]` and
//! per-row widths `dy[y]` (uniform for `nx`/`ny` stacks, non-uniform for a
//! `[grid] cell` stack, see [`crate::geometry::axis_edges`]); `xe`/`ye` are the cell edges.
//! Each layer is split into `cells` equal z cells, so `dz` varies by layer.

use crate::geometry::uniform_axis;
use std::ops::Range;

// Re-exported for callers that build grids from edges or widths.
pub use crate::geometry::{edges_of, widths_of};

#[derive(Clone, Debug)]
pub struct Grid {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Width of each column (x), m; len nx.
    pub dx: Vec<f64>,
    /// Width of each row (y), m; len ny.
    pub dy: Vec<f64>,
    /// Column edges, m; len nx + 1, `xe[0] = 0`.
    pub xe: Vec<f64>,
    /// Row edges, m; len ny + 1, `ye[0] = 0`.
    pub ye: Vec<f64>,
    /// Cell size in z for each z index, m.
    pub dz: Vec<f64>,
    /// Layer index of each z index.
    pub layer_of_z: Vec<usize>,
    /// z range of each layer.
    pub layer_z: Vec<Range<usize>>,
}

impl Grid {
    /// A grid from its in-plane widths and edges and its layers, bottom
    /// first, as `(thickness m, z cells)`: each layer is split into equal
    /// z cells.
    pub fn layered(
        (dx, xe): (Vec<f64>, Vec<f64>),
        (dy, ye): (Vec<f64>, Vec<f64>),
        layers: impl IntoIterator<Item = (f64, usize)>,
    ) -> Grid {
        let mut dz = Vec::new();
        let mut layer_of_z = Vec::new();
        for (l, (thickness, cells)) in layers.into_iter().enumerate() {
            for _ in 0..cells {
                dz.push(thickness / cells as f64);
                layer_of_z.push(l);
            }
        }
        Grid::new(dx, xe, dy, ye, dz, layer_of_z)
    }

    /// A grid from its in-plane widths and edges and its z cells (`layer_of_z`
    /// non-decreasing from 0).
    pub fn new(
        dx: Vec<f64>,
        xe: Vec<f64>,
        dy: Vec<f64>,
        ye: Vec<f64>,
        dz: Vec<f64>,
        layer_of_z: Vec<usize>,
    ) -> Grid {
        let layers = layer_of_z.last().map_or(0, |l| l + 1);
        let layer_z = (0..layers)
            .map(|l| {
                let a = layer_of_z.partition_point(|&k| k < l);
                let b = layer_of_z.partition_point(|&k| k <= l);
                a..b
            })
            .collect();
        Grid {
            nx: dx.len(),
            ny: dy.len(),
            nz: dz.len(),
            dx,
            dy,
            xe,
            ye,
            dz,
            layer_of_z,
            layer_z,
        }
    }

    /// A uniform `nx × ny` grid over `width × length` with the given z cells.
    pub fn uniform(
        nx: usize,
        ny: usize,
        width: f64,
        length: f64,
        dz: Vec<f64>,
        layer_of_z: Vec<usize>,
    ) -> Grid {
        let (dx, xe) = uniform_axis(width, nx);
        let (dy, ye) = uniform_axis(length, ny);
        Grid::new(dx, xe, dy, ye, dz, layer_of_z)
    }

    /// Whether every column and every row has one width.
    pub fn is_uniform(&self) -> bool {
        self.dx.iter().all(|&w| w == self.dx[0]) && self.dy.iter().all(|&w| w == self.dy[0])
    }

    /// Domain extent in x, m.
    pub fn width(&self) -> f64 {
        self.xe[self.nx]
    }

    /// Domain extent in y, m.
    pub fn length(&self) -> f64 {
        self.ye[self.ny]
    }

    /// Centre of column `x`, m.
    pub fn x_center(&self, x: usize) -> f64 {
        0.5 * (self.xe[x] + self.xe[x + 1])
    }

    /// Centre of row `y`, m.
    pub fn y_center(&self, y: usize) -> f64 {
        0.5 * (self.ye[y] + self.ye[y + 1])
    }

    /// Column holding coordinate `v` (clamped; an edge belongs to the cell above).
    pub fn column_of(&self, v: f64) -> usize {
        cell_at(&self.xe, v)
    }

    /// Row holding coordinate `v` (clamped).
    pub fn row_of(&self, v: f64) -> usize {
        cell_at(&self.ye, v)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cells in one z plane.
    pub fn plane(&self) -> usize {
        self.nx * self.ny
    }

    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.nx * (y + self.ny * z)
    }

    /// Inverse of [`Grid::index`].
    pub fn coords(&self, i: usize) -> (usize, usize, usize) {
        let plane = self.plane();
        (i % self.nx, (i % plane) / self.nx, i / plane)
    }

    /// Footprint area of plane cell `j = x + nx*y`, m².
    #[inline]
    pub fn cell_area(&self, j: usize) -> f64 {
        self.dx[j % self.nx] * self.dy[j / self.nx]
    }

    /// Height of the bottom face of z cell `z` above the stack bottom, m.
    pub fn z_bottom(&self, z: usize) -> f64 {
        self.dz[..z].iter().sum()
    }

    /// Per-(x, y) mean over a layer's z cells: the layer's temperature map.
    pub fn layer_map(&self, values: &[f64], layer: usize) -> Vec<f64> {
        let zr = self.layer_z[layer].clone();
        let plane = self.plane();
        let n = zr.len() as f64;
        let mut map = vec![0.0; plane];
        for z in zr {
            for (m, v) in map.iter_mut().zip(&values[z * plane..(z + 1) * plane]) {
                *m += v;
            }
        }
        map.iter_mut().for_each(|m| *m /= n);
        map
    }
}

/// A point this close to an edge, relative to the cell below it, is on the
/// face: edges are rounded (`i·(W/n)`, a parsed `4800 um`), so `v == edge`
/// alone would put a point on a face in either cell.
const ON_FACE: f64 = 1e-9;

/// Index of the cell of `edges` holding `v`, clamped to the cells; a point on
/// a face (to [`ON_FACE`]) belongs to the cell above.
fn cell_at(edges: &[f64], v: f64) -> usize {
    let n = edges.len() - 1;
    let i = edges
        .partition_point(|&e| e <= v)
        .saturating_sub(1)
        .min(n - 1);
    if i + 1 < n && edges[i + 1] - v <= ON_FACE * (edges[i + 1] - edges[i]) {
        i + 1
    } else {
        i
    }
}

#[cfg(test)]
mod face_tests {
    use super::*;

    /// A point on face `k` (as the grid's edge, and as a user writes it: a
    /// parsed multiple of the nominal cell) lies in cell `k`, never `k - 1`.
    fn faces_belong_above(edges: &[f64], nominal: &[f64]) {
        let n = edges.len() - 1;
        for k in 0..n {
            for v in [edges[k], nominal[k]] {
                assert_eq!(
                    cell_at(edges, v),
                    k,
                    "face {k} at {v:e} (edge {:e})",
                    edges[k]
                );
            }
        }
        assert_eq!(cell_at(edges, edges[n]), n - 1, "the far edge clamps");
    }

    #[test]
    fn uniform_faces_belong_to_the_cell_above() {
        for (w, n) in [(0.01, 50), (0.0124, 64), (0.06, 7), (1e-3, 1000)] {
            let (_, edges) = uniform_axis(w, n);
            // 4800 um written as a length: 4800e-6, not 24·(W/n).
            let nominal: Vec<f64> = (0..=n)
                .map(|k| (k as f64 * (w / n as f64) * 1e6).round() * 1e-6)
                .collect();
            let nominal = if (w * 1e6 / n as f64).fract() == 0.0 {
                nominal
            } else {
                edges.clone()
            };
            faces_belong_above(&edges, &nominal);
        }
    }

    #[test]
    fn graded_faces_belong_to_the_cell_above() {
        for cell in [4e-4, 2e-4, 1e-4, 5e-5, 2.5e-5] {
            let edges = crate::geometry::axis_edges(
                30e-3,
                &[10e-3, 20e-3, 12.3e-3],
                &[(10e-3, 20e-3)],
                cell,
                1.2,
                f64::INFINITY,
            )
            .unwrap();
            faces_belong_above(&edges, &edges);
            // Half a cell inside: no tolerance misplaces it.
            for k in 0..edges.len() - 1 {
                assert_eq!(cell_at(&edges, 0.5 * (edges[k] + edges[k + 1])), k);
            }
        }
    }
}
