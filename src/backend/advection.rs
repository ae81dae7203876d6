//! What a non-symmetric (liquid-cooled) thermal operator asks of an
//! executor beside Quad-Diag: the upstream couplings of the coolant cells
//! (`matrix::advection`) and their exact upwind sweep.

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
}
