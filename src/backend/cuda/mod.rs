//! The CUDA executor: [`CudaBackend`] implements [`crate::backend::Backend`]
//! and its capability traits with vectors and the Quad-Diag matrix in device
//! memory (cudarc) and the fused kernels of `kernels/*.cu`, compiled at run
//! time by NVRTC for the device's own architecture. Each trait is
//! implemented in the file that launches its kernels: `blas1` (the core),
//! `quad_diag`, `chebyshev` (f64), `mixed` (f32 on Â), `mg` and
//! `mg_setup` (multigrid). Applications add their own traits and families
//! outside this module (`thermal::device::cuda`, `topopt::cuda`), through
//! [`CudaBackend::kernel`] and the checked launcher. CUDA is loaded
//! dynamically: on a machine without it,
//! [`available`] and [`CudaBackend::new`] return
//! [`BackendError::CudaUnavailable`] and never panic, and the caller falls
//! back to the CPU backend.
//!
//! Everything runs on one stream, in order. Dot products stay on the GPU in
//! the `Backend::Scalars` buffer (see `kernels/common.cu`); the host reads
//! them only in `Backend::read_scalars`, so a PCG iteration is a queue of
//! kernel launches with no host round trip. Files by concern: `device`
//! (probing, contexts, `cuth info`), `kernels` (families, NVRTC, cache),
//! `arch` (NVRTC's version and the architecture compiled for),
//! `launch` (grids, the rows/columns thread schedule of the matrix kernels,
//! reduction scratch, errors), `quad_diag` / `blas1` /
//! `chebyshev` (one launcher per kernel), `batch` / `batch_launch` (k
//! right-hand sides at once), `memory` (device budget), `timing`
//! (events, graphs, copy bandwidth for the benchmark), `transfer` (large
//! downloads through pinned staging buffers).

mod advection;
pub mod arch;
mod batch;
mod batch_launch;
mod blas1;
mod chebyshev;
pub mod device;
pub mod kernel_cache;
pub mod kernels;
pub(crate) mod launch;
pub mod memory;
mod mg;
mod mg_cycle;
mod mg_low;
mod mg_setup;
mod mixed;
mod quad_diag;
pub mod timing;
mod transfer;

pub use crate::knobs::QdSchedule;
pub use advection::{CudaAdvection, ADVECTION};
pub use batch::{CudaBatchScratch, BATCH};
pub use blas1::BLAS1;
pub use chebyshev::CHEBYSHEV;
pub use device::{info_text, DeviceInfo, GpuInfo};
pub use kernels::KernelFamily;
pub use memory::MemoryEstimate;
pub use mg_cycle::MULTIGRID;
pub use mg_setup::MG_SETUP;
pub use mixed::MIXED;
pub use mixed::{CudaLowArray, CudaLowMatrix};
pub use quad_diag::QUAD_DIAG;
pub use transfer::STAGE_VALUES;

use super::BackendError;
use crate::knobs::CudaKnobs;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig};
use kernels::Kernels;
use launch::{driver_err, ReduceScratch};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

/// The kernel families of this executor, each declared (as a `static`) by
/// the file that launches it; an application's families are its own (see
/// [`crate::kernel_families`], the inventory of every family the binary
/// embeds).
pub fn families() -> [&'static KernelFamily; 8] {
    [
        &ADVECTION, &BATCH, &BLAS1, &CHEBYSHEV, &MULTIGRID, &MG_SETUP, &MIXED, &QUAD_DIAG,
    ]
}

/// Whether the CUDA driver, NVRTC and at least one device can be used on this
/// machine. Loads nothing that could panic.
pub fn available() -> Result<(), BackendError> {
    device::device_count().map(|_| ())
}

/// The Quad-Diag matrix in device memory (see [`QuadDiag`](crate::matrix::QuadDiag)).
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
    /// The host matrix's cell widths (`QuadDiag::wx`, `wy`), kept on the host.
    pub wx: Vec<f64>,
    pub wy: Vec<f64>,
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
    /// Whether solvers replay their recorded launch sequences
    /// ([`CudaBackend::record`]).
    graphs: AtomicBool,
    /// [`QdSchedule`] of the matrix kernels, as `u8`.
    schedule: AtomicU8,
    /// The staged downloads' two pinned buffers, kept between downloads
    /// (pinning memory costs more than the copy of a small vector).
    staging: std::sync::Mutex<Vec<transfer::PinnedBuffer>>,
    /// The knobs it was opened with (`sync_each_launch` and `schedule`
    /// start from theirs; their setters change only the backend's copy).
    knobs: CudaKnobs,
}

