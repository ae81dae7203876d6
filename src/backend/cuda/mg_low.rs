//! The f32 multigrid levels on CUDA (`MultigridOps::mg_low_*`): the f32
//! operator, built on the device from the f64 one, which the cycle's
//! launchers of `mg_cycle.rs` read as a [`Level`] at f32, and the
//! conversions between the precisions. Lengths are checked here, on the
//! host.

use super::launch::rows_config;
use super::mg_cycle::{Level, MULTIGRID};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::BackendError;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// A level's operator in f32: the diagonal's excess over the couplings
/// s = d − Σ g (see `kernels/mg.cu`, `mg_low_ax`), and the couplings.
pub struct CudaLowLevel {
    pub s: CudaSlice<f32>,
    pub gx: CudaSlice<f32>,
    pub gy: CudaSlice<f32>,
    pub gz: CudaSlice<f32>,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

impl<'a> From<&'a CudaLowLevel> for Level<'a, f32> {
    fn from(a: &'a CudaLowLevel) -> Self {
        Level {
            diag: &a.s,
            gx: &a.gx,
            gy: &a.gy,
            gz: &a.gz,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
        }
    }
}

impl CudaBackend {
    fn low_alloc(&self, n: usize, what: &str) -> Result<CudaSlice<f32>, BackendError> {
        self.stream
            .alloc_zeros::<f32>(n.max(1))
            .map_err(|e| super::launch::driver_err(&format!("allocating {what}"), e))
    }

    pub(super) fn low_zeros(&self, n: usize) -> Result<CudaSlice<f32>, BackendError> {
        self.low_alloc(n, "an f32 multigrid vector")
    }

    pub(super) fn low_matrix(&self, a: &CudaMatrix) -> Result<CudaLowLevel, BackendError> {
        let n = a.len();
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len()] {
            same_len(n, len)?;
        }
        let mut low = CudaLowLevel {
            s: self.low_alloc(n, "an f32 multigrid level")?,
            gx: self.low_alloc(n, "an f32 multigrid level")?,
            gy: self.low_alloc(n, "an f32 multigrid level")?,
            gz: self.low_alloc(n, "an f32 multigrid level")?,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
        };
        const NAME: &str = "mg_low_matrix_f32";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let dims = [a.nx, a.ny, a.nz].map(|v| v as i64);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(&mut low.s)
            .arg(&mut low.gx)
            .arg(&mut low.gy)
            .arg(&mut low.gz);
        for d in &dims {
            args.arg(d);
        }
        // SAFETY: arguments in the kernel's order and types; every array
        // holds n values (checked above, allocated here).
        unsafe { self.run(NAME, &mut args, rows_config(n)) }?;
        Ok(low)
    }

    /// out = v converted by the kernel `name`, one value per thread.
    ///
    /// # Safety
    ///
    /// `name` must be the kernel of `MULTIGRID` that reads `S` and writes `D`.
    unsafe fn convert<S, D>(
        &self,
        name: &'static str,
        v: &CudaSlice<S>,
        out: &mut CudaSlice<D>,
    ) -> Result<(), BackendError> {
        same_len(v.len(), out.len())?;
        let f = self.kernel(&MULTIGRID, name)?;
        let n = v.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(v).arg(out).arg(&n);
        // SAFETY: arguments in the kernel's order and types (the caller's
        // promise); lengths checked.
        unsafe { self.run(name, &mut args, rows_config(v.len())) }
    }

    pub(super) fn narrow(
        &self,
        v: &CudaSlice<f64>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        // SAFETY: `mg_to_f32` reads f64 and writes f32.
        unsafe { self.convert("mg_to_f32", v, out) }
    }

    pub(super) fn low_vector(&self, v: &CudaSlice<f64>) -> Result<CudaSlice<f32>, BackendError> {
        let mut out = self.low_zeros(v.len())?;
        if !v.is_empty() {
            self.narrow(v, &mut out)?;
        }
        Ok(out)
    }

    pub(super) fn widen(
        &self,
        v: &CudaSlice<f32>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        // SAFETY: `mg_to_f64` reads f32 and writes f64.
        unsafe { self.convert("mg_to_f64", v, out) }
    }
}
