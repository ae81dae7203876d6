//! The layer stack: read a TOML stack file, check it, and hand a resolved
//! [`Stack`] (SI units, absolute paths, materials looked up) to the power and
//! assembly stages. Every error names the file and the field at fault.

pub mod cavity;
mod cooling;
pub mod dies;
mod grid;
pub mod law;
mod package;
pub mod peer_outputs;
pub mod peer_spec;
mod plausible;
mod probes;
pub mod schema;
mod schema_de;
pub mod units;
mod validate;

pub use crate::material::{Material, ABSENT};
pub use cavity::{AdvectionScheme, Cavity, CavityModel};
pub use law::{Law, MaterialLaw};
pub use plausible::{power_density_warning, MAX_POWER_DENSITY};
pub use schema::{BlockMap, BlockSpec, HotspotLayers, HotspotOutputs, LeakageSpec, PowerSpec};
use std::path::PathBuf;

/// A fully checked stack, SI units throughout.
#[derive(Clone, Debug)]
pub struct Stack {
    /// The stack file this came from (for messages).
    pub source: PathBuf,
    pub title: Option<String>,
    /// Footprint x extent, m.
    pub width_m: f64,
    /// Footprint y extent, m.
    pub length_m: f64,
    pub nx: usize,
    pub ny: usize,
    /// Non-uniform in-plane grid (`[grid] cell`): column and row edges, m
    /// (len nx + 1, ny + 1, from 0 to the extent). Edges, not widths, so
    /// that snapped lines stay exact. `None`: uniform nx × ny.
    pub plane_edges: Option<(Vec<f64>, Vec<f64>)>,
    pub ambient_k: f64,
    /// W/(m²·K) on top of the top layer (0 when `h_top_map` gives it).
    pub h_top: f64,
    /// W/(m²·K) under the bottom layer; `None` means adiabatic.
    pub h_bottom: Option<f64>,
    /// A cooling map replacing `h_top` (rectangles or raster).
    pub h_top_map: Option<CoolingMap>,
    /// A cooling map under the bottom layer (then `h_bottom` is `None`).
    pub h_bottom_map: Option<CoolingMap>,
    /// The cooling rasters read for the maps, by the field naming each
    /// (the maps keep only their values; [`Stack::input_files`] needs the
    /// files).
    pub cooling_files: Vec<(String, PathBuf)>,
    /// Bottom to top.
    pub layers: Vec<Layer>,
    pub solver: schema::SolverSpec,
    /// `[[probes]]`, checked: inside the footprint and the stack's height.
    pub probes: Vec<Probe>,
    /// `[output] block_map`: the stack's choice for `blocks.steady`.
    pub block_map: Option<BlockMap>,
    /// `[output.threedice]`: 3D-ICE output files a run writes.
    pub threedice: Option<peer_outputs::PeerOutputs>,
    /// `[output] hotspot`: HotSpot-format outputs on every run.
    pub hotspot: Option<HotspotOutputs>,
    /// Plausibility warnings (`stack::plausible`): valid but likely slips.
    pub warnings: Vec<String>,
}

/// A checked probe point, SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub name: String,
    pub x_m: f64,
    pub y_m: f64,
    pub at: ProbeAt,
}

/// Where a probe sits in z.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProbeAt {
    /// A layer (index, bottom = 0): the mean over its z cells.
    Layer(usize),
    /// A height above the stack bottom, m.
    Z(f64),
}

/// A film coefficient that varies over a face, W/(m²·K).
#[derive(Clone, Debug, PartialEq)]
pub enum CoolingMap {
    /// Rectangles with their own h; later ones win; uncovered faces adiabatic.
    Rects(Vec<(crate::geometry::Rect, f64)>),
    /// Pixels over the domain, row-major, row 0 along the top edge (max y).
    Raster {
        rows: usize,
        cols: usize,
        values: Vec<f64>,
    },
}

