//! What a steady solve reports: the content of `summary.json` and of the
//! stdout table. Temperatures are kelvin here (SI); outputs convert for display.

pub use super::probes::DiePoint;
use crate::backend::DeviceReport;
use crate::linalg::{PrecisionReport, PrecondReport};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub cuth_version: String,
    /// Path of the stack file.
    pub stack: String,
    pub title: Option<String>,
    pub grid: GridSummary,
    pub ambient_k: f64,
    pub device: DeviceReport,
    pub solver: SolverReport,
    pub energy: EnergyBalance,
    /// Bottom to top.
    pub layers: Vec<LayerSummary>,
    /// The hottest cell of the whole stack.
    pub hottest: CellRef,
    /// Plausibility warnings about the stack; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// `[[probes]]` readings; absent when the stack has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<crate::thermal::probes::ProbeReading>,
    /// Wall time per phase, seconds, in pipeline order; the phases do not
    /// overlap, and where the run's start is known the last, `other`, is
    /// the wall time no phase covers, so that they add up to `wall_s`.
    pub timings_s: Vec<(String, f64)>,
    /// Parts of the phases (`phase/part`, e.g. `assemble/input`,
    /// `kernels/compile`), seconds, from [`crate::profile`]; absent when
    /// none were recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timings_detail_s: Vec<(String, f64)>,
    /// Wall time from the start of the run to the writing of this summary,
    /// seconds; absent where the start is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// When the run started (not written; `wall_s` is derived from it).
    #[serde(skip)]
    pub started: Option<std::time::Instant>,
    /// The coolant of each liquid-cooled cavity; absent without cavities.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coolant: Vec<CoolantReport>,
    /// The outer iteration of a temperature-dependent solve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonlinear: Option<crate::thermal::nonlinear::NonlinearReport>,
    /// The memory plan the run was admitted with (host and device bytes by
    /// item, and what was available); absent where no plan was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::thermal::memory_plan::MemoryPlan>,
    /// Peak resident host memory of the process when the summary was
    /// written, bytes (`getrusage`); absent where unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_peak_rss_bytes: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GridSummary {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub cells: usize,
    /// The smallest column and row widths, m: on a graded grid the other
    /// cells are larger.
    pub dx_m: f64,
    pub dy_m: f64,
    /// Whether cell widths vary (a graded grid), so `dx_m`, `dy_m` are the
    /// smallest cell's.
    pub graded: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct SolverReport {
    pub method: String,
    pub precision: String,
    pub precond: PrecondReport,
    pub rtol: f64,
    pub max_iter: usize,
    pub iterations: usize,
    /// Restarts from the true residual (see `linalg::pcg`).
    pub residual_replacements: usize,
    pub converged: bool,
    /// Why the solve stopped, e.g. `rtol reached` or `max_iter reached`.
    pub stop_reason: String,
    /// ‖b − A x‖₂ / ‖b‖₂ recomputed in f64 from the final x.
    pub final_true_residual: f64,
    /// Mixed precision: the preconditioner's storage per diagonal at the end
    /// and the (iteration, level) switches; absent for an all-f64 solve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedReport>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MixedReport {
    #[serde(flatten)]
    pub precond: PrecisionReport,
    pub switches: Vec<(usize, String)>,
}

/// Steady state: heat leaving through the convective faces equals power in.
#[derive(Clone, Debug, Serialize)]
pub struct EnergyBalance {
    pub power_in_w: f64,
    pub heat_out_top_w: f64,
    pub heat_out_bottom_w: f64,
    /// Heat the coolant of the cavities carries away, Σ ṁ·c (T_out − T_in);
    /// absent without cavities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heat_out_coolant_w: Option<f64>,
    /// |out − in| / in (0 when no power).
    pub relative_error: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LayerSummary {
    pub name: String,
    pub material: String,
    pub z_bottom_m: f64,
    pub thickness_m: f64,
    pub cells: usize,
    pub power_w: f64,
    pub t_min_k: f64,
    pub t_avg_k: f64,
    pub t_max_k: f64,
    pub hottest: CellRef,
}

/// One cavity's coolant: what it carries away and how warm it leaves.
#[derive(Clone, Debug, Serialize)]
pub struct CoolantReport {
    pub layer: String,
    /// `4rm`, `2rm` or `pinfin`.
    pub model: String,
    /// Volume flow through the cavity, m³/s.
    pub flow_m3_s: f64,
    pub inlet_k: f64,
    /// The outlet's mixed (flow-weighted) temperature.
    pub outlet_mean_k: f64,
    pub outlet_max_k: f64,
    /// ṁ·c (T_out − T_in) of the cavity, W.
    pub heat_w: f64,
    /// Per channel across the flow, its outlet temperature (4RM only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channel_outlets_k: Vec<f64>,
}

/// A cell by index and by the coordinates of its centre.
#[derive(Clone, Debug, Serialize)]
pub struct CellRef {
    pub layer: String,
    pub x: usize,
    pub y: usize,
    pub z: usize,
    /// In the domain's frame (the package's: the sink's corner is 0, 0).
    pub x_m: f64,
    pub y_m: f64,
    pub z_m: f64,
    pub t_k: f64,
    /// The centre in the frame of the die that holds it, where the layer
    /// has dies apart from the domain (`stack::dies`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die: Option<DiePoint>,
}
