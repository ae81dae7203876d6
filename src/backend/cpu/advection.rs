//! The CPU's coolant couplings ([`QuadDiagOps`]' advection methods): the
//! reference loops of `matrix::advection`.
//!
//! [`QuadDiagOps`]: crate::backend::QuadDiagOps

use super::same_len;
use crate::backend::BackendError;
use crate::matrix::advection::Advection;

pub(super) fn add_couplings(
    a: &Advection,
    scale: f64,
    x: &[f64],
    y: &mut [f64],
) -> Result<(), BackendError> {
    same_len(x.len(), y.len())?;
    a.add_couplings(scale, x, y);
    Ok(())
}

pub(super) fn line_solve(
    a: &Advection,
    d: &[f64],
    r: &[f64],
    z: &mut [f64],
) -> Result<(), BackendError> {
    same_len(d.len(), r.len())?;
    same_len(r.len(), z.len())?;
    a.line_solve(d, r, z);
    Ok(())
}
