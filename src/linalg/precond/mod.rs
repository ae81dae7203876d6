//! Preconditioners, chosen by name (`--precond`, the `[solver]` table and
//! `summary.json` use the same names). Each is built once (eigenvalue bounds
//! and the like are set up then) and applied many times; `apply` never reads
//! solver state, so M stays fixed and SPD as CG requires.

pub mod chebyshev;
pub mod jacobi;
pub mod needs;
pub mod preconditioner;

use super::mg::{MgOptions, Multigrid};
use super::operator::LinearOperator;
use super::params::SolveError;
use super::precision::PrecisionMode;
use super::QuadDiag;
use crate::backend::mg::MultigridOps;
use crate::backend::BackendError;
use chebyshev::ChebyshevLevels;

pub use crate::solver_options::PrecondKind;
pub use needs::PrecondNeeds;
pub use preconditioner::{Identity, PrecisionReport, PrecondReport, Preconditioner};

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
