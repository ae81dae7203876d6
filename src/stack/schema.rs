//! The stack file as written by the user (TOML, serde). Every struct denies
//! unknown keys so that a typo is an error, not a silently ignored setting.
//! Validation and unit resolution happen in `stack::validate`, which turns this
//! into a [`crate::stack::Stack`].

use super::law::PropertySpec;
use super::units::{Length, Temperature};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackFile {
    /// Free text shown in the summary.
    pub title: Option<String>,
    /// The domain: the largest extent of the package; `[package]` and
    /// `[domain]` are accepted for `[chip]`.
    #[serde(alias = "package", alias = "domain")]
    pub chip: ChipSpec,
    pub grid: GridSpec,
    pub boundary: BoundarySpec,
    pub materials: BTreeMap<String, MaterialSpec>,
    /// Bottom to top.
    pub layers: Vec<LayerSpec>,
    pub solver: Option<SolverSpec>,
    /// Points whose temperature every run reports (`[[probes]]`).
    #[serde(default)]
    pub probes: Vec<ProbeSpec>,
    /// Output choices that belong to the model rather than to one run.
    pub output: Option<OutputSpec>,
}

/// `[output]`: what a run writes by default for this stack; command-line
/// flags override it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// What `blocks.steady` reports per block (`--block-map` overrides), so
    /// an imported HotSpot model keeps its `-grid_map_mode`.
    pub block_map: Option<BlockMap>,
    /// An imported 3D-ICE stack's output instructions, written under the
    /// run's output folder in 3D-ICE's formats.
    pub threedice: Option<super::peer_spec::PeerOutputsSpec>,
    /// HotSpot-format outputs on every run (`--hotspot-outputs` asks for
    /// them once): set by `cuth import hotspot` so that a HotSpot user's
    /// scripts find the files they read.
    pub hotspot: Option<HotspotOutputs>,
}

/// `[output] hotspot = { rows = R, cols = C, layers = "lcf" | "default" }`:
/// HotSpot's grid over the chip (`-grid_rows`, `-grid_cols`) on which
/// `hotspot.grid.steady` is sampled, and how HotSpot names the layers in
/// `blocks.steady` (`layer_N_` prefixes with an `.lcf`; without one the
/// chip's units bare, then `iface_`, `hsp_`, `hsink_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotspotOutputs {
    #[serde(default = "hotspot_grid")]
    pub rows: usize,
    #[serde(default = "hotspot_grid")]
    pub cols: usize,
    #[serde(default)]
    pub layers: HotspotLayers,
}

/// HotSpot's default grid, 64 × 64.
fn hotspot_grid() -> usize {
    64
}

impl Default for HotspotOutputs {
    fn default() -> Self {
        HotspotOutputs {
            rows: hotspot_grid(),
            cols: hotspot_grid(),
            layers: HotspotLayers::Lcf,
        }
    }
}

/// How HotSpot names layers in its `.steady` file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HotspotLayers {
    /// A layer configuration file: `layer_N_<unit>`.
    #[default]
    Lcf,
    /// HotSpot's default chip and interface layers: `<unit>`, `iface_<unit>`.
    Default,
}

/// The one value per block that `blocks.steady` reports, as HotSpot's
/// `-grid_map_mode` (`--block-map`, or `[output] block_map`; default `max`;
/// HotSpot defaults to `center`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BlockMap {
    /// Hottest cell the block overlaps.
    #[default]
    Max,
    /// Mean over the block, weighted by overlap area.
    Avg,
    /// Coolest cell the block overlaps.
    Min,
    /// The cell that holds the block's centre.
    Center,
}

/// A named point: `x`, `y` on the footprint and either a `layer` (the
/// layer's mean over its z cells, as its map shows) or a height `z` above
/// the stack bottom (the z cell that holds it).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    pub name: String,
    pub x: Length,
    pub y: Length,
    pub layer: Option<String>,
    pub z: Option<Length>,
}

