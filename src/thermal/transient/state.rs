//! Saved temperature fields (`--save-state`, `--init FILE`): the full 3D
//! field, so a run can continue from where another (steady or transient)
//! stopped. Format, little-endian:
//!
//! ```text
//! cuth-state 1 <nx> <ny> <nz>\n      one ASCII line
//! nx·ny·nz f64                       temperature in K, index x + nx·(y + ny·z)
//! ```
//!
//! Raw f64 keeps every bit (a text format would round or triple the size).

use crate::grid::Grid;
use std::path::{Path, PathBuf};

const MAGIC: &str = "cuth-state 1";

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{file}: cannot read")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Invalid { file: PathBuf, message: String },
}

/// The file's bytes for a field `t_k` on `grid`.
pub fn encode_state(grid: &Grid, t_k: &[f64]) -> Vec<u8> {
    let mut out = format!("{MAGIC} {} {} {}\n", grid.nx, grid.ny, grid.nz).into_bytes();
    out.reserve(8 * t_k.len());
    for v in t_k {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The temperatures a state file may hold, K: from the lowest ambient a
/// stack may give to well above any field a solve of a checked stack saves
/// (a hot run may pass the ambient's 1e4 K ceiling, so that is not used).
pub const STATE_RANGE_K: std::ops::RangeInclusive<f64> = 1.0..=1e6;

/// Reads a field saved for a grid of the same dimensions as `grid`.
pub fn read_state(path: &Path, grid: &Grid) -> Result<Vec<f64>, StateError> {
    // Header line (< 100 bytes) plus one f64 per cell.
    let limit = 128 + 8 * grid.len() as u64;
    let bytes = crate::input::read_limited(path, limit).map_err(|source| StateError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    decode_state(&bytes, grid).map_err(|message| StateError::Invalid {
        file: path.to_path_buf(),
        message,
    })
}

fn decode_state(bytes: &[u8], grid: &Grid) -> Result<Vec<f64>, String> {
    let nl = bytes
        .iter()
        .take(128)
        .position(|&b| b == b'\n')
        .ok_or("not a cuth state file (no `cuth-state 1 NX NY NZ` header line)")?;
    let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| "header is not text")?;
    let dims: Vec<usize> = header
        .strip_prefix(MAGIC)
        .ok_or_else(|| format!("header `{header}` does not start with `{MAGIC}`"))?
        .split_whitespace()
        .map(|s| s.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("header `{header}`: dimensions are not integers"))?;
    let want = [grid.nx, grid.ny, grid.nz];
    if dims != want {
        return Err(format!(
            "grid {dims:?} (nx, ny, nz) does not match this run's grid {want:?}; \
             use the same stack file and --grid"
        ));
    }
    let data = &bytes[nl + 1..];
    if data.len() != 8 * grid.len() {
        return Err(format!(
            "{} bytes of data, expected {} ({} cells × 8)",
            data.len(),
            8 * grid.len(),
            grid.len()
        ));
    }
    let t: Vec<f64> = data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    // A value far outside this range (one flipped byte gives 1e267 K) overflows the
    // residuals and stops the solver at 0 iterations with a nonsense field.
    if let Some(i) = t.iter().position(|v| !STATE_RANGE_K.contains(v)) {
        return Err(format!(
            "cell {i}: {:e} is not a temperature between {:e} and {:e} K",
            t[i],
            STATE_RANGE_K.start(),
            STATE_RANGE_K.end()
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(nx: usize, ny: usize, nz: usize) -> Grid {
        Grid::uniform(nx, ny, nx as f64, ny as f64, vec![1.0; nz], vec![0; nz])
    }

    #[test]
    fn round_trip_and_mismatches() {
        let g = grid(3, 2, 2);
        let t: Vec<f64> = (0..12).map(|i| 300.0 + i as f64 / 7.0).collect();
        let bytes = encode_state(&g, &t);
        assert_eq!(decode_state(&bytes, &g).unwrap(), t);
        let m = decode_state(&bytes, &grid(3, 2, 3)).unwrap_err();
        assert!(m.contains("[3, 2, 2]") && m.contains("[3, 2, 3]"), "{m}");
        let m = decode_state(&bytes[..bytes.len() - 1], &g).unwrap_err();
        assert!(m.contains("bytes"), "{m}");
        let m = decode_state(b"hello\n", &g).unwrap_err();
        assert!(m.contains("cuth-state"), "{m}");
        let mut bad = t.clone();
        bad[5] = f64::NAN;
        let m = decode_state(&encode_state(&g, &bad), &g).unwrap_err();
        assert!(m.contains("cell 5"), "{m}");
    }
}
