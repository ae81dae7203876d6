//! Raster power maps over the whole footprint: a CSV of watts per pixel, or a
//! grayscale (or RGB, taken as luma) PNG whose pixel values are proportional
//! to power. Both are read like an image: the first row is the top edge
//! (max y), the first column the left edge (min x), so pixel (c, r) of an
//! R×C raster covers x ∈ [c·W/C, (c+1)·W/C], y ∈ [(R−1−r)·L/R, (R−r)·L/R].
//! Hands a [`Raster`] to `power::layer_power`, which scales it and spreads
//! it onto the grid with `power::rasterize::add_pixels`.

use super::{invalid, ReadError};
use std::path::Path;

/// What a raster's values mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RasterUnit {
    /// Watts per pixel (CSV): usable as is, or rescaled to a total.
    Watts,
    /// Proportional to power only (PNG intensities): needs a total.
    Relative,
}

/// A rows×cols map, row-major, row 0 along the top edge.
#[derive(Clone, Debug)]
pub struct Raster {
    pub rows: usize,
    pub cols: usize,
    pub values: Vec<f64>,
    pub unit: RasterUnit,
}

impl Raster {
    pub fn sum(&self) -> f64 {
        self.values.iter().sum()
    }
}

/// Reads a `.png` as a relative map, anything else as a CSV of watts.
pub fn read_raster(path: &Path) -> Result<Raster, ReadError> {
    let is_png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if is_png {
        read_png_raster(path)
    } else {
        read_csv_raster(path)
    }
}

fn io_error(path: &Path, source: std::io::Error) -> ReadError {
    ReadError::Io {
        file: path.to_path_buf(),
        source,
    }
}

/// Reads a CSV of watts per pixel: comma separated, no header, fields
/// trimmed, blank lines and lines starting with `#` skipped. Every row must
/// have the same number of values, each finite and ≥ 0.
pub fn read_csv_raster(path: &Path) -> Result<Raster, ReadError> {
    let bytes = crate::input::read_limited(path, crate::input::MAX_RASTER_BYTES)
        .map_err(|e| io_error(path, e))?;
    parse_csv_raster(bytes.as_slice(), path)
}

/// Parses CSV raster text from any reader; `file` is used in messages.
pub fn parse_csv_raster<R: std::io::Read>(reader: R, file: &Path) -> Result<Raster, ReadError> {
    parse_csv_values(reader, file, &POWER_VALUES)
}

/// The range and name of a CSV raster's values, for its checks and messages.
struct Values {
    max: f64,
    what: &'static str,
}

const POWER_VALUES: Values = Values {
    max: super::MAX_POWER_W,
    what: "a power (a number from 0 to 1e9 W)",
};

const FILM_VALUES: Values = Values {
    max: 1e12,
    what: "a film coefficient (a number from 0 to 1e12 W/(m^2 K))",
};

/// Reads a CSV cooling map (`h_top`/`h_bottom = { file = .. }`): W/(m²·K)
/// per pixel, each finite and in 0..=1e12; otherwise as [`read_csv_raster`].
pub fn read_csv_film_raster(path: &Path) -> Result<Raster, ReadError> {
    let bytes = crate::input::read_limited(path, crate::input::MAX_RASTER_BYTES)
        .map_err(|e| io_error(path, e))?;
    parse_csv_values(bytes.as_slice(), path, &FILM_VALUES)
}

fn parse_csv_values<R: std::io::Read>(
    reader: R,
    file: &Path,
    kind: &Values,
) -> Result<Raster, ReadError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        // Numbers never need quotes, and a stray quote in a comment must not
        // swallow the lines after it. Comments are skipped below rather than
        // with `comment()`, which leaves them out of the line count.
        .quoting(false)
        // Ragged rows are checked below, with a message that names the row.
        .flexible(true)
        .from_reader(reader);
    let mut values = Vec::new();
    let mut cols = 0;
    let mut rows = 0;
    for record in rdr.records() {
        let record = record.map_err(|e| {
            let field = e
                .position()
                .map_or("csv".to_string(), |p| format!("line {}", p.line()));
            let message = e.to_string();
            match e.into_kind() {
                csv::ErrorKind::Io(source) => io_error(file, source),
                _ => invalid(file, field, message),
            }
        })?;
        // A whitespace-only line reads as one empty field: skip it like a blank line.
        let first = record.get(0).unwrap_or("");
        if first.starts_with('#') || (record.len() == 1 && first.is_empty()) {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line());
        rows += 1;
        if rows == 1 {
            cols = record.len();
        } else if record.len() != cols {
            return Err(invalid(
                file,
                format!("row {rows} (line {line})"),
                format!("{} values, but the first row has {cols}", record.len()),
            ));
        }
        for (c, s) in record.iter().enumerate() {
            match s.parse::<f64>() {
                Ok(p) if (0.0..=kind.max).contains(&p) => values.push(p),
                _ => {
                    return Err(invalid(
                        file,
                        format!("row {rows} (line {line}), column {}", c + 1),
                        format!("`{s}` is not {}", kind.what),
                    ))
                }
            }
        }
    }
    if rows == 0 {
        return Err(invalid(file, "rows", "the raster has no rows of values"));
    }
    Ok(Raster {
        rows,
        cols,
        values,
        unit: RasterUnit::Watts,
    })
}

