//! Cooling maps of `h_top` / `h_bottom`, checked: one number, rectangles
//! with their own h, or a raster over the domain (a CSV of W/(m²·K) per
//! pixel, or a PNG whose luma maps linearly from black = `h_min` to white =
//! `h_max`).

use super::package::rect_of;
use super::schema::CoolingSpec;
use super::validate::checks::invalid;
use super::{CoolingMap, StackError};
use std::path::{Path, PathBuf};

/// The least film coefficient that counts as removing heat, W/(m²·K): the
/// floor of a uniform `h`. A map whose every h is below it (a lone 1e-300
/// pixel) leaves the face adiabatic in all but name and the solve singular.
const H_FLOOR: f64 = 1e-6;

/// Where a cooling raster named `f` in the stack `file` is read from:
/// relative to the stack's folder, as every path the stack names.
pub(super) fn raster_path(file: &Path, f: &Path) -> PathBuf {
    if f.is_absolute() {
        f.to_path_buf()
    } else {
        file.parent().unwrap_or(Path::new(".")).join(f)
    }
}

/// A film coefficient: the scalar (0 with a map, or for a uniform 0: an
/// adiabatic face) and the map.
pub(super) fn cooling(
    file: &Path,
    field: &str,
    spec: &CoolingSpec,
    (w, l): (f64, f64),
) -> Result<(f64, Option<CoolingMap>), StackError> {
    let h_ok = |f: &str, h: f64, lo: f64| -> Result<f64, StackError> {
        if h.is_finite() && h >= lo && h <= 1e12 {
            Ok(h)
        } else {
            Err(invalid(
                file,
                f,
                format!("must be between {lo:e} and 1e12 W/(m^2 K), got {h:e}"),
            ))
        }
    };
    match spec {
        // Exactly 0 is an adiabatic face, said outright; a tiny h is a slip.
        CoolingSpec::Uniform(h) if *h == 0.0 => Ok((0.0, None)),
        CoolingSpec::Uniform(h) => Ok((
            h_ok(field, *h, H_FLOOR).map_err(|_| {
                invalid(
                    file,
                    field,
                    format!(
                        "must be between {H_FLOOR:e} and 1e12 W/(m^2 K), or 0 (adiabatic), \
                         got {h:e}"
                    ),
                )
            })?,
            None,
        )),
        CoolingSpec::Rects(rects) => {
            let mut out = Vec::with_capacity(rects.len());
            for (i, r) in rects.iter().enumerate() {
                let f = format!("{field}[{i}]");
                let rect = rect_of(file, &f, r.x.0, r.y.0, r.width.0, r.length.0, (w, l))?;
                out.push((rect, h_ok(&format!("{f}.h"), r.h, 0.0)?));
            }
            if !out.iter().any(|(_, h)| *h >= H_FLOOR) {
                return Err(invalid(
                    file,
                    field,
                    format!(
                        "no rectangle has h > 0 (an h below {H_FLOOR:e} W/(m^2 K) counts \
                         as 0): the face would be adiabatic"
                    ),
                ));
            }
            Ok((0.0, Some(CoolingMap::Rects(out))))
        }
        CoolingSpec::Raster {
            file: f,
            h_min,
            h_max,
        } => {
            let path = raster_path(file, f);
            let png = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("png"));
            let at = format!("{field}.file");
            let r = if png {
                let hi = h_max.ok_or_else(|| {
                    invalid(
                        file,
                        format!("{field}.h_max"),
                        "a PNG cooling map needs `h_max` (W/(m^2 K) of a white pixel)",
                    )
                })?;
                let hi = h_ok(&format!("{field}.h_max"), hi, 0.0)?;
                let lo = h_ok(&format!("{field}.h_min"), h_min.unwrap_or(0.0), 0.0)?;
                if lo > hi {
                    return Err(invalid(
                        file,
                        format!("{field}.h_min"),
                        format!("h_min {lo:e} is above h_max {hi:e}"),
                    ));
                }
                let mut r = crate::formats::csv_raster::read_png_raster(&path)
                    .map_err(|e| invalid(file, &at, e.to_string()))?;
                // Luma as 16 bits (8-bit images scaled by 257): white = 65535.
                for v in &mut r.values {
                    *v = lo + (hi - lo) * (*v / 65535.0);
                }
                r
            } else {
                if h_min.is_some() || h_max.is_some() {
                    let k = if h_min.is_some() { "h_min" } else { "h_max" };
                    return Err(invalid(
                        file,
                        format!("{field}.{k}"),
                        "applies to a PNG cooling map only (a CSV holds W/(m^2 K) per pixel)",
                    ));
                }
                crate::formats::csv_raster::read_csv_film_raster(&path)
                    .map_err(|e| invalid(file, &at, e.to_string()))?
            };
            // No pixel above 1e12: a CSV's values are checked as read, a
            // PNG's lie between h_min and h_max, both checked above.
            if !r.values.iter().any(|h| *h >= H_FLOOR) {
                return Err(invalid(
                    file,
                    format!("{field}.file"),
                    format!(
                        "every pixel is 0 (an h below {H_FLOOR:e} W/(m^2 K) counts as 0): \
                         the face would be adiabatic"
                    ),
                ));
            }
            Ok((
                0.0,
                Some(CoolingMap::Raster {
                    rows: r.rows,
                    cols: r.cols,
                    values: r.values,
                }),
            ))
        }
    }
}
