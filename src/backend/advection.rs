//! What a non-symmetric (liquid-cooled) thermal operator asks of an
//! executor beside Quad-Diag: the upstream couplings of the coolant cells
//! (`matrix::advection`), their exact upwind sweep, and the one BLAS-1
//! update BiCGStab needs that CG does not (y = α x + β y with host scalars).

use super::{BackendError, QuadDiagOps};
use crate::matrix::advection::Advection;

pub trait AdvectionOps: QuadDiagOps {
    /// The couplings on this device.
    type Advection: 'static;

    fn upload_advection(&self, a: &Advection) -> Result<Self::Advection, BackendError>;
    /// `y[cell] += scale · w · x[up]` on the coolant cells alone (16 B per
    /// coolant cell + the x and y it touches)
    fn add_upstream(
        &self,
        a: &Self::Advection,
        scale: f64,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// `z[cell] = (r[cell] + w z[up]) / d[cell]`, in flow order along each
    /// coolant line; the other entries of z are kept.
    fn upwind_sweep(
        &self,
        a: &Self::Advection,
        d: &Self::Vector,
        r: &Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// y = α x + β y  (24 B/row); with β = 0, y is not read (as BLAS), so
    /// it may hold anything, a NaN included.
    fn axpby(
        &self,
        alpha: f64,
        x: &Self::Vector,
        beta: f64,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;
}
