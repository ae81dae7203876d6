//! Launchers of the Chebyshev family (`kernels/chebyshev.cu`): the first and
//! the later steps of the Jacobi-scaled Chebyshev preconditioner. Its
//! coefficients are fixed at setup, so they are passed by value.

use super::kernels::KernelFile;
use super::launch::rows_config;
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::BackendError;
use cudarc::driver::{CudaSlice, PushKernelArg};

impl CudaBackend {
    /// res = r;  d = c·D⁻¹ r;  z = d  (40 B/row).
    pub(super) fn cheb_init_launch(
        &self,
        a: &CudaMatrix,
        c: f64,
        r: &CudaSlice<f64>,
        res: &mut CudaSlice<f64>,
        d: &mut CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        for len in [r.len(), res.len(), d.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "cheb_init_f64";
        let f = self.kernel(KernelFile::Chebyshev, NAME)?;
        let n = a.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&c).arg(r).arg(res).arg(d).arg(z).arg(&n);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(a.len())) }
    }

    /// res −= A d;  d_next = α d + β D⁻¹ res;  z += d_next  (80 B/row).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cheb_step_launch(
        &self,
        a: &CudaMatrix,
        alpha: f64,
        beta: f64,
        d: &CudaSlice<f64>,
        d_next: &mut CudaSlice<f64>,
        res: &mut CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        for len in [d.len(), d_next.len(), res.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "cheb_step_f64";
        let f = self.kernel(KernelFile::Chebyshev, NAME)?;
        let (n, sy, sz) = a.dims();
        let (columns, threads) = self.qd_shape(a);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(&alpha)
            .arg(&beta)
            .arg(d)
            .arg(d_next)
            .arg(res)
            .arg(z);
        args.arg(&n).arg(&sy).arg(&sz).arg(&columns);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(threads)) }
    }
}