/// The footprint shared by every layer: x extent (`width`) by y extent (`length`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    pub width: Length,
    pub length: Length,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Uniform grid: cells in x and y (both, or `cell` instead).
    pub nx: Option<usize>,
    pub ny: Option<usize>,
    /// Non-uniform grid: the largest cell over powered dies; grid lines
    /// snapped to every outline, region and block edge (`geometry::axis_edges`).
    pub cell: Option<Length>,
    /// Largest ratio of neighbouring cell widths outside powered dies
    /// (default 1.2).
    pub growth: Option<f64>,
    /// Largest cell anywhere (default 8 × `cell`): bounds the cells' aspect
    /// ratio, which multigrid's iteration count follows.
    pub max_cell: Option<Length>,
    /// Graded grid given line by line: the column edges (x) and row edges
    /// (y), m, increasing from 0 to the extent (an imported 3D-ICE
    /// non-uniform grid); replaces `nx`/`ny` and `cell`.
    pub x_edges: Option<Vec<f64>>,
    pub y_edges: Option<Vec<f64>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundarySpec {
    /// Ambient temperature: kelvin, or a string with a unit (`"45 C"`).
    pub ambient: Temperature,
    /// Heat transfer coefficient on top of the top layer, W/(m²·K): a
    /// number, rectangles, or a CSV raster; absent (or 0) = adiabatic, for
    /// a stack cooled from below.
    #[serde(default)]
    pub h_top: Option<CoolingSpec>,
    /// Optional heat transfer coefficient under the bottom layer, W/(m²·K).
    pub h_bottom: Option<CoolingSpec>,
}

/// A film coefficient: one number over the face, a list of rectangles (each
/// with its own `h`; faces no rectangle covers are adiabatic, later
/// rectangles win where they overlap), or a raster over the domain (first
/// row = max y, as power rasters): a CSV of W/(m²·K) per pixel, or a PNG
/// whose luma maps linearly from black = `h_min` (default 0) to white =
/// `h_max` (required for a PNG, refused for a CSV).
///
/// Deserialized by the form written (number, array, table), so a fault inside
/// a rectangle or the raster table is reported as that table's own error
/// (missing `h`, unknown key) rather than as "no variant matched"
/// (`schema_de`).
#[derive(Clone, Debug)]
pub enum CoolingSpec {
    Uniform(f64),
    Rects(Vec<CoolingRectSpec>),
    Raster {
        file: PathBuf,
        h_min: Option<f64>,
        h_max: Option<f64>,
    },
}

/// The table form of [`CoolingSpec::Raster`].
#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a cooling raster table { file = \"map.csv\" } or { file = \"map.png\", h_min = .., h_max = .. }"
)]
pub struct CoolingRasterSpec {
    pub file: PathBuf,
    pub h_min: Option<f64>,
    pub h_max: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a cooling rectangle { x, y, width, length, h }"
)]
pub struct CoolingRectSpec {
    pub x: Length,
    pub y: Length,
    pub width: Length,
    pub length: Length,
    pub h: f64,
}

/// A rectangle in the domain, lower-left corner at (`x`, `y`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a rectangle { x, y, width, length }")]
pub struct RectSpec {
    pub x: Length,
    pub y: Length,
    pub width: Length,
    pub length: Length,
}

/// Where a floorplan's and power source's (0, 0) sits in the domain.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a point { x, y }")]
pub struct OriginSpec {
    pub x: Length,
    pub y: Length,
}

/// A material by name from `[materials]`, `"none"` (no material: the
/// cells drop out of the system), or an inline table (constant properties).
///
/// Deserialized by the form written (string or table), so a fault inside an
/// inline table (missing `heat_capacity`, unknown key, `k` not a number) is
/// reported as that table's own error (`schema_de`).
#[derive(Clone, Debug)]
pub enum MaterialRef {
    Name(String),
    Inline(Box<MaterialSpec>),
}

/// A rectangle of a layer with its own material and, optionally, its own
/// floorplan and power (a die beside others, a TSV array): `[[layers.regions]]`.
/// Its floorplan and power are placed relative to its lower-left corner
/// unless `origin` says otherwise. Later regions win where regions overlap.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    pub name: String,
    pub x: Length,
    pub y: Length,
    pub width: Length,
    pub length: Length,
    pub material: MaterialRef,
    pub floorplan: Option<PathBuf>,
    pub power: Option<PowerSpec>,
    pub origin: Option<OriginSpec>,
}

/// Either an isotropic `k` or all three of `kx`, `ky`, `kz` (W/(m·K)); each
/// a number or a temperature law (`stack::law`).
#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a material table { k = .. (or kx, ky, kz), heat_capacity = .. }"
)]
pub struct MaterialSpec {
    pub k: Option<PropertySpec>,
    pub kx: Option<PropertySpec>,
    pub ky: Option<PropertySpec>,
    pub kz: Option<PropertySpec>,
    /// Volumetric heat capacity, J/(m³·K), a number or a law.
    pub heat_capacity: PropertySpec,
}

