//! The CUDA kernel families and their run-time compilation. Each family is a
//! `kernels/<family>.cu` file embedded with `include_str!` by the module that
//! launches it (a [`KernelFamily`] static), so building cuth needs no CUDA
//! toolkit and this executor knows no application's kernels; `kernels/common.cu` (block size, row loop, Quad-Diag
//! row, deterministic reduction) is prepended to each. NVRTC compiles a family
//! once per process for the device's own architecture (`sm_XY`) when one of
//! its kernels is first launched, and each
//! [`Kernels`] loads the module into its context on first use and caches the
//! functions, as candle's `get_or_load_func` does. NVRTC errors become
//! [`BackendError::Compile`] with the compiler log.

use super::launch::driver_err;
use crate::backend::BackendError;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Prepended to every family: block size, row loop, `qd_row`, reductions.
const COMMON: &str = include_str!("../../../kernels/common.cu");

/// Threads per block; must equal `CUTH_BLOCK` in `kernels/common.cu` (the
/// reduction's shared array is sized by it).
pub const BLOCK: u32 = 256;

/// One `kernels/*.cu` file: a family of `extern "C"` kernels named
/// `family_op_type`, declared (as a `static`) by the module that launches it:
/// `cuda::blas1::BLAS1`, `cuda::quad_diag::QUAD_DIAG`,
/// `cuda::chebyshev::CHEBYSHEV`, `cuda::mixed::MIXED`, `cuda::mg::MULTIGRID`,
/// `topopt::cuda::TOPOPT`. A family is compiled and loaded the first time
/// one of its kernels is launched, so a run compiles only what it uses.
#[derive(Debug)]
pub struct KernelFamily {
    /// File name under `kernels/`, also the family's key in the caches.
    pub file: &'static str,
    /// The family's own source (without the common prelude).
    pub source: &'static str,
    /// The kernels launched from this family.
    pub entry_points: &'static [&'static str],
}

impl KernelFamily {
    /// What NVRTC compiles: the common prelude, then the family with a
    /// `#line` directive so that compiler messages point into the right file.
    pub fn program_source(&self) -> String {
        format!(
            "#line 1 \"common.cu\"\n{COMMON}\n#line 1 \"{}\"\n{}",
            self.file, self.source
        )
    }

    /// Entry points missing from the source (a test of each family);
    /// template instances are named through `instance(name)`.
    pub fn missing_entry_points(&self, instance: impl Fn(&str) -> Option<String>) -> Vec<&str> {
        self.entry_points
            .iter()
            .copied()
            .filter(|name| {
                !(self.source.contains(&format!("{name}("))
                    || instance(name).is_some_and(|i| self.source.contains(&i)))
            })
            .collect()
    }
}

/// Fails with [`BackendError::CudaUnavailable`] instead of panicking when
/// libnvrtc cannot be loaded (cudarc panics on first use otherwise).
pub fn ensure_nvrtc() -> Result<(), BackendError> {
    // SAFETY: only tries to dlopen the library under its known names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(BackendError::CudaUnavailable(
            "libnvrtc (NVRTC, CUDA 13) not found on the loader path".into(),
        ))
    }
}

/// NVRTC's version as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), BackendError> {
    ensure_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters.
    let rc = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    rc.result()
        .map_err(|e| BackendError::Driver(format!("nvrtcVersion: {e}")))?;
    Ok((major, minor))
}

