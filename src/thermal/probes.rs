//! Probe readings: the temperature at each `[[probes]]` point of the stack.
//! A probe reads the cell that holds its (x, y) (a point on a cell face
//! belongs to the cell above it, the chip's far edge to the last cell); in
//! z either a layer, averaged over its z cells as the layer's map is, or the
//! z cell that holds the height `z`. No interpolation: the value is the
//! finite-volume cell's own, which is what the solver computed.

use crate::grid::Grid;
use crate::stack::{ProbeAt, Stack};
use serde::Serialize;
use std::ops::Range;

/// Where one probe reads the field.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeCell {
    pub name: String,
    /// Layer index of the cells read.
    pub layer: usize,
    /// Plane index `x + nx*y`.
    pub plane_index: usize,
    /// z cells averaged (one for a `z` probe).
    pub z: Range<usize>,
}

/// One probe's reading, as `summary.json` and `probes.csv` report it.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeReading {
    pub name: String,
    pub layer: String,
    /// The point as given, m (z: the given height, or the layer's mid-height).
    pub x_m: f64,
    pub y_m: f64,
    pub z_m: f64,
    /// The cell read (x, y) and its z cells.
    pub cell_x: usize,
    pub cell_y: usize,
    pub cell_z: Vec<usize>,
    pub t_k: f64,
    /// The point in the frame of the die that holds it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die: Option<DiePoint>,
}

/// The z cell holding height `z` (a face belongs to the cell above it).
fn z_cell(grid: &Grid, z: f64) -> usize {
    let mut bottom = 0.0;
    for (k, dz) in grid.dz.iter().enumerate() {
        if z < bottom + dz {
            return k;
        }
        bottom += dz;
    }
    grid.nz - 1
}

/// The cells each probe of `stack` reads on `grid`.
pub fn probe_cells(stack: &Stack, grid: &Grid) -> Vec<ProbeCell> {
    stack
        .probes
        .iter()
        .map(|p| {
            let x = grid.column_of(p.x_m);
            let y = grid.row_of(p.y_m);
            let (layer, z) = match p.at {
                ProbeAt::Layer(l) => (l, grid.layer_z[l].clone()),
                ProbeAt::Z(z) => {
                    let k = z_cell(grid, z);
                    (grid.layer_of_z[k], k..k + 1)
                }
            };
            ProbeCell {
                name: p.name.clone(),
                layer,
                plane_index: x + grid.nx * y,
                z,
            }
        })
        .collect()
}

/// Each probe's temperature in `t` (K, every cell).
pub fn read(grid: &Grid, cells: &[ProbeCell], t: &[f64]) -> Vec<f64> {
    let plane = grid.plane();
    cells
        .iter()
        .map(|c| {
            let sum: f64 = c.z.clone().map(|z| t[z * plane + c.plane_index]).sum();
            sum / c.z.len() as f64
        })
        .collect()
}

/// Every probe's reading of `t` with where it was read.
pub fn readings(stack: &Stack, grid: &Grid, t: &[f64]) -> Vec<ProbeReading> {
    let values = read(grid, &probe_cells(stack, grid), t);
    readings_of(stack, grid, &values)
}

/// Every probe's reading from its value (as [`read`] gives them, in the
/// order of the stack's probes) with where it was read.
pub fn readings_of(stack: &Stack, grid: &Grid, values: &[f64]) -> Vec<ProbeReading> {
    let cells = probe_cells(stack, grid);
    stack
        .probes
        .iter()
        .zip(cells)
        .zip(values)
        .map(|((p, c), &t_k)| ProbeReading {
            name: p.name.clone(),
            layer: stack.layers[c.layer].name.clone(),
            x_m: p.x_m,
            y_m: p.y_m,
            z_m: match p.at {
                ProbeAt::Z(z) => z,
                ProbeAt::Layer(l) => {
                    let zr = &grid.layer_z[l];
                    grid.z_bottom(zr.start) + 0.5 * stack.layers[l].thickness_m
                }
            },
            cell_x: c.plane_index % grid.nx,
            cell_y: c.plane_index / grid.nx,
            cell_z: c.z.collect(),
            t_k,
            die: DiePoint::of(stack, c.layer, p.x_m, p.y_m),
        })
        .collect()
}

