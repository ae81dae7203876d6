//! Finding and opening a GPU. cudarc loads libcuda and libnvrtc at run time
//! and panics on first use when they are missing, so everything here asks
//! `is_culib_present()` first and turns any failure (no library, no device,
//! a driver too old for a symbol) into [`BackendError::CudaUnavailable`]: a
//! machine without CUDA never panics, it falls back to the CPU. Also collects
//! [`DeviceInfo`] for `cuth info`.

use super::launch::driver_err;
use super::{arch, kernels};
use crate::backend::BackendError;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaStream};
use serde::Serialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Runs `f`, turning a panic inside cudarc (a symbol missing from an old
/// driver, say) into `CudaUnavailable`. The panic message still reaches
/// stderr through the default hook.
pub(crate) fn guarded<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(BackendError::CudaUnavailable(format!("{what}: {msg}")))
        }
    }
}

/// Fails unless libcuda can be loaded.
pub fn ensure_driver() -> Result<(), BackendError> {
    // SAFETY: only tries to dlopen the library under its known names.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(BackendError::CudaUnavailable(
            "libcuda (the NVIDIA driver) not found on the loader path".into(),
        ))
    }
}

/// Number of CUDA devices; an error when the libraries or the driver are
/// missing, or when there is no device.
pub fn device_count() -> Result<usize, BackendError> {
    ensure_driver()?;
    arch::ensure_nvrtc()?;
    guarded("initializing the CUDA driver", || {
        let n = CudaContext::device_count()
            .map_err(|e| BackendError::CudaUnavailable(format!("cuInit/cuDeviceGetCount: {e}")))?;
        if n <= 0 {
            Err(BackendError::CudaUnavailable("no CUDA device found".into()))
        } else {
            Ok(n as usize)
        }
    })
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
pub fn driver_version() -> Result<(i32, i32), BackendError> {
    ensure_driver()?;
    guarded("cuDriverGetVersion", || {
        let mut v = 0;
        // SAFETY: plain out-parameter.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
            .result()
            .map_err(|e| driver_err("cuDriverGetVersion", e))?;
        Ok((v / 1000, (v % 1000) / 10))
    })
}

/// What `cuth info` and `summary.json` say about one GPU.
#[derive(Clone, Debug, Serialize)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: usize,
    /// Resident threads per multiprocessor (sizes the reduction grids).
    pub max_threads_per_multiprocessor: usize,
    pub total_memory_bytes: u64,
    pub free_memory_bytes: u64,
    pub l2_cache_bytes: u64,
}

impl GpuInfo {
    fn query(ctx: &Arc<CudaContext>) -> Result<GpuInfo, BackendError> {
        let attr = |a: Attr| {
            ctx.attribute(a)
                .map_err(|e| driver_err("cuDeviceGetAttribute", e))
        };
        let (free, total) = ctx
            .mem_get_info()
            .map_err(|e| driver_err("cuMemGetInfo", e))?;
        Ok(GpuInfo {
            ordinal: ctx.ordinal(),
            name: ctx.name().map_err(|e| driver_err("cuDeviceGetName", e))?,
            compute_capability: ctx
                .compute_capability()
                .map_err(|e| driver_err("compute capability", e))?,
            multiprocessors: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize,
            max_threads_per_multiprocessor: attr(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )? as usize,
            total_memory_bytes: total as u64,
            free_memory_bytes: free as u64,
            l2_cache_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        })
    }

