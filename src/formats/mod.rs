//! Readers of the input file formats: HotSpot floorplans ([`flp`]) and power
//! traces ([`ptrace`]), CSV/PNG rasters ([`csv_raster`]) and time traces
//! ([`trace`]). Each returns plain data (rectangles, materials, numbers) and
//! a [`ReadError`] naming the file and the place at fault; checking the data
//! against a stack is left to the stages above, which wrap the error in their
//! own.

use std::path::PathBuf;

pub mod csv_raster;
pub mod flp;
pub mod ptrace;
pub mod trace;

/// Largest power of one value of a trace or raster, W (docs/src/reliability.md: input limits):
/// beyond it sums overflow and the solve breaks down with no field named.
pub const MAX_POWER_W: f64 = 1e9;

/// A reader's fault: the file cannot be read, or a value in it is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{file}: cannot read")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A fault in the file; `field` names the place (`line 7`, `units`).
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
}

/// A [`ReadError::Invalid`] at `field` of `file`.
pub(crate) fn invalid(
    file: &std::path::Path,
    field: impl Into<String>,
    message: impl Into<String>,
) -> ReadError {
    ReadError::Invalid {
        file: file.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}
