//! Launchers of the BLAS-1 family (`kernels/blas1.cu`): the fused vector
//! updates of PCG and Jacobi. Coefficients travel as slot indices into the
//! device scalar buffer, never through the host.

use super::kernels::KernelFile;
use super::launch::{rows_config, slot};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::{BackendError, Ratio};
use cudarc::driver::{CudaSlice, PushKernelArg};

impl CudaBackend {
    /// s[out] = x·y  (16 B/row).
    pub(super) fn blas1_dot(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        let out = slot(s, out)?;
        const NAME: &str = "blas1_dot_f64";
        let f = self.kernel(KernelFile::Blas1, NAME)?;
        let n = x.len() as i64;
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(x).arg(y).arg(&n);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, red.config(x.len())) }
    }

    /// α = s[num]/s[den];  x += α p;  r −= α q;  s[out] = r·r  (48 B/row).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn blas1_cg_update(
        &self,
        alpha: Ratio,
        p: &CudaSlice<f64>,
        q: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        for len in [q.len(), x.len(), r.len()] {
            same_len(p.len(), len)?;
        }
        let (num, den, out) = (slot(s, alpha.num)?, slot(s, alpha.den)?, slot(s, out)?);
        const NAME: &str = "blas1_cg_update_f64";
        let f = self.kernel(KernelFile::Blas1, NAME)?;
        let n = p.len() as i64;
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(p).arg(q).arg(x).arg(r).arg(&n);
        args.arg(s).arg(&num).arg(&den);
        args.arg(&red.partials).arg(&red.ticket).arg(&out);
        // SAFETY: as above; the grid never exceeds the partials buffer.
        unsafe { self.run(NAME, &mut args, red.config(p.len())) }
    }

    /// β = s[num]/s[den];  p = z + β p  (24 B/row).
    pub(super) fn blas1_xpay(
        &self,
        beta: Ratio,
        z: &CudaSlice<f64>,
        p: &mut CudaSlice<f64>,
        s: &CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(z.len(), p.len())?;
        let (num, den) = (slot(s, beta.num)?, slot(s, beta.den)?);
        const NAME: &str = "blas1_xpay_f64";
        let f = self.kernel(KernelFile::Blas1, NAME)?;
        let n = z.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(z).arg(p).arg(&n).arg(s).arg(&num).arg(&den);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(z.len())) }
    }

    /// out = w ⊙ x + b  (32 B/row).
    pub(super) fn blas1_mul_add(
        &self,
        w: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        for len in [x.len(), b.len(), out.len()] {
            same_len(w.len(), len)?;
        }
        const NAME: &str = "blas1_mul_add_f64";
        let f = self.kernel(KernelFile::Blas1, NAME)?;
        let n = w.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(w).arg(x).arg(b).arg(out).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(w.len())) }
    }

    /// z = D⁻¹ r  (24 B/row).
    pub(super) fn blas1_jacobi(
        &self,
        a: &CudaMatrix,
        r: &CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(a.len(), r.len())?;
        same_len(a.len(), z.len())?;
        const NAME: &str = "blas1_jacobi_f64";
        let f = self.kernel(KernelFile::Blas1, NAME)?;
        let n = a.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(r).arg(z).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(a.len())) }
    }
}
