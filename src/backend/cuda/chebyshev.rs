//! Launchers of the Chebyshev family (`kernels/chebyshev.cu`): the first and
//! the later steps of the Jacobi-scaled Chebyshev preconditioner. Its
//! coefficients are fixed at setup, so they are passed by value.

use super::kernels::KernelFamily;
use super::launch::rows_config;
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::{Backend, BackendError, ChebWork, ChebyshevOps};
use crate::matrix::precision::ScaledQuadDiag;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/chebyshev.cu`.
pub static CHEBYSHEV: KernelFamily = KernelFamily {
    file: "chebyshev.cu",
    source: include_str!("../../../kernels/chebyshev.cu"),
    entry_points: &["cheb_init_f64", "cheb_step_f64"],
};

impl ChebyshevOps<f64> for CudaBackend {
    type ChebMatrix = ();
    type ChebVector = CudaSlice<f64>;

    fn prepare_chebyshev(&self) -> Result<(), BackendError> {
        self.load(&CHEBYSHEV)
    }

    fn cheb_matrix(&self, _a: &ScaledQuadDiag) -> Result<(), BackendError> {
        Ok(())
    }
    fn cheb_work(&self, n: usize) -> Result<ChebWork<CudaSlice<f64>>, BackendError> {
        Ok(ChebWork {
            res: self.zeros(n)?,
            d: self.zeros(n)?,
            d_next: self.zeros(n)?,
            zhat: None,
        })
    }

    /// res = r;  d = c·D⁻¹ r;  z = d  (40 B/row).
    fn cheb_init(
        &self,
        a: &CudaMatrix,
        _m: &(),
        c: f64,
        r: &CudaSlice<f64>,
        w: &mut ChebWork<CudaSlice<f64>>,
        z: &mut CudaSlice<f64>,
        _last: bool,
    ) -> Result<(), BackendError> {
        let (res, d) = (&mut w.res, &mut w.d);
        for len in [r.len(), res.len(), d.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "cheb_init_f64";
        let f = self.kernel(&CHEBYSHEV, NAME)?;
        let n = a.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&c).arg(r).arg(res).arg(d).arg(z).arg(&n);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(a.len())) }
    }

    /// res −= A d;  d_next = α d + β D⁻¹ res;  z += d_next  (80 B/row).
    fn cheb_step(
        &self,
        a: &CudaMatrix,
        _m: &(),
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<CudaSlice<f64>>,
        z: &mut CudaSlice<f64>,
        _last: bool,
    ) -> Result<(), BackendError> {
        let ChebWork { res, d, d_next, .. } = w;
        for len in [d.len(), d_next.len(), res.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "cheb_step_f64";
        let f = self.kernel(&CHEBYSHEV, NAME)?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        assert!(super::CHEBYSHEV.missing_entry_points(|_| None).is_empty());
    }
}
