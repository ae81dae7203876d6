//! What PCG asks of a preconditioner (z = M⁻¹ r, and its report), apart
//! from the kinds that implement it, so that the Krylov loop depends on the
//! trait alone.

use crate::backend::{Backend, BackendError};
use crate::linalg::mg::MgReport;
use crate::linalg::operator::LinearOperator;
use crate::linalg::precision::ArrayChoice;
use crate::linalg::QuadDiag;
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
