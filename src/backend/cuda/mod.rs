//! The CUDA executor: [`CudaBackend`] implements [`Backend`] with vectors and
//! the Quad-Diag matrix in device memory (cudarc) and the fused kernels of
//! `kernels/*.cu`, compiled at run time by NVRTC for the device's own
//! architecture. CUDA is loaded dynamically: on a machine without it,
//! [`available`] and [`CudaBackend::new`] return
//! [`BackendError::CudaUnavailable`] and never panic, and the caller falls
//! back to the CPU backend.
//!
//! Everything runs on one stream, in order. Dot products stay on the GPU in
//! the [`Backend::Scalars`] buffer (see `kernels/common.cu`); the host reads
//! them only in [`Backend::read_scalars`], so a PCG iteration is a queue of
//! kernel launches with no host round trip. Files by concern: `device`
//! (probing, contexts, `cuth info`), `kernels` (families, NVRTC, cache),
//! `launch` (grids, the rows/columns thread schedule of the matrix kernels,
//! reduction scratch, errors), `quad_diag` / `blas1` /
//! `chebyshev` (one launcher per kernel), `memory` (device budget), `timing`
//! (events, graphs, copy bandwidth for the benchmark).

mod blas1;
mod chebyshev;
pub mod device;
pub mod kernels;
pub(crate) mod launch;
pub mod memory;
mod mg;
mod mixed;
mod quad_diag;
pub mod timing;

pub use device::{info_text, DeviceInfo, GpuInfo};
pub use kernels::KernelFile;
pub use launch::QdSchedule;
pub use memory::MemoryEstimate;
pub use mixed::{CudaLowArray, CudaLowMatrix};

use super::{Backend, BackendError, DeviceReport, Ratio};
use crate::linalg::precision::ScaledQuadDiag;
use crate::linalg::QuadDiag;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig};
use kernels::Kernels;
use launch::{driver_err, ReduceScratch};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

/// Whether the CUDA driver, NVRTC and at least one device can be used on this
/// machine. Loads nothing that could panic.
pub fn available() -> Result<(), BackendError> {
    device::device_count().map(|_| ())
}

/// The Quad-Diag matrix in device memory (see [`QuadDiag`]).
#[derive(Debug)]
pub struct CudaMatrix {
    pub d: CudaSlice<f64>,
    pub gx: CudaSlice<f64>,
    pub gy: CudaSlice<f64>,
    pub gz: CudaSlice<f64>,
    /// Coupling to ambient per row, for the difference-form residual.
    pub amb: CudaSlice<f64>,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

impl CudaMatrix {
    pub fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cells per z plane.
    pub fn plane(&self) -> usize {
        self.nx * self.ny
    }

    /// (n, nx, nx·ny) as the kernels take them (`long long`).
    fn dims(&self) -> (i64, i64, i64) {
        (
            self.len() as i64,
            self.nx as i64,
            (self.nx * self.ny) as i64,
        )
    }
}

/// One GPU: its context, the stream everything runs on, the loaded kernels
/// and the scratch of the reductions.
#[derive(Debug)]
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: Kernels,
    reduce: ReduceScratch,
    info: GpuInfo,
    driver: (i32, i32),
    nvrtc: (i32, i32),
    /// Wait for every kernel right after its launch, so that an asynchronous
    /// fault is reported against the kernel that caused it.
    sync_each_launch: AtomicBool,
    /// [`QdSchedule`] of the matrix kernels, as `u8`.
    schedule: AtomicU8,
}