impl CudaBackend {
    /// Opens device `ordinal` and compiles (once per process) and loads the
    /// core's BLAS-1 family; other families are compiled and loaded on first
    /// use. Default knobs: no disk cache of kernel images (see
    /// [`CudaBackend::new_with`]).
    pub fn new(ordinal: usize) -> Result<CudaBackend, BackendError> {
        CudaBackend::new_with(ordinal, &CudaKnobs::default())
    }

    /// [`CudaBackend::new`] with `knobs` (the command line's, from the
    /// environment).
    pub fn new_with(ordinal: usize, knobs: &CudaKnobs) -> Result<CudaBackend, BackendError> {
        let be = CudaBackend::open_with(ordinal, knobs)?;
        // The core's kernels, which every solver launches; the capability
        // families (and applications' own, such as topopt's) are compiled
        // when first prepared or launched.
        be.load(&blas1::BLAS1)?;
        Ok(be)
    }

    /// [`CudaBackend::new`] without loading any kernel family: every
    /// family, BLAS-1 too, is compiled and loaded on first use or by
    /// [`CudaBackend::load`] (`cuth solve` loads the families it needs on
    /// several threads at once).
    pub fn open(ordinal: usize) -> Result<CudaBackend, BackendError> {
        CudaBackend::open_with(ordinal, &CudaKnobs::default())
    }

    /// [`CudaBackend::open`] with `knobs`.
    pub fn open_with(ordinal: usize, knobs: &CudaKnobs) -> Result<CudaBackend, BackendError> {
        let (ctx, stream, info) = device::open(ordinal)?;
        let driver = device::driver_version()?;
        let nvrtc = arch::nvrtc_version()?;
        let arch = arch::pick_arch(info.compute_capability, &arch::supported_archs()?)?;
        let per_sm = (info.max_threads_per_multiprocessor / kernels::BLOCK as usize).max(1);
        let blocks = info.multiprocessors * per_sm;
        let reduce = ReduceScratch::new(&stream, blocks)?;
        Ok(CudaBackend {
            kernels: Kernels::new(
                ctx.clone(),
                arch,
                info.compute_capability,
                knobs.kernel_cache.clone(),
            ),
            ctx,
            stream,
            reduce,
            info,
            driver,
            nvrtc,
            sync_each_launch: AtomicBool::new(knobs.sync_each_launch),
            graphs: AtomicBool::new(!knobs.no_graphs),
            schedule: AtomicU8::new(knobs.schedule.to_u8()),
            staging: Default::default(),
            knobs: knobs.clone(),
        })
    }

    /// The knobs it was opened with.
    pub fn knobs(&self) -> &CudaKnobs {
        &self.knobs
    }

    /// Compiles and loads `family` now rather than at its first launch (for
    /// a caller that times its first launch, or wants compile errors early).
    pub fn load(&self, family: &KernelFamily) -> Result<(), BackendError> {
        device::guarded("loading the kernels", || self.kernels.load(family))
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

    /// Whether solvers replay recorded launch sequences (on by default;
    /// tests compare both ways).
    pub fn set_graphs(&self, on: bool) {
        self.graphs.store(on, Ordering::Relaxed);
    }

    /// See the field of the same name; for tests and debugging (slow).
    pub fn set_sync_each_launch(&self, on: bool) {
        self.sync_each_launch.store(on, Ordering::Relaxed);
    }

    /// Thread schedule of the kernels that apply the matrix (at first the
    /// knobs' [`CudaKnobs::schedule`]); results differ only by rounding.
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
    /// outside this module, such as `crate::topopt::cuda`), compiled and
    /// loaded on first use.
    pub fn kernel(
        &self,
        file: &KernelFamily,
        name: &'static str,
    ) -> Result<CudaFunction, BackendError> {
        device::guarded("loading the kernels", || self.kernels.get(file, name))
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

    pub(crate) fn to_host(&self, v: &CudaSlice<f64>, what: &str) -> Result<Vec<f64>, BackendError> {
        // Zeroed pages are mapped lazily: the staged copy faults them in
        // parallel (see `transfer`).
        let mut h = vec![0.0; v.len()];
        self.download_to(v, &mut h, what)?;
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
