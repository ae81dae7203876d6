//! The ρ = level isosurface of an element density field, by marching cubes
//! (tables in `mc_tables`).
//!
//! Densities are taken as samples at element centres, and the volume is
//! padded with one layer of zeros on every side, so a design touching the
//! domain boundary still gives a closed surface (there it lies on the domain
//! face, halfway between the last centre and the pad). Vertices are linear
//! interpolations along cube edges, always from the edge's lower end, so the
//! cubes sharing an edge compute the same bits and the triangle soup is
//! watertight by exact vertex equality. Non-finite densities count as void,
//! and a density of exactly `level` counts as solid.

use super::mc_tables::{corner, edge_axis, triangles, EDGES};
use super::DensityField;

/// Smallest fraction of an edge between a vertex and the edge's ends. A
/// density equal to the level (a uniform 0.5 start, a clamped field) would
/// otherwise put the vertices of all its edges on the sample itself, and
/// values within `f32` rounding of the level would do the same after
/// rounding: degenerate triangles, and a surface that STL tools call open.
/// 10⁻³ keeps vertices on different edges distinct in `f32` for grids up to
/// about 10⁴ elements a side and moves the surface by at most h/1000.
const T_MIN: f64 = 1e-3;

/// A triangle soup, normals pointing out of the material (ρ ≥ level).
/// Coordinates are `f32` as in STL, which halves the memory of a surface
/// that can have millions of triangles; the cubes sharing an edge still
/// agree exactly because each vertex is rounded from the same `f64`.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    pub triangles: Vec<[[f32; 3]; 3]>,
}

impl Mesh {
    /// Enclosed volume by the divergence theorem, Σ a·(b×c)/6 over the
    /// triangles: positive when the mesh is closed and oriented outwards.
    pub fn volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|p| p.map(f64::from));
                let bxc = [
                    b[1] * c[2] - b[2] * c[1],
                    b[2] * c[0] - b[0] * c[2],
                    b[0] * c[1] - b[1] * c[0],
                ];
                (a[0] * bxc[0] + a[1] * bxc[1] + a[2] * bxc[2]) / 6.0
            })
            .sum()
    }
}

/// The isosurface ρ = `level` (meaningful for `level` in (0, 1]: the zero
/// padding must be void). A field entirely below `level` gives no triangles.
pub fn isosurface(field: &DensityField, level: f64) -> Mesh {
    let (nx, ny, nz) = (field.nelx, field.nely, field.nelz);
    // Padded sample (i, j, k), each in -1..=n: the element density inside
    // the field, 0 in the pad, non-finite values as void.
    let sample = |i: isize, j: isize, k: isize| -> f64 {
        let inside = |v: isize, n: usize| v >= 0 && (v as usize) < n;
        if !(inside(i, nx) && inside(j, ny) && inside(k, nz)) {
            return 0.0;
        }
        let v = field.at(i as usize, j as usize, k as usize);
        if v.is_finite() {
            v
        } else {
            0.0
        }
    };
    let h = field.h;
    let mut mesh = Mesh::default();
    // Cube (i, j, k) spans samples i..=i+1 etc., from the pad on one side to
    // the pad on the other.
    for k in -1..nz as isize {
        for j in -1..ny as isize {
            for i in -1..nx as isize {
                let mut vals = [0.0; 8];
                let mut config = 0u8;
                for (c, v) in vals.iter_mut().enumerate() {
                    let [dx, dy, dz] = corner(c);
                    *v = sample(i + dx as isize, j + dy as isize, k + dz as isize);
                    if *v >= level {
                        config |= 1 << c;
                    }
                }
                let tris = triangles(config);
                if tris.is_empty() {
                    continue;
                }
                let vertex = |e: u8| -> [f32; 3] {
                    let [a, b] = EDGES[usize::from(e)];
                    let t = ((level - vals[a]) / (vals[b] - vals[a])).clamp(T_MIN, 1.0 - T_MIN);
                    let base = corner(a);
                    let origin = [i, j, k];
                    let mut p = [0.0f32; 3];
                    for d in 0..3 {
                        let along = if edge_axis(usize::from(e)) == d {
                            t
                        } else {
                            0.0
                        };
                        // Sample index s sits at the element centre (s + ½)·h.
                        let s = (origin[d] + base[d] as isize) as f64;
                        p[d] = ((s + 0.5 + along) * h) as f32;
                    }
                    p
                };
                mesh.triangles.extend(tris.iter().map(|t| t.map(vertex)));
            }
        }
    }
    mesh
}
