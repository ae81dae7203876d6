//! [`QuadDiagOps`] for the GPU: upload, and the launchers of the Quad-Diag
//! family (`kernels/quad_diag.cu`): SpMV, the two SpMV-fused reductions of
//! PCG and the SpMV-fused Chebyshev step, in the thread schedule
//! [`CudaBackend::uses_columns`] picks. Lengths are checked here, on the
//! host, because the kernels trust n.

use super::kernels::KernelFamily;
use super::launch::{rows_config, slot};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::{BackendError, ChebWork, QuadDiagOps};
use crate::matrix::advection::Advection;
use crate::matrix::QuadDiag;
use cudarc::driver::{CudaSlice, PushKernelArg};
use std::borrow::Cow;

/// `kernels/quad_diag.cu`.
pub static QUAD_DIAG: KernelFamily = KernelFamily {
    file: "quad_diag.cu",
    source: include_str!("../../../kernels/quad_diag.cu"),
    entry_points: &[
        "qd_spmv_f64",
        "qd_spmv_dot_f64",
        "qd_residual_f64",
        "cheb_step_f64",
    ],
};

impl QuadDiagOps for CudaBackend {
    type Matrix = CudaMatrix;
    type Advection = super::CudaAdvection;

    fn upload_advection(&self, a: &Advection) -> Result<Self::Advection, BackendError> {
        self.upload_advection_impl(a)
    }
    fn add_couplings(
        &self,
        a: &Self::Advection,
        scale: f64,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.add_couplings_impl(a, scale, x, y)
    }
    fn line_solve(
        &self,
        a: &Self::Advection,
        d: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.line_solve_impl(a, d, r, z)
    }

    fn prepare_quad_diag(&self) -> Result<(), BackendError> {
        self.load(&QUAD_DIAG)
    }

    fn upload_matrix(&self, a: &QuadDiag) -> Result<CudaMatrix, BackendError> {
        let n = a.nx * a.ny * a.nz;
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len(), a.amb.len()] {
            same_len(n, len)?;
        }
        Ok(CudaMatrix {
            d: self.to_device(&a.d, "the matrix diagonal")?,
            gx: self.to_device(&a.gx, "gx")?,
            gy: self.to_device(&a.gy, "gy")?,
            gz: self.to_device(&a.gz, "gz")?,
            amb: self.to_device(&a.amb, "amb")?,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            wx: a.wx.clone(),
            wy: a.wy.clone(),
        })
    }
    fn host_matrix<'m>(&self, a: &'m CudaMatrix) -> Result<Cow<'m, QuadDiag>, BackendError> {
        Ok(Cow::Owned(QuadDiag {
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            d: self.to_host(&a.d, "the matrix diagonal")?,
            gx: self.to_host(&a.gx, "gx")?,
            gy: self.to_host(&a.gy, "gy")?,
            gz: self.to_host(&a.gz, "gz")?,
            amb: self.to_host(&a.amb, "amb")?,
            wx: a.wx.clone(),
            wy: a.wy.clone(),
        }))
    }
    fn diagonal<'m>(&self, a: &'m CudaMatrix) -> &'m CudaSlice<f64> {
        &a.d
    }

    /// y = A x  (48 B/row).
    fn spmv(
        &self,
        a: &CudaMatrix,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(a.len(), x.len())?;
        same_len(a.len(), y.len())?;
        const NAME: &str = "qd_spmv_f64";
        let f = self.kernel(&QUAD_DIAG, NAME)?;
        let (n, sy, sz) = a.dims();
        let (columns, threads) = self.qd_shape(a);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(x).arg(y).arg(&n).arg(&sy).arg(&sz).arg(&columns);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(threads)) }
    }

    /// q = A p;  `s[out]` = p·q  (48 B/row).
    fn spmv_dot(
        &self,
        a: &CudaMatrix,
        p: &CudaSlice<f64>,
        q: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), p.len())?;
        same_len(a.len(), q.len())?;
        let out = slot(s, out)?;
        const NAME: &str = "qd_spmv_dot_f64";
        let f = self.kernel(&QUAD_DIAG, NAME)?;
        let (n, sy, sz) = a.dims();
        let (columns, threads) = self.qd_shape(a);
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(p).arg(q).arg(&n).arg(&sy).arg(&sz).arg(&columns);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: as above; the grid never exceeds the partials buffer.
        unsafe { self.run(NAME, &mut args, red.config(threads)) }
    }

    /// r = b − A x in difference form (see `QuadDiag`);  `s[out]` = r·r  (56 B/row).
    fn residual(
        &self,
        a: &CudaMatrix,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        for len in [b.len(), x.len(), r.len()] {
            same_len(a.len(), len)?;
        }
        let out = slot(s, out)?;
        const NAME: &str = "qd_residual_f64";
        let f = self.kernel(&QUAD_DIAG, NAME)?;
        let (n, sy, sz) = a.dims();
        let (_, threads) = self.qd_shape(a);
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.amb).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(b).arg(x).arg(r).arg(&n).arg(&sy).arg(&sz);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, red.config(threads)) }
    }

    /// res −= A d;  d_next = α d + β D⁻¹ res;  z += d_next  (80 B/row).
    fn cheb_step(
        &self,
        a: &CudaMatrix,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<CudaSlice<f64>>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let ChebWork { res, d, d_next, .. } = w;
        for len in [d.len(), d_next.len(), res.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "cheb_step_f64";
        let f = self.kernel(&QUAD_DIAG, NAME)?;
        let (n, sy, sz) = a.dims();
        let (columns, threads) = self.qd_shape(a);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(&alpha)
            .arg(&beta)
            .arg(&*d)
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
        assert!(super::QUAD_DIAG.missing_entry_points(|_| None).is_empty());
    }
}
