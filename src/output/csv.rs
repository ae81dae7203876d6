//! One layer's temperature map as a CSV grid: `ny` rows of `nx` numbers,
//! after `#` comment lines that state the unit and the cell centres
//! ([`write_layer_csv_with_coords`]; cuth's raster reader, numpy's
//! `comments='#'` and pandas' `comment='#'` skip them), or bare
//! ([`layer_csv`], for callers that add their own).
//!
//! Orientation matches the PNG and the raster power input: the **first row
//! is the max-y edge** (image order), the first column is x = 0, so row `r`
//! holds y index `ny - 1 - r`. Values are in the unit the caller chose
//! ([`TempUnit`]: °C by default, docs/src/outputs.md, "Units") with six decimals, which
//! resolves micro-kelvin differences at any die temperature.
//!
//! [`TempUnit`]: super::TempUnit

use super::layout::short;
use super::TempUnit;
use crate::thermal::probes::ProbeReading;
use std::fmt::Write;
use std::io;

/// `probes.csv`: `probe,layer,x_mm,y_mm,z_um,cell_x,cell_y,t_<u>` with `<u>`
/// = `c` or `k`, one row per `[[probes]]` entry in file order; `z_um` is the
/// given height or the layer's mid-height. Written through the `csv` crate
/// (names are quoted as needed).
pub fn probes_csv(probes: &[ProbeReading], unit: TempUnit) -> io::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "probe".to_string(),
        "layer".to_string(),
        "x_mm".to_string(),
        "y_mm".to_string(),
        "z_um".to_string(),
        "cell_x".to_string(),
        "cell_y".to_string(),
        format!("t_{}", unit.suffix()),
    ])?;
    for p in probes {
        w.write_record([
            p.name.clone(),
            p.layer.clone(),
            short(p.x_m * 1e3),
            short(p.y_m * 1e3),
            short(p.z_m * 1e6),
            p.cell_x.to_string(),
            p.cell_y.to_string(),
            format!("{:.6}", unit.convert_k(p.t_k)),
        ])?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The CSV text of a layer map. `values` are already in the display unit,
/// index `x + nx*y`; a missing or non-finite value is written as `NaN`,
/// which numpy and spreadsheets read as not-a-number.
pub fn layer_csv(values: &[f64], nx: usize, ny: usize) -> String {
    // Up to ~12 characters per value ("-1234.567890,").
    let mut out = String::with_capacity(nx * ny * 12);
    for y in (0..ny).rev() {
        push_row(&mut out, values, nx, y);
    }
    out
}

/// Rows formatted at once by [`write_layer_csv`] (in parallel), then written.
const BAND_ROWS: usize = 256;

/// [`layer_csv`] streamed into `w`: bands of rows are formatted in parallel
/// and written in order, so the text of the whole map never exists in
/// memory (an 8192² map is about 0.9 GB of text).
pub fn write_layer_csv<W: io::Write + ?Sized>(
    w: &mut W,
    values: &[f64],
    nx: usize,
    ny: usize,
) -> io::Result<()> {
    use rayon::prelude::*;
    let rows: Vec<usize> = (0..ny).rev().collect();
    for band in rows.chunks(BAND_ROWS) {
        let texts: Vec<String> = band
            .par_iter()
            .map(|&y| {
                let mut s = String::with_capacity(nx * 12);
                push_row(&mut s, values, nx, y);
                s
            })
            .collect();
        for t in texts {
            w.write_all(t.as_bytes())?;
        }
    }
    Ok(())
}

/// Row `y` of the map, newline-terminated.
fn push_row(out: &mut String, values: &[f64], nx: usize, y: usize) {
    for x in 0..nx {
        if x > 0 {
            out.push(',');
        }
        match values.get(x + nx * y) {
            Some(v) if v.is_finite() => {
                // Writing to a String cannot fail.
                let _ = write!(out, "{v:.6}");
            }
            _ => out.push_str("NaN"),
        }
    }
    out.push('\n');
}

/// The first line of a layer CSV: the unit of its values.
pub fn unit_line(unit: TempUnit) -> String {
    format!("# unit: {}\n", unit.symbol())
}

/// [`write_layer_csv`] preceded by three `#` comment lines: the unit
/// ([`unit_line`]), then the cell centres in mm: `# x_mm,` then the nx
/// column centres left to right, `# y_mm,` then the ny row centres in row
/// order (top row first).
pub fn write_layer_csv_with_coords<W: io::Write + ?Sized>(
    w: &mut W,
    values: &[f64],
    grid: &crate::grid::Grid,
    unit: TempUnit,
) -> io::Result<()> {
    let mut head = unit_line(unit);
    head.push_str("# x_mm");
    for x in 0..grid.nx {
        let _ = write!(head, ",{:.6}", grid.x_center(x) * 1e3);
    }
    head.push_str("\n# y_mm");
    for y in (0..grid.ny).rev() {
        let _ = write!(head, ",{:.6}", grid.y_center(y) * 1e3);
    }
    head.push('\n');
    w.write_all(head.as_bytes())?;
    write_layer_csv(w, values, grid.nx, grid.ny)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row_is_max_y() {
        // 3 × 2, value = 10*y + x.
        let v: Vec<f64> = (0..6).map(|i| f64::from(10 * (i / 3) + i % 3)).collect();
        let s = layer_csv(&v, 3, 2);
        assert_eq!(
            s,
            "10.000000,11.000000,12.000000\n0.000000,1.000000,2.000000\n"
        );
    }

    #[test]
    fn streamed_equals_in_memory() {
        let (nx, ny) = (7, 2 * BAND_ROWS + 3);
        let v: Vec<f64> = (0..nx * ny).map(|i| (i as f64).sin() * 100.0).collect();
        let mut w = Vec::new();
        write_layer_csv(&mut w, &v, nx, ny).unwrap();
        assert_eq!(String::from_utf8(w).unwrap(), layer_csv(&v, nx, ny));
    }

    #[test]
    fn non_finite_is_nan() {
        assert_eq!(layer_csv(&[f64::INFINITY], 1, 1), "NaN\n");
        assert_eq!(layer_csv(&[], 1, 1), "NaN\n");
    }
}
