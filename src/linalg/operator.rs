//! The linear operator the Krylov layer is written against (Ginkgo's
//! `LinOp`, PETSc's `Mat`): PCG, the preconditioners and the eigenvalue
//! estimate see a matrix only through [`LinearOperator`], so one PCG serves
//! the thermal Quad-Diag matrix ([`QuadDiagOperator`]) and topopt's
//! matrix-free elasticity operator (`topopt::ElasticOperator`) alike.
//!
//! Every method runs on the backend where the operator lives; products come
//! fused with the reduction CG needs next, as the kernels do.

use crate::backend::{Backend, BackendError, ChebWork, ChebyshevOps, QuadDiagOps};
use crate::matrix::QuadDiag;
use std::borrow::Cow;

pub trait LinearOperator<B: Backend> {
    /// Rows (= columns).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether A = Aᵀ: CG needs it; an operator that says no is solved by
    /// a method for non-symmetric systems ([`super::KrylovMethod::for_operator`]).
    fn is_symmetric(&self) -> bool {
        true
    }
    /// q = A p;  `s[out]` = p·q (CG's curvature, fused with the product).
    fn apply_dot(
        &mut self,
        be: &B,
        p: &B::Vector,
        q: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// r = b − A x;  `s[out]` = r·r: the true residual, in f64 whatever
    /// precision [`LinearOperator::apply_dot`] works in.
    fn residual(
        &mut self,
        be: &B,
        b: &B::Vector,
        x: &B::Vector,
        r: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// D = diag(A), for Jacobi and the Jacobi-scaled Chebyshev.
    fn diagonal(&self) -> &B::Vector;
    /// The Chebyshev preconditioner's later f64 step: res −= A d;
    /// d_next = α d + β D⁻¹ res;  z += d_next (`ChebyshevOps`).
    fn cheb_step(
        &mut self,
        be: &B,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<B::Vector>,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>;
    /// Switches [`LinearOperator::apply_dot`] (and the Chebyshev step) to a
    /// cheaper, less precise arithmetic, or back (`low = false`); returns
    /// whether the operator has one. The refinement loop (`refine`) runs its
    /// inner solves in it; the residual stays f64.
    fn set_low_precision(&mut self, low: bool) -> bool {
        let _ = low;
        false
    }
    /// The operator as a host Quad-Diag matrix, when it is one: the
    /// Gershgorin bound and the scaled low-precision Chebyshev levels are
    /// built from it. `None` for a matrix-free operator.
    fn host_quad_diag(&self, be: &B) -> Result<Option<Cow<'_, QuadDiag>>, BackendError> {
        let _ = be;
        Ok(None)
    }
}

/// The thermal operator on backend `B`: a Quad-Diag matrix, and for a
/// liquid-cooled stack the upstream couplings of its coolant cells
/// (`matrix::advection`: A = S − L, S the Quad-Diag whose diagonal holds
/// each coolant cell's outflow, L the couplings), as a [`LinearOperator`].
/// Each is a borrow where the caller keeps it, or owned where the operator
/// outlives the code that built it (a transient run's solver, whose matrix
/// is swapped when the properties change). With couplings the operator is
/// not symmetric, so its solver runs BiCGStab
/// ([`super::KrylovMethod::for_operator`]); the preconditioners that read a
/// Quad-Diag see the symmetric part S ([`Self::symmetric_part`]).
///
/// Traffic of one product with couplings: the Quad-Diag SpMV's 48 B/row,
/// plus 16 B per coolant cell and the x and y entries they touch.
pub struct QuadDiagOperator<'a, B: QuadDiagOps> {
    be: &'a B,
    a: Held<'a, B::Matrix>,
    adv: Option<Held<'a, B::Advection>>,
    n: usize,
}

enum Held<'a, M> {
    Borrowed(&'a M),
    Owned(M),
}

impl<M> Held<'_, M> {
    fn get(&self) -> &M {
        match self {
            Held::Borrowed(a) => a,
            Held::Owned(a) => a,
        }
    }
}