/// Reads a PNG as relative power: 8- or 16-bit gray, or colour converted to
/// luma; alpha is ignored.
pub fn read_png_raster(path: &Path) -> Result<Raster, ReadError> {
    let bytes = crate::input::read_limited(path, crate::input::MAX_RASTER_BYTES)
        .map_err(|e| io_error(path, e))?;
    parse_png_raster(&bytes, path)
}

/// Decodes PNG bytes as [`read_png_raster`] does; `path` is used in messages.
///
/// A small PNG can declare an enormous image (zeros compress 1000:1), so
/// the header's size is checked against the free host memory (capped by
/// `CUTH_HOST_MEMORY_BYTES`) before a pixel is decoded, and the decoder is
/// held to that limit too.
pub fn parse_png_raster(bytes: &[u8], path: &Path) -> Result<Raster, ReadError> {
    use image::ImageDecoder;
    let cannot = |e: image::ImageError| invalid(path, "png", format!("cannot decode: {e}"));
    let mut decoder =
        image::codecs::png::PngDecoder::new(std::io::Cursor::new(bytes)).map_err(cannot)?;
    let (w, h) = decoder.dimensions();
    let pixels = u64::from(w) * u64::from(h);
    // The decoded image, its 16-bit luma copy and the f64 values, all
    // alive at the peak.
    let needed = decoder
        .total_bytes()
        .saturating_add(pixels.saturating_mul(2 + 8));
    // The decoder's own default cap (512 MiB) stays, lowered to what is free.
    let mut limits = image::Limits::default();
    if let Some(free) = crate::backend::cpu::available_memory() {
        limits.max_alloc = limits.max_alloc.map(|m| m.min(free));
        if needed > free {
            return Err(invalid(
                path,
                "png",
                format!(
                    "a {w} x {h} image needs {needed} bytes of host memory to decode but \
                     only {free} are free; use a smaller image"
                ),
            ));
        }
    }
    decoder.set_limits(limits).map_err(cannot)?;
    let img = image::DynamicImage::from_decoder(decoder)
        .map_err(cannot)?
        .to_luma16();
    let (cols, rows) = (img.width() as usize, img.height() as usize);
    if rows == 0 || cols == 0 {
        return Err(invalid(path, "png", "the image has no pixels"));
    }
    Ok(Raster {
        rows,
        cols,
        values: img.into_raw().into_iter().map(f64::from).collect(),
        unit: RasterUnit::Relative,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn parse(text: &str) -> Result<Raster, ReadError> {
        parse_csv_raster(text.as_bytes(), Path::new("map.csv"))
    }

    #[test]
    fn reads_rows_top_first_with_comments_and_spaces() {
        let r = parse("# W per pixel\n1, 2 ,3\n\n 4,5,6 \n").unwrap();
        assert_eq!((r.rows, r.cols), (2, 3));
        assert_eq!(r.values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(r.unit, RasterUnit::Watts);
        assert_eq!(r.sum(), 21.0);
    }

    #[test]
    fn bad_values_and_ragged_rows_are_errors() {
        let m = parse("1,2\n3,-4\n").unwrap_err().to_string();
        assert!(
            m.contains("map.csv") && m.contains("row 2 (line 2), column 2"),
            "{m}"
        );
        let m = parse("1,2\n3,inf\n").unwrap_err().to_string();
        assert!(m.contains("column 2") && m.contains("`inf`"), "{m}");
        let m = parse("1,2\nx,2\n").unwrap_err().to_string();
        assert!(m.contains("column 1"), "{m}");
        let m = parse("1,2\n# \"c, d\n3,4,5\n").unwrap_err().to_string();
        assert!(
            m.contains("row 2 (line 3)") && m.contains("3 values"),
            "{m}"
        );
        let m = parse("# nothing\n").unwrap_err().to_string();
        assert!(m.contains("no rows"), "{m}");
    }

    #[test]
    fn png_reads_as_relative_luma() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("map.png");
        // 3 wide, 2 tall; top row 0, 50, 100; bottom row 200, 0, 0.
        let img = image::GrayImage::from_raw(3, 2, vec![0, 50, 100, 200, 0, 0]).unwrap();
        img.save(&path).unwrap();
        let r = read_raster(&path).unwrap();
        assert_eq!((r.rows, r.cols, r.unit), (2, 3, RasterUnit::Relative));
        let scaled: Vec<f64> = r.values.iter().map(|v| v / 257.0).collect();
        assert_eq!(scaled, [0.0, 50.0, 100.0, 200.0, 0.0, 0.0]);
    }

    #[test]
    fn missing_and_undecodable_files() {
        let e = read_raster(Path::new("/nonexistent/p.csv")).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }) && e.to_string().contains("/nonexistent/p.csv"));
        let e = read_raster(Path::new("/nonexistent/p.png")).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }) && e.to_string().contains("/nonexistent/p.png"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.PNG");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(b"not a png")
            .unwrap();
        let m = read_raster(&path).unwrap_err().to_string();
        assert!(m.contains("bad.PNG") && m.contains("cannot decode"), "{m}");
    }
}
