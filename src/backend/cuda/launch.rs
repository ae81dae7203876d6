//! Launch plumbing shared by the CUDA kernels: grid sizes, the scratch space
//! of the on-device reductions, and the mapping of cudarc errors to
//! [`BackendError::Driver`] with the operation that failed. Every launch goes
//! through [`checked`], so no error of the driver is dropped.

use crate::backend::BackendError;
use cudarc::driver::{CudaSlice, CudaStream, DriverError, LaunchArgs, LaunchConfig};
use std::sync::Arc;

/// Threads per block; must equal `CUTH_BLOCK` in `kernels/common.cu` (the
/// reduction's shared array is sized by it).
pub const BLOCK: u32 = 256;

/// A cudarc driver error, with what we were doing when it happened.
pub(crate) fn driver_err(what: &str, e: DriverError) -> BackendError {
    BackendError::Driver(format!("{what}: {e}"))
}

/// Blocks of [`BLOCK`] threads for one thread per row, in a grid-stride loop
/// (the cap only matters beyond 2^31 rows).
pub(crate) fn rows_config(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, i32::MAX as usize);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Launches a kernel whose arguments are set, and checks the launch; with
/// `sync` it also waits for the kernel so that an asynchronous fault is
/// reported against the kernel that caused it (debugging, tests).
///
/// # Safety
/// The arguments pushed on `args` must match the kernel's parameter list
/// (types, order) and every slice must hold the rows the kernel touches; the
/// callers check lengths before building the arguments.
pub(crate) unsafe fn checked(
    name: &str,
    args: &mut LaunchArgs<'_>,
    cfg: LaunchConfig,
    stream: &CudaStream,
    sync: bool,
) -> Result<(), BackendError> {
    args.launch(cfg)
        .map_err(|e| driver_err(&format!("launching {name}"), e))?;
    if sync {
        stream
            .synchronize()
            .map_err(|e| driver_err(&format!("running {name}"), e))?;
    }
    Ok(())
}

/// Scratch for the two-stage reductions of `kernels/common.cu`: one partial
/// per block and the last-block ticket. Reductions are launched with at most
/// `max_blocks` blocks (enough to fill the GPU); all run on one stream, so one
/// scratch serves every reduction in turn.
#[derive(Debug)]
pub(crate) struct ReduceScratch {
    pub(crate) partials: CudaSlice<f64>,
    pub(crate) ticket: CudaSlice<u32>,
    pub(crate) max_blocks: usize,
}

impl ReduceScratch {
    /// `max_blocks`: resident blocks of [`BLOCK`] threads on the whole GPU
    /// (multiprocessors × threads per multiprocessor / BLOCK).
    pub(crate) fn new(stream: &Arc<CudaStream>, max_blocks: usize) -> Result<Self, BackendError> {
        let max_blocks = max_blocks.max(1);
        Ok(ReduceScratch {
            partials: stream
                .alloc_zeros::<f64>(max_blocks)
                .map_err(|e| driver_err("allocating reduction partials", e))?,
            ticket: stream
                .alloc_zeros::<u32>(1)
                .map_err(|e| driver_err("allocating reduction ticket", e))?,
            max_blocks,
        })
    }

    /// Grid of a reduction over n rows: one thread per row up to a full GPU,
    /// then grid-stride. Depends only on n and the device, which makes the
    /// summation order, hence the result, reproducible.
    pub(crate) fn config(&self, n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(BLOCK as usize).clamp(1, self.max_blocks);
        LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Bytes of device memory held.
    pub(crate) fn bytes(&self) -> u64 {
        (self.max_blocks * 8 + 4) as u64
    }
}

// The schedule is a knob (a plain value, defined with the others); how it
// picks rows or columns for a matrix is the backend's.
use crate::knobs::QdSchedule;

impl QdSchedule {
    pub(crate) fn to_u8(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_u8(v: u8) -> QdSchedule {
        match v {
            1 => QdSchedule::Rows,
            2 => QdSchedule::Columns,
            _ => QdSchedule::Auto,
        }
    }

    /// Whether to run columns for a matrix of `plane` = nx·ny cells per z
    /// plane and `nz` planes, when a full wave is `wave` threads.
    pub(crate) fn use_columns(self, plane: usize, nz: usize, wave: usize) -> bool {
        match self {
            QdSchedule::Rows => false,
            QdSchedule::Columns => true,
            QdSchedule::Auto => nz > 1 && plane >= wave,
        }
    }
}

/// Slot index as the kernels take it (`int`), checked against the buffer.
pub(crate) fn slot(s: &CudaSlice<f64>, i: usize) -> Result<i32, BackendError> {
    if i < s.len() {
        Ok(i as i32)
    } else {
        Err(BackendError::Length(i, s.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_schedule_switches_at_one_wave() {
        let wave = 132 * 2048;
        assert!(!QdSchedule::Auto.use_columns(512 * 512, 10, wave));
        assert!(QdSchedule::Auto.use_columns(1024 * 1024, 10, wave));
        assert!(!QdSchedule::Auto.use_columns(1024 * 1024, 1, wave));
        assert!(QdSchedule::Columns.use_columns(7 * 5, 3, wave));
        for s in [QdSchedule::Auto, QdSchedule::Rows, QdSchedule::Columns] {
            assert_eq!(QdSchedule::from_u8(s.to_u8()), s);
        }
    }

    #[test]
    fn rows_config_covers_every_row() {
        for n in [1usize, 255, 256, 257, 7 * 5 * 3, 4096 * 4096 * 10] {
            let cfg = rows_config(n);
            assert!(cfg.grid_dim.0 as usize * BLOCK as usize >= n);
            assert_eq!(cfg.block_dim.0, BLOCK);
        }
    }
}