    /// `sm_90`-style name of the compute capability.
    pub fn sm(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Everything `cuth info` reports about CUDA on this machine.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    pub driver_version: Option<(i32, i32)>,
    pub nvrtc_version: Option<(i32, i32)>,
    /// Architectures this NVRTC compiles for (`10*major + minor`).
    pub nvrtc_archs: Vec<i32>,
    pub devices: Vec<GpuInfo>,
    /// Why CUDA cannot be used, when it cannot.
    pub unavailable: Option<String>,
}

impl DeviceInfo {
    /// Probes libraries, driver and every device; never panics and never
    /// fails: what could not be found is reported in `unavailable`.
    pub fn query() -> DeviceInfo {
        let mut info = DeviceInfo {
            driver_version: driver_version().ok(),
            nvrtc_version: arch::nvrtc_version().ok(),
            nvrtc_archs: arch::supported_archs().unwrap_or_default(),
            devices: Vec::new(),
            unavailable: None,
        };
        let count = match device_count() {
            Ok(n) => n,
            Err(e) => {
                info.unavailable = Some(e.to_string());
                return info;
            }
        };
        for ordinal in 0..count {
            match guarded("querying the device", || {
                let ctx = CudaContext::new(ordinal)
                    .map_err(|e| driver_err(&format!("opening device {ordinal}"), e))?;
                GpuInfo::query(&ctx)
            }) {
                Ok(g) => info.devices.push(g),
                Err(e) => {
                    info.unavailable = Some(e.to_string());
                }
            }
        }
        info
    }
}

fn version(v: Option<(i32, i32)>) -> String {
    v.map_or_else(|| "not found".into(), |(a, b)| format!("{a}.{b}"))
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// Human-readable CUDA report for `cuth info`: driver and NVRTC versions,
/// every device with its compute capability and memory, or why CUDA is not
/// usable here.
pub fn info_text() -> String {
    let info = DeviceInfo::query();
    let mut out = String::new();
    out.push_str(&format!("CUDA driver:  {}\n", version(info.driver_version)));
    out.push_str(&format!("NVRTC:        {}", version(info.nvrtc_version)));
    if let (Some(lo), Some(hi)) = (info.nvrtc_archs.iter().min(), info.nvrtc_archs.iter().max()) {
        out.push_str(&format!(" (sm_{lo} .. sm_{hi})"));
    }
    out.push('\n');
    out.push_str(&format!("CUDA devices: {}\n", info.devices.len()));
    for g in &info.devices {
        out.push_str(&format!(
            "  [{}] {}, {} ({}.{}), {} SMs, {:.1} GiB total, {:.1} GiB free, L2 {:.0} MiB\n",
            g.ordinal,
            g.name,
            g.sm(),
            g.compute_capability.0,
            g.compute_capability.1,
            g.multiprocessors,
            gib(g.total_memory_bytes),
            gib(g.free_memory_bytes),
            g.l2_cache_bytes as f64 / (1u64 << 20) as f64,
        ));
    }
    if let Some(why) = &info.unavailable {
        out.push_str(&format!("CUDA unavailable: {why}\n"));
    }
    out
}

/// Opens device `ordinal`: its primary context and one stream that every
/// kernel, copy and allocation of the backend uses. With a single stream,
/// cudarc's per-buffer event tracking (meant for multi-stream use) only adds
/// launch overhead, so it is switched off before anything is allocated.
pub(crate) fn open(
    ordinal: usize,
) -> Result<(Arc<CudaContext>, Arc<CudaStream>, GpuInfo), BackendError> {
    let count = device_count()?;
    if ordinal >= count {
        return Err(BackendError::CudaUnavailable(format!(
            "device {ordinal} requested but only {count} present"
        )));
    }
    guarded("opening the CUDA device", || {
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| driver_err(&format!("opening device {ordinal}"), e))?;
        // SAFETY: every buffer of this backend lives on the one stream below,
        // so stream order alone orders all reads and writes.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| driver_err("creating a stream", e))?;
        let info = GpuInfo::query(&ctx)?;
        Ok((ctx, stream, info))
    })
}

/// Reads (or compiles) the images of `families` for GPU `ordinal` into this
/// process's image cache on as many threads, without a context: only the
/// device's compute capability is asked for. A caller that runs this beside
/// the context's creation (`cuth solve`'s init thread) leaves
/// only the modules' loading for after it. Failures are left for the load,
/// which reads or compiles again and reports them. `cache_dir`: the disk
/// cache's folder, as the backend will be opened with
/// ([`CudaKnobs::kernel_cache`](crate::knobs::CudaKnobs::kernel_cache)).
pub fn prefetch(
    ordinal: usize,
    families: &[&kernels::KernelFamily],
    cache_dir: Option<&std::path::Path>,
) {
    use cudarc::driver::result::device;
    use cudarc::driver::sys::CUdevice_attribute as Attr;
    let cc = guarded("querying the device", || {
        let dev = device::get(ordinal as i32).map_err(|e| driver_err("cuDeviceGet", e))?;
        // SAFETY: `dev` comes from cuDeviceGet.
        let attr = |a| unsafe { device::get_attribute(dev, a) };
        let major = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        let minor = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        Ok((
            major.map_err(|e| driver_err("cc", e))?,
            minor.map_err(|e| driver_err("cc", e))?,
        ))
    });
    let Ok(cc) = cc else { return };
    let Ok(arch) = arch::supported_archs().and_then(|a| arch::pick_arch(cc, &a)) else {
        return;
    };
    std::thread::scope(|sc| {
        for &f in families {
            let arch = &arch;
            sc.spawn(move || {
                let _ = guarded("reading the kernels", || {
                    kernels::compiled(f, arch, cc, false, cache_dir).map(|_| ())
                });
            });
        }
    });
}
