//! The CUDA executor (cudarc, NVRTC). Placeholder until the CUDA backend lands:
//! reports that CUDA is not available.

use super::BackendError;

/// Whether the CUDA driver and NVRTC libraries can be loaded on this machine.
pub fn available() -> Result<(), BackendError> {
    Err(BackendError::CudaUnavailable(
        "CUDA backend not built yet".into(),
    ))
}
