//! Jacobi: M = D = diag(A). Reads the operator's own diagonal, so it needs no
//! setup and no storage of its own.

use super::{PrecondInfo, PrecondReport, Preconditioner};
use crate::backend::{Backend, BackendError};
use crate::linalg::operator::LinearOperator;
use std::collections::BTreeMap;

pub struct Jacobi;

impl<B: Backend, A: LinearOperator<B> + ?Sized> Preconditioner<B, A> for Jacobi {
    fn apply(
        &mut self,
        be: &B,
        a: &mut A,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.divide(r, a.diagonal(), z) // z = D⁻¹ r
    }
}

impl PrecondInfo for Jacobi {
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "jacobi".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}
