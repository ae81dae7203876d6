//! Results to files and terminal: a PNG heat map and a CSV grid per layer,
//! per-block min/avg/max, `summary.json`, and the stdout table. The last stage
//! of the pipeline: it reads the solved temperatures and the summary and
//! changes nothing upstream.
//!
//! CONTRACT:
//! - `write_steady(dir, &SteadyView, &OutputOptions) -> Result<Vec<PathBuf>, OutputError>`
//!   streams every file, layer by layer from bounded buffers, into the
//!   staging of a [`Transaction`] and commits it into `dir`; on error `dir`
//!   is left as it was. `stream_steady` does the same into a caller's
//!   transaction (`solve` adds its state file), `render_steady` into memory.
//! - `print_table(&Summary, TempUnit, verbose)` prints the readable summary
//!   to stdout (solver details and timings with `verbose`).
//!
//! Files: `colormap` (palette), `fonts` (the embedded font), `ticks`,
//! `raster` (map pixels from cell edges), `png` (heat maps), `csv`,
//! `blocks`, `json`, `table` (and `layout`, its columns and numbers),
//! `npy` (the 3D field for NumPy), and `write`
//! (the streamed files of a steady result);
//! for transient runs `timeseries`, `plot` (line plot) and `transient`
//! (snapshots staged during the run, committed at the end); `vtk` (the one
//! VTK writer: `.vtr`, `.vti`, `.pvd`); `threedice` (an imported 3D-ICE
//! stack's own output files); `transaction`
//! (the one output transaction every command writes through: private
//! staging, lock, renames, stale files) and `signals` (its cleanup on
//! SIGINT/SIGTERM/SIGHUP).

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
    /// Temperature of every cell, K, index `x + nx*(y + ny*z)`; may be
    /// empty when `layer_maps` holds every map the outputs need and no
    /// whole-field output (`--vtk`, `--npy`) is asked for.
    pub temperature_k: &'a [f64],
    /// Layer maps already made (K, index `x + nx*y`; `None` or absent: made
    /// here from `temperature_k`), as `thermal::steady::KeepField::Maps`
    /// leaves them.
    pub layer_maps: &'a [Option<Vec<f64>>],
    /// Per layer its blocks' statistics already computed (a device reduced
    /// them; `None` or absent: computed here from the layer's map).
    pub block_stats: &'a [Option<Vec<blocks::BlockStats>>],
    /// One per layer.
    pub power: &'a [LayerPower],
    pub summary: &'a Summary,
    /// The cells that hold coolant (liquid-cooled cavities; else empty):
    /// `field.vtr` marks them.
    pub coolant_cells: &'a [u32],
}

#[derive(Clone, Debug)]
pub struct OutputOptions {
    pub unit: TempUnit,
    /// What `blocks.steady` reports per block (`--block-map`).
    pub block_map: blocks::BlockMap,
    /// Also write the 3D field as `field.vtr` (`--vtk`).
    pub vtk: bool,
    /// Which layers get a PNG and a CSV map (`--layers`, `--no-maps`).
    pub maps: MapLayers,
    /// Also write the 3D field as `field.npy` (`--npy`).
    pub npy: Option<npy::NpyDtype>,
    /// HotSpot's own files too (`--hotspot-outputs`, `[output] hotspot`),
    /// on this grid over the chip.
    pub hotspot: Option<crate::stack::HotspotOutputs>,
}

/// Which layers get maps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MapLayers {
    #[default]
    All,
    /// Layer indices, bottom = 0.
    Only(Vec<usize>),
    None,
}

impl MapLayers {
    /// Whether layer `l` gets maps.
    pub fn includes(&self, l: usize) -> bool {
        match self {
            MapLayers::All => true,
            MapLayers::Only(v) => v.contains(&l),
            MapLayers::None => false,
        }
    }

    /// How many of `layers` layers get maps.
    pub fn count(&self, layers: usize) -> usize {
        (0..layers).filter(|&l| self.includes(l)).count()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}")]
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
    /// An output path that exists and is not what would be written there
    /// (a device, FIFO or directory where a file is meant).
    #[error("{path}: refusing to replace it: it is {what}")]
    NotRegular {
        path: std::path::PathBuf,
        what: String,
    },
    /// Another run held the output folder's lock for too long.
    #[error("{path}: locked by another cuth run (waited {waited_s} s)")]
    Locked {
        path: std::path::PathBuf,
        waited_s: u64,
    },
}

impl TempUnit {
    /// `t_k` (kelvin) in this unit: °C = K − 273.15.
    pub fn convert_k(self, t_k: f64) -> f64 {
        match self {
            TempUnit::Celsius => t_k - 273.15,
            TempUnit::Kelvin => t_k,
        }
    }

    /// Suffix for column names (`t_max_c`, `t_max_k`), in the style of the
    /// summary's `t_max_k`.
    pub fn suffix(self) -> &'static str {
        match self {
            TempUnit::Celsius => "c",
            TempUnit::Kelvin => "k",
        }
    }

    /// Symbol for text meant for people (`°C`, `K`).
    pub fn symbol(self) -> &'static str {
        match self {
            TempUnit::Celsius => "°C",
            TempUnit::Kelvin => "K",
        }
    }
}

pub mod blocks;
mod colormap;
pub mod coolant;
pub mod crop;
pub mod csv;
pub mod fonts;
pub mod hotspot;
pub mod json;
mod layout;
pub mod npy;
pub mod plot;
pub mod png;
pub mod raster;
pub mod signals;
mod table;
pub mod threedice;
pub mod ticks;
pub mod timeseries;
pub mod transaction;
mod transient;
pub mod vtk;
pub(crate) mod write;

pub use fonts::DrawError;
pub use layout::{columns, cut, human, num as param_num, MAX_COL};
pub use table::{format_table, print_table};
pub use transaction::{Owned, Transaction};
pub use transient::TransientWriter;
pub use write::{render_steady, stream_steady, write_steady, Staged};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod transaction_tests;
