//! The liquid-cooled thermal operator: the solid stack's Quad-Diag (its
//! diagonal holding the coolant's advective outflow) plus the upstream
//! couplings of the coolant cells. It is not symmetric, so the solver that
//! holds it runs BiCGStab ([`super::KrylovMethod::for_operator`]); the
//! preconditioners that read a Quad-Diag see the symmetric part only.
//!
//! Traffic of one product, f64: the Quad-Diag SpMV's 48 B/row, plus 16 B
//! per coolant cell for the couplings and the x and y entries they touch.

use super::operator::LinearOperator;
use crate::backend::advection::AdvectionOps;
use crate::backend::{BackendError, ChebWork};
use crate::matrix::QuadDiag;
use std::borrow::Cow;

pub struct AdvectionOperator<'a, B: AdvectionOps> {
    be: &'a B,
    a: &'a B::Matrix,
    adv: &'a B::Advection,
    n: usize,
}

impl<'a, B: AdvectionOps> AdvectionOperator<'a, B> {
    /// `a` (n rows) with the couplings `adv`.
    pub fn new(
        be: &'a B,
        a: &'a B::Matrix,
        adv: &'a B::Advection,
        n: usize,
    ) -> Result<Self, BackendError> {
        Ok(AdvectionOperator { be, a, adv, n })
    }

    /// The symmetric part, as the multigrid smooths it.
    pub fn symmetric(&self) -> &'a B::Matrix {
        self.a
    }

    pub fn advection(&self) -> &'a B::Advection {
        self.adv
    }
}

impl<B: AdvectionOps> LinearOperator<B> for AdvectionOperator<'_, B> {
    fn len(&self) -> usize {
        self.n
    }
    fn is_symmetric(&self) -> bool {
        false
    }
    fn apply_dot(
        &mut self,
        be: &B,
        p: &B::Vector,
        q: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError> {
        // q = S p − L p;  s[out] = p·q
        be.spmv(self.a, p, q)?;
        be.add_upstream(self.adv, -1.0, p, q)?;
        be.dot(p, q, s, out)
    }
    fn residual(
        &mut self,
        be: &B,
        b: &B::Vector,
        x: &B::Vector,
        r: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError> {
        // r = b − S x (difference form) + L x;  s[out] = r·r (the Quad-Diag
        // residual's own r·r is overwritten: the couplings change r)
        be.residual(self.a, b, x, r, s, out)?;
        be.add_upstream(self.adv, 1.0, x, r)?;
        be.dot(r, r, s, out)
    }
    fn diagonal(&self) -> &B::Vector {
        self.be.diagonal(self.a)
    }
    fn cheb_step(
        &mut self,
        _be: &B,
        _alpha: f64,
        _beta: f64,
        _w: &mut ChebWork<B::Vector>,
        _z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        Err(BackendError::Unsupported(
            "Chebyshev needs a symmetric operator; a liquid-cooled stack is preconditioned by upwind multigrid",
        ))
    }
    fn host_quad_diag(&self, be: &B) -> Result<Option<Cow<'_, QuadDiag>>, BackendError> {
        Ok(Some(be.host_matrix(self.a)?))
    }
}