/// A point in a die's frame: where its floorplan has (0, 0).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DiePoint {
    /// The die: its layer's name, or its region's.
    pub name: String,
    pub x_m: f64,
    pub y_m: f64,
}

impl DiePoint {
    /// The domain point (`x_m`, `y_m`) of layer `l` in the frame of the die
    /// that holds it (`stack::dies`); `None` off every die.
    pub fn of(stack: &crate::stack::Stack, l: usize, x_m: f64, y_m: f64) -> Option<DiePoint> {
        stack.die_at(l, x_m, y_m).map(|d| DiePoint {
            name: d.name.to_string(),
            x_m: x_m - d.origin.0,
            y_m: y_m - d.origin.1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const STACK: &str = r#"
        [chip]
        width = "4 mm"
        length = "2 mm"
        [grid]
        nx = 4
        ny = 2
        [boundary]
        ambient = 300.0
        h_top = 1e4
        [materials.si]
        k = 100.0
        heat_capacity = 1.6e6
        [[layers]]
        name = "a"
        material = "si"
        thickness = "100 um"
        cells = 2
        [[layers]]
        name = "b"
        material = "si"
        thickness = "50 um"
        [[probes]]
        name = "mid"
        x = "2.5 mm"
        y = "0.5 mm"
        layer = "a"
        [[probes]]
        name = "top-corner"
        x = "4 mm"
        y = "2 mm"
        z = "150 um"
        [[probes]]
        name = "face"
        x = "0 mm"
        y = "1 mm"
        z = "50 um"
    "#;

    #[test]
    fn probes_read_the_cells_that_hold_them() {
        let stack = Stack::from_toml(STACK, Path::new("t.toml")).unwrap();
        let grid = Grid::from_stack(&stack);
        // T = index, so each reading names its cells.
        let t: Vec<f64> = (0..grid.len()).map(|i| i as f64).collect();
        let r = readings(&stack, &grid, &t);
        // mid: cell (2, 0), layer a = z 0 and 1: mean of 2 and 10.
        assert_eq!(
            (r[0].cell_x, r[0].cell_y, &r[0].cell_z[..]),
            (2, 0, &[0, 1][..])
        );
        assert_eq!(r[0].t_k, 6.0);
        assert!((r[0].z_m - 50e-6).abs() < 1e-15);
        // The far corner and the top face: the last cell of each axis.
        assert_eq!(
            (r[1].cell_x, r[1].cell_y, &r[1].cell_z[..]),
            (3, 1, &[2][..])
        );
        assert_eq!(r[1].layer, "b");
        assert_eq!(r[1].t_k, 23.0);
        // On the face between z cells 0 and 1: the cell above.
        assert_eq!(
            (r[2].cell_x, r[2].cell_y, &r[2].cell_z[..]),
            (0, 1, &[1][..])
        );
        assert_eq!(r[2].t_k, 12.0);
    }

    #[test]
    fn bad_probes_are_errors_naming_the_field() {
        let bad = |extra: &str, needle: &str| {
            let text = STACK.replace("[[probes]]\n        name = \"mid\"", extra);
            let e = Stack::from_toml(&text, Path::new("t.toml")).unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        };
        bad("[[probes]]\nname = \"top-corner\"", "already defined");
        bad(
            "[[probes]]\nname = \"p\"\nx = 0.0\ny = 0.0\nlayer = \"zz\"\n[[probes]]\nname = \"q\"",
            "unknown layer `zz`",
        );
        bad("[[probes]]\nname = \"p\"\nx = \"5 mm\"\ny = 0.0\nlayer = \"a\"\n[[probes]]\nname = \"q\"", "probes[0] (p).x");
        bad(
            "[[probes]]\nname = \"p\"\nx = 0.0\ny = 0.0\nz = \"1 mm\"\n[[probes]]\nname = \"q\"",
            "stack height",
        );
        bad(
            "[[probes]]\nname = \"p\"\nx = 0.0\ny = 0.0\n[[probes]]\nname = \"q\"",
            "exactly one of",
        );
    }
}