impl<'a, B: QuadDiagOps> QuadDiagOperator<'a, B> {
    /// `a` has `n` rows.
    pub fn new(be: &'a B, a: &'a B::Matrix, n: usize) -> Self {
        QuadDiagOperator {
            be,
            a: Held::Borrowed(a),
            adv: None,
            n,
        }
    }

    /// [`Self::new`] owning `a`.
    pub fn owning(be: &'a B, a: B::Matrix, n: usize) -> Self {
        QuadDiagOperator {
            be,
            a: Held::Owned(a),
            adv: None,
            n,
        }
    }

    /// With the coolant's couplings `adv` (borrowed).
    pub fn with_advection(self, adv: &'a B::Advection) -> Self {
        QuadDiagOperator {
            adv: Some(Held::Borrowed(adv)),
            ..self
        }
    }

    /// With the coolant's couplings `adv`, owned.
    pub fn owning_advection(self, adv: B::Advection) -> Self {
        QuadDiagOperator {
            adv: Some(Held::Owned(adv)),
            ..self
        }
    }

    pub fn matrix(&self) -> &B::Matrix {
        self.a.get()
    }

    /// The coolant's couplings, where the stack has cavities.
    pub fn advection(&self) -> Option<&B::Advection> {
        self.adv.as_ref().map(Held::get)
    }

    /// S alone, borrowed: the operator a multigrid or a Chebyshev
    /// preconditioner of a liquid-cooled stack is built for and applied with.
    pub fn symmetric_part(&self) -> QuadDiagOperator<'_, B> {
        QuadDiagOperator::new(self.be, self.matrix(), self.n)
    }

    /// The matrix to modify in place or swap, when the operator owns it
    /// (`None` for a borrow).
    pub fn matrix_mut(&mut self) -> Option<&mut B::Matrix> {
        match &mut self.a {
            Held::Borrowed(_) => None,
            Held::Owned(a) => Some(a),
        }
    }
}

impl<B: QuadDiagOps + ChebyshevOps> LinearOperator<B> for QuadDiagOperator<'_, B> {
    fn len(&self) -> usize {
        self.n
    }
    fn is_symmetric(&self) -> bool {
        self.adv.is_none()
    }
    fn apply_dot(
        &mut self,
        be: &B,
        p: &B::Vector,
        q: &mut B::Vector,
        s: &mut B::Scalars,
        out: usize,
    ) -> Result<(), BackendError> {
        match self.advection() {
            None => be.spmv_dot(self.matrix(), p, q, s, out),
            Some(adv) => {
                // q = S p − L p;  s[out] = p·q
                be.spmv(self.matrix(), p, q)?;
                be.add_couplings(adv, -1.0, p, q)?;
                be.dot(p, q, s, out)
            }
        }
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
        be.residual(self.matrix(), b, x, r, s, out)?;
        if let Some(adv) = self.advection() {
            // r += L x, and r·r again: the couplings change r.
            be.add_couplings(adv, 1.0, x, r)?;
            be.dot(r, r, s, out)?;
        }
        Ok(())
    }
    fn diagonal(&self) -> &B::Vector {
        self.be.diagonal(self.matrix())
    }
    fn cheb_step(
        &mut self,
        be: &B,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<B::Vector>,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        if self.adv.is_some() {
            return Err(BackendError::Unsupported(
                "a Chebyshev step needs a symmetric operator; a liquid-cooled stack's is applied \
                 with its symmetric part",
            ));
        }
        be.cheb_step(self.matrix(), alpha, beta, w, z) // one kernel: A read once
    }
    fn host_quad_diag(&self, be: &B) -> Result<Option<Cow<'_, QuadDiag>>, BackendError> {
        Ok(Some(be.host_matrix(self.matrix())?))
    }
}
