//! Temperature-dependent physics: k(T), c(T) (`stack::law`) and
//! leakage power ([`leakage`]). The steady solve ([`steady`]) is a Picard
//! iteration over warm-started linear solves ([`picard`]): properties and
//! leakage at the last iterate, the matrix re-assembled where the solve
//! runs, into the arrays of the last one (on a GPU by the device assembly's
//! kernels from the temperature on the device: `thermal::device::nonlinear`), the
//! preconditioner kept while it keeps PCG's iterations in check, the next
//! iterate Anderson's combination of the last Picard steps ([`anderson`]).
//! Transient steps are semi-implicit or iterated
//! (`thermal::transient::nonlinear`, over the same capability). A stack
//! with only constants never comes here (`Stack::is_nonlinear`), so its
//! results are bit-identical to the linear solver's. Also here: the errors
//! of both, and the names they give to the hottest place.

pub mod anderson;
pub mod leakage;
pub mod picard;
pub mod steady;

use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::nonlinear::{NlContext, NonlinearOps};
use serde::Serialize;

/// Name of the place of cell `i`: "layer/block" when a block of the layer
/// covers the cell's centre, else the layer.
pub fn place_name(stack: &Stack, grid: &Grid, power: &[LayerPower], i: usize) -> String {
    let (x, y, z) = grid.coords(i);
    let l = grid.layer_of_z[z];
    let (cx, cy) = (grid.x_center(x), grid.y_center(y));
    let layer = &stack.layers[l].name;
    match power[l].blocks.iter().find(|b| b.contains(cx, cy)) {
        Some(b) => format!("{layer}/{}", b.name),
        None => layer.clone(),
    }
}

/// A law not positive at cell `i` of the rise `theta` (K above ambient,
/// where `be` keeps it): the layer and the temperature there.
pub fn bad_property<B: NonlinearOps>(
    be: &B,
    cx: &NlContext,
    theta: &B::Vector,
    i: usize,
) -> Result<NonlinearError, BackendError> {
    let l = cx.grid.layer_of_z[i / cx.grid.plane()];
    Ok(NonlinearError::BadProperty {
        layer: cx.stack.layers[l].name.clone(),
        t_k: be.nl_value(theta, i)? + cx.stack.ambient_k,
    })
}

/// Anderson depth of the steady outer iteration unless `--anderson` says
/// otherwise (BENCHMARKS.md: Picard against Anderson).
pub const DEFAULT_ANDERSON: usize = 3;

/// Settings of the outer (nonlinear) iteration.
#[derive(Clone, Debug)]
pub struct NonlinearOptions {
    /// Converged when max |ΔT| between two iterates is at most this, K.
    pub tol_k: f64,
    /// Thermal runaway when any temperature passes this, K.
    pub t_max_k: f64,
    /// Most Picard iterations (steady); reaching it is an error.
    pub max_outer: usize,
    /// Converged also needs |heat out − power in| / power in at most this.
    pub energy_tol: f64,
    /// Inexact Picard: each linear solve but the last stops once its
    /// residual falls by this factor from the warm start (still at least at
    /// the solver's rtol); 0 solves every step to rtol.
    pub forcing: f64,
    /// Transient: 0 evaluates properties and leakage at the previous step
    /// (semi-implicit); N > 0 iterates each step up to N times.
    pub transient_iterations: usize,
    /// Steady: depth of the Anderson acceleration (0: plain Picard).
    pub anderson: usize,
}

impl Default for NonlinearOptions {
    fn default() -> Self {
        NonlinearOptions {
            tol_k: 1e-4,
            t_max_k: 500.0,
            max_outer: 200,
            energy_tol: 1e-6,
            forcing: 1e-2,
            transient_iterations: 0,
            anderson: DEFAULT_ANDERSON,
        }
    }
}

/// What the outer iteration did, for `summary.json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NonlinearReport {
    /// "picard" or "anderson(m)".
    pub method: String,
    pub outer_iterations: usize,
    /// max |ΔT| of the last iteration, K.
    pub final_change_k: f64,
    pub tol_k: f64,
    /// PCG iterations of each linear solve.
    pub inner_iterations: Vec<usize>,
    /// Times the preconditioner was rebuilt after the first.
    pub precond_rebuilds: usize,
    pub leakage_total_w: f64,
    /// Per leaking source ("layer" or "layer/block"), W.
    pub leakage_w: Vec<(String, f64)>,
    /// Times Anderson's history was dropped (the residual grew, or an
    /// extrapolated iterate left the physical range); 0 for Picard.
    pub anderson_restarts: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum NonlinearError {
    #[error(
        "thermal runaway at outer iteration {iteration}: {reason}; hottest: {hottest} at \
         {t_k:.2} K; leakage {leakage_w:.4e} W at that iterate (nothing written)"
    )]
    Runaway {
        iteration: usize,
        reason: String,
        hottest: String,
        t_k: f64,
        leakage_w: f64,
    },
    #[error(
        "the nonlinear iteration did not converge in {iterations} outer iterations: last \
         max |ΔT| {change_k:.3e} K > {tol_k:.1e} K (hottest {hottest} at {t_k:.2} K)"
    )]
    NoConvergence {
        iterations: usize,
        change_k: f64,
        tol_k: f64,
        hottest: String,
        t_k: f64,
    },
    #[error("not supported yet: {what}")]
    Unsupported { what: String },
    #[error("material of layer `{layer}` is not positive at {t_k:.2} K (a law outside its range)")]
    BadProperty { layer: String, t_k: f64 },
}
