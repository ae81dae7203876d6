//! One layer's temperature map as a bare CSV grid: `ny` rows of `nx` numbers,
//! no header and no comment line (neither is valid CSV data, and a bare grid
//! loads directly with `numpy.loadtxt(f, delimiter=",")` or a spreadsheet).
//!
//! Orientation matches the PNG and the raster power input: the **first row
//! is the max-y edge** (image order), the first column is x = 0, so row `r`
//! holds y index `ny - 1 - r`. Values are in the display unit ([`TempUnit`],
//! °C by default) with six decimals, which resolves micro-kelvin differences
//! at any die temperature. The grid itself cannot say its unit, so
//! `blocks.csv` names it in its column headers and scripts reading layer grids
//! should use the same unit option they wrote with.
//!
//! [`TempUnit`]: super::TempUnit

use super::table::short;
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
    out
}

/// [`layer_csv`] preceded by the cell centres, in mm, as two `#` comment
/// lines (which cuth's raster reader, numpy's `comments='#'` and pandas'
/// `comment='#'` skip): `# x_mm,` then the nx column centres left to right,
/// `# y_mm,` then the ny row centres in row order (top row first).
pub fn layer_csv_with_coords(values: &[f64], grid: &crate::grid::Grid) -> String {
    let mut out = String::from("# x_mm");
    for x in 0..grid.nx {
        let _ = write!(out, ",{:.6}", grid.x_center(x) * 1e3);
    }
    out.push_str("\n# y_mm");
    for y in (0..grid.ny).rev() {
        let _ = write!(out, ",{:.6}", grid.y_center(y) * 1e3);
    }
    out.push('\n');
    out + &layer_csv(values, grid.nx, grid.ny)
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
    fn non_finite_is_nan() {
        assert_eq!(layer_csv(&[f64::INFINITY], 1, 1), "NaN\n");
        assert_eq!(layer_csv(&[], 1, 1), "NaN\n");
    }
}
