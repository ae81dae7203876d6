//! Device → host copies of large vectors through pinned staging buffers
//! (issue 15 item 2). A pageable `cuMemcpyDtoH` ran at about 1.3 GB/s on the
//! H200 host (BENCHMARKS.md, issue 15 section): the driver bounces through
//! its own small pinned buffer and the fresh destination pages fault one by
//! one. Here two page-locked buffers of [`STAGE_VALUES`] take turns: while
//! the GPU fills one, the CPU threads copy the other into the destination
//! (faulting its pages in parallel). Small copies keep the direct path.
//! `CUTH_PAGEABLE_DOWNLOAD=1` turns the staging off (for comparison).

use super::launch::driver_err;
use super::CudaBackend;
use crate::backend::BackendError;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, PinnedHostSlice};
use rayon::prelude::*;

/// Values per staging buffer (128 MiB of f64).
pub const STAGE_VALUES: usize = 16 << 20;
/// Copies shorter than this go directly (pageable).
const DIRECT_BELOW: usize = 4 << 20;

impl CudaBackend {
    /// Copies `v` into `dst` (same length) and waits for it.
    pub(crate) fn download_to(
        &self,
        v: &CudaSlice<f64>,
        dst: &mut [f64],
        what: &str,
    ) -> Result<(), BackendError> {
        super::same_len(v.len(), dst.len())?;
        let err = |e| driver_err(&format!("downloading {what}"), e);
        let direct = v.len() < DIRECT_BELOW || std::env::var_os("CUTH_PAGEABLE_DOWNLOAD").is_some();
        if direct {
            self.stream.memcpy_dtoh(v, dst).map_err(err)?;
            return self.sync(&format!("downloading {what}"));
        }
        let n = v.len();
        let chunk = STAGE_VALUES.min(n);
        let chunks = n.div_ceil(chunk);
        // SAFETY: page-locked memory, written by the copies below before it is
        // read; flags 0 (not write-combined: the CPU reads it).
        let mut bufs: Vec<PinnedHostSlice<f64>> = (0..2.min(chunks))
            .map(|_| unsafe { self.ctx.alloc_pinned_with_flags::<f64>(chunk, 0) })
            .collect::<Result<_, _>>()
            .map_err(err)?;
        let ptrs: Vec<*mut f64> = bufs
            .iter_mut()
            .map(|b| b.as_mut_ptr())
            .collect::<Result<_, _>>()
            .map_err(err)?;
        let (src, _read) = v.device_ptr(&self.stream);
        let range = |k: usize| (k * chunk, ((k + 1) * chunk).min(n));
        let issue = |k: usize| -> Result<CudaEvent, BackendError> {
            let (lo, hi) = range(k);
            // SAFETY: the buffer holds `chunk` ≥ hi − lo values and is not
            // read by the host until the event recorded after this copy has
            // completed; the source range lies inside `v`.
            unsafe {
                let host = std::slice::from_raw_parts_mut(ptrs[k % 2], hi - lo);
                cudarc::driver::result::memcpy_dtoh_async(
                    host,
                    src + (lo * std::mem::size_of::<f64>()) as u64,
                    self.stream.cu_stream(),
                )
                .map_err(err)?;
            }
            self.stream.record_event(None).map_err(err)
        };
        let mut run = || -> Result<(), BackendError> {
            let mut events: Vec<Option<CudaEvent>> = vec![None, None];
            for k in 0..2.min(chunks) {
                events[k % 2] = Some(issue(k)?);
            }
            for k in 0..chunks {
                if let Some(e) = events[k % 2].take() {
                    e.synchronize().map_err(err)?;
                }
                let (lo, hi) = range(k);
                // SAFETY: the copy into this buffer has completed (event
                // above) and the next copy into it is issued only after this
                // read.
                let staged = unsafe { std::slice::from_raw_parts(ptrs[k % 2], hi - lo) };
                dst[lo..hi]
                    .par_chunks_mut(1 << 16)
                    .zip(staged.par_chunks(1 << 16))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                if k + 2 < chunks {
                    events[k % 2] = Some(issue(k + 2)?);
                }
            }
            Ok(())
        };
        let result = run();
        if result.is_err() {
            // No copy may still write into the buffers when they are freed.
            let _ = self.stream.synchronize();
        }
        drop(bufs);
        result
    }
}
