//! The core of the CUDA executor ([`Backend`]): device vectors and scalar
//! slots, and the launchers of the BLAS-1 family (`kernels/blas1.cu`), the
//! fused vector updates of PCG and Jacobi. Coefficients travel as slot
//! indices into the device scalar buffer, never through the host.

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config, slot};
use super::{same_len, CudaBackend};
use crate::backend::{Backend, BackendError, CgStep, DeviceReport, Ratio};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/blas1.cu`.
pub static BLAS1: KernelFamily = KernelFamily {
    file: "blas1.cu",
    source: include_str!("../../../kernels/blas1.cu"),
    entry_points: &[
        "blas1_dot_f64",
        "blas1_cg_update_f64",
        "blas1_xpay_f64",
        "blas1_divide_f64",
        "blas1_mul_add_f64",
        "blas1_axpby_f64",
    ],
};

impl Backend for CudaBackend {
    type Vector = CudaSlice<f64>;
    type Scalars = CudaSlice<f64>;

    fn report(&self) -> DeviceReport {
        let g = &self.info;
        DeviceReport {
            backend: "cuda".into(),
            name: g.name.clone(),
            detail: format!(
                "{} ({} SMs, {:.0} GiB), driver {}.{}, NVRTC {}.{}, kernels for {}, \
                 schedule {}, f64",
                g.sm(),
                g.multiprocessors,
                g.total_memory_bytes as f64 / (1u64 << 30) as f64,
                self.driver.0,
                self.driver.1,
                self.nvrtc.0,
                self.nvrtc.1,
                self.arch(),
                self.schedule().name(),
            ),
        }
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.sync("synchronizing the stream")
    }
    /// A read-back costs a stream synchronization (~10 µs), more than an
    /// iteration on small grids; every 10 iterations at most 9 are extra.
    fn check_interval(&self) -> usize {
        10
    }
    fn check_capacity_with(&self, cells: usize, extra_vectors: usize) -> Result<(), BackendError> {
        self.check_fits_with(cells, extra_vectors).map(|_| ())
    }
    fn device_free_memory(&self) -> Result<Option<u64>, BackendError> {
        self.memory_info().map(|(free, _)| Some(free))
    }

    fn zeros(&self, n: usize) -> Result<CudaSlice<f64>, BackendError> {
        self.stream
            .alloc_zeros::<f64>(n)
            .map_err(|e| driver_err(&format!("allocating {n} f64"), e))
    }
    fn upload(&self, host: &[f64]) -> Result<CudaSlice<f64>, BackendError> {
        self.to_device(host, "a vector")
    }
    fn download(&self, v: &CudaSlice<f64>) -> Result<Vec<f64>, BackendError> {
        self.to_host(v, "a vector")
    }
    fn download_pieces(
        &self,
        v: &CudaSlice<f64>,
        f: &mut crate::backend::PieceFn,
    ) -> Result<(), BackendError> {
        CudaBackend::download_pieces(self, v, f)
    }
    fn download_into(&self, v: &CudaSlice<f64>, host: &mut [f64]) -> Result<(), BackendError> {
        self.download_to(v, host, "a vector")
    }
    fn copy(&self, src: &CudaSlice<f64>, dst: &mut CudaSlice<f64>) -> Result<(), BackendError> {
        same_len(src.len(), dst.len())?;
        self.stream
            .memcpy_dtod(src, dst)
            .map_err(|e| driver_err("device-to-device copy", e))
    }
    fn scalars(&self, n: usize) -> Result<CudaSlice<f64>, BackendError> {
        self.zeros(n)
    }
    fn read_scalars(&self, s: &CudaSlice<f64>) -> Result<Vec<f64>, BackendError> {
        self.to_host(s, "scalars")
    }

    /// `s[out]` = x·y  (16 B/row).
    fn dot(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        let out = slot(s, out)?;
        const NAME: &str = "blas1_dot_f64";
        let f = self.kernel(&BLAS1, NAME)?;
        let n = x.len() as i64;
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(x).arg(y).arg(&n);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, red.config(x.len())) }
    }

    /// α = `s[num]/s[den]`;  x += α p;  r −= α q;  `s[out]` = r·r  (48 B/row).
    fn cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, CudaSlice<f64>>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let CgStep { p, q, x, r } = v;
        for len in [q.len(), x.len(), r.len()] {
            same_len(p.len(), len)?;
        }
        let (num, den, out) = (slot(s, alpha.num)?, slot(s, alpha.den)?, slot(s, out)?);
        const NAME: &str = "blas1_cg_update_f64";
        let f = self.kernel(&BLAS1, NAME)?;
        let n = p.len() as i64;
        let red = &self.reduce;
        let mut args = self.stream.launch_builder(&f);
        args.arg(p).arg(q).arg(x).arg(r).arg(&n);
        args.arg(s).arg(&num).arg(&den);
        args.arg(&red.partials).arg(&red.ticket).arg(&out);
        // SAFETY: as above; the grid never exceeds the partials buffer.
        unsafe { self.run(NAME, &mut args, red.config(p.len())) }
    }

    /// β = `s[num]/s[den]`;  p = z + β p  (24 B/row).
    fn xpay(
        &self,
        beta: Ratio,
        z: &CudaSlice<f64>,
        p: &mut CudaSlice<f64>,
        s: &CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(z.len(), p.len())?;
        let (num, den) = (slot(s, beta.num)?, slot(s, beta.den)?);
        const NAME: &str = "blas1_xpay_f64";
        let f = self.kernel(&BLAS1, NAME)?;
        let n = z.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(z).arg(p).arg(&n).arg(s).arg(&num).arg(&den);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(z.len())) }
    }

    /// y = α x + β y  (24 B/row).
    fn axpby(
        &self,
        alpha: f64,
        x: &CudaSlice<f64>,
        beta: f64,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        const NAME: &str = "blas1_axpby_f64";
        let f = self.kernel(&BLAS1, NAME)?;
        let n = x.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&alpha).arg(x).arg(&beta).arg(y).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(x.len())) }
    }

    /// out = w ⊙ x + b  (32 B/row).
    fn mul_add(
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
        let f = self.kernel(&BLAS1, NAME)?;
        let n = w.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(w).arg(x).arg(b).arg(out).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(w.len())) }
    }

    /// z = r ⊘ d  (24 B/row).
    fn divide(
        &self,
        r: &CudaSlice<f64>,
        d: &CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(r.len(), d.len())?;
        same_len(r.len(), z.len())?;
        const NAME: &str = "blas1_divide_f64";
        let f = self.kernel(&BLAS1, NAME)?;
        let n = r.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(r).arg(d).arg(z).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(r.len())) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        assert_eq!(
            super::BLAS1.missing_entry_points(|_| None),
            Vec::<&str>::new()
        );
    }
}
