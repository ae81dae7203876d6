//! Device-memory budget of a solve, checked before anything large is
//! allocated, so that a grid too big for the GPU is a clear
//! [`BackendError::OutOfMemory`] naming the sizes, not a failed allocation
//! halfway through assembly upload.
//!
//! A steady Chebyshev-PCG solve of n rows holds, at its peak:
//!   matrix     d, gx, gy, gz, amb                          5 arrays
//!   vectors    x, b (driver); r, z, p, q (PCG);
//!              res, d, d_next (Chebyshev)                  9 arrays
//! i.e. 14 · 8 B = 112 B per row. The Lanczos estimate of λmax runs before the
//! Chebyshev vectors exist (its rhs, x, r, z, p, q: 6 arrays < 7), so it does
//! not raise the peak. Scratch (reduction partials, scalars) is small but the
//! stream-ordered allocator rounds to its pool granularity, hence the margin.
//! A driver that keeps vectors of its own (the transient stepper) adds them
//! with [`estimate_with`] / `Backend::check_capacity_with`.

use super::CudaBackend;
use crate::backend::BackendError;

/// Arrays of the Quad-Diag matrix.
pub const MATRIX_ARRAYS: u64 = 5;
/// n-vectors alive at once in a PCG + Chebyshev solve (see the module doc).
pub const SOLVE_VECTORS: u64 = 9;
/// Fixed headroom for scratch, allocator granularity and fragmentation.
const MARGIN_BYTES: u64 = 64 << 20;
/// Proportional headroom on top of [`MARGIN_BYTES`].
const MARGIN_FRACTION: f64 = 0.02;

/// Device bytes a solve of `cells` rows needs, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEstimate {
    pub cells: usize,
    pub matrix_bytes: u64,
    pub vector_bytes: u64,
    pub scratch_bytes: u64,
    pub total_bytes: u64,
}

/// Estimate for a solve of `cells` rows in f64, with `scratch_bytes` of
/// backend scratch already known (reduction partials).
pub fn estimate(cells: usize, scratch_bytes: u64) -> MemoryEstimate {
    estimate_with(cells, scratch_bytes, 0)
}

/// [`estimate`] with `extra_vectors` n-vectors held by the driver beside
/// the solve's (e.g. the transient stepper's).
pub fn estimate_with(cells: usize, scratch_bytes: u64, extra_vectors: usize) -> MemoryEstimate {
    let row = 8 * cells as u64;
    let matrix_bytes = MATRIX_ARRAYS * row;
    let vector_bytes = (SOLVE_VECTORS + extra_vectors as u64) * row;
    let data = matrix_bytes + vector_bytes + scratch_bytes;
    let total_bytes = data + MARGIN_BYTES + (data as f64 * MARGIN_FRACTION) as u64;
    MemoryEstimate {
        cells,
        matrix_bytes,
        vector_bytes,
        scratch_bytes,
        total_bytes,
    }
}

impl CudaBackend {
    /// (free, total) device memory in bytes, as the driver reports it now;
    /// free capped by [`MemoryCaps::device`](crate::knobs::MemoryCaps::device)
    /// (see [`crate::backend::memory_limit`]).
    pub fn memory_info(&self) -> Result<(u64, u64), BackendError> {
        let (free, total) = self
            .context()
            .mem_get_info()
            .map_err(|e| super::launch::driver_err("cuMemGetInfo", e))?;
        use crate::backend::memory_limit::{capped, caps};
        let free = capped(Some(free as u64), caps().device).unwrap_or(0);
        Ok((free, total as u64))
    }

    /// Checks that a solve of `cells` rows fits in the free device memory;
    /// returns the estimate, or [`BackendError::OutOfMemory`] before
    /// anything is allocated.
    pub fn check_fits(&self, cells: usize) -> Result<MemoryEstimate, BackendError> {
        self.check_fits_with(cells, 0)
    }

    /// [`Self::check_fits`] counting `extra_vectors` more n-vectors.
    pub fn check_fits_with(
        &self,
        cells: usize,
        extra_vectors: usize,
    ) -> Result<MemoryEstimate, BackendError> {
        let est = estimate_with(cells, self.scratch_bytes(), extra_vectors);
        let (free, _) = self.memory_info()?;
        if est.total_bytes > free {
            return Err(BackendError::OutOfMemory {
                needed: est.total_bytes,
                free,
                size: cells,
                unit: "cells",
                memory: "device memory",
                advice: "use a coarser --grid or --device cpu",
            });
        }
        Ok(est)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hundred_four_bytes_per_row_plus_margin() {
        let n = 4096 * 4096 * 10;
        let e = estimate(n, 0);
        assert_eq!(e.matrix_bytes + e.vector_bytes, 112 * n as u64);
        assert!(e.total_bytes > 112 * n as u64);
        // 4096² × 10 fits an H200 (≈139 GiB) with a wide margin.
        assert!(e.total_bytes < 20 << 30);
    }

    #[test]
    fn extra_vectors_add_eight_bytes_per_row_each() {
        let n = 1000;
        let (base, more) = (estimate(n, 0), estimate_with(n, 0, 3));
        assert_eq!(more.vector_bytes - base.vector_bytes, 3 * 8 * n as u64);
        assert_eq!(more.matrix_bytes, base.matrix_bytes);
        assert!(more.total_bytes > base.total_bytes);
    }
}
