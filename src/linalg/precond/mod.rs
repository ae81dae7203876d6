//! Preconditioners, chosen by name (`--precond`, the `[solver]` table and
//! `summary.json` use the same names). Each is built once (eigenvalue bounds
//! and the like are set up then) and applied many times; `apply` never reads
//! solver state, so M stays fixed and SPD as CG requires.

pub mod chebyshev;
pub mod jacobi;
pub mod needs;

use super::mg::{MgOptions, MgReport, Multigrid};
use super::operator::LinearOperator;
use super::pcg::SolveError;
use super::precision::{ArrayChoice, PrecisionMode};
use super::QuadDiag;
use crate::backend::mg::MultigridOps;
use crate::backend::{Backend, BackendError};
use chebyshev::ChebyshevLevels;
use serde::Serialize;
use std::collections::BTreeMap;

pub use crate::solver_options::PrecondKind;
pub use needs::PrecondNeeds;

/// Name and parameters actually used, as PETSc's `-ksp_view` reports them.
#[derive(Clone, Debug, Serialize)]
pub struct PrecondReport {
    pub name: String,
    pub params: BTreeMap<String, f64>,
    /// Levels, cycle and memory of `mg`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multigrid: Option<MgReport>,
}

#[derive(Clone, Debug)]
pub struct PrecondOptions {
    /// Polynomial degree (number of D⁻¹ applications) of Chebyshev.
    pub chebyshev_degree: usize,
    /// λmax / λmin of the interval Chebyshev damps.
    pub chebyshev_ratio: f64,
    /// Lanczos steps for the λmax estimate.
    pub lanczos_steps: usize,
    /// Safety factor on the Lanczos estimate (capped by Gershgorin).
    pub lambda_safety: f64,
    /// Precision of the preconditioner (Chebyshev only; the others are f64).
    pub precision: PrecisionMode,
    /// Cycle and smoother of `mg`.
    pub mg: MgOptions,
}

impl Default for PrecondOptions {
    fn default() -> Self {
        PrecondOptions {
            chebyshev_degree: 6,
            chebyshev_ratio: 30.0,
            lanczos_steps: 20,
            lambda_safety: 1.1,
            precision: PrecisionMode::F64,
            mg: MgOptions::default(),
        }
    }
}

pub trait Preconditioner<B: Backend> {
    /// z = M⁻¹ r. M must be SPD and fixed across iterations.
    fn apply(
        &mut self,
        be: &B,
        a: &mut dyn LinearOperator<B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>;
    fn report(&self) -> PrecondReport;
    /// Switches M to its next more precise level, if it has one, and names
    /// it. PCG calls this when it stagnates, then restarts from the true
    /// residual (M changed, so the old directions no longer fit). `a` is the
    /// system matrix, from which the next level is built.
    fn raise_precision(
        &mut self,
        be: &B,
        a: &mut dyn LinearOperator<B>,
    ) -> Result<Option<String>, BackendError> {
        let _ = (be, a);
        Ok(None)
    }
    /// How often PCG should read the residual back, when this preconditioner
    /// has a preference over [`Backend::check_interval`]: one whose
    /// application costs far more than a read-back wants every iteration.
    fn check_interval(&self) -> Option<usize> {
        None
    }
    /// Precision in use, for preconditioners that have several.
    fn precision(&self) -> Option<PrecisionReport> {
        None
    }
    /// The system matrix is now `host` (an outer iteration of a nonlinear
    /// solve re-assembled it). M may stay built for the old matrix, but what
    /// it reads from the matrix at apply time must match: multigrid's
    /// fine-level line pivots are refactored here.
    fn matrix_changed(&mut self, be: &B, host: &QuadDiag) -> Result<(), BackendError> {
        let _ = (be, host);
        Ok(())
    }
    /// [`Preconditioner::matrix_changed`] for a matrix that lives where the
    /// solve runs (`a`, the system operator): refreshed there, no host copy
    /// (a k(T) outer iteration re-assembled on the device).
    fn operator_changed(
        &mut self,
        be: &B,
        a: &mut dyn LinearOperator<B>,
    ) -> Result<(), BackendError> {
        let _ = (be, a);
        Ok(())
    }
}

/// The precision a preconditioner runs in (summary.json, `cuth bench`).
#[derive(Clone, Debug, Serialize)]
pub struct PrecisionReport {
    /// `--precision` as given.
    pub mode: String,
    /// Current level, e.g. `f32 [gx,gy,gz f16,f16,f16]` or `f64`.
    pub current: String,
    /// Per scaled off-diagonal: format, range, rounding error (empty at f64).
    pub storage: Vec<ArrayChoice>,
    /// Matrix bytes read per row by one Chebyshev step.
    pub matrix_bytes_per_row: usize,
}

/// M = I.
pub struct Identity;

impl<B: Backend> Preconditioner<B> for Identity {
    fn apply(
        &mut self,
        be: &B,
        _a: &mut dyn LinearOperator<B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.copy(r, z) // z = r
    }
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "none".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}

/// Builds the preconditioner `kind` for the operator `a`; `host` is its
/// host Quad-Diag form where it has one (the Gershgorin bound and the scaled
/// levels of a low-precision Chebyshev are built from it; without it,
/// Chebyshev runs in f64 on the Lanczos estimate alone).
pub fn build_precond<B: ChebyshevLevels + 'static>(
    kind: PrecondKind,
    be: &B,
    a: &mut dyn LinearOperator<B>,
    host: Option<&QuadDiag>,
    opts: &PrecondOptions,
) -> Result<Box<dyn Preconditioner<B>>, SolveError> {
    Ok(match kind {
        PrecondKind::None => Box::new(Identity),
        PrecondKind::Jacobi => Box::new(jacobi::Jacobi),
        PrecondKind::Chebyshev => Box::new(chebyshev::Chebyshev::new(be, a, host, opts)?),
        PrecondKind::Multigrid => {
            return Err(SolveError::Breakdown {
                iters: 0,
                what: "the mg preconditioner needs a thermal Quad-Diag matrix \
                       (build_thermal_precond); use jacobi or chebyshev here"
                    .into(),
            })
        }
    })
}

/// [`build_precond`] for the thermal solvers, whose operator `a` is a
/// Quad-Diag matrix on `be`: also builds `mg`, from the matrix where it
/// lives (its set-up never reads `host`, so a GPU run need not download A).
/// `host`, A on the host where the caller has it, is for the others.
pub(crate) fn build_thermal_precond<B: ChebyshevLevels + MultigridOps + 'static>(
    kind: PrecondKind,
    be: &B,
    a: &mut dyn LinearOperator<B>,
    host: Option<&QuadDiag>,
    opts: &PrecondOptions,
) -> Result<Box<dyn Preconditioner<B>>, SolveError> {
    match kind {
        PrecondKind::Multigrid => {
            let m = a.quad_diag().ok_or(BackendError::Unsupported(
                "the mg preconditioner needs the system as a Quad-Diag matrix",
            ))?;
            Ok(Box::new(Multigrid::new(be, m, &opts.mg)?))
        }
        _ => build_precond(kind, be, a, host, opts),
    }
}
