//! Power sources: read HotSpot floorplans and power traces, CSV rasters and
//! inline rectangles, and rasterize them conservatively onto the in-plane grid
//! (each rectangle's power goes to cells by overlap area, so the grid total
//! equals the input total to rounding). Hands [`LayerPower`] to assembly and
//! the block list to the per-block report.
//!
//! - [`layer_power`] returns the layer's map in W per in-plane cell (length
//!   nx*ny, index x + nx*y), its blocks and material patches.
//! - [`rasterize::coverage`] lists (plane index, overlap area m²) pairs.
//! - Readers (in [`crate::formats`]): [`flp`] (HotSpot floorplans),
//!   [`ptrace`] (HotSpot power traces), [`csv_raster`] (CSV or PNG power maps).

use crate::formats::ReadError;
pub use crate::geometry::Rect;
use crate::stack::Material;
use std::path::PathBuf;

/// A named block: a floorplan unit, an inline block or a region.
///
/// An inline block may be drawn as several rectangles (a 3D-ICE floorplan
/// element written as `rectangle` lines); it is still one block: its power
/// is spread over the union by area and its statistics are taken over the
/// union's cells. The rectangles do not overlap (the stack's check).
#[derive(Clone, Debug)]
pub struct Block {
    pub name: String,
    /// At least one rectangle, in domain coordinates.
    pub rects: Vec<Rect>,
    /// Power assigned to the block, W (0 for floorplan blocks with no power).
    pub power_w: f64,
}

impl Block {
    /// A block of one rectangle.
    pub fn new(name: impl Into<String>, rect: Rect, power_w: f64) -> Block {
        Block {
            name: name.into(),
            rects: vec![rect],
            power_w,
        }
    }

    /// The union's area, m².
    pub fn area(&self) -> f64 {
        self.rects.iter().map(Rect::area).sum()
    }

    /// The largest rectangle (the first of equals): its centre is the
    /// block's centre cell (`--block-map center`) and its box holds the
    /// name on maps, as it always lies inside the union, where the union's
    /// centroid may not (an L-shaped block).
    pub fn main_rect(&self) -> Rect {
        let mut best = self.rects[0];
        for r in &self.rects[1..] {
            if r.area() > best.area() {
                best = *r;
            }
        }
        best
    }

    /// (plane index, overlap area m²) of every cell the union touches, each
    /// rectangle's cells in turn ([`rasterize::coverage`]): a cell two
    /// rectangles share appears once for each, with its overlap with each.
    pub fn coverage(&self, grid: &crate::grid::Grid) -> Vec<(usize, f64)> {
        self.rects
            .iter()
            .flat_map(|r| rasterize::coverage(r, grid))
            .collect()
    }

    /// Whether the point (`x`, `y`), m, lies in the union (edges included).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        (self.rects.iter()).any(|r| r.x0 <= x && x <= r.x1 && r.y0 <= y && y <= r.y1)
    }
}

/// A region of a layer whose material differs from the layer's own
/// (HotSpot `.flp` blocks with specific heat and resistivity columns, e.g. TSVs).
#[derive(Clone, Debug)]
pub struct MaterialPatch {
    pub rect: Rect,
    /// The material (at 300 K when `law` is set).
    pub material: Material,
    /// A temperature law, for units given a `[materials]` entry
    /// (`unit_materials`).
    pub law: Option<crate::stack::MaterialLaw>,
}

/// What the power stage hands on for one layer.
#[derive(Clone, Debug, Default)]
pub struct LayerPower {
    /// W per in-plane cell, `x + nx*y`; all zeros for an unpowered layer.
    pub map_w: Vec<f64>,
    /// Input total, W (before rasterizing), for the conservation check.
    pub total_w: f64,
    /// Blocks for the per-block report (floorplan units or inline rectangles).
    pub blocks: Vec<Block>,
    /// Constant-material rectangles painted over the layer in order (later
    /// wins): floorplan units with their own material, regions.
    pub patches: Vec<MaterialPatch>,
    /// The layer's `outline` and the `fill` around it (painted first: the
    /// fill over the domain, then the layer's own material over the outline).
    pub outline: Option<(Rect, Material)>,
}

#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    #[error("{file}: cannot read")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A fault in an input file or a stack field; `field` names the place
    /// (a stack field such as `layers[3] (tim).power.blocks[0]`, or `line 7`).
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
}

/// A reader's error keeps its message: the file and the place at fault.
impl From<ReadError> for PowerError {
    fn from(e: ReadError) -> PowerError {
        match e {
            ReadError::Io { file, source } => PowerError::Io { file, source },
            ReadError::Invalid {
                file,
                field,
                message,
            } => PowerError::Invalid {
                file,
                field,
                message,
            },
        }
    }
}

/// A [`PowerError::Invalid`] at `field` of `file`.
pub(crate) fn invalid(
    file: &std::path::Path,
    field: impl Into<String>,
    message: impl Into<String>,
) -> PowerError {
    PowerError::Invalid {
        file: file.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

pub mod density;
pub mod drive;
mod layer;
mod paint;
pub mod raster_cache;
pub mod rasterize;
pub mod schedule;

// The readers sit below the stack (which reads floorplans and cooling
// rasters too); re-exported under their old paths.
pub use crate::formats::{csv_raster, flp, ptrace, trace, MAX_POWER_W};

pub use layer::{layer_power, layer_power_with};
pub use paint::{layer_material, LayerMaterial};
