//! Launchers of the Chebyshev family (`kernels/chebyshev.cu`): the first
//! step of the Jacobi-scaled Chebyshev preconditioner and the later step of
//! a matrix-free operator (the Quad-Diag matrix fuses its own later step, in
//! `quad_diag.rs`). Its coefficients are fixed at setup, so they are passed
//! by value.

use super::kernels::KernelFamily;
use super::launch::rows_config;
use super::{same_len, CudaBackend};
use crate::backend::{BackendError, ChebWork, ChebyshevOps};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/chebyshev.cu`.
pub static CHEBYSHEV: KernelFamily = KernelFamily {
    file: "chebyshev.cu",
    source: include_str!("../../../kernels/chebyshev.cu"),
    entry_points: &["cheb_init_f64", "cheb_update_f64"],
};

impl ChebyshevOps for CudaBackend {
    fn prepare_chebyshev(&self) -> Result<(), BackendError> {
        self.load(&CHEBYSHEV)
    }

    /// res = r;  d = c·D⁻¹ r;  z = d  (40 B/row).
    fn cheb_init(
        &self,
        diag: &CudaSlice<f64>,
        c: f64,
        r: &CudaSlice<f64>,
        w: &mut ChebWork<CudaSlice<f64>>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let (res, d) = (&mut w.res, &mut w.d);
        for len in [r.len(), res.len(), d.len(), z.len()] {
            same_len(diag.len(), len)?;
        }
        const NAME: &str = "cheb_init_f64";
        let f = self.kernel(&CHEBYSHEV, NAME)?;
        let n = diag.len() as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(diag).arg(&c).arg(r).arg(res).arg(d).arg(z).arg(&n);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(diag.len())) }
    }

    /// res −= q;  d_next = α d + β D⁻¹ res;  z += d_next  (64 B/row).
    fn cheb_update(
        &self,
        q: &CudaSlice<f64>,
        diag: &CudaSlice<f64>,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<CudaSlice<f64>>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let ChebWork { res, d, d_next, .. } = w;
        for len in [q.len(), d.len(), d_next.len(), res.len(), z.len()] {
            same_len(diag.len(), len)?;
        }
        const NAME: &str = "cheb_update_f64";
        let f = self.kernel(&CHEBYSHEV, NAME)?;
        let n = diag.len() as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(q).arg(diag).arg(&alpha).arg(&beta);
        args.arg(&*d).arg(d_next).arg(res).arg(z).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(diag.len())) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        assert!(super::CHEBYSHEV.missing_entry_points(|_| None).is_empty());
    }
}
