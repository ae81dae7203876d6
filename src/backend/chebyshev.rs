//! The Chebyshev preconditioner's capabilities: its f64 steps for any
//! operator with a diagonal ([`ChebyshevOps`]), the steps below f64 on the
//! Jacobi-scaled Quad-Diag matrix ([`ScaledChebyshevOps`]), and
//! [`ChebyshevBackend`], the set of capabilities the Quad-Diag solvers need.

use super::{mg, Backend, BackendError, QuadDiagOps};
use crate::matrix::precision::ScaledQuadDiag;

/// The work vectors of one Chebyshev recurrence in element type `V`'s
/// precision: res, d, d_next, and below f64 the accumulator ẑ (at f64 the
/// recurrence accumulates straight into z).
pub struct ChebWork<V> {
    pub res: V,
    pub d: V,
    pub d_next: V,
    pub zhat: Option<V>,
}

/// The vector steps of the Jacobi-scaled Chebyshev preconditioner
/// (`linalg::precond::chebyshev`) in f64, for any operator with a diagonal D
/// (the Quad-Diag matrix fuses its later step: [`QuadDiagOps::cheb_step`]).
pub trait ChebyshevOps: Backend {
    /// Readies these kernels (see [`QuadDiagOps::prepare_quad_diag`]).
    fn prepare_chebyshev(&self) -> Result<(), BackendError> {
        Ok(())
    }
    /// The recurrence's vectors for n rows, zero-filled.
    fn cheb_work(&self, n: usize) -> Result<ChebWork<Self::Vector>, BackendError> {
        Ok(ChebWork {
            res: self.zeros(n)?,
            d: self.zeros(n)?,
            d_next: self.zeros(n)?,
            zhat: None,
        })
    }
    /// First step: res = r;  d = c·D⁻¹ r;  z = d  (40 B/row).
    fn cheb_init(
        &self,
        diag: &Self::Vector,
        c: f64,
        r: &Self::Vector,
        w: &mut ChebWork<Self::Vector>,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// Later step after q = A d (the caller then swaps d and d_next):
    /// res −= q;  d_next = α d + β D⁻¹ res;  z += d_next  (64 B/row).
    fn cheb_update(
        &self,
        q: &Self::Vector,
        diag: &Self::Vector,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Self::Vector>,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
}

/// The Chebyshev recurrence below f64 on the Jacobi-scaled Â = S A S of a
/// Quad-Diag matrix (S = D^-1/2, unit diagonal, off-diagonals stored f16 or
/// f32 as `matrix::precision` chose), with arithmetic and work vectors in
/// element type `T` (f32 today), returning z = S q(Â) S r in f64. The
/// precision is this type parameter; which level runs is decided in one
/// place, `Chebyshev::enter`.
pub trait ScaledChebyshevOps<T>: Backend {
    /// Â on this device.
    type ScaledMatrix;
    /// A vector of `T`.
    type ScaledVector;

    /// Readies these kernels (see [`QuadDiagOps::prepare_quad_diag`]).
    fn prepare_scaled(&self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Copies Â (built on the host by `ScaledQuadDiag::new`) to the device.
    fn upload_scaled(&self, a: &ScaledQuadDiag) -> Result<Self::ScaledMatrix, BackendError>;
    /// The recurrence's vectors (with ẑ) for n rows, zero-filled.
    fn scaled_work(&self, n: usize) -> Result<ChebWork<Self::ScaledVector>, BackendError>;
    /// First step: r̂ = S r;  res = r̂;  d = c·r̂;  ẑ = d, and when `last`
    /// (degree 1) only z = S d, in f64.
    fn scaled_init(
        &self,
        a: &Self::ScaledMatrix,
        c: f64,
        r: &Self::Vector,
        w: &mut ChebWork<Self::ScaledVector>,
        z: &mut Self::Vector,
        last: bool,
    ) -> Result<(), BackendError>;
    /// Later steps (the caller then swaps d and d_next): res −= Â d;
    /// d_next = α d + β res;  ẑ += d_next, and when `last` only
    /// z = S (ẑ + d_next), in f64.
    fn scaled_step(
        &self,
        a: &Self::ScaledMatrix,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Self::ScaledVector>,
        z: &mut Self::Vector,
        last: bool,
    ) -> Result<(), BackendError>;
}

/// A backend with everything the Quad-Diag solvers use: the matrix, the
/// Chebyshev preconditioner in every precision `--precision` can ask for
/// and the multigrid grid operations.
pub trait ChebyshevBackend:
    QuadDiagOps + ChebyshevOps + ScaledChebyshevOps<f32> + mg::MultigridOps
{
}

impl<B: QuadDiagOps + ChebyshevOps + ScaledChebyshevOps<f32> + mg::MultigridOps> ChebyshevBackend
    for B
{
}
