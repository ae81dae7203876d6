//! Geometry of the structured finite-volume box: cell sizes, the z layout of
//! the layers, and index maps. Knows nothing of conductances or power.
//!
//! Cell index `i = x + nx*(y + ny*z)`; z = 0 is the bottom of the stack.
//! In-plane cells are uniform (`dx`, `dy`); each layer is split into `cells`
//! equal z cells, so `dz` varies by layer.

use crate::stack::Stack;
use std::ops::Range;

#[derive(Clone, Debug)]
pub struct Grid {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Cell size in x, m.
    pub dx: f64,
    /// Cell size in y, m.
    pub dy: f64,
    /// Cell size in z for each z index, m.
    pub dz: Vec<f64>,
    /// Layer index of each z index.
    pub layer_of_z: Vec<usize>,
    /// z range of each layer.
    pub layer_z: Vec<Range<usize>>,
}

impl Grid {
    pub fn from_stack(stack: &Stack) -> Grid {
        let mut dz = Vec::new();
        let mut layer_of_z = Vec::new();
        let mut layer_z = Vec::new();
        for (l, layer) in stack.layers.iter().enumerate() {
            let start = dz.len();
            for _ in 0..layer.cells {
                dz.push(layer.thickness_m / layer.cells as f64);
                layer_of_z.push(l);
            }
            layer_z.push(start..dz.len());
        }
        Grid {
            nx: stack.nx,
            ny: stack.ny,
            nz: dz.len(),
            dx: stack.width_m / stack.nx as f64,
            dy: stack.length_m / stack.ny as f64,
            dz,
            layer_of_z,
            layer_z,
        }
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

    /// Footprint area of one cell, m².
    pub fn cell_area(&self) -> f64 {
        self.dx * self.dy
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
