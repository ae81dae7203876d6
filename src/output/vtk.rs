//! The one VTK writer: XML ImageData (`.vti`, topopt's densities) and
//! RectilinearGrid (`.vtr`, the thermal field with its true z spacing), with
//! `Float64` cell arrays in one appended raw block, and the `.pvd` time
//! collection of a transient run.
//!
//! Why this flavour: cell data maps one-to-one onto our cells with x
//! fastest, exactly our index order, and raw appended binary is a straight
//! copy of the arrays: no base64 (a third larger) and no compression
//! dependency. The header is what ParaView itself writes (`version="1.0"`,
//! `header_type="UInt64"`, so blocks over 4 GiB are fine); VTK's XML reader
//! has read it since VTK 6 / ParaView 4. `Float64` keeps values bit-exact.
//!
//! Layout: XML header, `<AppendedData encoding="raw">`, then `_` and per
//! array (cell arrays in order, then for a rectilinear grid the x, y, z point
//! coordinates) a little-endian `u64` byte count and the little-endian
//! `f64`s; each `DataArray`'s `offset` is its block's position after `_`.

use super::{SteadyView, TempUnit};
use std::fmt::Write;

/// Where the cells are.
pub enum Geometry<'a> {
    /// Uniform cells of size `spacing` from the origin (`.vti`).
    Image {
        cells: [usize; 3],
        spacing: [f64; 3],
    },
    /// Cell faces along each axis, m (n + 1 values per axis; `.vtr`).
    Rectilinear {
        x: &'a [f64],
        y: &'a [f64],
        z: &'a [f64],
    },
}

/// One cell array: `components` values per cell, cell index x fastest.
pub struct CellArray<'a> {
    pub name: &'a str,
    pub components: usize,
    pub values: &'a [f64],
}