/// Leakage power growing with temperature:
/// P = p_ref·exp(beta·(T − t_ref)), W, T in kelvin, beta in 1/K.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LeakageSpec {
    pub p_ref: f64,
    pub t_ref: f64,
    pub beta: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    pub name: String,
    pub material: String,
    pub thickness: Length,
    /// Number of z cells the layer is split into (default 1).
    pub cells: Option<usize>,
    /// HotSpot `.flp` floorplan of this layer: names the blocks for per-block
    /// results and `ptrace` power, and may override the material per block.
    pub floorplan: Option<PathBuf>,
    pub power: Option<PowerSpec>,
    /// Leakage of the layer's whole source: per cell for a raster, else over
    /// the layer's area at its area-weighted mean temperature.
    pub leakage: Option<LeakageSpec>,
    /// Floorplan units whose material is a `[materials]` entry, by unit
    /// name (`{ tsv = "copper" }`): replaces the unit's `.flp` material
    /// columns, and may be a temperature law.
    pub unit_materials: Option<BTreeMap<String, String>>,
    /// The layer's own material covers this rectangle (default: the whole
    /// domain); `fill` covers the rest.
    pub outline: Option<RectSpec>,
    /// Material outside the outline (default `"none"`: absent cells).
    pub fill: Option<MaterialRef>,
    /// Where the floorplan's and power's (0, 0) sits (default: the
    /// outline's lower-left corner, or the domain's).
    pub origin: Option<OriginSpec>,
    #[serde(default)]
    pub regions: Vec<RegionSpec>,
    /// A liquid-cooled cavity (`stack::cavity`): the layer's material is
    /// then its walls' or pins', its thickness the cavity height.
    pub cavity: Option<super::cavity::CavitySpec>,
}

/// Where a layer's power comes from. Paths are relative to the stack file.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PowerSpec {
    /// `total` watts spread evenly over the footprint.
    Uniform { total: f64 },
    /// Rectangles, each with its own power.
    Blocks { blocks: Vec<BlockSpec> },
    /// Block powers from a HotSpot `.ptrace` for the layer's `floorplan`.
    /// Steady state uses the mean of the rows unless `row` (0-based, data rows
    /// only) picks one.
    Ptrace { file: PathBuf, row: Option<usize> },
    /// CSV raster of watts per pixel over the footprint; the first row is the
    /// top edge (max y), as an image is read. `total` rescales it.
    Raster { file: PathBuf, total: Option<f64> },
}

/// An inline block: a rectangle, lower-left corner at (`x`, `y`), or
/// several (`rects`) that make one block whose power is spread over their
/// union by area (a 3D-ICE floorplan element drawn as `rectangle` lines).
/// Exactly one of the two forms (checked by `stack::validate`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    pub name: String,
    pub x: Option<Length>,
    pub y: Option<Length>,
    pub width: Option<Length>,
    pub height: Option<Length>,
    /// Instead of `x`, `y`, `width`, `height`: the block's rectangles.
    pub rects: Option<Vec<BlockRectSpec>>,
    /// Watts.
    pub power: f64,
    /// Leakage of this block, at its area-weighted mean temperature.
    pub leakage: Option<LeakageSpec>,
}

/// One rectangle of a block of several, lower-left corner at (`x`, `y`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a rectangle { x, y, width, height }")]
pub struct BlockRectSpec {
    pub x: Length,
    pub y: Length,
    pub width: Length,
    pub height: Length,
}

impl BlockSpec {
    /// The block's rectangles in its source's frame (before the layer's or
    /// region's `origin`), m. A missing coordinate of the one-rectangle
    /// form reads as 0: validation has refused such a block already.
    pub fn rects(&self) -> Vec<crate::geometry::Rect> {
        let rect = |x: f64, y: f64, w: f64, h: f64| crate::geometry::Rect {
            x0: x,
            y0: y,
            x1: x + w,
            y1: y + h,
        };
        match &self.rects {
            Some(v) => v
                .iter()
                .map(|r| rect(r.x.0, r.y.0, r.width.0, r.height.0))
                .collect(),
            None => {
                let m = |l: &Option<Length>| l.as_ref().map_or(0.0, |l| l.0);
                vec![rect(
                    m(&self.x),
                    m(&self.y),
                    m(&self.width),
                    m(&self.height),
                )]
            }
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    pub precond: Option<crate::solver_options::PrecondKind>,
    pub rtol: Option<f64>,
    pub max_iter: Option<usize>,
    pub chebyshev_degree: Option<usize>,
}