impl CudaBackend {
    /// Opens device `ordinal`, compiles (once per process) and loads every
    /// kernel family. `CUTH_CUDA_SYNC=1` in the environment turns on
    /// [`CudaBackend::set_sync_each_launch`].
    pub fn new(ordinal: usize) -> Result<CudaBackend, BackendError> {
        let (ctx, stream, info) = device::open(ordinal)?;
        let driver = device::driver_version()?;
        let nvrtc = kernels::nvrtc_version()?;
        let arch = kernels::pick_arch(info.compute_capability, &kernels::supported_archs()?)?;
        let per_sm = (info.max_threads_per_multiprocessor / kernels::BLOCK as usize).max(1);
        let blocks = info.multiprocessors * per_sm;
        let reduce = ReduceScratch::new(&stream, blocks)?;
        let be = CudaBackend {
            kernels: Kernels::new(ctx.clone(), arch),
            ctx,
            stream,
            reduce,
            info,
            driver,
            nvrtc,
            sync_each_launch: AtomicBool::new(std::env::var_os("CUTH_CUDA_SYNC").is_some()),
            schedule: AtomicU8::new(QdSchedule::from_env().to_u8()),
        };
        device::guarded("loading the kernels", || be.kernels.load_all())?;
        Ok(be)
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The one stream every operation of this backend is ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// The architecture the kernels were compiled for (`sm_90`, ...).
    pub fn arch(&self) -> &str {
        self.kernels.arch()
    }

    /// See the field of the same name; for tests and debugging (slow).
    pub fn set_sync_each_launch(&self, on: bool) {
        self.sync_each_launch.store(on, Ordering::Relaxed);
    }

    /// Thread schedule of the kernels that apply the matrix (default `Auto`,
    /// or `CUTH_QD_SCHEDULE`); results differ only by rounding.
    pub fn set_schedule(&self, s: QdSchedule) {
        self.schedule.store(s.to_u8(), Ordering::Relaxed);
    }

    pub fn schedule(&self) -> QdSchedule {
        QdSchedule::from_u8(self.schedule.load(Ordering::Relaxed))
    }

    /// Whether the matrix kernels run the column schedule on `a`.
    pub fn uses_columns(&self, a: &CudaMatrix) -> bool {
        let wave = self.info.multiprocessors * self.info.max_threads_per_multiprocessor;
        self.schedule().use_columns(a.plane(), a.nz, wave)
    }

    /// Launch shape of a matrix kernel on `a`: (columns flag, threads wanted).
    fn qd_shape(&self, a: &CudaMatrix) -> (i32, usize) {
        if self.uses_columns(a) {
            (1, a.plane())
        } else {
            (0, a.len())
        }
    }

    /// Device bytes held by the backend itself (reduction scratch).
    pub fn scratch_bytes(&self) -> u64 {
        self.reduce.bytes()
    }

    /// The function `name` of family `file` (also for operators defined
    /// outside this module, such as `crate::topopt::cuda`).
    pub(crate) fn kernel(
        &self,
        file: KernelFile,
        name: &'static str,
    ) -> Result<CudaFunction, BackendError> {
        self.kernels.get(file, name)
    }

    /// Launches `args` (kernel `name`) and checks the result.
    ///
    /// # Safety
    /// As [`launch::checked`]: arguments must match the kernel's signature.
    pub(crate) unsafe fn run(
        &self,
        name: &str,
        args: &mut LaunchArgs<'_>,
        cfg: LaunchConfig,
    ) -> Result<(), BackendError> {
        let sync = self.sync_each_launch.load(Ordering::Relaxed);
        launch::checked(name, args, cfg, &self.stream, sync)
    }

    /// Scratch of the deterministic reductions (`kernels/common.cu`).
    pub(crate) fn reduce_scratch(&self) -> &ReduceScratch {
        &self.reduce
    }

    pub(crate) fn sync(&self, what: &str) -> Result<(), BackendError> {
        self.stream.synchronize().map_err(|e| driver_err(what, e))
    }

    fn to_device(&self, host: &[f64], what: &str) -> Result<CudaSlice<f64>, BackendError> {
        self.stream
            .clone_htod(host)
            .map_err(|e| driver_err(&format!("uploading {what}"), e))
    }

    fn to_host(&self, v: &CudaSlice<f64>, what: &str) -> Result<Vec<f64>, BackendError> {
        let h = self
            .stream
            .clone_dtoh(v)
            .map_err(|e| driver_err(&format!("downloading {what}"), e))?;
        self.sync(&format!("downloading {what}"))?;
        Ok(h)
    }
}

pub(crate) fn same_len(a: usize, b: usize) -> Result<(), BackendError> {
    if a == b {
        Ok(())
    } else {
        Err(BackendError::Length(a, b))
    }
}

impl Backend for CudaBackend {
    type Vector = CudaSlice<f64>;
    type Matrix = CudaMatrix;
    type Scalars = CudaSlice<f64>;
    type LowMatrix = CudaLowMatrix;
    type LowVector = CudaSlice<f32>;

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
    fn download_into(&self, v: &CudaSlice<f64>, host: &mut [f64]) -> Result<(), BackendError> {
        same_len(v.len(), host.len())?;
        self.stream
            .memcpy_dtoh(v, host)
            .map_err(|e| driver_err("downloading a vector", e))?;
        self.sync("downloading a vector")
    }
    fn copy(&self, src: &CudaSlice<f64>, dst: &mut CudaSlice<f64>) -> Result<(), BackendError> {
        same_len(src.len(), dst.len())?;
        self.stream
            .memcpy_dtod(src, dst)
            .map_err(|e| driver_err("device-to-device copy", e))
    }
    fn upload_matrix(&self, a: &QuadDiag) -> Result<CudaMatrix, BackendError> {
        let n = a.nx * a.ny * a.nz;
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len(), a.amb.len()] {
            same_len(n, len)?;
        }
        // Before the first large allocation: the whole solve must fit.
        self.check_fits(n)?;
        Ok(CudaMatrix {
            d: self.to_device(&a.d, "the matrix diagonal")?,
            gx: self.to_device(&a.gx, "gx")?,
            gy: self.to_device(&a.gy, "gy")?,
            gz: self.to_device(&a.gz, "gz")?,
            amb: self.to_device(&a.amb, "amb")?,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
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
        }))
    }
    fn scalars(&self, n: usize) -> Result<CudaSlice<f64>, BackendError> {
        self.zeros(n)
    }
    fn read_scalars(&self, s: &CudaSlice<f64>) -> Result<Vec<f64>, BackendError> {
        self.to_host(s, "scalars")
    }

    fn spmv(
        &self,
        a: &CudaMatrix,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.qd_spmv(a, x, y)
    }
    fn residual(
        &self,
        a: &CudaMatrix,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.qd_residual(a, b, x, r, s, out)
    }
    fn spmv_dot(
        &self,
        a: &CudaMatrix,
        p: &CudaSlice<f64>,
        q: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.qd_spmv_dot(a, p, q, s, out)
    }
    fn dot(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.blas1_dot(x, y, s, out)
    }
    fn cg_update(
        &self,
        alpha: Ratio,
        p: &CudaSlice<f64>,
        q: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.blas1_cg_update(alpha, p, q, x, r, s, out)
    }
    fn xpay(
        &self,
        beta: Ratio,
        z: &CudaSlice<f64>,
        p: &mut CudaSlice<f64>,
        s: &CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.blas1_xpay(beta, z, p, s)
    }
    fn mul_add(
        &self,
        w: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.blas1_mul_add(w, x, b, out)
    }
    fn jacobi(
        &self,
        a: &CudaMatrix,
        r: &CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.blas1_jacobi(a, r, z)
    }
    fn cheb_init(
        &self,
        a: &CudaMatrix,
        c: f64,
        r: &CudaSlice<f64>,
        res: &mut CudaSlice<f64>,
        d: &mut CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cheb_init_launch(a, c, r, res, d, z)
    }
    fn cheb_step(
        &self,
        a: &CudaMatrix,
        alpha: f64,
        beta: f64,
        d: &CudaSlice<f64>,
        d_next: &mut CudaSlice<f64>,
        res: &mut CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cheb_step_launch(a, alpha, beta, d, d_next, res, z)
    }
    fn upload_low_matrix(&self, a: &ScaledQuadDiag) -> Result<CudaLowMatrix, BackendError> {
        self.upload_low(a)
    }
    fn zeros_low(&self, n: usize) -> Result<CudaSlice<f32>, BackendError> {
        self.zeros_f32(n)
    }
    fn cheb_init_low(
        &self,
        a: &CudaLowMatrix,
        c: f64,
        r: &CudaSlice<f64>,
        res: &mut CudaSlice<f32>,
        d: &mut CudaSlice<f32>,
        zhat: &mut CudaSlice<f32>,
        z: &mut CudaSlice<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        self.mixed_init_launch(a, c, r, res, d, zhat, z, last)
    }
    fn cheb_step_low(
        &self,
        a: &CudaLowMatrix,
        alpha: f64,
        beta: f64,
        d: &CudaSlice<f32>,
        d_next: &mut CudaSlice<f32>,
        res: &mut CudaSlice<f32>,
        zhat: &mut CudaSlice<f32>,
        z: &mut CudaSlice<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        self.mixed_step_launch(a, alpha, beta, d, d_next, res, zhat, z, last)
    }
}
