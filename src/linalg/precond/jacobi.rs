//! Jacobi: M = D = diag(A). Reads the operator's own diagonal, so it needs no
//! setup and no storage of its own.

use super::{PrecondReport, Preconditioner};
use crate::backend::{Backend, BackendError};
use crate::linalg::operator::LinearOperator;
use std::collections::BTreeMap;

pub struct Jacobi;

impl<B: Backend> Preconditioner<B> for Jacobi {
    fn apply(
        &mut self,
        be: &B,
        a: &mut dyn LinearOperator<B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        be.divide(r, a.diagonal(), z) // z = D⁻¹ r
    }
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "jacobi".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}
