//! The CUDA kernel families and their run-time compilation. Each family is a
//! `kernels/<family>.cu` file embedded with `include_str!`, so building cuth
//! needs no CUDA toolkit; `kernels/common.cu` (block size, row loop, Quad-Diag
//! row, deterministic reduction) is prepended to each. NVRTC compiles a family
//! once per process for the device's own architecture (`sm_XY`), and each
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
/// `family_op_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelFile {
    QuadDiag,
    Blas1,
    Chebyshev,
    /// The matrix-free elasticity operator of `cuth topopt`
    /// (launched from `src/topopt/cuda/`).
    Topopt,
    Mixed,
    /// The geometric multigrid cycle (`backend/cuda/mg.rs`).
    Multigrid,
}

impl KernelFile {
    pub const ALL: [KernelFile; 6] = [
        KernelFile::QuadDiag,
        KernelFile::Blas1,
        KernelFile::Chebyshev,
        KernelFile::Topopt,
        KernelFile::Mixed,
        KernelFile::Multigrid,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            KernelFile::QuadDiag => "quad_diag.cu",
            KernelFile::Blas1 => "blas1.cu",
            KernelFile::Chebyshev => "chebyshev.cu",
            KernelFile::Topopt => "topopt.cu",
            KernelFile::Mixed => "mixed.cu",
            KernelFile::Multigrid => "mg.cu",
        }
    }

    /// The family's own source (without the common prelude).
    pub fn source(self) -> &'static str {
        match self {
            KernelFile::QuadDiag => include_str!("../../../kernels/quad_diag.cu"),
            KernelFile::Blas1 => include_str!("../../../kernels/blas1.cu"),
            KernelFile::Chebyshev => include_str!("../../../kernels/chebyshev.cu"),
            KernelFile::Topopt => include_str!("../../../kernels/topopt.cu"),
            KernelFile::Mixed => include_str!("../../../kernels/mixed.cu"),
            KernelFile::Multigrid => include_str!("../../../kernels/mg.cu"),
        }
    }

    /// The kernels the backend launches from this family.
    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            KernelFile::QuadDiag => &["qd_spmv_f64", "qd_spmv_dot_f64", "qd_residual_f64"],
            KernelFile::Blas1 => &[
                "blas1_dot_f64",
                "blas1_cg_update_f64",
                "blas1_xpay_f64",
                "blas1_jacobi_f64",
                "blas1_mul_add_f64",
            ],
            KernelFile::Chebyshev => &["cheb_init_f64", "cheb_step_f64"],
            KernelFile::Topopt => crate::topopt::cuda::ENTRY_POINTS,
            KernelFile::Mixed => &[
                "mixed_cheb_init_f32",
                "mixed_cheb_step_f32_hhh",
                "mixed_cheb_step_f32_hhs",
                "mixed_cheb_step_f32_hsh",
                "mixed_cheb_step_f32_hss",
                "mixed_cheb_step_f32_shh",
                "mixed_cheb_step_f32_shs",
                "mixed_cheb_step_f32_ssh",
                "mixed_cheb_step_f32_sss",
            ],
            KernelFile::Multigrid => &[
                "mg_smooth_f64",
                "mg_restrict_f64",
                "mg_prolong_f64",
                "mg_dense_f64",
            ],
        }
    }

    /// What NVRTC compiles: the common prelude, then the family with a
    /// `#line` directive so that compiler messages point into the right file.
    pub fn program_source(self) -> String {
        format!(
            "#line 1 \"common.cu\"\n{COMMON}\n#line 1 \"{}\"\n{}",
            self.file_name(),
            self.source()
        )
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
pub fn compile(file: KernelFile, arch: &str) -> Result<Ptx, BackendError> {
    ensure_nvrtc()?;
    let opts = CompileOptions {
        name: Some(file.file_name().to_string()),
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
            file: format!("kernels/{}", file.file_name()),
            message,
            log,
        }
    })
}

/// PTX per (family, arch), compiled at most once per process: tests and
/// benchmarks create several backends, and NVRTC takes ~0.1–0.5 s a family.
fn compiled(file: KernelFile, arch: &str) -> Result<Ptx, BackendError> {
    static CACHE: OnceLock<Mutex<HashMap<(KernelFile, String), Ptx>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (file, arch.to_string());
    if let Some(ptx) = lock(cache).get(&key) {
        return Ok(ptx.clone());
    }
    // Compile outside the lock; a racing thread at worst compiles twice.
    let ptx = compile(file, arch)?;
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
    modules: Mutex<HashMap<KernelFile, Arc<CudaModule>>>,
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

    /// Compiles and loads every family now, so that compile errors and
    /// NVRTC time show up at start-up rather than in the first solve.
    pub(crate) fn load_all(&self) -> Result<(), BackendError> {
        for file in KernelFile::ALL {
            for &name in file.entry_points() {
                self.get(file, name)?;
            }
        }
        Ok(())
    }

    /// The function `name` of family `file`.
    pub(crate) fn get(
        &self,
        file: KernelFile,
        name: &'static str,
    ) -> Result<CudaFunction, BackendError> {
        if let Some(f) = lock(&self.functions).get(name) {
            return Ok(f.clone());
        }
        let module = self.module(file)?;
        let f = module
            .load_function(name)
            .map_err(|e| driver_err(&format!("loading {name} from {}", file.file_name()), e))?;
        lock(&self.functions).insert(name, f.clone());
        Ok(f)
    }

    fn module(&self, file: KernelFile) -> Result<Arc<CudaModule>, BackendError> {
        if let Some(m) = lock(&self.modules).get(&file) {
            return Ok(m.clone());
        }
        let ptx = compiled(file, &self.arch)?;
        let m = self
            .ctx
            .load_module(ptx)
            .map_err(|e| driver_err(&format!("loading PTX of {}", file.file_name()), e))?;
        lock(&self.modules).insert(file, m.clone());
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
    fn every_entry_point_is_in_its_source() {
        for file in KernelFile::ALL {
            for name in file.entry_points() {
                // Template instances are named by a macro in the source.
                let instance = name
                    .strip_prefix("mixed_cheb_step_f32_")
                    .map(|suffix| format!("MIXED_CHEB_STEP({suffix},"));
                assert!(
                    file.source().contains(&format!("{name}("))
                        || instance.is_some_and(|i| file.source().contains(&i)),
                    "{name} missing from {}",
                    file.file_name()
                );
            }
        }
        assert!(COMMON.contains(&format!("#define CUTH_BLOCK {BLOCK}")));
    }
}