/// The file's bytes. Arrays shorter than the grid are padded with NaN, so
/// the counts in the header always hold.
pub fn vtk_xml(geom: &Geometry, arrays: &[CellArray]) -> Vec<u8> {
    let (kind, cells) = match geom {
        Geometry::Image { cells, .. } => ("ImageData", *cells),
        Geometry::Rectilinear { x, y, z } => (
            "RectilinearGrid",
            [x.len(), y.len(), z.len()].map(|n| n.saturating_sub(1)),
        ),
    };
    let n = cells.iter().product::<usize>();
    let [nx, ny, nz] = cells;
    let extent = format!("0 {nx} 0 {ny} 0 {nz}");
    let mut blocks: Vec<(&[f64], usize)> = arrays
        .iter()
        .map(|a| (a.values, n * a.components))
        .collect();
    let mut h = String::new();
    let _ = writeln!(h, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(
        h,
        r#"<VTKFile type="{kind}" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
    );
    match geom {
        Geometry::Image {
            spacing: [a, b, c], ..
        } => {
            let _ = writeln!(
                h,
                r#"  <{kind} WholeExtent="{extent}" Origin="0 0 0" Spacing="{a:?} {b:?} {c:?}">"#
            );
        }
        Geometry::Rectilinear { .. } => {
            let _ = writeln!(h, r#"  <{kind} WholeExtent="{extent}">"#);
        }
    }
    let _ = writeln!(h, r#"    <Piece Extent="{extent}">"#);
    let _ = writeln!(h, "      <PointData>\n      </PointData>");
    let first = arrays.first().map_or("", |a| a.name);
    let _ = writeln!(h, r#"      <CellData Scalars="{first}">"#);
    let mut offset = 0usize;
    let mut array = |h: &mut String, name: &str, comps: usize, count: usize| {
        let _ = writeln!(
            h,
            r#"        <DataArray type="Float64" Name="{name}" NumberOfComponents="{comps}" format="appended" offset="{offset}"/>"#
        );
        offset += 8 + 8 * count;
    };
    for a in arrays {
        array(&mut h, a.name, a.components, n * a.components);
    }
    let _ = writeln!(h, "      </CellData>");
    if let Geometry::Rectilinear { x, y, z } = geom {
        let _ = writeln!(h, "      <Coordinates>");
        for (name, c) in [("x", x), ("y", y), ("z", z)] {
            array(&mut h, name, 1, c.len());
            blocks.push((c, c.len()));
        }
        let _ = writeln!(h, "      </Coordinates>");
    }
    let _ = write!(
        h,
        "    </Piece>\n  </{kind}>\n  <AppendedData encoding=\"raw\">\n   _"
    );
    let footer = "\n  </AppendedData>\n</VTKFile>\n";
    let mut out = Vec::with_capacity(h.len() + offset + footer.len());
    out.extend_from_slice(h.as_bytes());
    for (values, count) in blocks {
        out.extend_from_slice(&(8 * count as u64).to_le_bytes());
        for i in 0..count {
            let v = values.get(i).copied().unwrap_or(f64::NAN);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.extend_from_slice(footer.as_bytes());
    out
}

/// A steady field as `.vtr`: `temperature_C` (or `_K`; NaN in absent cells), `power_density`
/// (W/m³) and `conductivity` (kx, ky, kz in W/(m·K)) per cell, x and y faces
/// at the grid's true cell edges (non-uniform grids too), z faces at the layers' true cell boundaries, in metres.
pub fn thermal_vtr(view: &SteadyView, unit: TempUnit) -> Vec<u8> {
    let g = view.grid;
    let (x, y) = (g.xe.clone(), g.ye.clone());
    let z = crate::geometry::edges_of(&g.dz);
    let plane = g.plane();
    let mut temperature: Vec<f64> = view
        .temperature_k
        .iter()
        .map(|&t| unit.convert_k(t))
        .collect();
    // Absent cells (no material) have no temperature: NaN, as in the maps.
    for (l, layer) in view.stack.layers.iter().enumerate() {
        let Some(p) = view.power.get(l) else { continue };
        let absent = crate::assemble::absent_plane(g, p, layer.material);
        for z in g.layer_z[l].clone() {
            for (j, _) in absent.iter().enumerate().filter(|(_, a)| **a) {
                temperature[z * plane + j] = f64::NAN;
            }
        }
    }
    let maps: Vec<Vec<f64>> = view.power.iter().map(|p| p.map_w.clone()).collect();
    let power_density: Vec<f64> = crate::power::schedule::cell_power(g, &maps)
        .iter()
        .enumerate()
        .map(|(i, w)| w / (g.cell_area(i % plane) * g.dz[i / plane]))
        .collect();
    let k = crate::assemble::cell_conductivity(view.stack, g, view.power);
    let name = format!("temperature_{}", unit.suffix().to_uppercase());
    let mut coolant = Vec::new();
    if !view.coolant_cells.is_empty() {
        coolant = vec![0.0; g.len()];
        for &c in view.coolant_cells {
            coolant[c as usize] = 1.0;
        }
    }
    let mut arrays = vec![
        CellArray {
            name: &name,
            components: 1,
            values: &temperature,
        },
        CellArray {
            name: "power_density",
            components: 1,
            values: &power_density,
        },
        CellArray {
            name: "conductivity",
            components: 3,
            values: &k,
        },
    ];
    // 1 in the coolant cells of liquid-cooled cavities, 0 elsewhere.
    if !coolant.is_empty() {
        arrays.push(CellArray {
            name: "coolant",
            components: 1,
            values: &coolant,
        });
    }
    vtk_xml(
        &Geometry::Rectilinear {
            x: &x,
            y: &y,
            z: &z,
        },
        &arrays,
    )
}

/// A `.pvd` collection: one `DataSet` per (time in s, file relative to the
/// `.pvd`), for ParaView's time slider.
pub fn pvd(entries: &[(f64, String)]) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
    };
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for (t, f) in entries {
        let _ = writeln!(
            s,
            r#"    <DataSet timestep="{t:?}" group="" part="0" file="{}"/>"#,
            esc(f)
        );
    }
    s.push_str("  </Collection>\n</VTKFile>\n");
    s
}
