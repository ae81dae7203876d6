//! Results to files and terminal: a PNG heat map and a CSV grid per layer,
//! per-block min/avg/max, `summary.json`, and the stdout table.
//!
//! CONTRACT (filled in by the output module's implementation):
//! - `write_steady(dir, &SteadyView, &OutputOptions) -> Result<Vec<PathBuf>, OutputError>`
//!   renders everything in memory first and writes into `dir` (creating it);
//!   on error nothing half-written is left behind.
//! - `print_table(&Summary, TempUnit)` prints the readable summary to stdout.

use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::summary::Summary;

/// Display unit for temperatures in PNG, CSV and table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum TempUnit {
    Celsius,
    Kelvin,
}

/// Everything a steady result's outputs are made from.
pub struct SteadyView<'a> {
    pub stack: &'a Stack,
    pub grid: &'a Grid,
    /// Temperature of every cell, K, index `x + nx*(y + ny*z)`.
    pub temperature_k: &'a [f64],
    /// One per layer.
    pub power: &'a [LayerPower],
    pub summary: &'a Summary,
}

#[derive(Clone, Debug)]
pub struct OutputOptions {
    pub unit: TempUnit,
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: cannot encode image: {message}")]
    Image {
        path: std::path::PathBuf,
        message: String,
    },
}

/// STUB: replaced by the output module implementation.
pub fn write_steady(
    dir: &std::path::Path,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Vec<std::path::PathBuf>, OutputError> {
    let _ = (dir, view, opts);
    Ok(Vec::new())
}

/// STUB: replaced by the output module implementation.
pub fn print_table(summary: &Summary, unit: TempUnit) {
    let _ = (summary, unit);
}
