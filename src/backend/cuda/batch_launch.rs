//! Plumbing of the batched launchers (`batch.rs`): the reduction scratch
//! of a batch, the 2D launch grid (y the vector), the host-side checks of
//! lengths and slots. A batch's host buffers are the backend's one pinned
//! type, `transfer::PinnedBuffer`.

use super::kernels::BLOCK;
use super::{same_len, CudaBackend};
use crate::backend::BackendError;
use cudarc::driver::{CudaSlice, LaunchConfig};

/// Reduction scratch of a batch: `blocks` partials per vector, a ticket each.
#[derive(Debug)]
pub struct CudaBatchScratch {
    pub(super) partials: CudaSlice<f64>,
    pub(super) tickets: CudaSlice<u32>,
    pub(super) k: usize,
    /// Row blocks per vector of a reduction (fixed per batch: reproducible).
    pub(super) blocks: usize,
}

/// A 2D grid: `threads` per vector (grid-stride beyond `cap` blocks), k vectors.
pub(super) fn grid(threads: usize, k: usize, cap: usize) -> LaunchConfig {
    let blocks = threads.div_ceil(BLOCK as usize).clamp(1, cap.max(1));
    LaunchConfig {
        grid_dim: (blocks as u32, k as u32, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Blocks per vector outside reductions: enough to fill the GPU twice over.
pub(super) const ROW_CAP: usize = 1 << 20;

pub(super) fn rows(k: usize, n: usize, lens: &[usize]) -> Result<(), BackendError> {
    lens.iter().try_for_each(|&l| same_len(k * n, l))
}

/// Every slot base + k must lie in s; the bases as the kernels take them.
pub(super) fn bases<const N: usize>(
    s: &CudaSlice<f64>,
    k: usize,
    b: [usize; N],
) -> Result<[i32; N], BackendError> {
    for &x in &b {
        if x + k > s.len() {
            return Err(BackendError::Length(x + k, s.len()));
        }
    }
    Ok(b.map(|x| x as i32))
}

pub(super) fn check_k(k: usize) -> Result<(), BackendError> {
    if k == 0 || k > 65535 {
        return Err(BackendError::Unsupported(
            "a batch holds 1 to 65535 vectors",
        ));
    }
    Ok(())
}

impl CudaBackend {
    pub(super) fn scratch_for(&self, sc: &CudaBatchScratch, k: usize) -> Result<(), BackendError> {
        check_k(k)?;
        match k <= sc.k {
            true => Ok(()),
            false => Err(BackendError::Length(k, sc.k)),
        }
    }
}
