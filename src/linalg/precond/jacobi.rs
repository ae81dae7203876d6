//! Jacobi: M = D = diag(A). Reads the diagonal straight from the matrix, so it
//! needs no setup and no storage of its own.

use super::{PrecondReport, Preconditioner};
use crate::backend::{BackendError, QuadDiagOps};
use std::collections::BTreeMap;

pub struct Jacobi;

impl<B: QuadDiagOps> Preconditioner<B> for Jacobi {
    fn apply(
        &mut self,
        be: &B,
        a: &B::Matrix,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.jacobi(a, r, z) // z = D⁻¹ r
    }
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "jacobi".into(),
            params: BTreeMap::new(),
        }
    }
}
