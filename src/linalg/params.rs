//! One set of solver parameter, report and error types for the whole
//! Krylov layer (PCG, the refinement loop, the Lanczos estimate), as faer
//! keeps one: [`Stop`] (the stopping criterion with its reference norm),
//! [`CgParams`], [`CgInfo`], [`SolveError`].

use crate::backend::BackendError;

/// Restarts from the true residual before the solve is declared stuck.
pub(super) const MAX_REPLACEMENTS: usize = 20;

/// When PCG stops: ‖r‖₂ ≤ rtol · reference, the reference being ‖b‖₂ of
/// the system PCG solves unless the caller names its own (the user's ‖b‖
/// before steady's offset shift, the transient step's ‖P‖), and never
/// tighter than ‖r‖₂ ≤ floor · ‖b‖₂, the most f64 can resolve. The one place
/// where rtol is scaled; residuals and errors are reported against the same
/// reference, in the user's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stop {
    pub rtol: f64,
    /// `None`: ‖b‖₂ of the system solved.
    pub reference_norm: Option<f64>,
    /// 0 for no floor.
    pub floor: f64,
}

impl Stop {
    /// ‖r‖₂ ≤ rtol · ‖b‖₂.
    pub fn relative(rtol: f64) -> Stop {
        Stop {
            rtol,
            reference_norm: None,
            floor: 0.0,
        }
    }

    /// ‖r‖₂ ≤ rtol · `reference_norm` (‖b‖₂ when that is 0).
    pub fn against(rtol: f64, reference_norm: f64) -> Stop {
        Stop {
            rtol,
            reference_norm: (reference_norm > 0.0).then_some(reference_norm),
            floor: 0.0,
        }
    }

    /// With ‖r‖₂ ≥ `floor` · ‖b‖₂ always accepted.
    pub fn with_floor(self, floor: f64) -> Stop {
        Stop { floor, ..self }
    }

    /// The bound on r·r for a system whose right-hand side has b·b = `bb`.
    pub fn threshold_sq(&self, bb: f64) -> f64 {
        match self.reference_norm {
            // The plain form, as rtol²·‖b‖² has always been computed.
            None => {
                let rtol = self.rtol.max(self.floor);
                rtol * rtol * bb
            }
            Some(reference) => {
                let target = (self.rtol * reference).max(self.floor * bb.sqrt());
                target * target
            }
        }
    }

    /// ‖r‖₂ / reference from r·r and b·b.
    pub fn relative_residual(&self, rr: f64, bb: f64) -> f64 {
        match self.reference_norm {
            None => (rr / bb).sqrt(),
            Some(reference) => rr.sqrt() / reference,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CgParams {
    pub stop: Stop,
    /// Reaching this many iterations is a failure, not a silent stop.
    pub max_iter: usize,
    /// Read the residual back every this many iterations (1 on the CPU; larger
    /// on a GPU to avoid a host round trip per iteration).
    pub check_every: usize,
    /// Record α and β of every iteration (for the Lanczos eigenvalue estimate);
    /// forces a read-back per iteration.
    pub record: bool,
    /// When the recurrence meets the stop, confirm it on the true residual
    /// b − A x and restart from it if it is not there yet (residual
    /// replacement). Off for the inner solves of [`super::refine()`], whose
    /// outer loop recomputes the true residual anyway.
    pub replace: bool,
}

impl Default for CgParams {
    fn default() -> Self {
        CgParams {
            stop: Stop::relative(1e-8),
            max_iter: 20_000,
            check_every: 1,
            record: false,
            replace: true,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct CgInfo {
    pub iterations: usize,
    /// ‖r‖₂/reference ([`Stop`]) from the CG recurrence at the last check.
    pub rel_residual: f64,
    /// (α, β) per iteration, when `CgParams::record` is set.
    pub coefficients: Vec<(f64, f64)>,
    /// Times the recurrence residual met rtol but the true one did not, and
    /// CG was restarted from the true residual.
    pub replacements: usize,
    /// (iteration, new precision) each time PCG stagnated and the
    /// preconditioner switched up (mixed precision), or the refinement loop
    /// switched its operator up (`refine`).
    pub precision_switches: Vec<(usize, String)>,
    /// Solves from a recomputed true residual (`refine`): corrections in
    /// mixed mode, restarts in f64 mode.
    pub outer: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error("PCG stopped after {iters} iterations at residual {rel:.3e} > rtol {rtol:.1e} (max_iter reached)")]
    NoConvergence { iters: usize, rel: f64, rtol: f64 },
    #[error(
        "PCG stagnated after {iters} iterations: the true residual {rel:.3e} stays above \
         rtol {rtol:.1e} after {MAX_REPLACEMENTS} restarts (ask for a larger rtol)"
    )]
    Stagnated { iters: usize, rel: f64, rtol: f64 },
    #[error("PCG broke down at iteration {iters}: {what}")]
    Breakdown { iters: usize, what: String },
    #[error(transparent)]
    Backend(#[from] BackendError),
}