/// The `sm_XY` numbers (as `10*X + Y`) this NVRTC can compile for.
pub fn supported_archs() -> Result<Vec<i32>, BackendError> {
    ensure_nvrtc()?;
    let mut count = 0;
    // SAFETY: out-parameter, then a buffer of exactly `count` ints.
    unsafe { cudarc::nvrtc::sys::nvrtcGetNumSupportedArchs(&mut count) }
        .result()
        .map_err(|e| BackendError::Driver(format!("nvrtcGetNumSupportedArchs: {e}")))?;
    let mut archs = vec![0i32; count.max(0) as usize];
    if !archs.is_empty() {
        unsafe { cudarc::nvrtc::sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .map_err(|e| BackendError::Driver(format!("nvrtcGetSupportedArchs: {e}")))?;
    }
    Ok(archs)
}

/// The architecture to compile for: the device's own `sm_XY` when NVRTC
/// supports it; for a device newer than this NVRTC, PTX for the newest
/// virtual architecture it knows (`compute_XY`, which the driver JIT-compiles
/// forward); an error for a device older than NVRTC supports.
pub fn pick_arch(cc: (i32, i32), supported: &[i32]) -> Result<String, BackendError> {
    let want = cc.0 * 10 + cc.1;
    if supported.is_empty() || supported.contains(&want) {
        return Ok(format!("sm_{want}"));
    }
    match supported.iter().copied().filter(|&a| a <= want).max() {
        Some(a) => Ok(format!("compute_{a}")),
        None => Err(BackendError::CudaUnavailable(format!(
            "the GPU is sm_{want} but this NVRTC compiles only for {supported:?}"
        ))),
    }
}

/// Compiles one family to PTX for `arch` (`sm_90`, `compute_90`, ...).
/// Needs only libnvrtc, no GPU, so tests can check the kernels anywhere.
pub fn compile(file: &KernelFamily, arch: &str) -> Result<Ptx, BackendError> {
    ensure_nvrtc()?;
    let opts = CompileOptions {
        name: Some(file.file.to_string()),
        options: vec![format!("--gpu-architecture={arch}")],
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(file.program_source(), opts).map_err(|e| {
        let (message, log) = match e {
            CompileError::CompileError { nvrtc, log, .. } => {
                (format!("{nvrtc:?}"), log.to_string_lossy().into_owned())
            }
            other => (format!("{other:?}"), String::new()),
        };
        BackendError::Compile {
            file: format!("kernels/{}", file.file),
            message,
            log,
        }
    })
}

/// PTX per (family, arch), compiled at most once per process: tests and
/// benchmarks create several backends, and NVRTC takes ~0.1–0.5 s a family.
fn compiled(file: &KernelFamily, arch: &str) -> Result<Ptx, BackendError> {
    static CACHE: OnceLock<Mutex<HashMap<(&'static str, String), Ptx>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (file.file, arch.to_string());
    if let Some(ptx) = lock(cache).get(&key) {
        return Ok(ptx.clone());
    }
    // Compile outside the lock; a racing thread at worst compiles twice.
    let ptx = crate::profile::part("kernels/compile", || compile(file, arch))?;
    lock(cache).insert(key, ptx.clone());
    Ok(ptx)
}

/// A poisoned cache only means another thread panicked mid-insert; the map
/// itself is still valid.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The kernels of one context: modules loaded on first use, functions cached.
#[derive(Debug)]
pub(crate) struct Kernels {
    ctx: Arc<CudaContext>,
    arch: String,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
}

impl Kernels {
    pub(crate) fn new(ctx: Arc<CudaContext>, arch: String) -> Kernels {
        Kernels {
            ctx,
            arch,
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
        }
    }

    /// The architecture the kernels are compiled for.
    pub(crate) fn arch(&self) -> &str {
        &self.arch
    }

    /// Compiles and loads `family` now (its first launch would otherwise),
    /// so that NVRTC time and compile errors show up where the caller wants.
    pub(crate) fn load(&self, family: &KernelFamily) -> Result<(), BackendError> {
        for &name in family.entry_points {
            self.get(family, name)?;
        }
        Ok(())
    }

    /// The function `name` of family `file`.
    pub(crate) fn get(
        &self,
        file: &KernelFamily,
        name: &'static str,
    ) -> Result<CudaFunction, BackendError> {
        if let Some(f) = lock(&self.functions).get(name) {
            return Ok(f.clone());
        }
        let module = self.module(file)?;
        let f = module
            .load_function(name)
            .map_err(|e| driver_err(&format!("loading {name} from {}", file.file), e))?;
        lock(&self.functions).insert(name, f.clone());
        Ok(f)
    }

    fn module(&self, file: &KernelFamily) -> Result<Arc<CudaModule>, BackendError> {
        if let Some(m) = lock(&self.modules).get(file.file) {
            return Ok(m.clone());
        }
        let ptx = compiled(file, &self.arch)?;
        let t = std::time::Instant::now();
        let m = self.ctx.load_module(ptx);
        crate::profile::add("kernels/load", t.elapsed().as_secs_f64());
        let m = m.map_err(|e| driver_err(&format!("loading PTX of {}", file.file), e))?;
        lock(&self.modules).insert(file.file, m.clone());
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_is_the_device_own_when_supported() {
        assert_eq!(
            pick_arch((9, 0), &[75, 80, 86, 89, 90, 100]).unwrap(),
            "sm_90"
        );
    }

    #[test]
    fn newer_device_gets_newest_virtual_arch() {
        assert_eq!(
            pick_arch((12, 0), &[75, 80, 90, 100]).unwrap(),
            "compute_100"
        );
    }

    #[test]
    fn older_device_is_an_error_not_a_panic() {
        assert!(pick_arch((6, 0), &[75, 80, 90]).is_err());
    }

    #[test]
    fn block_size_matches_the_prelude() {
        assert!(COMMON.contains(&format!("#define CUTH_BLOCK {BLOCK}")));
    }
}