/// A rectangle of a layer with its own material, floorplan and power.
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub rect: crate::geometry::Rect,
    /// [`ABSENT`] for `"none"`.
    pub material: Material,
    pub floorplan: Option<PathBuf>,
    pub power: Option<PowerSpec>,
    /// Domain coordinates of the floorplan's and power's (0, 0), m.
    pub origin: (f64, f64),
}

#[derive(Clone, Debug)]
pub struct Layer {
    pub name: String,
    pub material_name: String,
    pub material: Material,
    pub thickness_m: f64,
    pub cells: usize,
    /// Absolute path of the layer's HotSpot floorplan, if any.
    pub floorplan: Option<PathBuf>,
    /// Power source with paths made absolute.
    pub power: Option<PowerSpec>,
    /// Temperature laws of the material, when any property is not constant
    /// (`material` then holds its values at 300 K).
    pub law: Option<MaterialLaw>,
    /// Leakage of the layer's source as a whole (blocks carry their own).
    pub leakage: Option<LeakageSpec>,
    /// Where the layer's own material lies (`None`: the whole domain).
    pub outline: Option<crate::geometry::Rect>,
    /// Material outside the outline ([`ABSENT`] by default).
    pub fill: Material,
    /// Domain coordinates of the floorplan's and power's (0, 0), m.
    pub origin: (f64, f64),
    /// Rectangles with their own material and power, painted in order.
    pub regions: Vec<Region>,
    /// Floorplan units given a `[materials]` entry (`unit_materials`).
    pub unit_materials: Vec<UnitMaterial>,
    /// The layer is a liquid-cooled cavity.
    pub cavity: Option<cavity::Cavity>,
}

/// A floorplan unit's material named in the stack file.
#[derive(Clone, Debug)]
pub struct UnitMaterial {
    pub unit: String,
    pub material_name: String,
    /// The material (at 300 K when it has a law).
    pub material: Material,
    pub law: Option<MaterialLaw>,
}

impl Layer {
    /// Whether the layer's material or one of its units' is a temperature law.
    pub fn has_law(&self) -> bool {
        self.law.is_some() || self.unit_materials.iter().any(|u| u.law.is_some())
    }

    /// Whether some conductivity of the layer depends on temperature.
    pub fn k_varies(&self) -> bool {
        let varies = |l: &Option<MaterialLaw>| l.as_ref().is_some_and(|m| m.k_varies());
        varies(&self.law) || self.unit_materials.iter().any(|u| varies(&u.law))
    }

    /// Whether the layer, one of its blocks or one of its regions' blocks leaks.
    pub fn has_leakage(&self) -> bool {
        let blocks_leak = |p: &Option<PowerSpec>| matches!(p, Some(PowerSpec::Blocks { blocks }) if blocks.iter().any(|b| b.leakage.is_some()));
        self.leakage.is_some()
            || blocks_leak(&self.power)
            || self.regions.iter().any(|r| blocks_leak(&r.power))
    }
}

/// Most cells of one grid (2^36: a 550 GB f64 vector), so every size and
/// memory estimate computed from it fits a u64.
pub const MAX_CELLS: usize = 1 << 36;

#[derive(Debug, thiserror::Error)]
pub enum StackError {
    #[error("{file}: cannot read")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
}

