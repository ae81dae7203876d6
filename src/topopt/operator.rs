//! The matrix-free elasticity operator K(E) as a [`LinearOperator`], so the
//! elastic solve runs on the Krylov layer of `linalg` (PCG, Jacobi,
//! Chebyshev, the refinement loop) like the thermal one. It owns the
//! backend's operator data and the diagonal diag(K), refreshed after each
//! change of moduli; the working precision of `apply_dot` is switched by the
//! refinement loop (f32 inside f64 residual correction).

use super::backend::{ElasticBackend, OpPrecision};
use crate::backend::{BackendError, ChebWork};
use crate::linalg::LinearOperator;

pub struct ElasticOperator<B: ElasticBackend> {
    /// The backend's operator: Kₑ, Eₑ, the fixed-DOF mask, scratch.
    pub op: B::Elastic,
    diag: B::Vector,
    precision: OpPrecision,
    /// q = K d and a slot for its (unused) dot, for the Chebyshev step;
    /// allocated on its first use.
    scratch: Option<(B::Vector, B::Scalars)>,
    n: usize,
}

impl<B: ElasticBackend> ElasticOperator<B> {
    /// `op` acts on `n` DOFs; call [`Self::refresh_diagonal`] once its
    /// moduli are set.
    pub fn new(be: &B, op: B::Elastic, n: usize) -> Result<Self, BackendError> {
        Ok(ElasticOperator {
            op,
            diag: be.zeros(n)?,
            precision: OpPrecision::F64,
            scratch: None,
            n,
        })
    }

    /// diag(K) (1 on fixed DOFs) for the current moduli.
    pub fn refresh_diagonal(&mut self, be: &B) -> Result<(), BackendError> {
        be.elastic_diagonal(&mut self.op, &mut self.diag)
    }
}

impl<B: ElasticBackend> LinearOperator<B> for ElasticOperator<B> {
    fn len(&self) -> usize {
        self.n
    }
    fn apply_dot(
        &mut self,
        be: &B,
        p: &B::Vector,
        q: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError> {
        be.elastic_apply_dot(&mut self.op, self.precision, p, q, s, out)
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
        be.elastic_residual(&mut self.op, b, x, r, s, out)
    }
    fn diagonal(&self) -> &B::Vector {
        &self.diag
    }
    fn cheb_step(
        &mut self,
        be: &B,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<B::Vector>,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        if self.scratch.is_none() {
            self.scratch = Some((be.zeros(self.n)?, be.scalars(1)?));
        }
        let (q, s) = self.scratch.as_mut().expect("allocated above");
        be.elastic_apply_dot(&mut self.op, self.precision, &w.d, q, s, 0)?; // q = K d
        be.cheb_update(q, &self.diag, alpha, beta, w, z) // res −= q; d_next = α d + β D⁻¹ res; z += d_next
    }
    fn set_low_precision(&mut self, low: bool) -> bool {
        self.precision = if low {
            OpPrecision::F32
        } else {
            OpPrecision::F64
        };
        true
    }
}
