//! Memory planning of a steady run: before anything
//! proportional to the grid is allocated, the host and device bytes of the
//! whole run (assembly, solver vectors, the preconditioner with its
//! multigrid hierarchy or lower-precision copy, temperatures and outputs)
//! are estimated item by item for the backend, precision and preconditioner
//! chosen. A run that does not fit is refused with the figures and the
//! largest grid of the same aspect ratio that would fit (exit 1); one that
//! fits reports the plan in `summary.json` (`memory`).
//!
//! The figures are upper estimates of the peak (items that are alive at
//! different times are added), so a plan that fits does not fail for memory
//! later. The caller's [`MemoryCaps`](crate::knobs::MemoryCaps) cap the
//! available memory (for tests and to keep a shared machine's share); the
//! smaller of the cap and what the system reports is used. Files: this one (the shape, the plan, the refusal), `precond`
//! (the preconditioner's bytes, the multigrid hierarchy level by level).

mod precond;
#[cfg(test)]
mod tests;

pub use crate::backend::memory_limit::capped;
use crate::linalg::{PrecisionMode, PrecondKind};
use precond::precond_bytes;
use serde::Serialize;

/// Fixed device headroom (scratch, allocator granularity, fragmentation).
const DEVICE_MARGIN_BYTES: u64 = 64 << 20;
/// Fixed host overhead: the binary, NVRTC, the CUDA runtime, small tables.
const HOST_FIXED_BYTES: u64 = 256 << 20;

/// Where the solver's vectors live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Executor {
    Cpu,
    Cuda,
}

/// Pinned staging buffers of a CUDA run's downloads (2 × 32 MiB, as
/// `backend::cuda::STAGE_VALUES`).
const STAGING_BYTES: u64 = 2 * 8 * (4 << 20);

/// What the run writes, as far as memory is concerned.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputShape {
    /// Layers that get a PNG and a CSV map.
    pub map_layers: usize,
    /// Layers with named blocks (floorplan units, rectangles) that get no
    /// map: their block statistics read the layer's map.
    pub block_layers: usize,
    /// `field.vtr` (the 3D field rendered in memory).
    pub vtk: bool,
    /// `field.npy`, bytes per value (4 or 8), streamed plane by plane.
    pub npy_bytes: Option<u64>,
    /// `--save-state` (the whole field encoded in memory).
    pub save_state: bool,
}

/// A steady run's shape: grid, executor, solver, outputs.
#[derive(Clone, Copy, Debug)]
pub struct RunShape<'w> {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub layers: usize,
    /// Layers with a power source (their maps go to the device whole).
    pub powered_layers: usize,
    /// Layers whose material may vary in-plane (floorplan material
    /// patches, regions, an outline): a plane of materials each.
    pub patched_layers: usize,
    /// Column and row widths of a non-uniform grid (empty: uniform), for
    /// the size-graded multigrid hierarchy.
    pub wx: &'w [f64],
    pub wy: &'w [f64],
    pub executor: Executor,
    /// A GPU run assembles its system on the host, as the CPU does
    /// ([`CudaKnobs::host_assembly`](crate::knobs::CudaKnobs::host_assembly)).
    pub host_assembly: bool,
    pub precond: PrecondKind,
    pub precision: PrecisionMode,
    /// Precision of the multigrid hierarchy.
    pub mg_precision: crate::linalg::mg::MgPrecision,
    pub outputs: OutputShape,
}

/// One memory's estimate: named items, their sum, and what is available.
#[derive(Clone, Debug, Serialize)]
pub struct Budget {
    pub items: Vec<(String, u64)>,
    pub total_bytes: u64,
    /// Free memory when the plan was made (`None`: unknown, not checked).
    pub available_bytes: Option<u64>,
}

impl Budget {
    fn new(items: Vec<(&str, u64)>, available_bytes: Option<u64>) -> Budget {
        let total_bytes = items.iter().map(|i| i.1).fold(0u64, u64::saturating_add);
        Budget {
            items: items.into_iter().map(|(s, b)| (s.to_string(), b)).collect(),
            total_bytes,
            available_bytes,
        }
    }

    fn fits(&self) -> bool {
        self.available_bytes.is_none_or(|a| self.total_bytes <= a)
    }
}

/// The plan of one run, as `summary.json` reports it.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryPlan {
    pub executor: Executor,
    pub host: Budget,
    /// Absent on the CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Budget>,
}

/// The run does not fit: the figures and the largest grid that would.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct MemoryPlanError {
    pub message: String,
    /// The largest (nx, ny) of the same aspect ratio that fits, if any.
    pub largest: Option<(usize, usize)>,
}

