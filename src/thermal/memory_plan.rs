//! Memory planning of a steady run (issue 15 item 4): before anything
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
//! later. `CUTH_HOST_MEMORY_BYTES` and `CUTH_DEVICE_MEMORY_BYTES` in the
//! environment cap the available memory (for tests and to keep a shared
//! machine's share); the smaller of the cap and what the system reports is
//! used.

use crate::linalg::mg::hierarchy::COARSEST_MAX_CELLS;
use crate::linalg::mg::plan as mg_plan;
use crate::linalg::{PrecisionMode, PrecondKind};
use serde::Serialize;

/// Environment variable that caps the host memory a run may use, bytes.
pub const HOST_LIMIT_ENV: &str = "CUTH_HOST_MEMORY_BYTES";
/// Environment variable that caps the device memory a run may use, bytes.
pub const DEVICE_LIMIT_ENV: &str = "CUTH_DEVICE_MEMORY_BYTES";

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

/// What the run writes, as far as memory is concerned.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputShape {
    /// Layers that get a PNG and a CSV map.
    pub map_layers: usize,
    /// `field.vtr` (the 3D field rendered in memory).
    pub vtk: bool,
    /// `field.npy`, bytes per value (4 or 8), streamed plane by plane.
    pub npy_bytes: Option<u64>,
    /// `--save-state` (the whole field encoded in memory).
    pub save_state: bool,
}

/// A steady run's shape: grid, executor, solver, outputs.
#[derive(Clone, Copy, Debug)]
pub struct RunShape {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub layers: usize,
    pub executor: Executor,
    pub precond: PrecondKind,
    pub precision: PrecisionMode,
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

/// Free memory as seen by a plan: the system's figure capped by `env`.
pub fn capped(system: Option<u64>, env: &str) -> Option<u64> {
    let cap = std::env::var(env)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    match (system, cap) {
        (Some(s), Some(c)) => Some(s.min(c)),
        (s, c) => s.or(c),
    }
}

/// Cells of the multigrid levels below the fine one: (levels with a matrix,
/// cells of those, cells of the coarsest, its dense inverse's values).
fn mg_coarse(nx: usize, ny: usize, nz: usize) -> (u64, u64, u64) {
    let steps = mg_plan(nx, ny, nz);
    let mut with_matrix = 0u64;
    let mut coarsest = 0u64;
    for (k, c) in steps.iter().enumerate() {
        let nc = (c.nxc * c.nyc * nz) as u64;
        if k + 1 == steps.len() {
            coarsest = nc;
        } else {
            with_matrix += nc;
        }
    }
    if steps.is_empty() {
        coarsest = (nx * ny * nz).min(COARSEST_MAX_CELLS) as u64;
    }
    (with_matrix, coarsest, coarsest * coarsest)
}

/// Bytes of the preconditioner on its device, and of what set-up builds on
/// the host besides (transient: freed after set-up).
fn precond_bytes(s: &RunShape) -> (u64, u64) {
    let n = (s.nx * s.ny * s.nz) as u64;
    match s.precond {
        PrecondKind::None | PrecondKind::Jacobi => (0, 0),
        PrecondKind::Chebyshev => match s.precision {
            PrecisionMode::F64 => (24 * n, 0),
            // Â: S (f32) and three off-diagonals (f32 at most), f32 work
            // res, d, d_next, ẑ; a mixed run may switch up to f64 (3 more).
            PrecisionMode::F32 | PrecisionMode::F16 => (32 * n, 16 * n),
            PrecisionMode::Mixed => (56 * n, 16 * n),
        },
        PrecondKind::Multigrid => {
            let (mid, coarsest, inverse) = mg_coarse(s.nx, s.ny, s.nz);
            // Fine line pivots; per coarse level matrix (5), pivots, b, x;
            // the coarsest b, x and its inverse.
            let dev = 8 * n + 64 * mid + 16 * coarsest + 8 * inverse;
            // Every level is built where the fine matrix lives (issue 15);
            // only the coarsest comes to the host: its matrix, the banded
            // factor (one plane wide) and the inverse with its transpose.
            let plane_c = coarsest / s.nz.max(1) as u64;
            (
                dev,
                48 * coarsest + 8 * coarsest * (plane_c + 1) + 16 * inverse,
            )
        }
    }
}

/// The plan of `s` against the available memory (`host_free`,
/// `device_free`: `None` when unknown).
pub fn plan(s: &RunShape, host_free: Option<u64>, device_free: Option<u64>) -> MemoryPlan {
    let n = (s.nx * s.ny * s.nz) as u64;
    let plane = (s.nx * s.ny) as u64;
    let layers = s.layers as u64;
    let (pre_dev, pre_host) = precond_bytes(s);
    let o = s.outputs;
    // Maps are written one layer at a time: the map in K and shown, the
    // CSV text (≤ 13 B a value) and the PNG's pixels.
    let maps = if o.map_layers > 0 { plane * 48 } else { 0 };
    let mut host = vec![
        ("fixed overhead", HOST_FIXED_BYTES),
        ("power maps and layer materials", plane * layers * 48),
    ];
    // Host assembly: the system (Quad-Diag, rhs, capacity) and the shifted
    // rhs; on a GPU the system is built on the device (`CUTH_HOST_ASSEMBLY`
    // turns that off) and only Chebyshev's set-up reads a host copy of the
    // matrix (its Gershgorin bound and scaled copy; multigrid builds its
    // levels on the device).
    let host_assembly =
        s.executor == Executor::Cpu || std::env::var_os("CUTH_HOST_ASSEMBLY").is_some();
    if host_assembly {
        host.push((
            "assembled system (Quad-Diag, rhs, capacity)",
            56 * n + 16 * plane,
        ));
        host.push(("shifted right-hand side", 8 * n));
    } else if s.precond == PrecondKind::Chebyshev {
        host.push(("matrix copy for preconditioner set-up", 40 * n));
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
            let data = 40 * n + 48 * n + pre_dev;
            device = Some(vec![
                ("matrix (d, gx, gy, gz, amb)", 40 * n),
                ("PCG vectors (x, b, r, z, p, q)", 48 * n),
                ("preconditioner", pre_dev),
                ("scratch and margin", DEVICE_MARGIN_BYTES + data / 50),
            ]);
        }
    }
    host.push(("temperatures (rise and K)", 16 * n));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(nx: usize, executor: Executor, precond: PrecondKind) -> RunShape {
        RunShape {
            nx,
            ny: nx,
            nz: 10,
            layers: 10,
            executor,
            precond,
            precision: PrecisionMode::Mixed,
            outputs: OutputShape {
                map_layers: 10,
                ..Default::default()
            },
        }
    }