impl Stack {
    /// Reads and validates a stack file.
    pub fn load(path: &std::path::Path) -> Result<Stack, StackError> {
        let text =
            crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
                StackError::Io {
                    file: path.to_path_buf(),
                    source,
                }
            })?;
        Self::from_toml(&text, path)
    }

    /// Parses stack text; `path` is used for messages and to resolve relative paths.
    pub fn from_toml(text: &str, path: &std::path::Path) -> Result<Stack, StackError> {
        let raw: schema::StackFile = toml::from_str(text).map_err(|e| StackError::Parse {
            file: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        // `[package]` and `[domain]` are aliases of `[chip]`: messages name
        // the table as the file writes it (serde does not say which matched).
        let domain_key = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| {
                ["package", "domain"]
                    .into_iter()
                    .find(|k| t.contains_key(*k))
            })
            .unwrap_or("chip");
        validate::resolve(raw, path, domain_key)
    }

    /// Checks a power source written outside the stack file (a sweep
    /// case) by the same rules as a layer's `power`, so that a value the
    /// stack would refuse is never solved; `field` names it in `file`, and
    /// relative paths are taken from `file`'s folder.
    pub fn check_power(
        file: &std::path::Path,
        field: &str,
        spec: PowerSpec,
    ) -> Result<PowerSpec, StackError> {
        let base = file.parent().unwrap_or(std::path::Path::new("."));
        validate::resolve_power(file, base, field, spec)
    }

    /// Every file the stack reads besides itself (floorplans, power files,
    /// cooling rasters), each with the field that names it, resolved as
    /// its reader resolves it: an output must never overwrite one, or the
    /// next run of the same stack would read the output instead.
    pub fn input_files(&self) -> Vec<(String, PathBuf)> {
        let power_file = |p: &Option<PowerSpec>| match p {
            Some(PowerSpec::Ptrace { file, .. } | PowerSpec::Raster { file, .. }) => {
                Some(file.clone())
            }
            _ => None,
        };
        let mut files = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            let at = format!("layers[{i}] ({})", l.name);
            files.extend(l.floorplan.clone().map(|p| (format!("{at}.floorplan"), p)));
            files.extend(power_file(&l.power).map(|p| (format!("{at}.power.file"), p)));
            for (j, r) in l.regions.iter().enumerate() {
                let at = format!("{at}.regions[{j}] ({})", r.name);
                files.extend(r.floorplan.clone().map(|p| (format!("{at}.floorplan"), p)));
                files.extend(power_file(&r.power).map(|p| (format!("{at}.power.file"), p)));
            }
        }
        files.extend(self.cooling_files.iter().cloned());
        files
    }

    /// Replaces the in-plane grid (the `--grid NXxNY` override). A 4RM
    /// cavity fixes the count across its channels, which `--grid` must
    /// then repeat.
    pub fn with_grid(mut self, nx: usize, ny: usize) -> Result<Stack, StackError> {
        validate::check_grid(nx, ny, &self.source, "--grid")?;
        self.nx = nx;
        self.ny = ny;
        self.plane_edges = None;
        cavity::channel_grid(&mut self, false)?;
        Ok(self)
    }

    /// Whether some layer is a liquid-cooled cavity.
    pub fn has_cavities(&self) -> bool {
        self.layers.iter().any(|l| l.cavity.is_some())
    }

    /// Whether any material law or leakage makes the problem nonlinear in T.
    pub fn is_nonlinear(&self) -> bool {
        self.layers.iter().any(|l| l.has_law() || l.has_leakage())
    }

    /// Whether some conductivity depends on temperature.
    pub fn k_varies(&self) -> bool {
        self.layers.iter().any(Layer::k_varies)
    }

    /// Total number of z cells.
    pub fn nz(&self) -> usize {
        self.layers.iter().map(|l| l.cells).sum()
    }

    /// Cells of the grid, nx·ny·nz, in checked arithmetic and at most
    /// [`MAX_CELLS`]; anything larger is a stack error naming the sizes.
    pub fn cells(&self) -> Result<usize, StackError> {
        let nz = self
            .layers
            .iter()
            .try_fold(0usize, |acc, l| acc.checked_add(l.cells));
        let total = nz
            .and_then(|nz| nz.checked_mul(self.nx))
            .and_then(|c| c.checked_mul(self.ny));
        match total {
            Some(c) if c <= MAX_CELLS => Ok(c),
            _ => Err(StackError::Invalid {
                file: self.source.clone(),
                field: "grid".into(),
                message: format!(
                    "{} x {} in-plane cells times {} z cells is more than the limit of {MAX_CELLS} cells",
                    self.nx,
                    self.ny,
                    nz.map_or("too many".into(), |n| n.to_string())
                ),
            }),
        }
    }
}