/// The plan of `s` against the available memory (`host_free`,
/// `device_free`: `None` when unknown).
pub fn plan(s: &RunShape, host_free: Option<u64>, device_free: Option<u64>) -> MemoryPlan {
    let n = (s.nx * s.ny * s.nz) as u64;
    let plane = (s.nx * s.ny) as u64;
    let layers = s.layers as u64;
    let (pre_dev, pre_host) = precond_bytes(s);
    let o = s.outputs;
    // The whole field stays on the host only for the outputs that write it
    // (`thermal::steady::KeepField`); otherwise the statistics are folded
    // as it comes down and only the layer maps the outputs read are kept.
    let whole = o.vtk || o.npy_bytes.is_some() || o.save_state;
    // Every layer's power map is one plane (`LayerPower`).
    let mut host = vec![
        ("fixed overhead", HOST_FIXED_BYTES),
        ("power maps", 8 * plane * layers),
    ];
    // Host assembly: the per-cell materials of every layer, the system
    // (Quad-Diag, rhs, capacity) and the shifted rhs; on a GPU the system
    // is built on the device (unless `host_assembly`) from
    // compact inputs, and only Chebyshev's set-up reads a host copy of the
    // matrix (its Gershgorin bound and scaled copy; multigrid builds its
    // levels on the device).
    let host_assembly = s.executor == Executor::Cpu || s.host_assembly;
    if host_assembly {
        host.push(("layer materials per plane cell", 32 * plane * layers));
        host.push((
            "assembled system (Quad-Diag, rhs, capacity)",
            56 * n + 16 * plane,
        ));
        host.push(("shifted right-hand side", 8 * n));
    } else {
        // The material planes of patched layers (the power maps are
        // uploaded from where they are); g_top and g_bottom come down only
        // for a fold of the whole field (the statistics are otherwise
        // reduced on the device).
        let patched = s.patched_layers as u64;
        let films = if whole { 16 * plane } else { 0 };
        host.push((
            "assembly inputs (material planes, films)",
            32 * plane * patched + films,
        ));
        if s.precond.needs().host_matrix {
            host.push(("matrix copy for preconditioner set-up", 40 * n));
        }
    }
    let mut device = None;
    match s.executor {
        Executor::Cpu => {
            // The uploaded matrix is a copy; x, b, r, z, p, q.
            host.push(("solver matrix and vectors", 40 * n + 48 * n));
            host.push(("preconditioner", pre_dev + pre_host));
        }
        Executor::Cuda => {
            host.push(("preconditioner set-up", pre_host));
            host.push(("pinned staging buffers", STAGING_BYTES));
            let data = 40 * n + 48 * n + pre_dev;
            device = Some(vec![
                ("matrix (d, gx, gy, gz, amb)", 40 * n),
                ("PCG vectors (x, b, r, z, p, q)", 48 * n),
                ("preconditioner", pre_dev),
                ("scratch and margin", DEVICE_MARGIN_BYTES + data / 50),
            ]);
        }
    }
    if whole {
        host.push(("temperatures (K, every cell)", 8 * n));
    } else {
        let kept = (o.map_layers + o.block_layers).min(s.layers) as u64;
        host.push(("layer maps (K)", 8 * plane * kept));
    }
    // Maps are written one layer at a time: the map in K and shown, the
    // CSV text (≤ 13 B a value) and the PNG's pixels.
    let maps = if o.map_layers > 0 { plane * 48 } else { 0 };
    host.push(("maps (one layer at a time)", maps));
    if o.vtk {
        host.push(("field.vtr (rendered in memory)", 48 * n));
    }
    if let Some(b) = o.npy_bytes {
        host.push(("field.npy (one plane at a time)", b * plane));
    }
    if o.save_state {
        host.push(("state file (encoded in memory)", 8 * n));
    }
    MemoryPlan {
        executor: s.executor,
        host: Budget::new(host, host_free),
        device: device.map(|d| Budget::new(d, device_free)),
    }
}

impl MemoryPlan {
    pub fn fits(&self) -> bool {
        self.host.fits() && self.device.as_ref().is_none_or(Budget::fits)
    }
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The largest grid of `s`'s aspect ratio (nx' ≤ nx) whose plan fits.
pub fn largest_fitting(
    s: &RunShape,
    host_free: Option<u64>,
    device_free: Option<u64>,
) -> Option<(usize, usize)> {
    let at = |nx: usize| {
        let ny = ((nx as f64 * s.ny as f64 / s.nx as f64).round() as usize).max(1);
        (nx, ny)
    };
    let fits = |nx: usize| {
        let (x, y) = at(nx);
        plan(&RunShape { nx: x, ny: y, ..*s }, host_free, device_free).fits()
    };
    if !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1usize, s.nx.max(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(at(lo))
}

/// Plans `s` and refuses it, with the figures and the largest grid that
/// fits, when it does not fit.
pub fn check(
    s: &RunShape,
    host_free: Option<u64>,
    device_free: Option<u64>,
) -> Result<MemoryPlan, MemoryPlanError> {
    let p = plan(s, host_free, device_free);
    if p.fits() {
        return Ok(p);
    }
    let mut parts = Vec::new();
    for (what, b) in [("host", Some(&p.host)), ("device", p.device.as_ref())] {
        if let Some(b) = b.filter(|b| !b.fits()) {
            let top: Vec<String> = b
                .items
                .iter()
                .filter(|i| i.1 > 0)
                .map(|(k, v)| format!("{k} {}", gib(*v)))
                .collect();
            parts.push(format!(
                "{what} memory: needs {} ({} bytes), {} ({} bytes) available [{}]",
                gib(b.total_bytes),
                b.total_bytes,
                gib(b.available_bytes.unwrap_or(0)),
                b.available_bytes.unwrap_or(0),
                top.join(", ")
            ));
        }
    }
    let largest = largest_fitting(s, host_free, device_free);
    let advice = match largest {
        Some((x, y)) => format!("the largest grid that fits is --grid {x}x{y}"),
        None => "no grid fits in this memory".to_string(),
    };
    Err(MemoryPlanError {
        message: format!(
            "the run does not fit ({}x{}x{} = {} cells): {}; {advice}",
            s.nx,
            s.ny,
            s.nz,
            s.nx * s.ny * s.nz,
            parts.join("; ")
        ),
        largest,
    })
}
