//! NVRTC itself and the architecture it compiles for: whether libnvrtc
//! loads (a typed error, never cudarc's panic), its version, the `sm_XY` it
//! supports, and the target picked for a device ([`pick_arch`]: its own
//! `sm_XY`, else the newest `compute_XY` below it, never older than
//! [`MIN_ARCH`]). Split from `kernels.rs`, which compiles and caches the
//! families for the architecture chosen here.

use crate::backend::BackendError;

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

/// The oldest architecture the kernels compile for (`10*X + Y`):
/// `__grid_constant__` parameters (topopt.cu) need compute 7.0, `atomicAdd`
/// on doubles 6.0. NVRTC 12 still offers sm_50, NVRTC 13 starts at sm_75.
pub const MIN_ARCH: i32 = 70;

/// The architecture to compile for: the device's own `sm_XY` when NVRTC
/// supports it; for a device newer than this NVRTC, PTX for the newest
/// virtual architecture it knows (`compute_XY`, which the driver JIT-compiles
/// forward); an error for a device older than NVRTC supports or than
/// [`MIN_ARCH`] (the kernels would not compile).
pub fn pick_arch(cc: (i32, i32), supported: &[i32]) -> Result<String, BackendError> {
    let want = cc.0 * 10 + cc.1;
    if want < MIN_ARCH {
        return Err(BackendError::CudaUnavailable(format!(
            "the GPU is sm_{want}; cuth's kernels need sm_{MIN_ARCH} or newer"
        )));
    }
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
    fn device_older_than_the_kernels_is_refused() {
        assert!(pick_arch((6, 1), &[50, 52, 60, 61, 70, 90]).is_err());
        assert_eq!(pick_arch((7, 0), &[50, 70, 90]).unwrap(), "sm_70");
    }
}
