//! The whole 3D temperature field as a NumPy `.npy` file (`--npy`), for runs
//! too large for per-layer CSV: format version 1.0 as the NumPy format spec
//! (`numpy.lib.format`) defines it — the magic `\x93NUMPY`, version bytes,
//! a little-endian u16 header length, an ASCII dict header padded with
//! spaces and a newline so that the data starts at a multiple of 64 bytes —
//! followed by the raw little-endian values in C order.
//!
//! Shape `(nz, ny, nx)`: `a[z, y, x]` is the cell `x + nx*(y + ny*z)`, z = 0
//! the bottom of the stack, y = 0 the min-y edge (unlike the CSV maps, which
//! are in image order). Values in the display unit (°C, or K with
//! `--kelvin`), f32 or f64; absent cells (no material) are NaN, as in the
//! maps and `field.vtr`, since the solver's value there is no temperature.
//! Written one z plane at a time, so the writer holds one plane's bytes,
//! never the whole field.

use super::TempUnit;
use std::io::{self, Write};

/// Element type of the `.npy` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum NpyDtype {
    F32,
    F64,
}

impl NpyDtype {
    pub fn bytes(self) -> u64 {
        match self {
            NpyDtype::F32 => 4,
            NpyDtype::F64 => 8,
        }
    }

    fn descr(self) -> &'static str {
        match self {
            NpyDtype::F32 => "<f4",
            NpyDtype::F64 => "<f8",
        }
    }
}

/// The preamble and header of a C-order array of `shape`.
pub fn header(dtype: NpyDtype, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        dtype.descr()
    );
    // magic (6) + version (2) + length (2) + dict + '\n' ≡ 0 (mod 64).
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Writes `temperature_k` (index `x + nx*(y + ny*z)`) as an `(nz, ny, nx)`
/// array in `unit` and `dtype`, `plane` values at a time. `absent(z)` is
/// plane z's mask of cells without material (empty: none), written as NaN.
pub fn write_field<'m, W: Write + ?Sized>(
    w: &mut W,
    dtype: NpyDtype,
    (nx, ny, nz): (usize, usize, usize),
    temperature_k: &[f64],
    unit: TempUnit,
    absent: &dyn Fn(usize) -> &'m [bool],
) -> io::Result<()> {
    if temperature_k.len() != nx * ny * nz {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} values for a {nx}x{ny}x{nz} grid", temperature_k.len()),
        ));
    }
    w.write_all(&header(dtype, &[nz, ny, nx]))?;
    let plane = (nx * ny).max(1);
    let mut buf = Vec::with_capacity(plane * dtype.bytes() as usize);
    for (z, chunk) in temperature_k.chunks(plane).enumerate() {
        buf.clear();
        let absent = absent(z);
        for (j, &t) in chunk.iter().enumerate() {
            let v = match absent.get(j) {
                Some(true) => f64::NAN,
                _ => unit.convert_k(t),
            };
            match dtype {
                NpyDtype::F32 => buf.extend_from_slice(&(v as f32).to_le_bytes()),
                NpyDtype::F64 => buf.extend_from_slice(&v.to_le_bytes()),
            }
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An independent reader of what the spec says: magic, version, header
    /// length, dict, data offset.
    fn parse(bytes: &[u8]) -> (String, usize) {
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        assert_eq!(&bytes[6..8], &[1, 0]);
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let text = std::str::from_utf8(&bytes[10..10 + len])
            .unwrap()
            .to_string();
        (text, 10 + len)
    }

    #[test]
    fn header_is_aligned_and_names_shape_and_dtype() {
        for (dtype, shape) in [(NpyDtype::F32, vec![3, 2, 5]), (NpyDtype::F64, vec![7])] {
            let h = header(dtype, &shape);
            let (dict, start) = parse(&h);
            assert_eq!(start % 64, 0);
            assert!(dict.ends_with('\n'));
            assert!(dict.contains(dtype.descr()));
            assert!(dict.contains("'fortran_order': False"));
            let want = if shape.len() == 1 {
                "(7,)".to_string()
            } else {
                "(3, 2, 5)".into()
            };
            assert!(dict.contains(&format!("'shape': {want}")), "{dict}");
        }
    }

    #[test]
    fn values_in_c_order_and_unit() {
        let (nx, ny, nz) = (3, 2, 2);
        let t: Vec<f64> = (0..12).map(|i| 300.0 + i as f64 * 0.25).collect();
        let mut out = Vec::new();
        let none = |_| &[][..];
        write_field(
            &mut out,
            NpyDtype::F64,
            (nx, ny, nz),
            &t,
            TempUnit::Celsius,
            &none,
        )
        .unwrap();
        let (_, start) = parse(&out);
        assert_eq!(out.len() - start, 12 * 8);
        for (i, c) in out[start..].chunks(8).enumerate() {
            let v = f64::from_le_bytes(c.try_into().unwrap());
            assert_eq!(v, t[i] - 273.15);
        }
        let mut out32 = Vec::new();
        write_field(
            &mut out32,
            NpyDtype::F32,
            (nx, ny, nz),
            &t,
            TempUnit::Kelvin,
            &none,
        )
        .unwrap();
        let (_, s32) = parse(&out32);
        let last = f32::from_le_bytes(out32[out32.len() - 4..].try_into().unwrap());
        assert_eq!((out32.len() - s32) / 4, 12);
        assert_eq!(last, t[11] as f32);
        assert!(write_field(
            &mut Vec::new(),
            NpyDtype::F32,
            (2, 2, 2),
            &t,
            TempUnit::Kelvin,
            &none,
        )
        .is_err());
    }

    /// Cells without material have no temperature: NaN, plane by plane.
    #[test]
    fn absent_cells_are_nan() {
        let t = [300.0; 8];
        let masks = [vec![true, false, false, false], vec![]];
        let mut out = Vec::new();
        let absent = |z: usize| masks[z].as_slice();
        write_field(
            &mut out,
            NpyDtype::F64,
            (2, 2, 2),
            &t,
            TempUnit::Kelvin,
            &absent,
        )
        .unwrap();
        let (_, start) = parse(&out);
        let v: Vec<f64> = out[start..]
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(v[0].is_nan());
        assert!(v[1..].iter().all(|&x| x == 300.0), "{v:?}");
    }
}
