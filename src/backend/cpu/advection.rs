//! The CPU's [`AdvectionOps`]: the reference loops of `matrix::advection`.

use super::CpuBackend;
use crate::backend::advection::AdvectionOps;
use crate::backend::BackendError;
use crate::matrix::advection::Advection;

fn same_len(a: usize, b: usize) -> Result<(), BackendError> {
    if a == b {
        Ok(())
    } else {
        Err(BackendError::Length(a, b))
    }
}

impl AdvectionOps for CpuBackend {
    type Advection = Advection;

    fn upload_advection(&self, a: &Advection) -> Result<Advection, BackendError> {
        Ok(a.clone())
    }
    fn add_upstream(
        &self,
        a: &Advection,
        scale: f64,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        a.add_upstream(scale, x, y);
        Ok(())
    }
    fn upwind_sweep(
        &self,
        a: &Advection,
        d: &Vec<f64>,
        r: &Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        same_len(d.len(), r.len())?;
        same_len(r.len(), z.len())?;
        a.upwind_sweep(d, r, z);
        Ok(())
    }
}