    #[test]
    fn device_bytes_per_cell_as_documented() {
        // Chebyshev in f64 on a GPU: matrix 5 + vectors 6 + recurrence 3 = 14 f64.
        let mut s = shape(1024, Executor::Cuda, PrecondKind::Chebyshev);
        s.precision = PrecisionMode::F64;
        let p = plan(&s, None, None);
        let d = p.device.unwrap();
        let n = (1024 * 1024 * 10) as u64;
        assert_eq!(d.items[..3].iter().map(|i| i.1).sum::<u64>(), 112 * n);
        // The multigrid hierarchy adds about a third of the fine matrix.
        let mg = plan(
            &shape(1024, Executor::Cuda, PrecondKind::Multigrid),
            None,
            None,
        );
        let pre = mg.device.unwrap().items[2].1;
        assert!(
            pre > 8 * n + 64 * n / 4 && pre < 8 * n + 64 * n / 3 + (9 << 20),
            "{pre}"
        );
    }

    #[test]
    fn cuda_multigrid_keeps_the_matrix_off_the_host() {
        // 8192² × 18: a host copy of A alone would be 48 GB.
        let mut s = shape(8192, Executor::Cuda, PrecondKind::Multigrid);
        s.nz = 18;
        s.outputs = OutputShape::default();
        let p = plan(&s, None, None);
        let field = 8 * 8192u64 * 8192 * 18;
        assert!(!p.host.items.iter().any(|i| i.0.contains("matrix copy")));
        // Besides the per-layer power maps (planes), temperatures (rise and
        // K) are the only field-sized host item.
        let big: Vec<_> = (p.host.items.iter())
            .filter(|i| i.1 >= field / 4 && !i.0.starts_with("power maps"))
            .collect();
        assert_eq!(big.len(), 1, "{big:?}");
        assert_eq!(big[0].1, 2 * field);
        let pre = p.host.items.iter().find(|i| i.0 == "preconditioner set-up");
        assert!(pre.unwrap().1 < 64 << 20, "{pre:?}");
        // Chebyshev still downloads A for its set-up.
        let cheb = plan(
            &RunShape {
                precond: PrecondKind::Chebyshev,
                ..s
            },
            None,
            None,
        );
        assert!(cheb.host.items.iter().any(|i| i.0.contains("matrix copy")));
    }

    #[test]
    fn largest_grid_is_the_boundary() {
        let s = shape(4096, Executor::Cpu, PrecondKind::Multigrid);
        let limit = 2u64 << 30;
        let err = check(&s, Some(limit), None).unwrap_err();
        let (x, y) = err.largest.unwrap();
        assert_eq!(x, y);
        assert!(
            err.message.contains(&format!("--grid {x}x{y}")),
            "{}",
            err.message
        );
        let at = |nx| plan(&RunShape { nx, ny: nx, ..s }, Some(limit), None).fits();
        assert!(at(x) && !at(x + 1));
        // Far too little memory for any grid.
        let none = check(&s, Some(1 << 20), None).unwrap_err();
        assert!(none.largest.is_none() && none.message.contains("no grid fits"));
    }

    #[test]
    fn device_limit_refuses_on_the_device_only() {
        let s = shape(2048, Executor::Cuda, PrecondKind::Multigrid);
        let err = check(&s, Some(u64::MAX), Some(1 << 30)).unwrap_err();
        assert!(err.message.contains("device memory") && !err.message.contains("host memory"));
        assert!(check(&s, Some(u64::MAX), Some(u64::MAX)).is_ok());
    }

    #[test]
    fn cap_takes_the_smaller() {
        assert_eq!(capped(Some(10), "CUTH_TEST_UNSET_VARIABLE"), Some(10));
        assert_eq!(capped(None, "CUTH_TEST_UNSET_VARIABLE"), None);
    }
}
