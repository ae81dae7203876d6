//! What PCG asks of a preconditioner (z = M⁻¹ r, and its report), apart
//! from the kinds that implement it, so that the Krylov loop depends on the
//! trait alone.

use crate::backend::{Backend, BackendError};
use crate::linalg::mg::MgReport;
use crate::linalg::precision::ArrayChoice;
use serde::Serialize;
use std::collections::BTreeMap;

/// Name and parameters actually used, as PETSc's `-ksp_view` reports them.
#[derive(Clone, Debug, Serialize)]
pub struct PrecondReport {
    pub name: String,
    pub params: BTreeMap<String, f64>,
    /// Levels, cycle and memory of `mg`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multigrid: Option<MgReport>,
}

/// What a preconditioner reports, whatever operator it is applied with:
/// the part of it a caller reads after the solve (`summary.json`, the
/// check interval of the next solve), so that nobody outside the Krylov
/// layer names the operator type.
pub trait PrecondInfo {
    fn report(&self) -> PrecondReport;
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
}

/// M for operators of type `A`. A kind that reads its operator at apply
/// time (Jacobi its diagonal, Chebyshev its product, multigrid its fine
/// matrix) names the operator type it reads: multigrid implements this for
/// the Quad-Diag operator only, so pairing it with any other operator is a
/// compile error, not a run-time one. The operator comes at apply time, the
/// same object the Krylov method applies, rather than held: a held borrow
/// would freeze a matrix that is re-assembled in place between solves (k(T),
/// transient property changes), and the matrix-free elasticity operator is
/// mutable scratch that PCG and the smoother take turns with.
pub trait Preconditioner<B: Backend, A: ?Sized>: PrecondInfo {
    /// z = M⁻¹ r. M must be SPD and fixed across iterations; `a` is the
    /// operator M was built for.
    fn apply(
        &mut self,
        be: &B,
        a: &mut A,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>;
    /// Switches M to its next more precise level, if it has one, and names
    /// it. PCG calls this when it stagnates, then restarts from the true
    /// residual (M changed, so the old directions no longer fit). `a` is the
    /// system operator, from which the next level is built.
    fn raise_precision(&mut self, be: &B, a: &mut A) -> Result<Option<String>, BackendError> {
        let _ = (be, a);
        Ok(None)
    }
    /// The values of `a` changed where it lives (an outer iteration of a
    /// nonlinear solve re-assembled it, a transient run swapped it). M may
    /// stay built for the old values, but what it reads from the matrix at
    /// apply time must match: multigrid's fine-level line pivots are
    /// refactored here, where the matrix lives (no host copy).
    fn operator_changed(&mut self, be: &B, a: &mut A) -> Result<(), BackendError> {
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

impl<B: Backend, A: ?Sized> Preconditioner<B, A> for Identity {
    fn apply(
        &mut self,
        be: &B,
        _a: &mut A,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.copy(r, z) // z = r
    }
}

impl PrecondInfo for Identity {
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "none".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}
