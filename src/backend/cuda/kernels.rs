//! The CUDA kernel families and their run-time compilation. Each family is a
//! `kernels/<family>.cu` file embedded with `include_str!` by the module that
//! launches it (a [`KernelFamily`] static), so building cuth needs no CUDA
//! toolkit and this executor knows no application's kernels (the inventory
//! of every family is [`crate::kernel_families`]); `kernels/common.cu`
//! (block size, row loop, Quad-Diag row, deterministic reduction) is
//! prepended to each. NVRTC compiles a family
//! for the device's own architecture (`sm_XY`, to a CUBIN the driver loads
//! without JIT) when one of its kernels is first launched, at most once per
//! process, and the image is kept in the on-disk [`kernel_cache`] so that the
//! next run skips NVRTC. Each `Kernels` loads the module into its context
//! on first use and caches the functions, as candle's `get_or_load_func`
//! does; a cached image the driver refuses is compiled again. NVRTC errors become
//! [`BackendError::Compile`] with the compiler log.

use super::arch::{ensure_nvrtc, nvrtc_version};
use super::kernel_cache::{self, ImageKind, KernelImage, Source};
use super::launch::driver_err;
pub use super::launch::BLOCK;
use crate::backend::BackendError;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Prepended to every family: block size, row loop, `qd_row`, reductions.
const COMMON: &str = include_str!("../../../kernels/common.cu");

/// One `kernels/*.cu` file: a family of `extern "C"` kernels named
/// `family_op_type`, declared (as a `static`) by the module that launches it:
/// `cuda::blas1::BLAS1`, `cuda::quad_diag::QUAD_DIAG`,
/// `cuda::chebyshev::CHEBYSHEV`, `cuda::mixed::MIXED`,
/// `cuda::mg_cycle::MULTIGRID` (listed by [`super::families`]); an
/// application's in its own module. A family is compiled and loaded the
/// first time one of its kernels is launched, so a run compiles only what it
/// uses.
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

/// NVRTC's options for `arch` (also part of the cache key).
fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![format!("--gpu-architecture={arch}")]
}

fn compile_error(file: &KernelFamily, e: CompileError) -> BackendError {
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
}

