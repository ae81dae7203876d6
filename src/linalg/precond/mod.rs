//! Preconditioners, chosen by name (`--precond`, the `[solver]` table and
//! `summary.json` use the same names). Each is built once (eigenvalue bounds
//! and the like are set up then) and applied many times; `apply` never reads
//! solver state, so M stays fixed and SPD as CG requires.

pub mod chebyshev;
pub mod jacobi;
pub mod needs;
pub mod preconditioner;

use super::mg::{MgOptions, Multigrid};
use super::operator::{LinearOperator, QuadDiagOperator};
use super::params::SolveError;
use super::precision::PrecisionMode;
use super::QuadDiag;
use crate::backend::mg::MultigridOps;
use chebyshev::ChebyshevLevels;

pub use crate::solver_options::PrecondKind;
pub use needs::PrecondNeeds;
pub use preconditioner::{Identity, PrecisionReport, PrecondInfo, PrecondReport, Preconditioner};

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
/// Chebyshev runs in f64 on the Lanczos estimate alone). `mg` is not one of
/// these: it exists for the Quad-Diag operator only ([`ThermalPrecond`],
/// built by the [`super::Solver`]) and for topopt's own operator.
pub fn build_precond<B: ChebyshevLevels + 'static, A: LinearOperator<B> + ?Sized>(
    kind: PrecondKind,
    be: &B,
    a: &mut A,
    host: Option<&QuadDiag>,
    opts: &PrecondOptions,
) -> Result<Box<dyn Preconditioner<B, A>>, SolveError> {
    Ok(match kind {
        PrecondKind::None => Box::new(Identity),
        PrecondKind::Jacobi => Box::new(jacobi::Jacobi),
        PrecondKind::Chebyshev => Box::new(chebyshev::Chebyshev::new(be, a, host, opts)?),
        PrecondKind::Multigrid => {
            return Err(SolveError::Breakdown {
                iters: 0,
                what: "the mg preconditioner needs a thermal Quad-Diag matrix \
                       (linalg::Solver); use jacobi or chebyshev here"
                    .into(),
            })
        }
    })
}

/// A preconditioner of the thermal Quad-Diag operator, whichever borrow of
/// the matrix it is applied with: a solver's state outlives each borrow of
/// a matrix re-assembled in place ([`super::Solver::release`]).
pub type ThermalPrecond<B> = dyn for<'x> Preconditioner<B, QuadDiagOperator<'x, B>>;

/// [`build_precond`] for the thermal solvers, whose operator `a` is a
/// Quad-Diag matrix on `be`: also builds `mg`, from the matrix where it
/// lives (its set-up never reads `host`, so a GPU run need not download A).
/// `host`, A on the host where the caller has it, is for the others.
pub(crate) fn build_thermal_precond<B: ChebyshevLevels + MultigridOps + 'static>(
    kind: PrecondKind,
    be: &B,
    a: &mut QuadDiagOperator<'_, B>,
    host: Option<&QuadDiag>,
    opts: &PrecondOptions,
) -> Result<Box<ThermalPrecond<B>>, SolveError> {
    Ok(match kind {
        PrecondKind::None => Box::new(Identity),
        PrecondKind::Jacobi => Box::new(jacobi::Jacobi),
        PrecondKind::Chebyshev => Box::new(chebyshev::Chebyshev::new(be, a, host, opts)?),
        PrecondKind::Multigrid => Box::new(Multigrid::new(be, a.matrix(), &opts.mg)?),
    })
}