/// Compiles one family to PTX text for `arch` (`sm_90`, `compute_90`, ...).
/// Needs only libnvrtc, no GPU, so tests can check the kernels anywhere.
pub fn compile(file: &KernelFamily, arch: &str) -> Result<Ptx, BackendError> {
    ensure_nvrtc()?;
    let opts = CompileOptions {
        name: Some(file.file.to_string()),
        options: nvrtc_options(arch),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(file.program_source(), opts)
        .map_err(|e| compile_error(file, e))
}

/// Compiles one family for `arch` to what the driver loads fastest: a
/// CUBIN for a real architecture (`sm_XY`: no JIT at load), PTX for a
/// virtual one (`compute_XY`). cudarc's safe API returns only PTX, so the
/// program is driven through its `result` layer here.
pub fn compile_image(file: &KernelFamily, arch: &str) -> Result<KernelImage, BackendError> {
    use cudarc::nvrtc::{result, sys};
    ensure_nvrtc()?;
    let err = |e| compile_error(file, CompileError::CreationError(e));
    let src = std::ffi::CString::new(file.program_source())
        .map_err(|_| BackendError::Driver(format!("kernels/{}: NUL in source", file.file)))?;
    let name = std::ffi::CString::new(file.file).unwrap_or_default();
    let prog = result::create_program(&src, Some(&name)).map_err(err)?;
    let options = nvrtc_options(arch);
    // SAFETY: `prog` is a live program (created above, destroyed below);
    // each buffer is sized by the matching Size call before it is filled.
    let run = || unsafe {
        if let Err(nvrtc) = result::compile_program(prog, &options) {
            let log = result::get_program_log(prog).unwrap_or_default();
            let log: Vec<u8> = log.into_iter().map(|c| c as u8).collect();
            let log = std::ffi::CStr::from_bytes_until_nul(&log)
                .map(|c| c.to_owned())
                .unwrap_or_default();
            let options = options.clone();
            let e = CompileError::CompileError {
                nvrtc,
                options,
                log,
            };
            return Err(compile_error(file, e));
        }
        let mut size = 0usize;
        if arch.starts_with("sm_") {
            sys::nvrtcGetCUBINSize(prog, &mut size)
                .result()
                .map_err(err)?;
        }
        if size > 0 {
            let mut bytes = vec![0u8; size];
            sys::nvrtcGetCUBIN(prog, bytes.as_mut_ptr().cast())
                .result()
                .map_err(err)?;
            return Ok(KernelImage {
                kind: ImageKind::Cubin,
                bytes,
            });
        }
        let ptx = result::get_ptx(prog).map_err(err)?;
        Ok(KernelImage::ptx(ptx.into_iter().map(|c| c as u8).collect()))
    };
    let out = run();
    // SAFETY: created above and not destroyed before.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// The disk cache's key of `file` compiled for `arch` on a device of
/// compute capability `cc`.
pub fn cache_key(
    file: &KernelFamily,
    arch: &str,
    cc: (i32, i32),
) -> Result<kernel_cache::CacheKey, BackendError> {
    let source = file.program_source();
    let options = nvrtc_options(arch);
    let parts = kernel_cache::KeyParts {
        source: &source,
        entry_points: file.entry_points,
        options: &options,
        nvrtc: nvrtc_version()?,
        compute_capability: cc,
        arch,
        cuth_version: env!("CARGO_PKG_VERSION"),
    };
    Ok(kernel_cache::CacheKey::new(file.file, &parts))
}

type Compiled = Arc<KernelImage>;

/// Images per (family, arch), compiled or read from the disk cache at most
/// once per process: tests and benchmarks create several backends. With
/// `fresh`, the disk entry is skipped and overwritten (it did not load).
/// A process-cached image keeps its origin: one read from disk by
/// [`super::device::prefetch`] before any context existed is still
/// `Source::Disk` when the module load refuses it, so it is compiled again.
/// `dir`: the disk cache's folder (`None`: no disk cache).
pub(crate) fn compiled(
    file: &KernelFamily,
    arch: &str,
    cc: (i32, i32),
    fresh: bool,
    dir: Option<&Path>,
) -> Result<(Compiled, Source), BackendError> {
    type Images = HashMap<(&'static str, String), (Compiled, Source)>;
    static CACHE: OnceLock<Mutex<Images>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (file.file, arch.to_string());
    if !fresh {
        if let Some((img, source)) = lock(cache).get(&key) {
            return Ok((img.clone(), *source));
        }
    }
    // Compile outside the lock; a racing thread at worst compiles twice.
    let disk_key = match dir {
        Some(_) => Some(cache_key(file, arch, cc)?),
        None => None,
    };
    let compile = || crate::profile::part("kernels/compile", || compile_image(file, arch));
    let (img, source) = match (dir, &disk_key) {
        (Some(d), Some(k)) if fresh => {
            let img = compile()?;
            kernel_cache::store(d, k, &img);
            (img, Source::Compiled)
        }
        (Some(d), Some(k)) => kernel_cache::get_or_compile(Some(d), k, compile)?,
        _ => (compile()?, Source::Compiled),
    };
    let img = Arc::new(img);
    lock(cache).insert(key, (img.clone(), source));
    Ok((img, source))
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
    cc: (i32, i32),
    /// The disk cache's folder (`None`: off).
    cache_dir: Option<PathBuf>,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
}

impl Kernels {
    pub(crate) fn new(
        ctx: Arc<CudaContext>,
        arch: String,
        cc: (i32, i32),
        cache_dir: Option<PathBuf>,
    ) -> Kernels {
        Kernels {
            ctx,
            arch,
            cc,
            cache_dir,
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
        let dir = self.cache_dir.as_deref();
        let (img, source) = compiled(file, &self.arch, self.cc, false, dir)?;
        let load = |img: &KernelImage| {
            let t = std::time::Instant::now();
            let m = self.ctx.load_module(Ptx::from_binary(img.bytes.clone()));
            crate::profile::add("kernels/load", t.elapsed().as_secs_f64());
            m
        };
        let m = match (load(&img), source) {
            // A cached image the driver refuses: compile it again, replace it.
            (Err(e), Source::Disk) => {
                kernel_cache::note(format!(
                    "kernel cache: the entry of {} did not load ({e}); compiling again",
                    file.file
                ));
                load(&compiled(file, &self.arch, self.cc, true, dir)?.0)
            }
            (m, _) => m,
        };
        let m = m.map_err(|e| driver_err(&format!("loading the module of {}", file.file), e))?;
        lock(&self.modules).insert(file.file, m.clone());
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_matches_the_prelude() {
        assert!(COMMON.contains(&format!("#define CUTH_BLOCK {BLOCK}")));
    }
}
